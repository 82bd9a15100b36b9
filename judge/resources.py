"""Where the files that ship with the package live: prompts and configs.

prompts/ and configs/ at the top of the checkout are the source of truth; a wheel carries copies of them
as ``judge/_prompts`` and ``judge/_configs`` (setup.py copies them at build time, so they cannot drift). The
packaged copy wins where it exists (an installed wheel); a checkout or an editable install reads the
top-level folders.
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
