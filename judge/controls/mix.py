"""Where a record's controls go among an answer's claims: how many, made from which claims, and at which
places, drawn from seeded generators so that the same data, config and seed give the same calls (and the
cache answers them)."""

from __future__ import annotations

import itertools
import random
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from judge.controls.make import ControlData, ControlsConfig, Verified, control_count, controls_for_answer, floor_plan, gold_bases, verified
from judge.models import Record
from judge.results import ControlClaim
from judge.verdicts import CONTROL_LABELS


def interleave(n_claims: int, n_controls: int, key: str, seed: int = 0) -> list[tuple[str, int]]:
    """The order the judges see: ("claim", i) for the answer's claims in their order, ("control", j) put at
    seeded places among them."""
    order: list[tuple[str, int]] = [("claim", i) for i in range(n_claims)]
    rng = random.Random(f"{seed}:{key}:places")
    for j in range(n_controls):
        order.insert(rng.randint(0, len(order)), ("control", j))
    return order


@dataclass
class ControlPlan:
    """A run's controls: the data the rules draw from, and each record's share of what the gate needs."""

    config: ControlsConfig
    data: ControlData
    floors: dict[str, int] = field(default_factory=dict)
    positions: dict[str, int] = field(default_factory=dict)  # the first records' places in the run (label turns)

    @classmethod
    def for_run(cls, config: ControlsConfig, records: Iterable[Record], selected_ids: Iterable[str]) -> ControlPlan | None:
        """Built in one pass over all the dataset's records (swaps and subjects come from anywhere in the data;
        none is held); the per_label x 3 controls the gate needs are spread over the first selected records,
        whose labels take turns by their place in the run. Only those first ids are held, so the plan does not
        grow with the run; every other record takes its turn from its id (:meth:`turn`)."""
        if not config.enabled:
            return None
        minimum = config.per_label * len(CONTROL_LABELS)
        first = list(itertools.islice(selected_ids, minimum))
        data = ControlData.from_records(records, keep=False)
        return cls(config, data, floor_plan(first, minimum), {rid: i for i, rid in enumerate(first)})

    def turn(self, record_id: str) -> int:
        """Where a record's control labels start: its place among the first records (so the gate's floors
        cover every label in turn), else a stable number from its id (labels balanced over many records, and
        the same record gets the same controls whatever else a run selects: --limit and --shard reuse the cache)."""
        if record_id in self.positions:
            return self.positions[record_id]
        return zlib.crc32(f"{self.config.seed}:{record_id}".encode("utf-8", "surrogatepass"))

    def for_answer(self, record: Record, answer_index: int, claims: list, given: int, open_claims: int, candidates_of=None,
                   settled: dict | None = None) -> list[ControlClaim]:
        """The controls to mix into one answer's calls, made from its verified claims (``claims``: the
        answer's ClaimToJudge), after ``given`` already mixed into the record's earlier answers: rate x
        claims (seeded rounding), or what the record's share of the gate still asks for, at most
        max_per_answer. None where no real claim of the answer reaches a judge (``open_claims``): a call
        never holds only controls. ``candidates_of(text)``: the search, to add the record's gold statements
        (reference answer, supported gold claims) to the bases; ``settled``: the claims triage settles, by
        claim id (shown as they are they would reach no judge)."""
        if not claims or open_claims <= 0:
            return []
        c = self.config
        want = max(control_count(len(claims), c.rate, key=f"{record.id}:{answer_index}", seed=c.seed), self.floors.get(record.id, 0) - given)
        count = min(want, c.max_per_answer)
        if count <= 0:
            return []
        settled = settled or {}
        bases: list[Verified] = [v for cl in claims if (v := verified(cl.text, cl.candidates, cl.checks, cl.cid in settled)) is not None]
        if candidates_of is not None:  # the record's gold statements (reference answer, supported claims) too
            have = {b.text for b in bases}
            longest = max(len(cl.text.split()) for cl in claims)  # no longer than the answer's own claims: length is no tell
            bases += [b for b in gold_bases(record, candidates_of) if b.text not in have and len(b.text.split()) <= longest]
        turn = self.turn(record.id) + given
        return controls_for_answer(record.id, bases, self.data.seeing(record), count, seed=c.seed, key=str(answer_index), offset=turn, first_id=given)
