"""Which language a text is in, by script and, for Latin script, by common function words.

Enough to tell a prompt "answer in Hebrew" or "write the claims in Portuguese"; not a general detector.
"""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"[^\W\d_]+")
# Characters counted by script (in C: a per-character generator cost 3 ms on a 2,000-character text).
_HEBREW = re.compile("[\u0590-\u05ff]")
_ARABIC = re.compile("[\u0600-\u06ff]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]")
_PT_LETTERS = re.compile("[ãõçâêô]")
_ES_LETTERS = re.compile("[ñ¿¡]")
_PT = frozenset("de da do das dos que não em um uma para com por os as é são mais como foi pela pelo ao à".split())
_EN = frozenset("the of and to in is was that for with as by on are be this from it at which an".split())
_ES = frozenset("el la los las del que y en un una por con para es se al lo como más pero".split())


# Every value detect_language gives: a run's results.jsonl holds one per record, and a result read back (a run
# directory is an input) is refused with any other, since the language is put into the judges' system turn.
LANGUAGES = ("English", "Hebrew", "Arabic", "Portuguese", "Spanish")


def detect_language(text: str) -> str:
    """'Hebrew', 'Arabic', 'Portuguese', 'Spanish' or 'English' (the default for Latin or empty text)."""
    hebrew = _count(_HEBREW, text)
    arabic = _count(_ARABIC, text)
    latin = _count(_LATIN, text)
    best = max(hebrew, arabic, latin)
    if best == 0:
        return "English"
    if best == hebrew:
        return "Hebrew"
    if best == arabic:
        return "Arabic"
    words = Counter(map(str.lower, _WORD.findall(text)))
    scores = {
        "Portuguese": sum(words[w] for w in _PT) + 2 * _count(_PT_LETTERS, text.lower()),
        "Spanish": sum(words[w] for w in _ES) + 2 * _count(_ES_LETTERS, text),
        "English": sum(words[w] for w in _EN),
    }
    return max(scores, key=lambda k: (scores[k], k == "English"))


def _count(pattern: re.Pattern, text: str) -> int:
    return len(text) - len(pattern.sub("", text))
