"""Sentence segmentation with offsets, for Hebrew, Portuguese, English, Arabic and any other language.

The core rule is the one the Hebrew fixtures define ``sentence_id`` with: a sentence ends after a run of
terminators plus closing quotes/brackets when whitespace or the end of the text follows. On top of it:
abbreviations, initials and ordinals ("am 24. Mai") do not end a sentence; a lower-case continuation after an ellipsis or a dotted
abbreviation does not either (any other period does: lower-cased, tokenised text is split); a blank line
always does; a single line break ends a sentence before a bullet, a heading, a speaker turn
(``שם: ...``) or, in Latin script, a capitalised line after a line with no final punctuation (titles,
menus). Any other line break stays inside its sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.text.memo import text_memo

CLOSERS = "\"'\u05f3\u05f4\u201c\u201d\u2019\u00bb)]"  # what may close a sentence after its full stop
_ENDERS = "[.?!\u061f\u06d4\u0964\u0965\u2026]+"  # what ends a sentence (then closing quotes or brackets)
# What closes a statement (no question): the full stop, "!", the Arabic full stop, the Devanagari danda (।, ॥)
FULL_STOPS = ".!\u06d4\u0964\u0965"
_TERMINATOR = re.compile(rf"(?:{_ENDERS})[{re.escape(CLOSERS)}]*(?=\s|$)")
_ENDS = re.compile(rf"({_ENDERS})[^\w]*$")  # then closers, markdown emphasis, an emoji, spaces
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_BULLET = re.compile(r"[ \t]*(?:[-*\u2022\u00b7\u25aa\u25cf\u2013]\s|\d{1,3}[.)]\s|#)")
_SPEAKER = re.compile(r"[ \t]*[^\n:.?!]{1,60}:\s")
_WORD_BEFORE = re.compile(r"([^\W\d_][\w'.]*)\.$")
# A list item's number ("mentioned: 1. Veeram ... 2. Another", or one item a line): one or two digits and a
# period that open the text or a line, or follow a colon, a semicolon or a sentence's end and a space (never
# the rest of a decimal, a version or a score: "4.1.", "1:1."). It starts an item, it ends nothing.
_ENUMERATOR = re.compile(r"(?:^|(?<=[:;.?!\u061f]\s)|(?<=\n))[ \t]*(\d{1,2})\.$")
# What opens a list item, kept out of a claim's span: a bullet or a number with its period or parenthesis.
LIST_MARKER = re.compile(r"(?:[-*\u2022\u00b7\u25aa\u25cf\u2013]|\d{1,2}[.)])(?=\s|$)\s*")

ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr drs prof sr sra srs sras jr st mt ft vs etc e.g i.e cf al approx dept univ inc ltd co corp
    no nos nº vol vols ed eds fig figs p pp gen gov sen rep lt col capt sgt rev hon est ca c.f
    jan feb mar apr jun jul aug sep sept oct nov dec av ave pág págs n.º art arts cap caps ex dra dras profa profas
    """.split()
)
_CAN_END = frozenset({"etc"})
# An ordinal is written with a period in German and the Nordic languages ("am 24. Mai 1830", "der 2. Weltkrieg"):
# a number of one to three digits and its period end no sentence where a month follows, or a capitalised word
# after an article or a preposition that takes a date or a rank. The months of the Latin-script languages
# whose ordinals are so written, and of those a reader may meet beside them.
ORDINAL_MONTHS = frozenset(
    """
    januar jänner februar feber märz april mai juni juli august september oktober november dezember
    janvier février mars avril juin juillet août septembre octobre novembre décembre
    enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre
    januari februari maart mei augustus
    """.split()
)
_ORDINAL_BEFORE = frozenset("am im vom zum beim der die das dem den des zur bis seit ab ihr ihre sein seine".split())
_ORDINAL = re.compile(r"(?:^|(?<=\s))(\w+\s+)?\d{1,3}$")
_NEXT_WORD = re.compile(r"\s+(\w+)")


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the period at ``dot`` closes an abbreviation or an initial (``Dr.``, ``J.``)."""
    m = _WORD_BEFORE.search(text, max(0, dot - 12), dot + 1)
    if not m:
        return False
    word = m.group(1).lower()
    nxt = text[dot + 1 : dot + 3].lstrip()[:1]
    if len(m.group(1)) == 1 and m.group(1).isupper():
        return nxt.isupper() and nxt.isascii()  # an initial before a name: "J. Smith"
    if word in _CAN_END:
        return not nxt.isupper()
    return word in ABBREVIATIONS


def _enumerators(text: str) -> dict[int, int]:
    """The periods that close list numbers, each with where its number starts: numbers in the position of
    _ENUMERATOR that count 1, 2, 3 ... in order, the first after anything that position allows, the next ones
    after a sentence's end, a semicolon or a line break ("Wins: 1. Losses: 2." is two statements)."""
    found = []
    for m in re.finditer(r"\d{1,2}\.(?=\s|$)", text):
        dot = m.end() - 1
        e = _ENUMERATOR.search(text, max(0, dot - 8), dot + 1)
        if e:
            before = text[max(0, e.start() - 2) : e.start()].rstrip(" \t")[-1:]  # what the lookbehind saw
            found.append((int(e.group(1)), e.start(1), dot, before == ":"))
    out: dict[int, int] = {}
    run: list[tuple[int, int]] = []
    for n, start, dot, after_colon in found + [(0, 0, -1, False)]:
        if run and n == len(run) + 1 and not after_colon:
            run.append((dot, start))
            continue
        if len(run) >= 2:
            out.update(run)
        run = [(dot, start)] if n == 1 else []
    return out


