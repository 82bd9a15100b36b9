"""Tokenisation for matching: words of normalised text, with the forms a word may take elsewhere.

Latin-script words also yield their Snowball stem (PyStemmer, English rules: "launched" meets "launch",
"running" meets "run"); it lifted WiCE gold-set hit at a fixed budget by about two points.
Hebrew attaches one-letter prefixes (ו ה ב ל מ ש כ) to words, so ``ובבית`` must meet ``בית``: each Hebrew
word also yields its prefix-stripped forms. Latin plurals yield their singular, accented words their unaccented form. Numbers lose thousands
separators so ``1,450`` meets ``1450``. Tokens are taken from text already passed through
:func:`judge.text.normalize`, so quotes, case and niqqud are already unified.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from judge.text.letters import ALNUM_RUN, LETTER_RUN
from judge.text.memo import text_memo

try:  # a C Snowball stemmer; without it matching still works, on surface forms only
    import Stemmer

    _stem = Stemmer.Stemmer("english").stemWord
except ImportError:  # pragma: no cover - pystemmer is a declared dependency
    _stem = None

_WORD = re.compile(rf"\d+(?:[.,:/]\d+)*%?|{LETTER_RUN}(?:[\"']{LETTER_RUN})*['\"]?|\d*{ALNUM_RUN}")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
HEBREW_PREFIXES = "והבלמשכ"
SHARED_START = 5  # letters two forms must share to meet as one word ("criou" / "criada" do not)

STOPWORDS = frozenset(
    """
    a an the of to in on at by for from with and or but is are was were be been being it its this that these
    those as which who whom whose what when where how than then also not no has have had do does did he she
    they them his her their there here into over under about after before such can could would should may
    might will shall one
    o os as um uma uns umas de do da dos das em no na nos nas por para com e ou que se ao aos à às pelo pela
    pelos pelas é são foi era ser seu sua seus suas mais como mas também
    של את על עם אל כי גם לא הוא היא הם הן זה זו זאת אשר או אבל כל יש אין היה היתה הייתה היו לפי בין כמו רק
    """.split()
) | frozenset("في من على إلى عن أن إن كان كانت هذا هذه التي الذي و ثم أو مع".split())

# Words that attach an added detail (a cause, a majority, a focus) to an otherwise supported statement.
CONNECTIVES = frozenset(
    """
    because due mainly mostly largely primarily chiefly particularly especially including most majority
    בעיקר בגלל משום מפני בשל עקב רובם רובן רוב במיוחד בייחוד כולל לרבות
    porque devido principalmente sobretudo maioria especialmente incluindo
    بسبب لأن خاصة معظم أغلب بما فيها
    """.split()
)


ARABIC_PREFIXES = ("وال", "بال", "فال", "كال", "لل", "ال", "و", "ب", "ل", "ف", "ك")  # longest first


def _is_hebrew(word: str) -> bool:
    return "\u05d0" <= word[0] <= "\u05ea"


@lru_cache(maxsize=200_000)
def word_forms(word: str) -> tuple[str, ...]:
    """The word and the other forms it may take in a matching text, most specific first."""
    word = word.replace('"', "").replace("'", "") if not word[0].isdigit() else _THOUSANDS.sub("", word)
    forms = [word]
    if _is_hebrew(word):
        stem = word
        for _ in range(2):
            if len(stem) >= 4 and stem[0] in HEBREW_PREFIXES:
                stem = stem[1:]
                forms.append(stem)
    elif "\u0621" <= word[0] <= "\u064a":  # Arabic: the article and the joined conjunctions and prepositions
        forms += [word[len(p) :] for p in ARABIC_PREFIXES if word.startswith(p) and len(word) - len(p) >= 3]
    elif word.isalpha() and len(word) > 3:
        if word.endswith("s") and not word.endswith("ss"):
            forms.append(word[:-1])
        if _stem is not None and word.isascii():
            stem = _stem(word)
            if stem not in forms:
                forms.append(stem)
    if word.isascii() and (lemma := _english_lemma(word)) not in forms:
        forms.append(lemma)  # irregular forms the stemmer cannot join: "wrote" and "written" meet at "write"
    if word.endswith("%"):
        forms.append(word[:-1])
    if not word.isascii():
        folded = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
        if folded != word:
            forms.append(folded)  # accent-insensitive: "são" meets "sao"
    group = next((g for f in forms if (g := synonym_group(f))), None)
    if group is not None:
        forms.append(SYNONYM_MARK + group)  # "make" and "produced" share "~make" (judge/text/synonyms.py)
    return tuple(forms)


SYNONYM_MARK = "~"  # a synonym group's form: no word of a text is written with it


def _english_lemma(word: str) -> str:
    """The lemma of an irregular English verb form ("wrote", "written" -> "write"), else the word itself."""
    return _lemmas().get(word, word)


@lru_cache(maxsize=1)
def _lemmas() -> dict[str, str]:
    from judge.text.synonyms import IRREGULAR_VERBS

    return {form: lemma for lemma, forms in IRREGULAR_VERBS.items() for form in forms if form != lemma}


def text_forms(text: str) -> frozenset[str]:
    """Every form of every word of ``text``, normalised first: what a text writes, for matching words."""
    from judge.text.normalize import normalize  # here, not at the top: importing tokens need not load numpy

    return frozenset(f for w in words(normalize(text).text) for f in word_forms(w))


def share_start(a: str, b: str) -> bool:
    """Two forms of one word by their shared start: 5+ letters, covering 3/4 of the shorter (a suffix apart:
    "התמקדה" / "התמקדות", "financed" / "financing"); a number never meets another this way."""
    n = min(len(a), len(b))
    if n < SHARED_START or a[:SHARED_START] != b[:SHARED_START] or a[0].isdigit():
        return False
    return next((i for i in range(n) if a[i] != b[i]), n) >= 0.75 * n


def words(normalized_text: str) -> list[str]:
    """Words of a normalised text, in order (surface forms)."""
    return _WORD.findall(normalized_text)


def word_spans(normalized_text: str) -> list[tuple[int, int, str]]:
    """Words of a normalised text with their offsets in it (a list of the caller's own)."""
    if len(normalized_text) >= LONG_TEXT_CHARS:
        return list(_long_word_spans(normalized_text))
    return list(_short_word_spans(normalized_text))


LONG_TEXT_CHARS = 2000  # a source's word spans and a span's are kept apart: one source would evict every span


def _spans(normalized_text: str) -> tuple[tuple[int, int, str], ...]:
    return tuple((m.start(), m.end(), m.group()) for m in _WORD.finditer(normalized_text))


# A text's words are read by several readings one right after the other: a source's by its sentences' forms
# and its numbers, a candidate span's by its forms, its numbers and its tokens. Kept by text, each text is
# tokenised once (~30 bytes a character).
_long_word_spans = text_memo(max_chars=100_000)(_spans)
_short_word_spans = text_memo(max_chars=40_000)(_spans)


def content_words(normalized_text: str) -> list[str]:
    """Words that carry content: stopwords and one-letter tokens dropped."""
    return [w for w in _WORD.findall(normalized_text) if len(w) > 1 and w not in STOPWORDS]


@lru_cache(maxsize=1)
def _groups() -> dict[str, str]:
    """Each one-word entry of the tables -> its group's name (the first of its words in sorted order)."""
    parent: dict[str, str] = {}

    def find(w: str) -> str:
        while parent.setdefault(w, w) != w:
            w = parent[w]
        return w

    from judge.text.synonyms import ALSO_SAME, SYNONYMS

    def content(w: str) -> bool:  # a connective ("mainly", "especially") marks an added detail: never another's synonym
        return " " not in w and w not in STOPWORDS and w not in CONNECTIVES

    pairs = [(a, b) for table in SYNONYMS.values() for a, b in table.items() if content(a) and content(b)]
    for a, b in (*pairs, *ALSO_SAME):
        ra, rb = find(a.lower()), find(b.lower())
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups = {w: find(w) for w in parent}
    if _stem is not None:  # a regular form meets its group by its stem ("produced" -> "produc", as "produce")
        groups |= {stem: g for w, g in list(groups.items()) if w.isascii() and (stem := _stem(w)) not in groups}
    return groups


def synonym_group(word: str) -> str | None:
    """The name of the synonym group (judge/text/synonyms.py's tables) ``word`` (lower-case, a lemma or a surface form) is in, or None."""
    return _groups().get(word)
