"""run.json's fields and their types: every reader of a run's manifest gets values of these types, or one line
naming run.json and the field (a file edited by hand or damaged), never a traceback further on."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator


class RunManifest(BaseModel):
    """The fields judge reads back; others (written by a later version, or added by hand) are kept as they are."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    name: str | None = None
    config_hash: str | None = None
    run_id: str | None = None
    shard: tuple[int, int] | None = None
    prompts: dict[str, str] = {}
    same_family_clashes: list[str] = []
    unknown_family_answer_models: list[str] = []
    records_selected: int | list[str] | None = None  # a count; the ids themselves in runs written before selected.ids
    wall_seconds: float | None = None
    merged_from: list[str] = []
    merged_run_ids: list[str] = []
    rejudged_from: str | None = None

    @field_validator("wall_seconds")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not (math.isfinite(v) and v >= 0):
            raise ValueError("must be a finite number of seconds, 0 or more")
        return v


def manifest_problem(data: dict) -> str | None:
    """What is wrong with run.json's fields (``data``, read), or None when every field has its type."""
    from judge.problems import describe, field_path

    try:
        RunManifest.model_validate(data)
    except ValidationError as e:
        error = e.errors()[0]
        return f"field {field_path(error['loc'])}: {describe(error)}; a run's files are written by judge (it was edited or damaged)"
    return None
