"""What control rules draw from across a run: a bounded sample of donor records (their claim-like sentences,
claims, subject and words), pools of numbers, names, months and subjects, and the profile of the record being worked on.
Built in one pass over the records, holding none (memory stays flat at any size)."""

from __future__ import annotations

import hashlib
import heapq
import sys
from collections import ChainMap, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from judge.controls.lexicon import month_pattern
from judge.controls.shapes import MAX_CHARS, MIN_CHARS, Sentence, WORD, claim_sentences, name_shape, named_subject, number_matches, number_shape, subject_of
from judge.models import Record
from judge.search import Index
from judge.stages.names import names_in
from judge.text import content_words, normalize, split_sentences


DONOR_SAMPLE = 500  # records an unsupported control may borrow a sentence from: a fixed sample, so memory stays flat
DONOR_CHARS = 8_000  # of a donor's sources (the first characters) kept for its sentences and words
POOL_CAP = 2000  # numbers of one shape, names, months of one language: the first seen are kept
PROFILE_CHARS = 300_000  # characters of the sources of the records worked on whose sentences, words and search
# indexes are kept (recomputed when evicted): a budget of characters, not of records, as judge.text.memo's, since
# a count of 8 held 8 x 100 KB sources' views (40+ MB) on a file of long sources and a few KB on short ones


@dataclass(frozen=True)
class _Profile:
    """What the rules need from one record: its language, claim-like sentences and content words."""

    language: str
    sentences: list[Sentence]
    words: frozenset[str]


def _language(record: Record) -> str:
    return record.language


def _profile(record: Record) -> _Profile:
    return _Profile(_language(record), _sentences_of(record.id, [(s.doc_id, s.text) for s in record.sources]), _words_of(s.text for s in record.sources))


def _sentences_of(record_id: str, texts) -> list[Sentence]:
    return [s for doc_id, text in texts for s in claim_sentences(record_id, doc_id, text)]


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
    claims: tuple[str, ...] = ()  # what the dataset says of it in claim form: gold claims, reference and recorded answers' sentences
    subject: str = ""  # what it is about, where that is a name its sources write (shapes.named_subject)

    @classmethod
    def of(cls, record: Record, language: str) -> _Donor:
        texts, left = [], DONOR_CHARS
        for src in record.sources:
            if left <= 0:
                break
            texts.append((src.doc_id, src.text[:left]))
            left -= len(texts[-1][1])
        words = _words_of(t for _, t in texts)
        return cls(record.id, language, words, tuple(texts), _answer_claims(record), named_subject(record) or "")

    def sentences(self) -> list[Sentence]:
        return _sentences_of(self.record_id, self.texts)


MAX_DONOR_CLAIMS = 12


def _answer_claims(record: Record) -> tuple[str, ...]:
    """Claims the dataset itself makes about a record (gold claims, then the sentences of its reference and
    recorded answers): real claims in the answers' own style, for another record's unsupported controls."""
    found = [c.text for c in record.claims if getattr(c, "text", None)]
    for answer in [record.reference_answer or ""] + [a.answer for a in record.answers]:
        found += [s.text for s in split_sentences(answer)] if answer else []
    out = [t.strip() for t in found if MIN_CHARS <= len(t.strip()) <= MAX_CHARS and len(WORD.findall(t)) >= 3 and not t.rstrip().endswith("?")]
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
    computed on demand and kept for the last records within PROFILE_CHARS characters of sources."""

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
                data.donors[r.id] = _Donor.of(r, language)
            seen_subjects = subjects.setdefault(language, {})
            if len(seen_subjects) < POOL_CAP and (subject := subject_of(r)) and len(subject) <= 60 and len(subject.split()) >= 2:
                seen_subjects[subject] = None
            pattern = month_pattern(language)
            for src in r.sources:
                for m in number_matches(src.text):
                    kind = numbers.setdefault(number_shape(m.group()), {})
                    if len(kind) < POOL_CAP:
                        kind[m.group().replace(" ", "")] = None  # as written: "1,100" swaps with "2,350"
                if pattern is not None:
                    seen = months.setdefault(language, {})
                    for m in pattern.finditer(src.text):
                        if len(seen) < POOL_CAP:
                            seen[m.group(1)] = None
            if sentences is not None:
                for s in sentences:
                    names.update(dict.fromkeys(n for n in names_in(s.text) if name_shape(n) is not None))
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

    def sentences(self, record_id: str) -> list[Sentence]:
        return self.profile(record_id).sentences

    def words(self, record_id: str) -> frozenset[str]:
        return self.profile(record_id).words

    def indexes(self, record_id: str) -> list[Index]:
        return self._cached(self._indexes, record_id, lambda: [Index(s.text, s.doc_id) for s in self.records[record_id].sources])

    def _cached(self, cache: OrderedDict, key: str, make):
        """``cache[key]``, made when absent; the oldest evicted while the sources of those held total more than
        PROFILE_CHARS (the newest is always kept)."""
        if key in cache:
            cache.move_to_end(key)
            return cache[key][0]
        value = make()
        cache[key] = (value, max(1, sum(len(s.text) for s in self.records[key].sources)))
        while len(cache) > 1 and sum(w for _, w in cache.values()) > PROFILE_CHARS:
            cache.popitem(last=False)
        return value

    def best_match(self, record_id: str, text: str):
        """The search's best candidate for ``text`` in the record's sources (None when nothing matches)."""
        found = [c for ix in self.indexes(record_id) for c in ix.search(text, 1)]
        return max(found, key=lambda c: c.score) if found else None
