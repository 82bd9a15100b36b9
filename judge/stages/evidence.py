"""Evidence: one claim read against its offered candidates and its record, built once and carried to every
reader (DESIGN, "Alignment first"): triage, the no-model judge, the controls and the fitting code read this
value and nothing else matches a claim against text.

An :class:`Evidence` holds the claim's alignment with the ONE span it is judged against
(:func:`judge.stages.alignment.judged`), the checks' counts, and what the whole source says beyond that span:

- absent: a content word, name or number of the claim that no source of the record writes in any form. The
  candidates may cover the rest of the claim; what the source never writes cannot be supported by it ("First
  for Women was *started* first", an invented "William Conrad");
- a short answer ("Delhi", "yes", "Arthur's Magazine") means what its question asks: it is read as the question
  and the answer together, against the passage of the source (one sentence or two in a row) that holds every
  content word of the answer and the most of the question's. "Delhi" is supported by "The Oberoi Group ... head
  office in Delhi" for "... head office in what city?", not by a sentence that only names Delhi; a "yes" or
  "no" has no words of its own, so its passage is the one that holds the most of its question.

:meth:`Evidence.features` gives the fitted judge's named numbers (:data:`FEATURES`: the alignment's, then what
the alignment cannot see). ``judge.judges.base.evidence_of`` builds it once per claim and input (question,
sources, language) and keeps it on the claim.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, PrivateAttr

from judge.models import Candidate
from judge.results import ClaimChecks
from judge.stages.alignment import CONNECTIVES, FEATURES as ALIGNMENT, judged, offered_share
from judge.stages.claims import answer_part
from judge.stages.names import name_present, names_in
from judge.stages.numbers import numbers_in, source_numbers
from judge.stages.slots import present
from judge.stages.words import sentence_forms
from judge.text import content_words, word_forms
from judge.text.discourse import YES_NO
from judge.text.memo import text_memo
from judge.text.negation import negated
from judge.text.normalize import normalized
from judge.text.proposition import INTERROGATIVES, MIN_CONTENT_WORDS, own_clause
from judge.text.tokens import SHARED_START, share_start, text_forms

VERBATIM_METHODS = ("exact", "normalized", "folded")
TRIAGE_MIN_WORDS = MIN_CONTENT_WORDS  # shorter verbatim fragments ("Anne Rice:", "- Born") state too little to settle free
PASSAGE_SENTENCES = 2  # a short answer's passage: at most this many sentences in a row

# Counts read as min(count, cap) / cap: a long claim is no more wrong per word past a few.
_CAPS = {"unaligned": 8, "longest_unaligned_run": 5, "tail_unaligned_run": 5, "names": 5, "names_unaligned": 5, "numbers": 5,
         "numbers_unaligned": 5, "displaced": 3, "slots_name": 2, "slots_number": 2, "slots_date": 2, "slots_percent": 2,
         "span_sentences": 3, "connectives_unaligned": 2}
OWN = ("offered_coverage", "conflicts", "numbers_mismatched", "heading", "absent_share", "absent_key", "absent_run",
       "short", "short_question_coverage", "short_answer_missing", "span_score", "no_candidate", "hebrew")
FEATURE_DIGITS = 6  # the fit's rows hold each feature to this many digits (bench/no_model_data.py)
# The order of the weights file; a feature added here (or to the alignment's) means refitting the weights.
FEATURES: tuple[str, ...] = (*(f"align_{n}" for n in ALIGNMENT), *OWN)


class Evidence(BaseModel):
    """One claim's reading against its candidates and record (see the module docstring)."""

    verbatim: bool  # the search found the claim as it stands (candidates[0], a verbatim method)
    coverage: float  # share of the claim's content words aligned in the span it is judged against
    offered_coverage: float = 0.0  # ... in any offered candidate: tells partial from unsupported, never supports
    max_run: int  # the longest run of consecutive content words the span lacks
    tail_run: int = 0  # the content words closing the claim that the span lacks
    uncovered: list[str] = []
    numbers_missing: int = 0
    mismatches: int = 0
    names_missing: int = 0
    conflicts: int = 0
    added_connectives: list[str] = []  # connectives of the claim the evidence lacks
    words: int = 0  # content words of the claim
    heading: bool = False  # ends with a colon: a lead-in whose content follows it
    absent: int = 0  # content words no source of the record writes (0 when the sources are not given)
    absent_share: float = 0.0  # their share of the claim's distinct content words
    absent_key: list[str] = []  # names and numbers no source holds
    absent_run: int = 0  # the longest run of content words in a row that no source writes (2+: a phrase)
    added_negation: bool = False  # the claim negates, its evidence does not
    dropped_negation: bool = False  # the span denies what the claim states (judge/text/negation.py)
    withheld_negation: bool = False  # the span says it was not confirmed, said or known; the claim states it
    name_slots: int = 0  # the claim's slots the span fills with another name
    span: int = 0  # the candidate the claim is judged against (judge.stages.alignment.judged)
    alignment: dict[str, float] = {}  # Alignment.features() of that span (judge/stages/alignment.py FEATURES)
    short: bool = False  # a short answer, read with its question
    question_coverage: float = 0.0  # share of the question held by the passage holding the answer
    answer_in_source: bool = False  # some passage holds every content word of the short answer
    span_score: float | None = None  # the search's score of the judged span (None: no candidate)
    hebrew: bool = False  # most of the claim's letters are Hebrew
    _vector: dict[str, float] | None = PrivateAttr(default=None)

    def features(self) -> dict[str, float]:
        """The fitted judge's numbers, by name (:data:`FEATURES`): the alignment's, counts bounded, then what
        it cannot see (a number stated otherwise, the whole source, the span's score, the script)."""
        if self._vector is None:  # rounded as the fit's rows are: the trees split AT training values (0.666667, not 2/3)
            self._vector = {k: round(v, FEATURE_DIGITS) for k, v in self._features().items()}
        return self._vector

    def model_copy(self, *, update=None, deep: bool = False) -> Evidence:
        out = super().model_copy(update=update, deep=deep)
        out._vector = None  # the copy's features are its own
        return out

    def _features(self) -> dict[str, float]:
        out = {}
        for n in ALIGNMENT:
            v = self.alignment.get(n, 0.0)
            out[f"align_{n}"] = math.log1p(v) / math.log(40) if n == "words" else min(v, _CAPS[n]) / _CAPS[n] if n in _CAPS else v
        return out | {
            "offered_coverage": self.offered_coverage,
            "conflicts": float(self.conflicts > 0),
            "numbers_mismatched": float(self.mismatches > 0),
            "heading": float(self.heading),
            "absent_share": self.absent_share,
            "absent_key": float(bool(self.absent_key)),
            "absent_run": min(self.absent_run, 5) / 5,
            "short": float(self.short),
            "short_question_coverage": self.question_coverage if self.short else 0.0,
            "short_answer_missing": float(self.short and not self.answer_in_source),
            "span_score": self.span_score or 0.0,
            "no_candidate": float(self.span_score is None),
            "hebrew": float(self.hebrew),
        }

    def settles_free(self) -> bool:
        """Triage's rule: ``supported`` with no model call only for a verbatim statement the source does not
        take back or state otherwise, long enough to say something and not a lead-in to what follows."""
        return (self.verbatim and not self.conflicts and not self.dropped_negation and self.words >= TRIAGE_MIN_WORDS
                and not self.heading and not self.short)


