"""Which language a text is in, by script and, for Latin script, by common function words; and the one code
vocabulary every module speaks.

A language is an ISO 639-1 code (``he``, ``en``, ...) everywhere: in a run's results, the judges' profiles,
the data files and the reports. Its English name (``Hebrew``) is derived, for the prompts and the reader, by
:func:`language_name`; a name written by an older run is read back as its code by :func:`language_code`.
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


ENGLISH, HEBREW, ARABIC, PORTUGUESE, SPANISH = "en", "he", "ar", "pt", "es"
# Every value detect_language gives: a run's results.jsonl holds one per record, and a result read back (a run
# directory is an input) is refused with any other, since the language's name is put into the judges' system turn.
NAMES: dict[str, str] = {ENGLISH: "English", HEBREW: "Hebrew", ARABIC: "Arabic", PORTUGUESE: "Portuguese", SPANISH: "Spanish"}
LANGUAGES: tuple[str, ...] = tuple(NAMES)
RIGHT_TO_LEFT: tuple[str, ...] = (HEBREW, ARABIC)
CASE_INSENSITIVE: tuple[str, ...] = (ENGLISH, PORTUGUESE, SPANISH)  # scripts with case: rules match either case
ROMANCE: tuple[str, ...] = (PORTUGUESE, SPANISH)


def language_name(code: str) -> str:
    """The English name of a language code ("he" -> "Hebrew"), as prompts and readers see it."""
    return NAMES.get(code, code)


def language_code(value: str) -> str | None:
    """The code of ``value``, a code or the English name an older run wrote ("Hebrew" -> "he"); None if neither."""
    if value in NAMES:
        return value
    return next((code for code, name in NAMES.items() if name == value), None)


def direction(value: str) -> str:
    """'rtl' or 'ltr': how a text of this language (a code, or an older run's name) is laid out."""
    return "rtl" if language_code(value) in RIGHT_TO_LEFT else "ltr"


def detect_language(text: str) -> str:
    """'he', 'ar', 'pt', 'es' or 'en' (the default for Latin or empty text)."""
    hebrew = _count(_HEBREW, text)
    arabic = _count(_ARABIC, text)
    latin = _count(_LATIN, text)
    best = max(hebrew, arabic, latin)
    if best == 0:
        return ENGLISH
    if best == hebrew:
        return HEBREW
    if best == arabic:
        return ARABIC
    words = Counter(map(str.lower, _WORD.findall(text)))
    scores = {
        PORTUGUESE: sum(words[w] for w in _PT) + 2 * _count(_PT_LETTERS, text.lower()),
        SPANISH: sum(words[w] for w in _ES) + 2 * _count(_ES_LETTERS, text),
        ENGLISH: sum(words[w] for w in _EN),
    }
    return max(scores, key=lambda k: (scores[k], k == ENGLISH))


def _count(pattern: re.Pattern, text: str) -> int:
    return len(text) - len(pattern.sub("", text))
