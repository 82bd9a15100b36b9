"""Copies the top-level prompts/ and configs/ into the wheel as judge/_prompts and judge/_configs.

They stay the source of truth at the top of the checkout (the design card fixes them there); the copy is
made at build time, so an installed wheel carries exactly the files of the checkout it was built from.
Everything else about the package is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED = {"prompts": ("_prompts", "*.j2"), "configs": ("_configs", "*.yaml")}


class BuildPyWithPrompts(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads the top-level folders themselves
            return
        root = Path(__file__).resolve().parent
        for folder, (inner, pattern) in SHIPPED.items():
            target = Path(self.build_lib) / "judge" / inner
            target.mkdir(parents=True, exist_ok=True)
            for f in sorted((root / folder).glob(pattern)):
                shutil.copyfile(f, target / f.name)


setup(cmdclass={"build_py": BuildPyWithPrompts})
