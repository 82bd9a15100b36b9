"""Normalisation for matching that never loses the way back to the original offsets.

Two texts that say the same thing with different quote marks, dashes, niqqud, spacing or letter case
normalise to the same string; every normalised character keeps the original character range it came
from, so a match found in normalised text becomes an exact span of the original.

The work is done with ``str.translate`` and numpy (no per-character Python loop), because sources can be
millions of characters long.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from judge.text.memo import text_memo

DOUBLE_QUOTES = '"\u05f4\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033\u301d\u301e\uff02'
SINGLE_QUOTES = "'\u05f3\u2018\u2019\u201a\u201b\u0060\u00b4\u2032\u02bc\u02b9"
DASHES = "-\u05be\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
# Invisible format characters (bidi marks, zero-width joiners, soft hyphen, BOM): dropped.
INVISIBLE = set("\u00ad\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff")
# Two apostrophes (or gereshes) written for a gershayim: ש''ח == ש"ח.
_PAIR_OR_SPACE_RUN = re.compile(r"\s{2,}|['\u05f3\u2019]{2}")
LONG_TEXT = 2000  # characters from which normalisation works on arrays of code points


def _is_hebrew_or_arabic_mark(ch: str) -> bool:
    """Niqqud, cantillation and Arabic harakat: vowel signs matching must ignore."""
    o = ord(ch)
    if 0x0591 <= o <= 0x05C7:
        return ch not in "\u05be\u05c0\u05c3\u05c6"  # maqaf, paseq, sof pasuq, nun hafukha are letters/punct
    return 0x064B <= o <= 0x065F or o in (0x0670, 0x0640) or 0x06D6 <= o <= 0x06ED


def _unify(ch: str) -> str:
    if ch in DOUBLE_QUOTES:
        return '"'
    if ch in SINGLE_QUOTES:
        return "'"
    if ch in DASHES:
        return "-"
    if ch.isspace():
        return " "
    return ch


def _replacement(ch: str, fold_accents: bool) -> str:
    """What one original character becomes: '' (dropped), one character, or several (ﬁ -> fi)."""
    if ch in INVISIBLE or _is_hebrew_or_arabic_mark(ch):
        return ""
    if ch.isspace():
        return " "
    if ch.isdecimal() and not ch.isascii():
        return str(unicodedata.decimal(ch))  # a digit of any script reads as its ASCII digit: "१८" is 18
    form = "NFKD" if fold_accents else "NFKC"
    out = []
    for part in unicodedata.normalize(form, ch):
        if _is_hebrew_or_arabic_mark(part) or part in INVISIBLE:
            continue
        if fold_accents and unicodedata.combining(part):
            continue
        out.append(_unify(part).casefold())
    return "".join(out)


class _LazyTable(dict):
    """A ``str.translate`` table filled on first sight of each character."""

    def __init__(self, fold_accents: bool, lengths: bool):
        super().__init__()
        self.fold_accents = fold_accents
        self.lengths = lengths

    def __missing__(self, code: int) -> str:
        repl = _replacement(chr(code), self.fold_accents)
        value = chr(len(repl)) if self.lengths else repl
        self[code] = value
        return value


_TABLES = {fold: (_LazyTable(fold, False), _LazyTable(fold, True)) for fold in (False, True)}


@dataclass(frozen=True)
class NormalizedText:
    """A normalised string with, for each of its characters, the original [start, end) it came from."""

    original: str
    text: str
    starts: np.ndarray  # original start offset of each normalised character
    ends: np.ndarray  # original exclusive end offset of each normalised character

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Map a normalised span [start, end) back to the original string."""
        if not 0 <= start < end <= len(self.text):
            raise ValueError(f"span [{start}, {end}) outside normalised text of length {len(self.text)}")
        return int(self.starts[start]), int(self.ends[end - 1])


def normalize(text: str, fold_accents: bool = False) -> NormalizedText:
    """NFKC, digits of every script as ASCII, niqqud/cantillation/harakat removed, quotes, gershayim, geresh, maqaf and dashes unified,
    whitespace folded, case folded; ``fold_accents`` also drops Latin accents (Portuguese fallback)."""
    n = len(text)
    # Long texts go through arrays of code points; for short ones (claims, sentences) setting those up costs
    # more than the per-character work it saves.
    codes = _codes(text) if n >= LONG_TEXT else None
    if codes is None and (one := _one_to_one(text, fold_accents)) is not None:
        return one
    # Step A: fold whitespace runs and doubled apostrophes into one character at the run's start.
    if _has_runs(text, codes):
        keep = np.ones(n, dtype=bool)
        pieces, last = [], 0
        for m in _PAIR_OR_SPACE_RUN.finditer(text):
            keep[m.start() + 1 : m.end()] = False
            pieces.append(text[last : m.start()])
            pieces.append(" " if m.group()[0].isspace() else '"')
            last = m.end()
        pieces.append(text[last:])
        text_a = "".join(pieces)
        pos_a = np.flatnonzero(keep)  # original offset of each text_a character
        codes = _codes(text_a) if codes is not None else None
    else:
        pos_a, text_a = np.arange(n, dtype=np.int64), text
    pos_a_ext = np.append(pos_a, n)

    # Step B: per-character replacement, with each character's output length.
    norm, lengths, norm_codes = _replace(text_a, codes, fold_accents)
    kept = np.flatnonzero(lengths)
    next_kept = np.append(kept[1:], len(text_a))[: len(kept)]  # a dropped mark belongs to the letter before it
    counts = lengths[kept]
    starts = pos_a_ext[np.repeat(kept, counts)]
    ends = pos_a_ext[np.repeat(next_kept, counts)]
    # A folded whitespace run ends after its first character, not at the next word.
    if len(norm) != len(starts):  # pragma: no cover - guards the invariant the tables promise
        raise AssertionError("normalisation map out of step with the text")
    single = np.repeat(kept, counts)
    space_mask = (norm_codes if norm_codes is not None else _codes(norm)) == 32
    ends = np.where(space_mask, pos_a_ext[single] + 1, ends)
    return NormalizedText(original=text, text=norm, starts=starts.astype(np.int64), ends=ends.astype(np.int64))


