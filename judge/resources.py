"""Where the files that ship with the package live: prompts and configs. A wheel carries copies of the top-level
prompts/ and configs/ (setup.py copies them at build time); the packaged copy wins where it exists.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
PACKAGED = {"prompts": "_prompts", "configs": "_configs"}  # top-level folder -> its copy inside the package


def shipped_dir(name: str) -> Path:
    """The folder of ``prompts`` or ``configs`` this installation uses."""
    packaged = PACKAGE / PACKAGED[name]
    if packaged.is_dir():
        return packaged
    return PACKAGE.parent / name
