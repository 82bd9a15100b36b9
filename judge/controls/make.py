"""Control claims: claims whose label is known by construction, made from the run's own claims, so that no
surface feature (length, words shared with the question or the passages, near-copy of a passage, template,
a call holding only controls) tells them from the real claims a judge sees (DESIGN.md, "Control claims are
adversarial by design").

The bases are the answer's claims the search verified (:func:`verified`: every content word in the best
candidate, numbers and names as the source states them, no conflict in the source). From each:

- supported: the verified claim as it stands (or reworded by rule where triage would settle it as it is);
- contradicted: the verified claim with one fact the source states changed: a number, year or month swapped
  for another of the same kind found elsewhere in the data, a name swapped for one of the same shape that
  the record never mentions, or a negation inserted or removed;
- unsupported: the verified claim with what it is about (the record's subject, or a name the question
  asks about) swapped for another record's subject the source never mentions; where no claim names it, a
  claim-like sentence of another record on the nearest topic.

Every contradicted or unsupported control is checked against its own record's sources with the project's
search: it must not be found verbatim there. Every choice is drawn from a seeded generator keyed by record
and answer, so the same data and seed give the same controls. ``origin`` is the source span the base claim
was verified on (it slices its source exactly).
"""

from __future__ import annotations

import hashlib
import heapq
import math
import random
import re
import sys
from collections import ChainMap, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from pydantic import BaseModel, Field

from judge.controls.lexicon import (
    LEAD_INS,
    NEGATION,
    NOT_NAMES,
    NOT_SUBJECTS,
    REWRITES,
    SYNONYMS,
    month_pattern,
)
from judge.models import Record, Span
from judge.results import ClaimChecks, ControlClaim, ControlKind
from judge.verdicts import CONTROL_LABELS, SUPPORTED
from judge.search import Index
from judge.stages.support import VERBATIM_METHODS, free_supported, support_features
from judge.stages.names import CAPITALISED_STOPWORDS, names_in
from judge.stages.numbers import NUMBER, canon_number, number_kind
from judge.text import content_words, detect_language, normalize, split_sentences

CONTRADICTION_KINDS: tuple[str, ...] = ("number", "date", "entity", "negation")
UNRELATED_MAX_SCORE = 0.5  # an unsupported control's best candidate in its record scores below this
MIN_WORDS, MIN_CHARS, MAX_CHARS = 5, 25, 320
_SPEAKER = re.compile(r"[^\n:.?!]{1,60}:\s+")
_WORD = re.compile(r"\w+")
_STATEMENT_END = re.compile(r"[.!\u06d4][\"'\u05f3\u05f4\u201d\u2019\u00bb)\]]*$")


class ControlsConfig(BaseModel):
    """How many controls a run mixes into its judges' calls, and what the gate asks of a judge on them.

    A run asks for ``per_label`` controls of each label (spread over its records), or ``rate`` per real
    claim where that is more, at most ``max_per_answer`` in one answer's calls. The gate (on unless
    ``gate: false``) passes a model judge only when the one-sided ``confidence`` lower bound of its recall on
    every label clears ``floor``; bench/README.md gives the false-pass rates behind the defaults."""

    model_config = {"extra": "forbid"}
    enabled: bool = True
    gate: bool = True
    floor: float = Field(0.4, gt=0, lt=1)
    confidence: float = Field(0.95, ge=0.5, lt=1)
    per_label: int = Field(24, ge=1, le=10_000)
    rate: float = Field(0.125, ge=0, le=1)  # controls per real claim (about 1 per 8)
    max_per_answer: int = Field(24, ge=1, le=1000)  # a judge call holds real claims too: at most this many controls
    seed: int = 0


@dataclass(frozen=True)
class _Sentence:
    record_id: str
    doc_id: str
    start: int
    end: int
    text: str


DONOR_SAMPLE = 500  # records an unsupported control may borrow a sentence from: a fixed sample, so memory stays flat
DONOR_CHARS = 8_000  # of a donor's sources (the first characters) kept for its sentences and words
POOL_CAP = 2000  # numbers of one shape, names, months of one language: the first seen are kept
PROFILE_CACHE = 8  # records worked on whose sentences, words and search indexes are kept (recomputed when evicted)


