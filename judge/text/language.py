"""Which language a text is in, by script and, for Latin script, by common function words; and the one code
vocabulary every module speaks.

The detector knows what it does not support: a Latin-script text whose function words are German, French,
Italian or Dutch is reported as such (not as English or Portuguese), a script of its own gives its language
(Devanagari ``hi``, Cyrillic ``ru``, ...), and any other script is ``und`` (ISO 639-2 "undetermined"). Only
:data:`VERB_RULES` languages have rules for telling verbs (judge.text.proposition); every other code gets the
safe reading, never another language's rules.

A language is an ISO 639-1 code (``he``, ``en``, ...) everywhere: in a run's results, the judges' profiles,
the data files and the reports. Its English name (``Hebrew``) is derived, for the prompts and the reader, by
:func:`language_name`; a name written by an older run is read back as its code by :func:`language_code`.
Enough to tell a prompt "answer in Hebrew" or "write the claims in Portuguese"; not a general detector.
"""

from __future__ import annotations

import re
from collections import Counter

from judge.text.letters import WORD as _WORD
from judge.text.memo import text_memo
# Characters counted by script (in C: a per-character generator cost 3 ms on a 2,000-character text).
_HEBREW = re.compile("[\u0590-\u05ff]")
_ARABIC = re.compile("[\u0600-\u06ff]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]")
# Scripts that name one language (or a few, told apart below): counted like the three above.
_SCRIPTS = (
    ("hi", re.compile("[\u0900-\u097f]")),  # Devanagari: Hindi, Marathi and Nepali read alike here
    ("ru", re.compile("[\u0400-\u04ff]")),  # Cyrillic
    ("el", re.compile("[\u0370-\u03ff\u1f00-\u1fff]")),
    ("zh", re.compile("[\u4e00-\u9fff\u3400-\u4dbf]")),
    ("ja", re.compile("[\u3040-\u30ff]")),  # kana: Japanese even where Han characters outnumber it
    ("ko", re.compile("[\uac00-\ud7af\u1100-\u11ff]")),
)
_PT_LETTERS = re.compile("[ãõçâêô]")
_ES_LETTERS = re.compile("[ñ¿¡]")
_PT = frozenset("de da do das dos que não em um uma para com por os as é são mais como foi pela pelo ao à".split())
_EN = frozenset("the of and to in is was that for with as by on are be this from it at which an".split())
_ES = frozenset("el la los las del que y en un una por con para es se al lo como más pero".split())
_DE = frozenset("der die das und ist nicht ein eine einen dem den des mit von zu im auf für sich auch wurde war sind als bei nach aus wird".split())
_FR = frozenset("le la les des du et est une un dans en pour qui que pas sur au aux avec par ce cette sont été il elle était ne".split())
_IT = frozenset("il lo la gli le di del della che è per un una non con sono nel alla dei delle era anche".split())
_NL = frozenset("de het een en van is niet dat op zijn met voor werd wordt als bij ook aan naar".split())
# The function words of every Latin-script language the detector tells: a capitalised one opening a
# sentence is no name ("Der", "Elle", "Los"; judge.stages.names).
FUNCTION_WORDS: frozenset[str] = _PT | _EN | _ES | _DE | _FR | _IT | _NL
_DE_LETTERS = re.compile("[äöüß]")
_FR_LETTERS = re.compile("[œîû]")


ENGLISH, HEBREW, ARABIC, PORTUGUESE, SPANISH = "en", "he", "ar", "pt", "es"
GERMAN, FRENCH, ITALIAN, DUTCH, HINDI = "de", "fr", "it", "nl", "hi"
OTHER = "und"  # ISO 639-2 "undetermined": a script the detector has no language for
# Every value detect_language gives: a run's results.jsonl holds one per record, and a result read back (a run
# directory is an input) is refused with any other, since the language's name is put into the judges' system turn.
# A run written before holds one of the first five, which stay.
NAMES: dict[str, str] = {
    ENGLISH: "English", HEBREW: "Hebrew", ARABIC: "Arabic", PORTUGUESE: "Portuguese", SPANISH: "Spanish",
    GERMAN: "German", FRENCH: "French", ITALIAN: "Italian", DUTCH: "Dutch", HINDI: "Hindi", "ru": "Russian",
    "el": "Greek", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", OTHER: "the question's language",
}
LANGUAGES: tuple[str, ...] = tuple(NAMES)
RIGHT_TO_LEFT: tuple[str, ...] = (HEBREW, ARABIC)
# scripts with case: rules match either case
CASE_INSENSITIVE: tuple[str, ...] = (ENGLISH, PORTUGUESE, SPANISH, GERMAN, FRENCH, ITALIAN, DUTCH, "ru", "el")
ROMANCE: tuple[str, ...] = (PORTUGUESE, SPANISH)
# The languages whose verbs judge.text.proposition tells (lexicons, endings): any other gets the safe reading.
VERB_RULES: tuple[str, ...] = (ENGLISH, PORTUGUESE, SPANISH)
# Languages that capitalise every noun: there a capital says nothing about a name (judge.stages.names).
CAPITALISED_NOUNS: tuple[str, ...] = (GERMAN,)


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


@text_memo()  # a record's sources, and the names reader, ask again of the same texts
def detect_language(text: str) -> str:
    """One of LANGUAGES: by the script most of the letters are in, then in Latin script by function words
    ('en' where none is told: empty text, a name); a script of letters none of ours names is 'und'."""
    counts = {HEBREW: _count(_HEBREW, text), ARABIC: _count(_ARABIC, text), ENGLISH: _count(_LATIN, text)}
    counts |= {code: _count(pattern, text) for code, pattern in _SCRIPTS}
    best = max(counts, key=counts.get)
    if counts[best] == 0:
        letters = sum(1 for m in _WORD.finditer(text) for _ in m.group())
        return OTHER if letters > len(text) / 4 else ENGLISH  # Thai, Tamil, ...; or digits and punctuation
    if best == "zh" and counts["ja"]:
        return "ja"
    if best != ENGLISH:
        return best
    lowered = text.lower()
    words = Counter(map(str.lower, _WORD.findall(text)))
    scores = {
        PORTUGUESE: sum(words[w] for w in _PT) + 2 * _count(_PT_LETTERS, lowered),
        SPANISH: sum(words[w] for w in _ES) + 2 * _count(_ES_LETTERS, text),
        ENGLISH: sum(words[w] for w in _EN),
        GERMAN: sum(words[w] for w in _DE) + 2 * _count(_DE_LETTERS, lowered),
        FRENCH: sum(words[w] for w in _FR) + 2 * _count(_FR_LETTERS, lowered),
        ITALIAN: sum(words[w] for w in _IT),
        DUTCH: sum(words[w] for w in _NL),
    }
    return max(scores, key=lambda k: (scores[k], k == ENGLISH, k in VERB_RULES))


def _count(pattern: re.Pattern, text: str) -> int:
    return len(text) - len(pattern.sub("", text))
