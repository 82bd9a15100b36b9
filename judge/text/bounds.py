"""Word boundaries: a match counts only where the words it starts and ends with are whole words of the text.

"largest city in the Midwest" is not in "second-largest city in the Midwestern United States": the match
would start inside "second-largest" and end inside "Midwestern". A match edge is inside a word when the
character beyond it is a letter, a digit or a combining mark, or a joiner that has one beyond it: a hyphen
or maqaf, an apostrophe or geresh, a double quote or gershayim between letters (``צה"ל``), a slash
(``km/h``), a period between letters or digits (``U.S.``, ``3.5``), a comma or colon between digits
(``1,450``, ``10:30``).

The same rule holds in every script, with no exception for prefixes: a Hebrew word with a prefix letter
attached (``ו`` and, ``ה`` the, ``ב`` in, ``ל`` to, ``מ`` from, ``ש`` that, ``כ`` as) or an Arabic one with
``ال``/``و``/``ب``/``ل``/``ك``/``ف`` is another word form, and often another statement (``גדול`` big,
``הגדול`` the biggest; ``ירושלים`` Jerusalem, ``מירושלים`` from Jerusalem; ``שהמחיר עלה`` *that* the price
rose, under a verb of saying), so a claim found only with a prefix in front of its first word is not found
verbatim: matching across prefixes is the lexical search's work, and a judge's. Portuguese contractions
(``do`` = de + o) and elisions (``d'água``) fall under the same rule.
"""

from __future__ import annotations

import unicodedata

# Characters that join the characters either side of them into one word, and on what condition.
_JOIN_ALWAYS = frozenset("-'\u05be\u05f3\u2010\u2011\u2019\u02bc/")  # hyphen, apostrophe, maqaf, geresh, slash
_JOIN_LETTERS = frozenset('"\u05f4')  # a double quote inside a word is a gershayim (ש"ח), elsewhere a quote
_JOIN_ALNUM = frozenset(".")  # U.S., 3.5
_JOIN_DIGITS = frozenset(",:")  # 1,450  10:30


def is_word_char(ch: str) -> bool:
    """A letter, a digit, an underscore or a combining mark (niqqud, harakat, an accent left apart)."""
    return ch.isalnum() or ch == "_" or unicodedata.category(ch)[0] == "M"


def _joins(joiner: str, inner: str, outer: str) -> bool:
    if not is_word_char(outer):
        return False
    if joiner in _JOIN_ALWAYS:
        return True
    if joiner in _JOIN_LETTERS:
        return inner.isalpha() and outer.isalpha()
    if joiner in _JOIN_ALNUM:
        return inner.isalnum() and outer.isalnum()
    if joiner in _JOIN_DIGITS:
        return inner.isdigit() and outer.isdigit()
    return False


def on_word_boundaries(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` starts and ends on word boundaries of ``text`` (an edge that is no word
    character, a quote or a bracket, is a boundary by itself)."""
    if start >= end:
        return False
    first, last = text[start], text[end - 1]
    if is_word_char(first) and start > 0:
        before = text[start - 1]
        if is_word_char(before) or (start > 1 and _joins(before, first, text[start - 2])):
            return False
    if is_word_char(last) and end < len(text):
        after = text[end]
        if is_word_char(after) or (end + 1 < len(text) and _joins(after, last, text[end + 1])):
            return False
    return True


def find_word(text: str, needle: str, start: int = 0) -> int:
    """The first offset at or after ``start`` where ``needle`` occurs in ``text`` on word boundaries, or -1."""
    if not needle:
        return -1
    at = text.find(needle, start)
    while at >= 0:
        if on_word_boundaries(text, at, at + len(needle)):
            return at
        at = text.find(needle, at + 1)
    return -1


def contains_word(text: str, needle: str) -> bool:
    """``needle`` occurs in ``text`` on word boundaries."""
    return find_word(text, needle) >= 0


def inside_word(text: str, at: int) -> bool:
    """Whether offset ``at`` falls inside a word of ``text`` (between two characters of one token)."""
    if at <= 0 or at >= len(text):
        return False
    before, after = text[at - 1], text[at]
    if is_word_char(before) and is_word_char(after):
        return True
    if is_word_char(after) and at > 1 and _joins(before, after, text[at - 2]):
        return True  # after a joiner: "second-|largest", "1,|450"
    return is_word_char(before) and at + 1 < len(text) and _joins(after, before, text[at + 1])  # "2021|.5"


def snap_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` widened to the token boundaries of ``text``: a span that would start or end inside a
    word or a number takes the whole of it ("... 1964 and 202" -> "... 1964 and 2021")."""
    while start > 0 and inside_word(text, start):
        start -= 1
    while end < len(text) and inside_word(text, end):
        end += 1
    return start, end