@dataclass(frozen=True)
class _Profile:
    """What the rules need from one record: its language, claim-like sentences and content words."""

    language: str
    sentences: list[_Sentence]
    words: frozenset[str]


def _language(record: Record) -> str:
    return detect_language(record.question + " " + record.sources[0].text[:2000])


def _profile(record: Record) -> _Profile:
    return _Profile(_language(record), _sentences_of(record.id, [(s.doc_id, s.text) for s in record.sources]), _words_of(s.text for s in record.sources))


def _sentences_of(record_id: str, texts) -> list[_Sentence]:
    return [s for doc_id, text in texts for s in _claim_sentences(record_id, doc_id, text)]


def _words_of(texts) -> frozenset[str]:
    """Content words, interned: the donor sample holds each distinct word once, not once per record."""
    words: set[str] = set()
    for text in texts:
        words.update(content_words(normalize(text).text))
    return frozenset(sys.intern(w) for w in words)


@dataclass(frozen=True)
class _Donor:
    """A record an unsupported control may borrow a sentence from, kept small: its language, its content
    words and the first DONOR_CHARS of its sources (a prefix: offsets stay exact); its sentences are split
    again when it is chosen."""

    record_id: str
    language: str
    words: frozenset[str]
    texts: tuple[tuple[str, str], ...]  # (doc_id, text prefix)
    has_sentences: bool
    claims: tuple[str, ...] = ()  # what the dataset says of it in claim form: gold claims, reference and recorded answers' sentences

    @classmethod
    def of(cls, record: Record, language: str, sentences: list[_Sentence] | None = None) -> _Donor:
        """``sentences``: the record's claim sentences, where the caller has them already."""
        claims = _answer_claims(record)
        if sum(len(s.text) for s in record.sources) <= DONOR_CHARS:
            texts = tuple((s.doc_id, s.text) for s in record.sources)
            if sentences is None:
                sentences = _sentences_of(record.id, texts)
            return cls(record.id, language, _words_of(t for _, t in texts), texts, bool(sentences), claims)
        out, left = [], DONOR_CHARS
        for src in record.sources:
            if left <= 0:
                break
            out.append((src.doc_id, src.text[:left]))
            left -= len(out[-1][1])
        return cls(record.id, language, _words_of(t for _, t in out), tuple(out), bool(_sentences_of(record.id, out)), claims)

    def sentences(self) -> list[_Sentence]:
        return _sentences_of(self.record_id, self.texts)


MAX_DONOR_CLAIMS = 12


def _answer_claims(record: Record) -> tuple[str, ...]:
    """Claims the dataset itself makes about a record (gold claims, then the sentences of its reference and
    recorded answers): real claims in the answers' own style, for another record's unsupported controls."""
    found = [c.text for c in record.claims if getattr(c, "text", None)]
    for answer in [record.reference_answer or ""] + [a.answer for a in record.answers]:
        found += [s.text for s in split_sentences(answer)] if answer else []
    out = [t.strip() for t in found if MIN_CHARS <= len(t.strip()) <= MAX_CHARS and len(_WORD.findall(t)) >= 3 and not t.rstrip().endswith("?")]
    return tuple(dict.fromkeys(out))[:MAX_DONOR_CLAIMS]


