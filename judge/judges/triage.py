"""Triage, the pre-judge: a claim found verbatim (after normalisation) in a source is supported, and no
judge of the panel is asked about it. It settles a claim only where its precision is 1 by construction
(DESIGN, "Free verdicts must be right"), that is when all of these hold:

- the match is verbatim on word boundaries (the search's ``exact``/``normalized``/``folded`` methods, see
  :mod:`judge.text.bounds`: "Midwest" is not found in "Midwestern", nor ``ירושלים`` in ``מירושלים``);
- the claim is a full proposition that stands without its question or context
  (:func:`judge.text.proposition.not_a_proposition`): no question, heading, short answer ("Delhi", "yes"),
  opening pronoun, or, in Latin script, verbless fragment;
- the match is a whole sentence of the source (or several): it starts where a source sentence starts and
  ends where one ends with a full stop, or where a coordinated clause follows ("; ", ", and ", ", ו...").
  Words before it in its sentence may take it back ("According to critics, ...", "If it rains, ...",
  "He denied that ..."), and words after it may narrow it ("... elderly *whose chronic illness* ..."); a
  source "sentence" with no full stop is a title, a list item or a caption;
- the source takes nothing back and says it nowhere otherwise (the checks' conflicts), and the claim is no
  lead-in (:meth:`judge.stages.evidence.Evidence.settles_free`);
- the learned no-model judge (:mod:`judge.judges.deterministic`) gives it at least ``free_from``: the
  lowest probability at which these free verdicts were right >= 99% on every labelled set it was fitted on
  (``bench/fit_no_model_judge.py``; their share and held-out precision are in bench/README.md).

Anything else goes to the judges: a missed free verdict costs a model call, a wrong one costs trust.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from judge.judges.base import ClaimToJudge, JudgeContext, context_inputs, evidence_of, spans_of
from judge.judges.deterministic import fitted_score, load_weights
from judge.results import JudgeVerdict
from judge.stages.evidence import VERBATIM_METHODS
from judge.text import split_sentences
from judge.text.bounds import is_word_char
from judge.text.memo import text_memo
from judge.text.proposition import not_a_proposition
from judge.text.sentences import CLOSERS, FULL_STOPS
from judge.verdicts import NO_MODEL, SUPPORTED, TRIAGE

__all__ = ["VERBATIM_METHODS", "refusal", "settle", "triage", "verbatim_refusal"]

_TERMINAL = frozenset(FULL_STOPS + "\u2026")
# What may follow a match inside its sentence: a coordinated clause, the source's own statement going on.
_CLAUSE_FOLLOWS = re.compile(
    r"\s*(?:;|,\s*(?:and|e|y)\s|,\s*\u05d5(?=[\u05d0-\u05ea])|[,\u060c]\s*\u0648(?=[\u0621-\u064a]))", re.IGNORECASE
)

Sources = Mapping[str | None, str]


def triage(claim: ClaimToJudge, context: JudgeContext | Sources | None = None) -> JudgeVerdict | None:
    """Supported with no model call when :func:`refusal` finds nothing against it; None otherwise. Without
    the record's sources (``context``: a JudgeContext or doc_id -> text) nothing is settled."""
    if refusal(claim, context) is not None:
        return None
    best = claim.candidates[0]
    return JudgeVerdict(
        judge=TRIAGE,
        model=NO_MODEL,
        family=NO_MODEL,
        label=SUPPORTED,
        evidence_ids=[best.id],
        evidence=spans_of(best),
        rationale=f"the claim is a whole sentence of the source ({best.method} match, on word boundaries) and the "
        "source holds no correction or conflicting duplicate of it",
        how=TRIAGE,
    )


def _inputs(context: JudgeContext | Sources | None) -> tuple[str | None, tuple[str, ...], str | None]:
    if isinstance(context, JudgeContext):
        return context_inputs(context)
    return None, tuple(dict.fromkeys(context.values())) if context else (), None  # doc_id -> text (None: the one source again)


def refusal(claim: ClaimToJudge, context: JudgeContext | Sources | None) -> str | None:
    """Why triage leaves ``claim`` to the judges, or None when it settles it: read once per claim and input
    (the pipeline's triage and the panel's read the same record context, and the second reads the first's)."""
    inputs = _inputs(context)
    key = ("triage", *inputs)
    if key not in claim.read:
        claim.read[key] = _refusal(claim, context, inputs)
    return claim.read[key]


def _refusal(claim: ClaimToJudge, context: JudgeContext | Sources | None, inputs) -> str | None:
    why = verbatim_refusal(claim, context)
    if why is not None:
        return why
    weights = load_weights()
    p = fitted_score(weights, evidence_of(claim, *inputs))
    if p < weights.thresholds.free_from:
        return f"the no-model judge's fitted score {p:.2f} is below the {weights.thresholds.free_from:.2f} of a free verdict"
    return None


def verbatim_refusal(claim: ClaimToJudge, context: JudgeContext | Sources | None) -> str | None:
    """The verbatim rule alone (what the free verdicts' threshold is fitted over): why it leaves ``claim``
    to the judges, or None."""
    if not evidence_of(claim, *_inputs(context)).settles_free():
        return "not verbatim, too short, a lead-in, or the source corrects it"
    why = not_a_proposition(claim.text)
    if why:
        return why
    texts = context.texts if isinstance(context, JudgeContext) else context
    if not texts:
        return "no source to read the match in"
    best = claim.candidates[0]
    text = texts.get(best.doc_id, texts.get(None) if len(texts) == 1 else None)
    if text is None or len(best.parts) != 1 or text[best.start_char : best.end_char] != best.excerpt:
        return "the match is not a span of the record's sources"
    return whole_sentences(text, best.start_char, best.end_char)


def whole_sentences(text: str, start: int, end: int) -> str | None:
    """None when ``text[start:end]`` is one or more whole sentences of ``text`` (see the module docstring),
    otherwise what is wrong with it."""
    bounds = _sentence_bounds(text)
    first = next((b for b in bounds if b[0] <= start < b[1]), None)
    last = next((b for b in bounds if b[0] < end <= b[1]), None)
    if first is None or last is None:
        return "the match is outside the source's sentences"
    if any(is_word_char(ch) for ch in text[first[0] : start]):
        return "the match starts inside a sentence of the source"
    tail = text[end : last[1]]
    if any(is_word_char(ch) for ch in tail) and not _CLAUSE_FOLLOWS.match(tail):
        return "the match ends inside a sentence of the source"
    closed = text[last[0] : last[1]].rstrip(CLOSERS + " ")
    if not closed or closed[-1] not in _TERMINAL:
        return "the source sentence has no full stop: a title, a list item or a caption"
    return None


@text_memo()
def _sentence_bounds(text: str) -> tuple[tuple[int, int], ...]:
    """Cached by text: every claim of a record reads the same sources."""
    return tuple((s.start, s.end) for s in split_sentences(text))


def settle(claims: list[ClaimToJudge], context: JudgeContext | Sources | None = None) -> dict[str, JudgeVerdict]:
    """The claims triage settles, by claim id."""
    return {c.cid: v for c in claims if (v := triage(c, context)) is not None}
