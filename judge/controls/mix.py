"""Where a record's controls go among an answer's claims: how many, and at which places, drawn from seeded
generators so that the same data, config and seed give the same calls (and the cache answers them)."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from judge.controls.make import ControlData, ControlsConfig, control_count, controls_for_record, floor_plan
from judge.models import Record
from judge.results import ControlClaim


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
    """A run's controls: the data the rules draw from, and each record's guaranteed minimum."""

    config: ControlsConfig
    data: ControlData
    floors: dict[str, int] = field(default_factory=dict)
    positions: dict[str, int] = field(default_factory=dict)  # record id -> its place in the run (label turn)

    @classmethod
    def for_run(cls, config: ControlsConfig, records: Iterable[Record], selected_ids: list[str]) -> ControlPlan | None:
        """Built in one pass over all the dataset's records (swaps and unrelated sentences come from anywhere in
        the data; none is held); the minimum per run is spread over the selected records."""
        if not config.enabled:
            return None
        ids = list(selected_ids)
        data = ControlData.from_records(records, keep=False)
        return cls(config, data, floor_plan(ids, config.min_per_run), {rid: i for i, rid in enumerate(ids)})

    def for_answer(self, record: Record, answer_index: int, n_claims: int, given: int) -> list[ControlClaim]:
        """The controls to mix into one answer's calls, after ``given`` already mixed into the record's earlier
        answers: rate x claims (seeded rounding), and at least what the record's floor still asks for."""
        if not n_claims:
            return []
        c = self.config
        count = max(control_count(n_claims, c.rate, key=f"{record.id}:{answer_index}", seed=c.seed), self.floors.get(record.id, 0) - given)
        if count <= 0:
            return []
        # the first n controls of a record do not depend on how many are asked for, so slices are stable
        pool = controls_for_record(record.id, self.data.seeing(record), given + count, seed=c.seed, offset=self.positions.get(record.id, 0))
        return pool[given:]

    def controls_pool(self, record: Record, size: int = 12) -> list[ControlClaim]:
        """The first ``size`` controls of a record: every control a run can mix in for it, in order."""
        return controls_for_record(record.id, self.data.seeing(record), size, seed=self.config.seed, offset=self.positions.get(record.id, 0))