def _is_ordinal(text: str, dot: int) -> bool:
    """True when the period at ``dot`` closes an ordinal: "am 24. Mai", "der 2. Weltkrieg" (never a year's:
    "opened in 1889. May ..." ends its sentence)."""
    m = _ORDINAL.search(text, max(0, dot - 16), dot)
    nxt = _NEXT_WORD.match(text, dot + 1)
    if m is None or nxt is None:
        return False
    word = nxt.group(1)
    if word.lower() in ORDINAL_MONTHS:
        return True
    before = (m.group(1) or "").strip().lower()
    return before in _ORDINAL_BEFORE and word[:1].isupper()


def _lowercase_follows(text: str, end: int) -> bool:
    rest = text[end : end + 4].lstrip()
    return bool(rest) and rest[0].isalpha() and rest[0].islower()


_DOTTED = re.compile(r"(?:^|(?<=[\s(\[\"'\u201c]))(?:[^\W\d_]\.)*[^\W\d_]$")  # "u.s", "a.m", "e.g", an initial "j"


def _continues(text: str, m: re.Match) -> bool:
    """A period that a lower-case word follows ends no sentence when it closes an ellipsis ("and then...
    we left") or a dotted abbreviation or initial ("the U.S. president", "at 10 a.m. sharp"). Any other one
    does: lower-cased and tokenised text ("it is a great job. the species ...", "friday . locke replaced")
    starts its sentences in lower case."""
    dots = m.group().rstrip(CLOSERS)
    if len(dots) > 1 or dots == "\u2026":
        return True
    return bool(_DOTTED.search(text, max(0, m.start() - 12), m.start()))


def _line_break_splits(text: str, nl_start: int, nl_end: int) -> bool:
    """Whether a single line break (at [nl_start, nl_end)) ends the sentence running across it."""
    line_start = text.rfind("\n", 0, nl_start) + 1
    prev_line = text[line_start:nl_start].strip()
    next_line_end = text.find("\n", nl_end)
    next_line = text[nl_end : next_line_end if next_line_end != -1 else len(text)]
    if not prev_line or not next_line.strip():
        return True
    if _BULLET.match(next_line) or _BULLET.match(prev_line) or _SPEAKER.match(next_line):
        return True
    first = next_line.lstrip()[:1]
    last = prev_line[-1]
    latin_prev = any("a" <= c.lower() <= "z" for c in prev_line[-20:])
    return latin_prev and (first.isupper() or first.isdigit()) and last not in ",;:-(\u2013"


def ends_a_sentence(text: str) -> bool:
    """The text ends with a sentence's end: a terminator (then closing quotes, brackets, markdown emphasis or an
    emoji), not the period of an abbreviation (``Dr.``). A period after a number counts as an end ("opened in
    1889."), though a cut may fall there ("is 2." of "2.5")."""
    m = _ENDS.search(text)
    if m is None:
        return False
    dot = m.start(1)
    return not (m.group(1) == "." and _is_abbreviation(text, dot))


def split_sentences(text: str) -> list[Sentence]:
    """Sentences of ``text`` as exact slices: ``text[s.start:s.end] == s.text``, whitespace trimmed."""
    cuts: set[int] = set()
    enumerators = _enumerators(text) if "1." in text else {}
    first = len(text) - len(text.lstrip())  # where the text's first word starts
    for m in _TERMINATOR.finditer(text):
        end = m.end()
        if m.group() == "." and (number := enumerators.get(m.start())) is not None:
            if number > first:
                cuts.add(number)  # the item starts a sentence; its number does not end one
            continue
        if m.group().startswith(".") and len(m.group().rstrip(CLOSERS)) == 1 and _is_abbreviation(text, m.start()):
            continue
        if m.group() == "." and _is_ordinal(text, m.start()):
            continue
        if m.group()[:1] in ".\u2026" and _lowercase_follows(text, end) and _continues(text, m):
            continue
        cuts.add(end)
    for m in _BLANK_LINE.finditer(text):
        cuts.add(m.start())
    for m in _NEWLINE.finditer(text):
        if m.start() in cuts:
            continue
        if _line_break_splits(text, m.start(), m.end()):
            cuts.add(m.start())
    sentences: list[Sentence] = []
    last = 0
    for cut in sorted(cuts) + [len(text)]:
        _append_trimmed(text, last, cut, sentences)
        last = cut
    return sentences


@text_memo(max_chars=100_000)  # the two readings of a source follow each other closely
def sentences_of(text: str) -> tuple[Sentence, ...]:
    """:func:`split_sentences` kept by text, for a text several stages read (a source: its search index and its
    checks' views split it once between them)."""
    return tuple(split_sentences(text))


def _append_trimmed(text: str, start: int, end: int, out: list[Sentence]) -> None:
    chunk = text[start:end]
    stripped = chunk.strip()
    if not stripped:
        return
    s = start + (len(chunk) - len(chunk.lstrip()))
    e = s + len(stripped)
    out.append(Sentence(s, e, text[s:e]))


def sentence_index(sentences: list[Sentence], start: int, end: int) -> int | None:
    """Index of the sentence that contains the whole span [start, end), or None when it straddles two."""
    for i, s in enumerate(sentences):
        if s.start <= start and end <= s.end:
            return i
        if s.start > start:
            break
    return None
