"""Control characters in data: a source, an answer, a model's rationale or a model name may carry ESC
sequences (clear the screen, retitle the window, hide text). Whatever the tool prints is defused here."""

from __future__ import annotations

import re

# C0 and C1 controls but newline and tab (rich itself strips only \a \b \v \f \r)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def defuse(text: str) -> str:
    """``text`` with every control character shown as U+FFFD."""
    return CONTROL.sub("\ufffd", text)
