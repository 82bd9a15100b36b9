"""Which language a text is in, by script and, for Latin script, by common function words.

Enough to tell a prompt "answer in Hebrew" or "write the claims in Portuguese"; not a general detector.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W\d_]+")
_PT = frozenset("de da do das dos que não em um uma para com por os as é são mais como foi pela pelo ao à".split())
_EN = frozenset("the of and to in is was that for with as by on are be this from it at which an".split())
_ES = frozenset("el la los las del que y en un una por con para es se al lo como más pero".split())


def detect_language(text: str) -> str:
    """'Hebrew', 'Arabic', 'Portuguese', 'Spanish' or 'English' (the default for Latin or empty text)."""
    hebrew = sum(1 for c in text if "\u0590" <= c <= "\u05ff")
    arabic = sum(1 for c in text if "\u0600" <= c <= "\u06ff")
    latin = sum(1 for c in text if c.isascii() and c.isalpha() or "\u00c0" <= c <= "\u024f")
    best = max(hebrew, arabic, latin)
    if best == 0:
        return "English"
    if best == hebrew:
        return "Hebrew"
    if best == arabic:
        return "Arabic"
    words = [w.lower() for w in _WORD.findall(text)]
    scores = {
        "Portuguese": sum(w in _PT for w in words) + 2 * sum(c in "ãõçâêô" for c in text.lower()),
        "Spanish": sum(w in _ES for w in words) + 2 * sum(c in "ñ¿¡" for c in text),
        "English": sum(w in _EN for w in words),
    }
    return max(scores, key=lambda k: (scores[k], k == "English"))
