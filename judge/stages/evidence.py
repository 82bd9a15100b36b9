"""Evidence: one claim read against its candidates and its record, built once and carried to every reader
(DESIGN, "Alignment first"): triage, the no-model judge, the controls and the fit read this value, and nothing
else matches a claim against text. It holds the claim's alignment with the ONE span it is judged against
(:func:`judge.stages.alignment.judged`), the checks' counts (:func:`check_claim`), and what the rest of the
source says:

- absent: a content word, name or number of the claim no source of the record writes in any form ("First for
  Women was *started* first", an invented "William Conrad");
- a short answer ("Delhi", "yes") means what its question asks: it is read against the passage (one sentence or
  two in a row) holding every content word of the answer and the most of the question's;
- conflicts (:func:`find_conflicts`): a sentence where the source corrects itself about the claim
  (:mod:`judge.stages.source`), or one saying nearly the same that states the claim's slot otherwise. Each
  makes the no-model judge say contradicted, so it is called only when the source says the same otherwise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pydantic import BaseModel, PrivateAttr

from judge.models import Candidate
from judge.results import ClaimChecks, Conflict, NumberMismatch
from judge.stages.alignment import CONNECTIVES, FEATURES as ALIGNMENT, judged, offered_share
from judge.stages.alignment_numbers import aligned_mismatches, holds_lead, lead_words, present
from judge.stages.claims import answer_part
from judge.stages.source import FIGURE_WORD, SourceView, source_view as _source_view
from judge.stages.names import name_present, name_tokens, names_in, related_names
from judge.stages.numbers import numbers_in
from judge.text import content_words, word_forms
from judge.text.bounds import find_word
from judge.text.discourse import YES_NO
from judge.text.negation import negated
from judge.text.normalize import normalized
from judge.text.proposition import INTERROGATIVES, MIN_CONTENT_WORDS, not_a_proposition, own_clause
from judge.text.tokens import SHARED_START, share_start, text_forms

VERBATIM_METHODS = ("exact", "normalized", "folded")
TRIAGE_MIN_WORDS = MIN_CONTENT_WORDS  # shorter verbatim fragments ("Anne Rice:", "- Born") state too little to settle free
PASSAGE_SENTENCES = 2  # a short answer's passage: at most this many sentences in a row
NUMBER_SLOTS = ("number", "date", "percent")  # the alignment's slot kinds that are numbers
RELATED_MIN_SHARE = 0.3  # a correction that shares this much of the claim's content words refers to it
NEAR_DUPLICATE_MIN_SHARE = 0.7  # a sentence that shares this much says the same thing
ADJACENT_MIN_SHARE = 0.5  # a correction right after a sentence sharing this much refers to that sentence

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


def _distinct(text: str) -> list[str]:
    """The content words of ``text``, each once, in order."""
    return list(dict.fromkeys(content_words(normalized(text).text)))


def _found(word: str, forms: frozenset[str]) -> bool:
    return any(f in forms for f in word_forms(word))


def _written(word: str, text: str) -> bool:
    """The source writes the word in some form: its forms (prefixes, plural, stem), or another form of it
    by a shared start (a suffix apart, :func:`judge.text.tokens.share_start`)."""
    view, forms = _source_view(text), word_forms(word)
    return any(f in view.every for f in forms) or any(share_start(f, o) for f in forms for o in view.starts.get(f[:SHARED_START], ()))


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
    numbers = set().union(*(_source_view(t).numbers for t in sources)) if sources else set()
    out = [n for n in numbers_in(claim) if not present(n, numbers)]
    return out + [n for n in names_in(claim) if not any(name_present(n, t) for t in sources)]


def question_reading(claim: str, question: str, sources: tuple[str, ...]) -> tuple[float, bool]:
    """(the share of the question's content words held by the passage of the source that holds every content
    word of the answer and the most of the question's; whether any passage holds the answer's words)."""
    answer = [w for w in _distinct(claim) if w not in YES_NO]
    asked = [w for w in _distinct(question) if w not in INTERROGATIVES and not any(_found(w, text_forms(a)) for a in answer)]
    best, holds = 0.0, False
    for text in sources:
        sentences = _source_view(text).forms
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


# -- the checks ----------------------------------------------------------------------------------------------------
def check_claim(claim: str, candidates: list[Candidate], sources: dict[str | None, str] | None = None) -> ClaimChecks:
    """The checks of ``claim``, read from its alignment with the span it is judged against (no other candidate
    rescues a number or a name): numbers with no equal value there or stated otherwise in their slot, names
    it lacks or holds only where another name fills the slot; with ``sources`` (doc_id -> text), the
    conflicts of the whole source, that span's own sentences aside."""
    at, a = judged(claim, [c.text for c in candidates])
    numbers = numbers_in(claim)
    names = list(names_in(claim))
    missing, mismatched, names_missing = numbers, [], names
    if a is not None:
        held = {a.claim[i].number for i, _ in a.pairs if a.claim[i].number is not None}
        missing = [n for n in numbers if not present(n, held)]
        mismatched = [NumberMismatch(claim=s.claim, candidate=s.span) for s in a.slots if s.kind in NUMBER_SLOTS]
        other = {s.claim for s in a.slots if s.kind == "name"}
        text = candidates[at].text
        found = names_in(text) if names else []
        names_missing = [n for n in names if not name_present(n, text, found) or any(s in n.lower() or n.lower() in s for s in other)]
    conflicts = []
    if sources:
        own = [(p.doc_id, p.start_char, p.end_char) for p in candidates[at].parts] if candidates else []
        conflicts = find_conflicts(claim, sources, own)
    return ClaimChecks(numbers=numbers, numbers_missing=missing, numbers_mismatched=mismatched, names=names,
                       names_missing=names_missing, conflicts=conflicts)