def _one_to_one(text: str, fold_accents: bool) -> NormalizedText | None:
    """A short text with nothing to fold or drop, each character becoming one (most claims and spans): its
    map is the identity, built without the per-step arrays of :func:`normalize`; None for any other text."""
    repl_table, len_table = _TABLES[fold_accents]
    if _PAIR_OR_SPACE_RUN.search(text) is not None or text.translate(len_table) != "\x01" * len(text):
        return None
    n = len(text)
    return NormalizedText(original=text, text=text.translate(repl_table), starts=np.arange(n, dtype=np.int64),
                          ends=np.arange(1, n + 1, dtype=np.int64))


def _has_runs(text: str, codes: np.ndarray | None) -> bool:
    """Whether step A has anything to fold. On a long text the regular expression's scan costs more than
    the rest of normalisation, and most texts have no run: two run characters touching is looked for first."""
    if codes is None:
        return _PAIR_OR_SPACE_RUN.search(text) is not None
    kinds = _run_kinds()[np.minimum(codes, 0xFFFF)]
    return bool(((kinds[1:] == kinds[:-1]) & (kinds[1:] != 0)).any())


def _codes(text: str) -> np.ndarray:
    """The code points of ``text`` (a lone surrogate included, as it is)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


@lru_cache(maxsize=1)
def _run_kinds() -> np.ndarray:
    """For each BMP code point: 1 whitespace, 2 an apostrophe that doubles into a gershayim, 0 neither."""
    kinds = np.array([ch.isspace() for ch in map(chr, range(0x10000))], dtype=np.uint8)
    kinds[[ord(c) for c in "'\u05f3\u2019"]] = 2
    return kinds


class _Lut:
    """The replacement table as arrays over the BMP, learnt as characters are first seen."""

    def __init__(self):
        self.out = np.zeros(0x10000, dtype=np.uint32)  # the replacement, where it is one character
        self.length = np.zeros(0x10000, dtype=np.uint8)
        self.seen = np.zeros(0x10000, dtype=bool)

    def learn(self, codes: np.ndarray, table: _LazyTable) -> None:
        for code in codes.tolist():
            repl = table[code]
            self.length[code] = len(repl)
            self.out[code] = ord(repl) if len(repl) == 1 else 0
            self.seen[code] = True  # last: a reader in another thread never sees a half-learnt entry


_LUTS = {fold: _Lut() for fold in (False, True)}


def _replace(text: str, codes: np.ndarray | None, fold_accents: bool) -> tuple[str, np.ndarray, np.ndarray | None]:
    """(the replaced text, the output length of each input character, the replaced text's code points when
    every character became exactly one and they were computed).

    ``str.translate`` serves ASCII text from a per-call cache but looks every other character up in the table
    one by one (several times slower than arrays on web pages with a few curly quotes): a long non-ASCII
    text is mapped through arrays in one step."""
    repl_table, len_table = _TABLES[fold_accents]
    if codes is not None and codes.size and not text.isascii() and int(codes.max()) < 0x10000:
        lut = _LUTS[fold_accents]
        fresh = codes[~lut.seen[codes]]
        if fresh.size:
            lut.learn(np.unique(fresh), repl_table)
        lengths = lut.length[codes]
        if (lengths == 1).all():
            out = lut.out[codes]
            return out.tobytes().decode("utf-32-le", "surrogatepass"), lengths, out
        return text.translate(repl_table), lengths, None
    lengths = np.frombuffer(text.translate(len_table).encode("latin-1"), dtype=np.uint8)
    return text.translate(repl_table), lengths, None


@text_memo(max_chars=200_000)
def normalized(text: str) -> NormalizedText:
    """:func:`normalize` (no accent folding) kept by text: a claim, its spans and its sources are read by
    every check of the record, and normalising each once is what keeps the no-model path fast. The value is
    shared: never write to its arrays. Its budget is smaller than the other caches': a normalised text keeps
    two arrays of offsets, ~17 bytes a character."""
    return normalize(text)
