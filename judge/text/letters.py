"""What a word is, for the whole project: a run of letters with their combining marks.

Python's ``\\w`` (and ``[^\\W\\d_]``, its letters) leaves out combining marks (Unicode category M): the vowel
signs of Devanagari and the other Indic scripts, a virama, a combining accent. "इसलिए" would be cut into "इसल"
and "ए". :data:`LETTERS` is a word's letters, marks included; every module that means "the letters of a word"
builds on it (``LETTER_RUN`` inside a larger pattern, :data:`WORD` alone). Digits of any script are ``\\d``
(``१८``); normalisation writes them as ASCII digits (judge.text.normalize), so a number reads the same in any.
"""

from __future__ import annotations

import re
import unicodedata


def _mark_class() -> str:
    """The combining marks of the first two planes, as the inside of a character class (built once, ~30 ms)."""
    category, ranges, start = unicodedata.category, [], None
    for code in range(0x20000):
        mark = category(chr(code))[0] == "M"
        if mark and start is None:
            start = code
        elif not mark and start is not None:
            ranges.append((start, code - 1))
            start = None
    return "".join(f"\\U{a:08x}-\\U{b:08x}" if a != b else f"\\U{a:08x}" for a, b in ranges)


MARKS = _mark_class()
LETTER = r"[^\W\d_]"  # one letter (a mark is no letter: it follows one)
# A word's letters: a letter, then letters and combining marks ("इसलिए", "वातावरण").
LETTER_RUN = rf"{LETTER}+(?:[{MARKS}]+{LETTER}*)*"
WORD = re.compile(LETTER_RUN)
# A word of letters and digits, marks included ("H2O", "1950er", "उनके"): where a word may hold a number.
ALNUM_RUN = rf"[^\W_]+(?:[{MARKS}]+[^\W_]*)*"