# -- conflicts: what the rest of the source says otherwise ----------------------------------------------------------
def find_conflicts(claim: str, sources: dict[str | None, str], own: list[tuple[str | None, int, int]] = ()) -> list[Conflict]:
    """Sentences of ``sources`` (doc_id -> text) that retract or contradict ``claim``: a ``correction`` (a cue
    that refers to the claim, :func:`_refers`) or a ``near_duplicate`` (most of the claim's words, its slot
    stated otherwise, :func:`_differs`). ``own``: the (doc_id, start, end) spans the claim was found in; the
    sentences they touch are never a conflict."""
    claim_words = [w for w in _distinct(claim) if not w[0].isdigit()]
    claim_numbers = set(numbers_in(claim))
    claim_names = names_in(claim)
    proposition = not_a_proposition(claim) is None  # a short answer names nothing a sentence could name otherwise
    out: list[Conflict] = []
    for doc_id, text in sources.items():
        if doc_id is None and len(sources) > 1:
            continue  # the single-source alias of a named source
        view = _source_view(text)
        shares = _shares(claim_words, view)
        candidates = sorted(set(view.cues) | {i for i, sh in shares.items() if sh >= NEAR_DUPLICATE_MIN_SHARE})
        for i in candidates:
            start, end = view.bounds[i]
            if any(d == doc_id and start < e and a < end for d, a, e in own):
                continue
            sentence = text[start:end]
            if i in view.cues:
                why = _refers(claim, claim_numbers, shares, i, sentence)
                if why:
                    out.append(_conflict("correction", doc_id, start, end, text, f"correction cue {view.cues[i]!r}; {why}"))
                    continue
            if shares.get(i, 0.0) >= NEAR_DUPLICATE_MIN_SHARE:
                detail = _differs(claim, claim_names if proposition else [], sentence)
                if detail:
                    out.append(_conflict("near_duplicate", doc_id, start, end, text, detail))
    return out


def _shares(claim_words: list[str], view: SourceView) -> dict[int, float]:
    """Share of the claim's words each sentence holds (sentences holding none are left out)."""
    hits: dict[int, int] = {}
    for w in claim_words:
        for i in view.holding(word_forms(w)):
            hits[i] = hits.get(i, 0) + 1
    return {i: n / len(claim_words) for i, n in hits.items()}


