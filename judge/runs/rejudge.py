"""``judge rejudge``: the stored claims and candidates of a run, judged again by other judges, into a new
run. No generation, no decomposition, no search: the cheap way to compare judge families."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from judge.controls.mix import ControlPlan
from judge.judges.registry import model_judges
from judge.llm import CallCache, ModelConfig
from judge.llm.preflight import require
from judge.pipeline import build_pipeline, model_judged, rejudge_record
from judge.problems import describe
from judge.runs.config import ConfigError, RunConfig
from judge.runs.inputs import dataset_records
from judge.runs.run import Run
from judge.runs.runner import config_hash, drive
from judge.runs.selection import Selection
from judge.runs.store import RunStore


def rejudge_config(config: RunConfig, judges: list[str], extra_models: dict[str, ModelConfig], controls_per_label: int | None = None) -> RunConfig:
    """The run's config with the new judges; ``controls_per_label``: controls and their gate on, asking for
    that many per label (the run's own controls are kept, the plan's extra ones added)."""
    models = {**config.models, **extra_models}
    update = {"models": models, "adjudicate": config.adjudicate.model_copy(update={"judges": judges})}
    if controls_per_label is not None:  # validated as a config's value is: a flag is held to the same bounds
        try:
            update["controls"] = type(config.controls).model_validate(
                {**config.controls.model_dump(), "enabled": True, "gate": True, "per_label": controls_per_label})
        except ValidationError as e:
            raise ConfigError(f"--controls-per-label {controls_per_label}: {describe(e.errors()[0])}") from None
    new = config.model_copy(update=update)
    new.check_model_names()
    return new


def rejudge(
    run_dir: Path,
    judges: list[str],
    extra_models: dict[str, ModelConfig],
    *,
    runs_root: Path = Path("runs"),
    name: str | None = None,
    use_cache: bool = True,
    refresh: bool = False,
    on_result=None,
    controls_per_label: int | None = None,
) -> tuple[RunStore, dict]:
    old = Run.open(run_dir)
    if not old.summary or not (old.summary.get("run") or {}).get("complete", True):  # killed, stopped early, being written
        from judge.runs.store import RunDirError

        raise RunDirError(f"{run_dir} did not finish (no summary.json, or it says incomplete): rejudge reads finished runs only, "
                          f"as merge and baseline save do (finish it first: judge run CONFIG --resume {run_dir})")
    config = rejudge_config(old.config, judges, extra_models, controls_per_label)
    require(config.model(n) for n in model_judges(judges))  # before the first claim, as judge run does
    records = old.records  # the new config reads the same dataset
    ids: list[str] = []  # one pass over the old results, keeping their ids and families only (memory stays flat)
    families: set[str] = set()
    unknown: set[str] = set()
    missing: list[str] = []
    for r in old.results():
        ids.append(r.record_id)
        for a in r.answers:
            families.add(a.family)
            if a.family == "unknown":
                unknown.add(a.model)
        if len(missing) < 5 and r.record_id not in records:
            missing.append(r.record_id)
    if missing:
        raise ValueError(f"{config.dataset.path} lacks records of the run: {', '.join(missing)}")
    cache = CallCache(config.cache_dir, enabled=use_cache, refresh=refresh)
    pipeline = build_pipeline(config, None, cache, sorted(families))
    pipeline.unknown_families = sorted(unknown) if model_judged(config) else []  # the cross-family rule: model judges only
    meta = {
        "name": name or f"{old.manifest.get('name', 'run')}-rejudge",
        "config_hash": config_hash(config),
        "rejudged_from": str(run_dir),
        "shard": old.manifest.get("shard"),  # a rejudged shard is still that shard of its split (merge checks the split)
        "prompts": {k: v.hash for k, v in pipeline.prompts.items()},
        "same_family_clashes": pipeline.family_clashes,
        "unknown_family_answer_models": pipeline.unknown_families,
    }
    store = RunStore.create(runs_root, meta["name"], config, meta)
    Selection.write(store, ids)
    pipeline.llm.on_call = store.append_call
    pipeline.controls = ControlPlan.for_run(config.controls, dataset_records(config), ids)  # more controls where the gate needs them
    work = lambda old: rejudge_record(pipeline, old, records[old.record_id])  # noqa: E731
    return store, drive(store, old.results(), work, ids, config, cache, on_result)  # the old results streamed again