def _donor_rank(record_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(record_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


@dataclass
class ControlData:
    """What the rules need from the whole run's data, gathered in one streaming pass and bounded in size, so
    memory does not grow with the input: the numbers, months and names seen (the first POOL_CAP of each
    kind), and the profiles of a fixed sample of donor records for unsupported controls (the DONOR_SAMPLE
    with the lowest hash of their id, the first DONOR_CHARS of their sources). On data within those bounds
    the controls are those of a pass that kept everything. The records worked on are looked up in
    ``records`` (a run passes each one in with :meth:`seeing`); their profiles and search indexes are
    computed on demand and kept for the last PROFILE_CACHE records."""

    records: Mapping[str, Record]
    donors: dict[str, _Donor] = field(default_factory=dict)
    numbers: dict[str, list[str]] = field(default_factory=dict)  # kind -> canonical numbers, first seen first
    months: dict[str, list[str]] = field(default_factory=dict)  # language -> month names seen
    names: list[str] = field(default_factory=list)
    subjects: dict[str, list[str]] = field(default_factory=dict)  # language -> records' subjects seen (subject_of)
    _profiles: OrderedDict = field(default_factory=OrderedDict, repr=False)
    _indexes: OrderedDict = field(default_factory=OrderedDict, repr=False)

    @classmethod
    def from_records(cls, records: Iterable[Record], keep: bool = True) -> ControlData:
        """One pass over ``records`` (a list or a stream); ``keep``: hold them for look-up by id (small data,
        tests); a run keeps none and passes each record in when its turn comes."""
        data = cls({})
        numbers: dict[str, dict[str, None]] = {}
        months: dict[str, dict[str, None]] = {}
        names: dict[str, None] = {}
        subjects: dict[str, dict[str, None]] = {}
        sample: list[tuple[int, str]] = []  # (-rank, id): a max-heap of the DONOR_SAMPLE lowest ranks
        for r in records:
            if keep:
                data.records[r.id] = r
            # Only what is kept is computed: a record's sentences while the names pool fills, its donor
            # profile when its id ranks into the sample (about DONOR_SAMPLE x ln(records / DONOR_SAMPLE)).
            language = _language(r)
            sentences = _sentences_of(r.id, [(s.doc_id, s.text) for s in r.sources]) if len(names) < POOL_CAP else None
            rank = _donor_rank(r.id)
            if len(sample) < DONOR_SAMPLE or rank < -sample[0][0]:
                if len(sample) < DONOR_SAMPLE:
                    heapq.heappush(sample, (-rank, r.id))
                else:
                    del data.donors[heapq.heapreplace(sample, (-rank, r.id))[1]]
                data.donors[r.id] = _Donor.of(r, language, sentences)
            seen_subjects = subjects.setdefault(language, {})
            if len(seen_subjects) < POOL_CAP and (subject := subject_of(r)) and len(subject) <= 60 and len(subject.split()) >= 2:
                seen_subjects[subject] = None
            pattern = month_pattern(language)
            for src in r.sources:
                for m in _numbers(src.text):
                    canon = canon_number(m.group())
                    kind = numbers.setdefault(number_shape(canon), {})
                    if len(kind) < POOL_CAP:
                        kind[canon] = None
                if pattern is not None:
                    seen = months.setdefault(language, {})
                    for m in pattern.finditer(src.text):
                        if len(seen) < POOL_CAP:
                            seen[m.group(1)] = None
            if sentences is not None:
                for s in sentences:
                    names.update(dict.fromkeys(n for n in names_in(s.text) if _name_shape(n) is not None))
        data.numbers = {k: list(v) for k, v in numbers.items()}
        data.months = {k: list(v) for k, v in months.items()}
        data.names = list(names)[:POOL_CAP]
        data.subjects = {k: list(v) for k, v in subjects.items()}
        return data

    def seeing(self, record: Record) -> ControlData:
        """This data with ``record`` among its records (the caches are shared, nothing is copied)."""
        if self.records.get(record.id) is record:
            return self
        return replace(self, records=ChainMap({record.id: record}, self.records))

    def profile(self, record_id: str) -> _Profile:
        """A record's own profile, from all its sources (a donor's may be cut)."""
        return self._cached(self._profiles, record_id, lambda: _profile(self.records[record_id]))

    def language(self, record_id: str) -> str:
        return self.profile(record_id).language

    def sentences(self, record_id: str) -> list[_Sentence]:
        return self.profile(record_id).sentences

    def words(self, record_id: str) -> frozenset[str]:
        return self.profile(record_id).words

    def indexes(self, record_id: str) -> list[Index]:
        return self._cached(self._indexes, record_id, lambda: [Index(s.text, s.doc_id) for s in self.records[record_id].sources])

    @staticmethod
    def _cached(cache: OrderedDict, key: str, make):
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        value = cache[key] = make()
        while len(cache) > PROFILE_CACHE:
            cache.popitem(last=False)
        return value

    def best_match(self, record_id: str, text: str):
        """The search's best candidate for ``text`` in the record's sources (None when nothing matches)."""
        found = [c for ix in self.indexes(record_id) for c in ix.search(text, 1)]
        return max(found, key=lambda c: c.score) if found else None


def _claim_sentences(record_id: str, doc_id: str, text: str) -> list[_Sentence]:
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
        words_ = _WORD.findall(body)
        if len(words_) < MIN_WORDS:
            continue
        if not _STATEMENT_END.search(body) or body[0].islower() or body[0] in "#|*-" or "|" in body:
            continue  # headings, menus, fragments and questions are not claims
        latin = [w for w in words_ if w[0].isascii() and w[0].isalpha()]
        if len(latin) >= MIN_WORDS and sum(w[0].isupper() for w in latin) > 0.5 * len(latin):
            continue  # a list of names or a title-case heading
        out.append(_Sentence(record_id, doc_id, start, s.end, body))
    return out


def _name_shape(name: str) -> str | None:
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


# -- supported ------------------------------------------------------------------------------------------


def _match_case(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _split_terminal(text: str) -> tuple[str, str]:
    m = re.search(r"[.!?\u061f\u06d4]+[\"'\u05f3\u05f4\u201d\u2019\u00bb)\]]*$", text)
    return (text[: m.start()], m.group()) if m else (text, "")


def move_lead_in(text: str, language: str) -> str | None:
    """"According to X, Y." -> "Y, according to X." and the reverse; None when neither form applies."""
    body, end = _split_terminal(text)
    lead_ins = LEAD_INS.get(language, ())
    comma = "،" if language == "Arabic" and "، " in body else ","
    first = body.find(comma + " ")  # a clause comma, not a thousands separator
    lower = body.lower()
    if 0 < first < 0.6 * len(body) and any(lower.startswith(w + " ") for w in lead_ins):
        lead, rest = body[:first].strip(), body[first + 1 :].strip()
        if len(_WORD.findall(rest)) >= 3:
            lead = lead[:1].lower() + lead[1:] if lead.split()[0].lower() in lead_ins or lead.split()[0] in CAPITALISED_STOPWORDS else lead
            return f"{rest[:1].upper() + rest[1:]}{comma} {lead}{end}"
    last = body.rfind(comma + " ")
    tail = body[last + 1 :].strip() if last > 0 else ""
    if tail and len(tail) < 0.5 * len(body) and any(tail.lower().startswith(w + " ") for w in lead_ins):
        head = body[:last].strip()
        if len(_WORD.findall(head)) >= 3:
            head = head[:1].lower() + head[1:] if head.split()[0] in CAPITALISED_STOPWORDS else head
            return f"{tail[:1].upper() + tail[1:]}{comma} {head}{end}"
    return None


def swap_synonyms(text: str, language: str) -> str | None:
    """Words of the language's synonym table replaced (whole words; case of the first letter kept)."""
    table = SYNONYMS.get(language, {})
    if not table:
        return None
    flags = re.IGNORECASE if language in ("English", "Portuguese", "Spanish") else 0
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(rf"(?<!\w)({'|'.join(re.escape(k) for k in keys)})(?!\w)", flags)
    out = pattern.sub(lambda m: _match_case(table[m.group(1).lower()] if flags else table[m.group(1)], m.group(1)), text)
    return out if out != text else None


def rewrite_forms(text: str, language: str) -> str | None:
    """Meaning-keeping rewrites of the language's table ("12%" -> "12 percent", Hebrew "כ־12" -> "בערך 12")."""
    out = text
    for pattern, replacement in REWRITES.get(language, ()):
        out = re.sub(pattern, replacement, out)
    return out if out != text else None


def reword(text: str, language: str) -> str | None:
    """The sentence reworded by every rule that applies (clause order, synonyms, number forms), or None."""
    out = text
    for rule in (move_lead_in, swap_synonyms, rewrite_forms):
        out = rule(out, language) or out
    return out if out != text else None


# -- contradicted ---------------------------------------------------------------------------------------


_LEADING_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_DIGITS = re.compile(r"\d+")
_LETTER_BEFORE = re.compile(r"[A-Za-z]-?$")
_LETTER_OR_RANGE_AFTER = re.compile(r"[^\W\d_]|-\d")


def _magnitude(number: str) -> float:
    m = _LEADING_NUMBER.match(number.replace(",", ""))
    return math.log10(max(float(m.group()), 0.1)) if m else 0.0


def number_shape(canon: str) -> str:
    """A number's kind (percent, year, time, number) and its written shape: 4.5% swaps with 7.2%, never 19.08.2019."""
    return number_kind(canon) + ":" + _DIGITS.sub("9", canon)


def _numbers(text: str) -> list[re.Match]:
    """Numbers that stand alone: not part of a model name (F-35) or a word (1970s)."""
    return [m for m in NUMBER.finditer(text) if not _LETTER_BEFORE.search(text[max(0, m.start() - 2) : m.start()]) and not _LETTER_OR_RANGE_AFTER.match(text[m.end() : m.end() + 2])]


def swap_number(text: str, record_id: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    """One number replaced by a different one of the same kind (percent, year, time, number) from the data,
    of a similar size where the data has one (same record first)."""
    found = _numbers(text)
    if not found:
        return None
    present = {canon_number(m.group()).rstrip("%") for m in found}
    m = rng.choice(found)
    canon = canon_number(m.group())
    own = {canon_number(n.group()) for src in data.records[record_id].sources for n in _numbers(src.text)}
    pool = [n for n in data.numbers.get(number_shape(canon), []) if n.rstrip("%") not in present]
    if not pool:
        return None
    size = _magnitude(canon)
    pool.sort(key=lambda n: (abs(_magnitude(n) - size) > 1, n not in own, abs(_magnitude(n) - size), n))
    new = rng.choice(pool[:3]).rstrip("%").replace(" ", "")
    suffix = m.group()[len(m.group().rstrip("% ")) :]  # keep the original's "%" or " %"
    surface = new + suffix
    return text[: m.start()] + surface + text[m.end() :], f"{m.group()} -> {surface}"


def swap_month(text: str, language: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    pattern = month_pattern(language)
    found = list(pattern.finditer(text)) if pattern else []
    if not found:
        return None
    m = rng.choice(found)
    old = m.group(1)
    in_text = {x.group(1).lower() for x in found}
    pool = [x for x in data.months.get(language, []) if x.lower() not in in_text]
    if not pool:
        return None
    new = _match_case(rng.choice(pool), old)
    return text[: m.start(1)] + new + text[m.end(1) :], f"{old} -> {new}"


def swap_name(text: str, record_id: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    """A name replaced by one of the same shape that appears in another record and nowhere in this one."""
    own_text = " ".join(s.text for s in data.records[record_id].sources)
    names = [n for n in names_in(text) if _name_shape(n) not in (None, "acronym") and text.find(n) > 0]  # an acronym may be a unit
    if not names:
        return None
    old = rng.choice(names)
    pool = [n for n in data.names if _name_shape(n) == _name_shape(old) and n not in own_text and old not in n]
    if not pool:
        return None
    new = rng.choice(pool)
    at = text.find(old)
    return text[:at] + new + text[at + len(old) :], f"{old} -> {new}"


def flip_negation(text: str, language: str) -> tuple[str, str] | None:
    """The first negation rule of the language that applies: a negation removed, else one inserted."""
    rules = NEGATION.get(language, {})
    for direction in ("remove", "insert"):
        for pattern, replacement in rules.get(direction, ()):
            flags = re.IGNORECASE if language in ("English", "Portuguese", "Spanish") else 0
            out, n = re.subn(pattern, replacement, text, count=1, flags=flags)
            if n and out != text:
                return out, f"negation {'removed' if direction == 'remove' else 'inserted'}"
    return None


# -- unsupported ----------------------------------------------------------------------------------------


def subject_of(record: Record) -> str | None:
    """What the record is about: its source title, else the longest run of the question's words (2-4, content
    words at both ends) found in its source, else the question's content word most frequent in the source."""
    if record.sources[0].title:
        return record.sources[0].title.strip()
    source = " ".join(s.text for s in record.sources)
    tokens = _WORD.findall(record.question)
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


def _key_entity(text: str, record: Record) -> str | None:
    """What a claim is about: the record's subject where the claim names it, else its longest name that the
    question names too, else its first name (a claim about the record's subject names it, or one of its parts)."""
    subject = subject_of(record)
    if subject and len(subject.split()) >= 2 and _whole(subject, text):  # one word may be a verb or an adjective
        return subject
    names = [n for n in names_in(text) if _name_shape(n) not in (None, "acronym") and _whole(n, text)]
    asked = [n for n in names if n in record.question]
    pick = max(asked, key=len) if asked else (names[0] if names else None)
    return pick


def _whole(phrase: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def swap_subject(text: str, record_id: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    """The claim's key entity replaced by another record's subject (or a name of the data) of the same
    language that its own sources never mention: the same sentence, now about something the source is silent
    on. Its length, its words shared with the question and passage, and its similarity stay a real claim's."""
    record = data.records[record_id]
    old = _key_entity(text, record)
    if not old:
        return None
    own = normalize(" ".join(s.text for s in record.sources)).text
    old_words = set(_WORD.findall(old.lower()))
    language = data.language(record_id)
    pool = [x for x in data.subjects.get(language, []) if x != old]
    if _name_shape(old):
        pool += [n for n in data.names if _name_shape(n) == _name_shape(old)]
    pool = [x for x in dict.fromkeys(pool) if normalize(x).text not in own and not (set(_WORD.findall(x.lower())) & old_words)]
    if not pool:
        return None
    new = rng.choice(sorted(pool))
    new = new[:1].upper() + new[1:] if text.startswith(old) else new
    at = re.search(rf"(?<!\w){re.escape(old)}(?!\w)", text)
    return text[: at.start()] + new + text[at.end() :], f"{old} -> {new} (absent from the source)"


def unrelated_claim(record_id: str, data: ControlData, rng: random.Random, turn: int = 0) -> tuple[str, _Sentence] | None:
    """A claim-like sentence of another record on the nearest topic (most words shared with this record's
    question), as it stands: a last resort where no claim of the answer names what it is about."""
    record = data.records[record_id]
    language = data.language(record_id)
    asked = set(content_words(normalize(record.question).text))
    donors = [r for r, d in data.donors.items() if r != record_id and d.language == language and (d.has_sentences or d.claims)]
    if not donors:
        return None
    donors.sort(key=lambda r: (not data.donors[r].claims, -len(asked & data.donors[r].words), r))
    near = donors[: max(1, min(3, len(donors)))]
    donor = near[turn % len(near)]  # the nth control of a record takes the next donor, then the donor's next claim
    if data.donors[donor].claims:  # a real claim of another record, as the dataset states it
        claims = sorted(data.donors[donor].claims, key=lambda t: (-len(asked & set(content_words(normalize(t).text))), t))
        text = claims[(turn // len(near)) % len(claims)]
        return text, _Sentence(donor, "", 0, 0, "")
    sentences = data.donors[donor].sentences()
    sentences.sort(key=lambda s: (-len(asked & set(content_words(normalize(s.text).text))), s.start))
    sentence = rng.choice(sentences[: max(1, min(3, len(sentences)))])
    return sentence.text, sentence


# -- the claims controls are made from ------------------------------------------------------------------


@dataclass(frozen=True)
class Verified:
    """A real claim the search verified: every content word of it in its best candidate, whose number and
    names it states as the source does, with no conflict anywhere in the source. Its label is known:
    supported. ``triaged``: found verbatim, so triage settles it (as it would settle it shown as a control)."""

    text: str
    span: Span  # where the source states it (the part of the best candidate sharing most of its words)
    triaged: bool


def verified(text: str, candidates: list, checks, triaged: bool | None = None) -> Verified | None:
    """The claim as a base for controls, or None where the search cannot vouch for it. ``triaged``: whether
    triage settles it (the pipeline knows; else the verbatim rule's necessary part is used)."""
    if not candidates or text.rstrip().endswith(("?", "\u061f", ":")):
        return None
    f = support_features(text, candidates[:1], checks)
    if f.conflicts or f.mismatches or f.numbers_missing or f.names_missing or f.coverage < 1.0 or f.words < 3:
        return None
    mine = set(content_words(normalize(text).text))
    part = max(candidates[0].parts, key=lambda p: len(mine & set(content_words(normalize(p.excerpt).text))))  # first of the best
    return Verified(text, Span(doc_id=part.doc_id, start_char=part.start_char, end_char=part.end_char, excerpt=part.excerpt),
                    free_supported(f) if triaged is None else triaged)


def gold_bases(record: Record, candidates_of) -> list[Verified]:
    """The record's own gold statements as bases: its claims labelled supported (or with a verified gold
    attribution) and its reference answer. Their label is the data set's, so they need no search to vouch
    for them, and a short answer ("1892", "David Ben-Gurion") gives controls as short as the answers a QA
    run judges. ``candidates_of(text)``: the search's candidates, for the span a control points at."""
    texts = [c.text for c in record.claims if c.label == SUPPORTED or (c.label is None and any(a.verified for a in c.attribution))]
    if record.reference_answer and record.reference_answer.strip():
        texts.append(record.reference_answer.strip())
    out = []
    for text in dict.fromkeys(t.strip() for t in texts if t and t.strip()):
        found = candidates_of(text)
        if not found or len(text) > MAX_CHARS:
            continue
        part = found[0].parts[0]
        f = support_features(text, found[:1], ClaimChecks())
        out.append(Verified(text, Span(doc_id=part.doc_id, start_char=part.start_char, end_char=part.end_char, excerpt=part.excerpt), free_supported(f)))
    return out


# -- one answer's controls ------------------------------------------------------------------------------


def _found_verbatim(record_id: str, text: str, data: ControlData) -> bool:
    norm = normalize(text).text.strip(" .")
    if any(norm in normalize(s.text).text for s in data.records[record_id].sources):
        return True
    best = data.best_match(record_id, text)
    return best is not None and best.method in VERBATIM_METHODS


def _span(s: _Sentence) -> Span | None:
    return Span(doc_id=s.doc_id, start_char=s.start, end_char=s.end, excerpt=s.text) if s.text else None


def _supported_forms(base: Verified, language: str) -> list[tuple[str, ControlKind, str]]:
    """A verified claim shown as any claim is (unless triage would settle it), and its rewording."""
    out: list[tuple[str, ControlKind, str]] = []
    if not base.triaged:
        out.append((base.text, "claim", "a verified claim of the answer, as it stands"))
    reworded = reword(base.text, language)
    if reworded:
        out.append((reworded, "reworded", "a verified claim, reworded by rule"))
    return out


def _perturbed(base: Verified, record_id: str, language: str, data: ControlData, rng: random.Random) -> list[tuple[str, ControlKind, str]]:
    """The verified claim with one fact the source states changed: a number, a month, a name, a negation."""
    kinds = list(CONTRADICTION_KINDS)
    rng.shuffle(kinds)
    out: list[tuple[str, ControlKind, str]] = []
    for kind in kinds:
        if kind == "number":
            made = swap_number(base.text, record_id, data, rng)
        elif kind == "date":
            made = swap_month(base.text, language, data, rng)
        elif kind == "entity":
            made = swap_name(base.text, record_id, data, rng)
        else:
            made = flip_negation(base.text, language)
        if made is not None and not _found_verbatim(record_id, made[0], data):
            out.append((made[0], kind, made[1]))  # type: ignore[arg-type]
    return out


def controls_for_answer(
    record_id: str, bases: list[Verified], data: ControlData, count: int, seed: int = 0, key: str = "", offset: int = 0, first_id: int = 0
) -> list[ControlClaim]:
    """Up to ``count`` controls made from one answer's verified claims, labels taken in turn (supported,
    contradicted, unsupported) from ``offset``: a verified claim as it is (or reworded), with one stated fact
    changed, or with what it is about swapped for something the source never mentions. A label no rule can
    make here is skipped; when no claim of the answer names its subject, an unsupported control is a
    claim-like sentence of another record on the nearest topic. Pure: the same inputs give the same controls."""
    if count <= 0 or not bases:
        return []
    rng = random.Random(f"{seed}:{record_id}:{key}")
    language = data.language(record_id)
    order = list(bases)
    rng.shuffle(order)
    options: dict[str, list] = {label: [] for label in CONTROL_LABELS}
    for base in order:
        options[SUPPORTED] += [(base, *m) for m in _supported_forms(base, language)]
        options["contradicted"] += [(base, *m) for m in _perturbed(base, record_id, language, data, rng)]
        swapped = swap_subject(base.text, record_id, data, rng)
        if swapped and not _found_verbatim(record_id, swapped[0], data):
            options["unsupported"].append((base, swapped[0], "subject", swapped[1]))
    # one control per base and label first (breadth), then the rest of each base's forms
    for label, made in options.items():
        seen: set = set()
        first = [m for m in made if not (m[0].text in seen or seen.add(m[0].text))]
        options[label] = first + [m for m in made if not any(m is f for f in first)]
    out: list[ControlClaim] = []
    texts = {b.text for b in bases}
    failed: set[str] = set()
    turn = offset
    while len(out) < count and len(failed) < len(CONTROL_LABELS):
        label = CONTROL_LABELS[turn % len(CONTROL_LABELS)]
        turn += 1
        if label in failed:
            continue
        pick = None
        while options[label]:
            cand = options[label].pop(0)
            if cand[1] not in texts or label == SUPPORTED:
                pick = cand
                break
        if pick is None and label == "unsupported":
            unrelated = unrelated_claim(record_id, data, rng, first_id + len(out))
            if unrelated and unrelated[0] not in texts:
                text, sentence = unrelated
                best = data.best_match(record_id, text)
                if (best is None or best.score < UNRELATED_MAX_SCORE) and not _found_verbatim(record_id, text, data):
                    texts.add(text)
                    out.append(_control(record_id, first_id + len(out), text, label, "unrelated", f"a sentence of record {sentence.record_id}", sentence.record_id, _span(sentence)))
                    continue
        if pick is None:
            failed.add(label)
            continue
        base, text, kind, change = pick
        texts.add(text)
        out.append(_control(record_id, first_id + len(out), text, label, kind, change, record_id, base.span))
    return out


def _control(record_id: str, n: int, text: str, label: str, kind: str, change: str, origin_record: str, origin: Span | None) -> ControlClaim:
    return ControlClaim(
        id=f"control:{record_id}:{n}", record_id=record_id, text=text, label=label, kind=kind,
        origin_record_id=origin_record, origin=origin, change=change,
    )


def control_count(n_claims: int, rate: float, key: str, seed: int = 0) -> int:
    """Controls for an answer of ``n_claims`` claims: n x rate, the fraction rounded up with that probability
    (seeded by ``key``), so the expected count over a run is exactly rate x claims."""
    whole = n_claims * rate
    base = int(whole)
    return base + (1 if random.Random(f"{seed}:{key}:count").random() < whole - base else 0)


def floor_plan(record_ids: list[str], minimum: int) -> dict[str, int]:
    """At least ``minimum`` controls per run, spread over the records in turn (more each when there are fewer)."""
    if not record_ids or minimum <= 0:
        return {}
    plan: dict[str, int] = {}
    for i in range(minimum):
        rid = record_ids[i % len(record_ids)]
        plan[rid] = plan.get(rid, 0) + 1
    return plan
