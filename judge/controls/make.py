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

The rooms: :mod:`judge.controls.shapes` (what the rules read in a text), :mod:`judge.controls.data` (what
they draw from across the run), :mod:`judge.controls.reword` (supported), :mod:`judge.controls.perturb`
(contradicted), :mod:`judge.controls.unsupported`; this module verifies the bases and assembles an answer's
controls.

Every contradicted or unsupported control is checked against its own record's sources with the project's
search: it must not be found verbatim there. Every choice is drawn from a seeded generator keyed by record
and answer, so the same data and seed give the same controls. ``origin`` is the source span the base claim
was verified on (it slices its source exactly).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pydantic import BaseModel, Field

from judge.controls.data import ControlData
from judge.controls.perturb import flip_negation, swap_month, swap_name, swap_number
from judge.controls.reword import reword
from judge.controls.shapes import MAX_CHARS, Sentence
from judge.controls.unsupported import swap_subject, unrelated_claim
from judge.models import Record, Span
from judge.results import ClaimChecks, ControlClaim, ControlKind
from judge.stages.support import VERBATIM_METHODS, free_supported, support_features
from judge.text import content_words, normalize
from judge.verdicts import CONTRADICTED, CONTROL_LABELS, SUPPORTED, UNSUPPORTED

CONTRADICTION_KINDS: tuple[str, ...] = ("number", "date", "entity", "negation")
UNRELATED_MAX_SCORE = 0.5  # an unsupported control's best candidate in its record scores below this


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


def _span(s: Sentence) -> Span | None:
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
        options[CONTRADICTED] += [(base, *m) for m in _perturbed(base, record_id, language, data, rng)]
        swapped = swap_subject(base.text, record_id, data, rng)
        if swapped and not _found_verbatim(record_id, swapped[0], data):
            options[UNSUPPORTED].append((base, swapped[0], "subject", swapped[1]))
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
        if pick is None and label == UNSUPPORTED:
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
