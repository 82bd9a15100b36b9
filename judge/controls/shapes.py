"""What the control rules read in a source: its claim-like sentences (offsets exact), numbers and their
shapes, the shape of a name, and what a record is about. Shared by the data the rules draw from and the rules."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from judge.controls.lexicon import NOT_NAMES, NOT_SUBJECTS
from judge.models import Record
from judge.stages.numbers import GROUPED, NUMBER, canon_number, number_kind
from judge.text import content_words, normalize, split_sentences
MIN_WORDS, MIN_CHARS, MAX_CHARS = 5, 25, 320
_SPEAKER = re.compile(r"[^\n:.?!]{1,60}:\s+")
WORD = re.compile(r"\w+")
_STATEMENT_END = re.compile(r"[.!\u06d4][\"'\u05f3\u05f4\u201d\u2019\u00bb)\]]*$")


@dataclass(frozen=True)
class Sentence:
    record_id: str
    doc_id: str
    start: int
    end: int
    text: str


def claim_sentences(record_id: str, doc_id: str, text: str) -> list[Sentence]:
    """Sentences that read as claims: a speaker prefix ("Name: ") dropped, no line break inside, 5+ words."""
    out = []
    for s in split_sentences(text):
        start = s.start
        m = _SPEAKER.match(text, start, s.end)
        if m and m.end() < s.end:
            start = m.end()
        body = text[start : s.end]
        if "\n" in body or not (MIN_CHARS <= len(body) <= MAX_CHARS):
            continue
        words_ = WORD.findall(body)
        if len(words_) < MIN_WORDS:
            continue
        if not _STATEMENT_END.search(body) or body[0].islower() or body[0] in "#|*-" or "|" in body:
            continue  # headings, menus, fragments and questions are not claims
        latin = [w for w in words_ if w[0].isascii() and w[0].isalpha()]
        if len(latin) >= MIN_WORDS and sum(w[0].isupper() for w in latin) > 0.5 * len(latin):
            continue  # a list of names or a title-case heading
        out.append(Sentence(record_id, doc_id, start, s.end, body))
    return out


def name_shape(name: str) -> str | None:
    """The kind a name is swapped within: acronyms with acronyms, n-word names with n-word names (titles
    such as ד"ר or Dr are not names)."""
    if normalize(name).text.strip(".") in NOT_NAMES:
        return None
    if '"' in name or "\u05f4" in name or (name.isupper() and 2 <= len(name) <= 6 and " " not in name):
        return "acronym"
    n = len(name.split())
    if len(name) > 40 or (name.isupper() and n > 1) or "'" in name or "\u2019" in name:
        return None  # headings and shouted phrases are not names
    return f"name{n}" if 2 <= n <= 4 and name[0].isupper() else None  # one capitalised word may be a weekday


# -- contradicted ---------------------------------------------------------------------------------------


_LEADING_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_DIGITS = re.compile(r"\d+")
_LETTER_BEFORE = re.compile(r"[A-Za-z]-?$")
_LETTER_OR_RANGE_AFTER = re.compile(r"[^\W\d_]|-\d")


def magnitude(number: str) -> float:
    m = _LEADING_NUMBER.match(number.replace(",", ""))
    return math.log10(max(float(m.group()), 0.1)) if m else 0.0


def number_shape(surface: str) -> str:
    """A number's kind (percent, year, time, number) and its written shape: 4.5% swaps with 7.2%, never
    19.08.2019, and "1,100" with "2,350", never with the year 1951."""
    written = surface.replace(" ", "")
    canon = canon_number(written)  # "1,100" -> 1100: its shape is a whole number's, never a decimal comma's ("12,5")
    kind = "number" if GROUPED.search(written) else number_kind(canon)
    return kind + ":" + _DIGITS.sub("9", canon)


def number_matches(text: str) -> list[re.Match]:
    """Numbers that stand alone: not part of a model name (F-35) or a word (1970s)."""
    return [m for m in NUMBER.finditer(text) if not _LETTER_BEFORE.search(text[max(0, m.start() - 2) : m.start()]) and not _LETTER_OR_RANGE_AFTER.match(text[m.end() : m.end() + 2])]


# -- unsupported ----------------------------------------------------------------------------------------


def subject_of(record: Record) -> str | None:
    """What the record is about: its source title, else the longest run of the question's words (2-4, content
    words at both ends) found in its source, else the question's content word most frequent in the source."""
    if record.sources[0].title:
        return record.sources[0].title.strip()
    source = " ".join(s.text for s in record.sources)
    tokens = WORD.findall(record.question)
    content = set(content_words(normalize(record.question).text))
    for n in (4, 3, 2):
        best = None
        for i in range(len(tokens) - n + 1):
            gram = tokens[i : i + n]
            if any(g.lower() not in content or g in NOT_SUBJECTS for g in (gram[0], gram[-1])):
                continue
            phrase = " ".join(gram)
            count = source.count(phrase)
            if count and (best is None or count > best[0]):
                best = (count, phrase)
        if best:
            return best[1]
    counted = sorted(((source.count(w), w) for w in tokens if w.lower() in content and w not in NOT_SUBJECTS and len(w) > 2), reverse=True)
    return counted[0][1] if counted and counted[0][0] else None


def named_subject(record: Record) -> str | None:
    """What the record is about where that is a name its sources write: its source title, else the longest
    name of its question (Latin names: a phrase of a Hebrew question is as often "almost no projects"). An
    "about" control puts a claim on it."""
    from judge.stages.names import names_in

    source = " ".join(s.text for s in record.sources)
    title = (record.sources[0].title or "").strip()
    if title and len(title.split()) <= 6 and title in source:
        return title
    names = [n for n in names_in(record.question) if name_shape(n) not in (None, "acronym") and n in source]
    return max(names, key=len) if names else None
