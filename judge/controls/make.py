"""Control claims: labels known by construction, made from the run's certain claims and judged in calls shaped
like the real ones, so that nothing in a call tells them apart (docs/controls.md: the kinds and their rules).

Contradicted and unsupported controls must not be found verbatim in their record's sources; every choice is
drawn from a generator seeded by record and answer, so the same data and seed give the same controls.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from pydantic import BaseModel, Field

from judge.controls.data import ControlData
from judge.controls.perturb import flip_negation, recombine, swap_month, swap_name, swap_number
from judge.controls.reword import reword
from judge.controls.unsupported import about_subject, added_detail
from judge.models import Span
from judge.results import ClaimChecks, ControlClaim, ControlKind
from judge.stages.alignment import Alignment, align
from judge.stages.evidence import VERBATIM_METHODS, read_evidence
from judge.text import content_words, normalize, word_forms
from judge.verdicts import CONTRADICTED, CONTROL_LABELS, SUPPORTED, UNSUPPORTED

CONTRADICTION_KINDS: tuple[str, ...] = ("recombined", "number", "date", "entity", "negation")
UNSUPPORTED_KINDS: tuple[str, ...] = ("detail", "about")


class ControlsConfig(BaseModel):
    """How many controls a run judges beside its real claims, and what the canary asks (docs/controls.md)."""

    model_config = {"extra": "forbid"}
    enabled: bool = True
    gate: bool = True
    floor: float = Field(0.4, gt=0, lt=1)
    confidence: float = Field(0.95, ge=0.5, lt=1)
    per_label: int = Field(24, ge=1, le=10_000)
    max_share: float = Field(0.12, gt=0, le=0.5)  # of the claims the judges see: controls never swamp a run
    margin: float = Field(2.0, ge=1, le=10)  # answers asked per control wanted (some give none, or fewer labels)
    max_per_answer: int = Field(24, ge=1, le=1000)  # claims of one control answer (as many as the real answer's)
    # accepted for older configs and ignored: the tells detector is a research tool (bench/tells.py), never
    # part of a run (it told controls apart at AUC 0.77-0.99 on every labelled set, honest judges' runs too).
    detector_bar: float = Field(1.0, gt=0.5, le=1)
    seed: int = 0


# -- the claims controls are made from ------------------------------------------------------------------


@dataclass(frozen=True)
class Verified:
    """A real claim whose support is certain by alignment within one span (see :func:`certain`). Its label is
    known: supported. ``triaged``: triage settles it as it stands (so it reaches no judge shown as it is)."""

    text: str
    span: Span  # the one sentence every content word of it aligns to, in order
    triaged: bool


def kept_whole(a: Alignment) -> bool:
    """Every content word of the claim has its partner in the span, in the claim's order (a passive turned
    around reads in order; "A played B's brother" against "B's brother played A" does not), no slot filled
    otherwise or name displaced, and no denial added or dropped: the alignment every reader shares."""
    x = a.features()
    return x["aligned_share"] >= 1.0 and x["order"] >= 1.0 and a.negation in ("same", "none") and not a.slots and not a.displaced


def certain(text: str, candidates: list, checks: ClaimChecks, triaged: bool | None = None) -> Verified | None:
    """The claim as a base for controls, or None where its support is not certain by alignment: 3+ content
    words, all aligned in order to one part (sentence) of its best candidate by the claim's own alignment
    (:func:`kept_whole`), no number or name missing or stated otherwise, no conflict in the source. ``triaged``: whether triage
    settles it (the pipeline knows; else the verbatim rule's necessary part is used)."""
    if not candidates or text.rstrip().endswith(("?", "\u061f", ":")) or flagged(checks):
        return None
    if len(content_words(normalize(text).text)) < 3:
        return None
    for part in candidates[0].parts:
        if kept_whole(align(text, part.excerpt)):
            free = read_evidence(text, candidates[:1], checks).settles_free() if triaged is None else triaged
            return Verified(text, Span(doc_id=part.doc_id, start_char=part.start_char, end_char=part.end_char, excerpt=part.excerpt), free)
    return None


def source_bases(record_id: str, claims: list[str], data: ControlData, most: int, triage: bool = True) -> list[Verified]:
    """Where too few claims of the answer are certain (a data set that paraphrases its sources), claim-like sentences
    of the record's own source, verbatim (so certain), sharing words with the answer's claims, those as long
    as its typical claim first (length is no tell), then those sharing most words: what the answer talks
    about, as the source states it. Triage
    (``triage``: on) would settle them as they stand, so a supported one is then shown reworded."""
    mine = {f for t in claims for w in content_words(normalize(t).text) for f in word_forms(w)}
    longest = max((len(t) for t in claims), default=0)
    typical = sorted(len(t) for t in claims)[len(claims) // 2] if claims else 0

    def shared(s) -> int:
        return sum(1 for w in content_words(normalize(s.text).text) if set(word_forms(w)) & mine)

    near = [s for s in data.sentences(record_id) if len(s.text) <= max(1.5 * longest, 80) and shared(s)]
    ranked = sorted(near, key=lambda s: (abs(len(s.text) - typical) // 20, -shared(s), s.start))  # as long as the answer's claims, then nearest in words
    picked: list = []
    seen: list[set[str]] = []
    for s in ranked:  # claims of one answer share few words with each other: so do the sentences of one control answer
        words = set(content_words(normalize(s.text).text))
        if all(len(words & other) <= 1 for other in seen):
            picked.append(s)
            seen.append(words)
    picked += [s for s in ranked if s not in picked]
    return [Verified(s.text, Span(doc_id=s.doc_id, start_char=s.start, end_char=s.end, excerpt=s.text), triage) for s in picked[:most]]


def flagged(checks: ClaimChecks) -> bool:
    """The checks flag the claim: a number or name the evidence lacks or states otherwise, a conflict."""
    return bool(checks.conflicts or checks.numbers_missing or checks.numbers_mismatched or checks.names_missing)


# -- one control answer ---------------------------------------------------------------------------------


def _found_verbatim(record_id: str, text: str, data: ControlData) -> bool:
    norm = normalize(text).text.strip(" .")
    if any(norm in normalize(s.text).text for s in data.records[record_id].sources):
        return True
    best = data.best_match(record_id, text)
    return best is not None and best.method in VERBATIM_METHODS


def _supported(base: Verified, language: str, rng: random.Random) -> tuple[str, ControlKind, str] | None:
    """The claim as it stands (unless triage would settle it), or its rewording."""
    forms: list[tuple[str, ControlKind, str]] = []
    if not base.triaged:
        forms.append((base.text, "claim", "a claim aligned word for word to its source, as it stands"))
    reworded = reword(base.text, language)
    if reworded:
        forms.append((reworded, "reworded", "a claim aligned word for word to its source, reworded by rule"))
    return rng.choice(forms) if forms else None


def _contradicted(base: Verified, record_id: str, language: str, data: ControlData, rng: random.Random) -> tuple[str, ControlKind, str] | None:
    """One fact the aligned sentence states changed; a recombination (a value from elsewhere in the same
    source) first where the source offers one, else another kind at random."""
    others = list(CONTRADICTION_KINDS[1:])
    rng.shuffle(others)
    for kind in ("recombined", *others):
        if kind == "recombined":
            made = recombine(base.text, base.span.excerpt, record_id, data, rng)
        elif kind == "number":
            made = swap_number(base.text, record_id, data, rng)
        elif kind == "date":
            made = swap_month(base.text, language, data, rng)
        elif kind == "entity":
            made = swap_name(base.text, record_id, data, rng)
        else:
            made = flip_negation(base.text, language)
        if made is not None and not _found_verbatim(record_id, made[0], data):
            return made[0], kind, made[1]  # type: ignore[return-value]
    return None


def _unsupported(base: Verified | None, record_id: str, data: ControlData, rng: random.Random, turn: int, detail: bool = True) -> tuple[str, ControlKind, str] | None:
    """``detail``: an added detail may be made (one a call: two share the words of who says so)."""
    kinds = list(UNSUPPORTED_KINDS) if base is not None and detail else ["about"]
    rng.shuffle(kinds)
    for kind in kinds:
        made = added_detail(base.text, record_id, data, rng) if kind == "detail" else about_subject(record_id, data, rng, turn)
        if made is not None and not _found_verbatim(record_id, made[0], data):
            return made[0], kind, made[1]  # type: ignore[return-value]
    return None


def label_turn(record_id: str, key: str, seed: int = 0) -> int:
    """Where a control answer's labels start: a stable number from its record and answer, so labels are
    balanced over a run and the same answer gets the same controls whatever else the run selects."""
    return int.from_bytes(hashlib.blake2b(f"{seed}:{record_id}:{key}:labels".encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def control_answer(record_id: str, bases: list[Verified], data: ControlData, size: int, seed: int = 0, key: str = "",
                   first_id: int = 0) -> list[ControlClaim]:
    """Up to ``size`` controls for one control answer, labels taken in turn from a seeded start: each base
    gives at most one (a control never sits beside another made from the same claim); a label no rule can
    make from the bases left takes the next label's turn (a supported one is withdrawn after judging where a
    judge flagged the answer: judge.pipeline.withdraw). Pure: the same inputs give the same controls."""
    if size <= 0:
        return []
    rng = random.Random(f"{seed}:{record_id}:{key}")
    language = data.language(record_id)
    order = list(bases)
    rng.shuffle(order)
    out: list[ControlClaim] = []
    texts = {b.text for b in bases}
    turn = label_turn(record_id, key, seed)
    failed: set[str] = set()
    while len(out) < size and len(failed) < len(CONTROL_LABELS):
        label = CONTROL_LABELS[turn % len(CONTROL_LABELS)]
        turn += 1
        if label in failed:
            continue
        made = None
        for base in list(order) + ([None] if label == UNSUPPORTED else []):
            if label == SUPPORTED and base is not None:
                made = _supported(base, language, rng)
            elif label == CONTRADICTED and base is not None:
                made = _contradicted(base, record_id, language, data, rng)
            elif label == UNSUPPORTED:
                made = _unsupported(base, record_id, data, rng, first_id + len(out), detail=not any(c.kind == "detail" for c in out))
            if made is not None and (made[0] not in texts or label == SUPPORTED):
                if base is not None and made[1] != "about":  # "about" borrows another record's claim, not the base
                    order.remove(base)
                texts.add(made[0])
                out.append(ControlClaim(id=f"control:{record_id}:{first_id + len(out)}", record_id=record_id, text=made[0], label=label,
                                        kind=made[1], origin_record_id=record_id, origin=base.span if base else None, change=made[2]))
                break
            made = None
        if made is None:
            failed.add(label)
    return out