def _refers(claim: str, claim_numbers: set[str], shares: dict[int, float], i: int, sentence: str) -> str:
    """Why a correction sentence refers to the claim (a number, a retyping of one, a figure, enough of its
    words, or a sentence before it that says what the claim says; a name alone is no reference), or ''."""
    numbers = set(numbers_in(sentence))
    shared_numbers = claim_numbers & numbers
    if shared_numbers:
        return f"it mentions {', '.join(sorted(shared_numbers))}"
    mismatches = aligned_mismatches(claim, [sentence])
    if mismatches:
        return f"it gives {mismatches[0].candidate} where the claim says {mismatches[0].claim}"
    typos = [(c, n) for c in sorted(claim_numbers) for n in sorted(numbers) if _typo_of(c, n)]
    if typos:
        return f"it gives {typos[0][1]}, a retyping of the claim's {typos[0][0]}"
    if claim_numbers and numbers:
        return ""  # it corrects a figure, and not one of the claim's
    if claim_numbers and FIGURE_WORD.search(normalized(sentence).text):
        return "it corrects a figure without giving it, and the claim states one"
    if shares.get(i, 0.0) >= RELATED_MIN_SHARE:
        return f"it shares {shares[i]:.0%} of the claim's words"
    if shares.get(i - 1, 0.0) >= ADJACENT_MIN_SHARE:
        return "it follows a sentence that says what the claim says"
    return ""


def _typo_of(a: str, b: str) -> bool:
    """``b`` looks like ``a`` mistyped: the same digits in another order, or one digit changed."""
    da, db = re.sub(r"\D", "", a), re.sub(r"\D", "", b)
    if da == db or len(da) != len(db) or len(da) < 2:
        return False
    return sorted(da) == sorted(db) or sum(x != y for x, y in zip(da, db)) == 1


def _differs(claim: str, claim_names: list[str], sentence: str) -> str:
    """What a sentence saying nearly what the claim says states otherwise: a number in its slot, or a name in
    the place of a claim's name that holds its lead, among the same words, and is no form of any of the
    claim's names nor shares a distinctive token with them ("MedStar Health" of "MedStar Washington ...")."""
    mismatches = aligned_mismatches(claim, [sentence])
    if mismatches:
        return "; ".join(f"says {m.candidate} where the claim says {m.claim}" for m in mismatches)
    found = names_in(sentence) if claim_names else []
    missing = [n for n in claim_names if not name_present(n, sentence, found)]
    if not missing:
        return ""
    claim_found = names_in(claim)
    others = [n for n in found if not name_present(n, claim, claim_found) and not any(related_names(n, c) for c in claim_names)]
    norm = normalized(claim).text
    for name in missing:
        if any(related_names(name, n) for n in found):
            continue  # its slot holds a form of it or a name around it ("USP de São Paulo" for "USP de São Carlos")
        at = find_word(norm, normalized(name).text)
        lead = lead_words(claim, at) if at > 0 else []
        if not lead or not holds_lead(lead, sentence):
            continue  # the name is what the claim is about, not a slot of it: another name there is another entity
        around = _around(claim, name)
        for other in others:
            if around & _around(sentence, other):
                return f"names {other} where the claim names {name}"
    return ""


def _around(text: str, name: str, span: int = 3) -> set[str]:
    """Forms of the content words right around ``name``'s first occurrence in ``text`` (its slot)."""
    norm, written = normalized(text).text, normalized(name).text
    at = find_word(norm, written)
    if at < 0:
        return set()
    before = [w for w in content_words(norm[:at]) if not w[0].isdigit()][-span:]
    after = [w for w in content_words(norm[at + len(written) :]) if not w[0].isdigit()][:span]
    mine = {f for t in name_tokens(name) for f in word_forms(t)}
    return {f for w in before + after for f in word_forms(w)} - mine


def _conflict(kind: str, doc_id: str | None, start: int, end: int, text: str, detail: str) -> Conflict:
    return Conflict(kind=kind, doc_id=doc_id, start_char=start, end_char=end, excerpt=text[start:end], detail=detail)
