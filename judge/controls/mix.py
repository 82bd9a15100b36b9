"""Which answers get a control answer, and how large: drawn from seeded hashes of the record and answer (never
from gold labels or any judge's verdict), so that the same data, config and seed give the same calls (and the
cache answers them).

A control answer is judged in calls of its own, beside nothing of the answer, claim or record it was made
from, and holds as many claims as the answer's real claims that reach a judge: its calls are cut like the real
answer's, so claims per call, positions and ids have the same distribution with and without controls (a
one-claim answer gives a one-claim control call, never a multi-claim one)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from judge.controls.make import ControlData, ControlsConfig, Verified, certain, control_answer, source_bases
from judge.models import Record
from judge.results import ControlClaim
from judge.verdicts import CONTROL_LABELS


def chance(config: ControlsConfig, records: int) -> float:
    """The probability that an answer gets a control answer: what ``per_label`` x 3 controls (x ``margin``)
    ask of ``records`` answers, at most what keeps controls to ``max_share`` of the claims judged."""
    cap = config.max_share / (1 - config.max_share)
    want = config.per_label * len(CONTROL_LABELS) * config.margin / max(1, records)
    return min(cap, want)


def draw(record_id: str, answer_index: int, seed: int = 0) -> float:
    """A uniform number in [0, 1) from the record and answer alone: an answer chosen at one chance is chosen
    at every higher one, so a run asking more controls (rejudge) keeps the ones it has."""
    digest = hashlib.blake2b(f"{seed}:{record_id}:{answer_index}:chosen".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64  # a keyed hash: crc32 of ids that differ in a digit is far from uniform


@dataclass
class ControlPlan:
    """A run's controls: the data the rules draw from, and the chance each answer gets a control answer."""

    config: ControlsConfig
    data: ControlData
    records: int = 0  # the records the run selected

    @classmethod
    def for_run(cls, config: ControlsConfig, records: Iterable[Record], selected_ids: Iterable[str]) -> ControlPlan | None:
        """Built in one pass over all the dataset's records (swaps, names and subjects come from anywhere in
        the data; none is held); ``selected_ids``: the run's records, counted for the chance."""
        if not config.enabled:
            return None
        try:
            count = len(selected_ids)  # type: ignore[arg-type]
        except TypeError:
            count = sum(1 for _ in selected_ids)
        return cls(config, ControlData.from_records(records, keep=False), count)

    @property
    def chance(self) -> float:
        return chance(self.config, self.records)

    def chosen(self, record_id: str, answer_index: int) -> bool:
        return draw(record_id, answer_index, self.config.seed) < self.chance

    def for_answer(self, record: Record, answer_index: int, claims: list, open_claims: int, settled: dict | None = None,
                   given: int = 0, triage: bool = True) -> list[ControlClaim]:
        """The control answer of one answer (``claims``: its ClaimToJudge; ``open_claims``: how many of them
        reach a judge, the size of the control answer; ``settled``: the claims triage settles, by claim id;
        ``given``: controls the record has already, for their ids; ``triage``: whether triage is on). Empty where the answer is not chosen or
        no real claim of it reaches a judge."""
        if not claims or open_claims <= 0 or not self.chosen(record.id, answer_index):
            return []
        settled = settled or {}
        bases: list[Verified] = [v for cl in claims if (v := certain(cl.text, cl.candidates, cl.checks, cl.cid in settled)) is not None]
        data = self.data.seeing(record)
        size = min(open_claims, self.config.max_per_answer)
        if len(bases) < size:  # too few certain claims to fill a call shaped like the answer's: the source's own sentences
            have = {b.span.excerpt for b in bases}
            bases += [b for b in source_bases(record.id, [cl.text for cl in claims], data, size + len(bases), triage) if b.text not in have][: size - len(bases)]
        return control_answer(record.id, bases, data, size, seed=self.config.seed,
                              key=str(answer_index), first_id=given)