def _hebrew(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum("\u0590" <= ch <= "\u05ff" for ch in letters) * 2 > len(letters)


def read_evidence(
    text: str, candidates: Sequence[Candidate], checks: ClaimChecks, question: str | None = None, sources: tuple[str, ...] = (),
    language: str | None = None,
) -> Evidence:
    """The claim's Evidence: its alignment with the one span it is judged against, the checks' counts, and
    (given the record's ``sources`` and ``question``) what the whole source never writes and the reading of a
    short answer with its question."""
    spans = [c.text for c in candidates]
    at, a = judged(text, spans, language)
    words_ = len(a.content) if a is not None else len(content_words(normalized(text).text))
    longest, tail = a.runs() if a is not None else (words_, words_)
    negation = a.negation if a is not None else ("added" if negated(text) else "none")
    unaligned = list(a.unaligned) if a is not None else []
    return Evidence(
        verbatim=bool(candidates) and at == 0 and candidates[0].method in VERBATIM_METHODS,  # triage reads candidates[0]
        coverage=round(a.aligned_share(), 6) if a is not None else 0.0,
        offered_coverage=offered_share(text, spans, language),
        max_run=longest,
        tail_run=tail,
        uncovered=unaligned,
        numbers_missing=len(checks.numbers_missing),
        mismatches=len(checks.numbers_mismatched),
        names_missing=len(checks.names_missing),
        conflicts=len(checks.conflicts),
        added_connectives=[w for w in unaligned if any(f in CONNECTIVES for f in word_forms(w))],
        words=words_,
        heading=text.rstrip().endswith(":"),
        dropped_negation=negation == "dropped",
        withheld_negation=negation == "withheld",
        added_negation=negation == "added",
        name_slots=sum(x.kind == "name" for x in a.slots) if a is not None else 0,
        span=at,
        alignment=a.features() if a is not None else {},
        span_score=candidates[at].score if candidates else None,
        hebrew=_hebrew(text),
        **(_whole_source(text, question, tuple(sources)) if sources else {}),
    )


def _whole_source(claim: str, question: str | None, sources: tuple[str, ...]) -> dict:
    answer = short_answer(claim, question)
    coverage, holds = question_reading(answer, question or "", sources) if answer is not None else (0.0, False)
    own = claim if answer is None else answer  # a question's words the source lacks are not the answer's
    absent, run, share = absent_words(own, sources)
    return {
        "absent": len(absent),
        "absent_run": run,
        "absent_share": share,
        "absent_key": absent_names_numbers(own, sources),
        "short": answer is not None,
        "question_coverage": coverage,
        "answer_in_source": holds,
    }


# -- what the whole source says ------------------------------------------------------------------------------


def short_answer(claim: str, question: str | None) -> str | None:
    """The answer's own words when the claim means what its question asks, else None: a claim the boundary
    wrote as "<question> <answer>" (:func:`judge.stages.claims.answer_part`, what runs judge), or a short
    answer or a phrase with no clause of its own given beside its question."""
    if not (question and question.strip()):
        return None
    part = answer_part(claim, question)
    if part is not None:
        return part
    return None if own_clause(claim) else claim  # the boundary's rule (judge.stages.claims.needs_question)


@text_memo()
def _source_view(text: str) -> tuple[frozenset[str], tuple[frozenset[str], ...], frozenset[str], dict[str, list[str]]]:
    """(every word form of the source, each sentence's forms, every number of the source, its forms by their
    first letters)."""
    sentences = sentence_forms(text) or (frozenset(),)
    every = frozenset().union(*sentences)
    starts: dict[str, list[str]] = {}
    for f in every:
        starts.setdefault(f[:SHARED_START], []).append(f)
    return every, sentences, source_numbers(text), starts


def _found(word: str, forms: frozenset[str]) -> bool:
    return any(f in forms for f in word_forms(word))


def _written(word: str, text: str) -> bool:
    """The source writes the word in some form: its forms (prefixes, plural, stem), or another form of it
    by a shared start (a suffix apart, :func:`judge.text.tokens.share_start`)."""
    every, _, _, starts = _source_view(text)
    forms = word_forms(word)
    return any(f in every for f in forms) or any(share_start(f, o) for f in forms for o in starts.get(f[:SHARED_START], ()))


def absent_words(claim: str, sources: tuple[str, ...]) -> tuple[list[str], int, float]:
    """The claim's content words that no source writes in any form (numbers are :func:`absent_names_numbers`'s),
    the longest run of them in a row (a content phrase the source never writes), and their share of the
    claim's distinct content words (one new word in a six-word answer is more than in a summary's thirty)."""
    out, run, longest = [], 0, 0
    every = content_words(normalized(claim).text)
    for w in every:
        if w[0].isdigit() or any(_written(w, t) for t in sources):
            run = 0
            continue
        run += 1
        longest = max(longest, run)
        out.append(w)
    absent = list(dict.fromkeys(out))
    return absent, longest, round(len(absent) / len(set(every)), 6) if every else 0.0


def absent_names_numbers(claim: str, sources: tuple[str, ...]) -> list[str]:
    """The claim's names and numbers that no source holds (a name in any fuller or shorter form)."""
    numbers = set().union(*(_source_view(t)[2] for t in sources)) if sources else set()
    out = [n for n in numbers_in(claim) if not present(n, numbers)]
    return out + [n for n in names_in(claim) if not any(name_present(n, t) for t in sources)]


def question_reading(claim: str, question: str, sources: tuple[str, ...]) -> tuple[float, bool]:
    """(the share of the question's content words held by the passage of the source that holds every content
    word of the answer and the most of the question's; whether any passage holds the answer's words)."""
    answer = [w for w in dict.fromkeys(content_words(normalized(claim).text)) if w not in YES_NO]
    asked = [
        w for w in dict.fromkeys(content_words(normalized(question).text))
        if w not in INTERROGATIVES and not any(_found(w, text_forms(a)) for a in answer)
    ]
    best, holds = 0.0, False
    for text in sources:
        sentences = _source_view(text)[1]
        for i in range(len(sentences)):
            for n in range(1, PASSAGE_SENTENCES + 1):
                if i + n > len(sentences):
                    break
                passage = frozenset().union(*sentences[i : i + n])
                if not all(_found(w, passage) for w in answer):
                    continue
                holds = True
                share = sum(_found(w, passage) for w in asked) / len(asked) if asked else 1.0
                best = max(best, share)
    return round(best, 6), holds
