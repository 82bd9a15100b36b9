"""``judge rejudge``: the stored claims and candidates of a run, judged again by other judges, into a new
run. No generation, no decomposition, no search: the cheap way to compare judge families.

A run directory is an input (downloaded, committed, edited): what it says is checked before it is used. A
model judge's config (its api_base, its api_key_env) comes from the user's models file (``--models``, else
the packaged configs/models.yaml), never from the run's config.yaml, so an edited run cannot send the user's
key to another server. Every stored candidate must slice its source (``source[start:end] == excerpt``) and
every claim's answer span its answer, or the record is refused; the run's language is one judge wrote. The
call cache is the run's only where it already holds a judge cache, never a folder an edited config names.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from judge.controls.mix import ControlPlan
from judge.judges.registry import model_judges
from judge.llm import CallCache, ModelConfig
from judge.llm.preflight import require
from judge.pipeline import build_pipeline, model_judged, rejudge_record
from judge.problems import describe
from judge.config import ConfigError, RunConfig
from judge.runs.inputs import dataset_records
from judge.runs.run import Run
from judge.runs.runner import config_hash, drive
from judge.runs.selection import Selection
from judge.runs.store import RunStore
from judge.runs.summary import Summary


def rejudge_config(config: RunConfig, judges: list[str], extra_models: dict[str, ModelConfig], controls_per_label: int | None = None,
                   models_from: str = "--models") -> RunConfig:
    """The run's config with the new judges, each model judge's config taken from ``extra_models`` (the user's
    models file, ``models_from``), never from the run; ``controls_per_label``: controls and their gate on,
    asking for that many per label (the run's own controls are kept, the plan's extra ones added)."""
    called = model_judges(judges)
    missing = [n for n in called if n not in extra_models]
    if missing:
        raise ConfigError(f"--judge {', '.join(missing)}: no such model in {models_from}; a rejudge's model judges come from your models file "
                          "(--models FILE: a models file, or your run config, whose models: are read), never from the run's config.yaml, which anyone "
                          "who edited the run could point at another server")
    models = {**{k: v for k, v in config.models.items() if k not in extra_models}, **extra_models}
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
    extra_models: dict[str, ModelConfig] | None,
    *,
    runs_root: Path = Path("runs"),
    name: str | None = None,
    use_cache: bool = True,
    refresh: bool = False,
    on_result=None,
    controls_per_label: int | None = None,
) -> tuple[RunStore, Summary]:
    old = Run.open(run_dir)
    if old.summary_model is None or not old.summary_model.complete:  # killed, stopped early, being written
        from judge.runs.store import RunDirError

        raise RunDirError(f"{run_dir} did not finish (no summary.json, or it says incomplete): rejudge reads finished runs only, "
                          f"as merge and baseline save do (finish it first: judge run CONFIG --resume {run_dir})")
    from judge.runs.selection import check_whole

    check_whole(old.store, old.summary_model)  # its own files agree with its summary (issue 50.12)
    models_from = "--models"
    if extra_models is None:  # the user's default models file: the packaged one, as judge doctor and ping read
        from judge.llm.config import load_models
        from judge.resources import shipped_dir

        models_path = shipped_dir("configs") / "models.yaml"
        extra_models, models_from = (load_models(models_path) if model_judges(judges) else {}), f"{models_path} (no --models given)"
    config = rejudge_config(old.config, judges, extra_models, controls_per_label, models_from)
    config.cache_dir = _cache_dir(config.cache_dir)
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
        if r.record_id not in records:
            if len(missing) < 5:
                missing.append(r.record_id)
        else:  # before any of it reaches a judge, and before the new run is made
            check_read_back(r, records[r.record_id], old.store.results_path)
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


def _cache_dir(stored: str) -> str:
    """The call cache a rejudge uses: the run's own where that folder already holds a judge cache (so a rejudge
    made again makes no call), else ./.cache/judge; never a folder the run's config.yaml names that holds
    none (an edited run would have judge create a database anywhere)."""
    try:
        if Path(stored).is_absolute() and (Path(stored) / "cache.db").is_file():
            return stored
    except (OSError, ValueError):
        pass
    return str(Path(".cache/judge").resolve())


def check_read_back(result, record, where: Path) -> None:
    """A stored result fits its record before anything of it reaches a judge: every candidate part (of a
    claim, of a control) and a control's origin slice their source, every claim's answer span slices its
    answer. RunDirError naming the file, the record and the field otherwise (an edited run directory)."""
    from judge.runs.store import RunDirError

    from judge.judges.stored import misplaced, source_texts

    texts = source_texts(record)

    def check(span, text: str | None, field: str) -> None:
        if misplaced(span, text):  # the one rule a re-ask checks a stored passage by (judge.judges.stored.ask_stored)
            raise RunDirError(f"{where}: record {result.record_id!r}: field {field}: the stored excerpt is not the text at "
                              f"[{span.start_char}, {span.end_char}) of {'its answer' if field.endswith('answer_spans') else 'its source'} "
                              "(the run directory was edited, or its dataset changed since the run)")

    def candidates(items, field: str) -> None:
        for k, c in enumerate(items):
            for j, part in enumerate(c.parts):
                check(part, texts.get(part.doc_id, texts.get(None)), f"{field}.candidates[{k}].parts[{j}]")  # as a judge's passages read it

    for a_i, a in enumerate(result.answers):
        for c_i, claim in enumerate(a.claims):
            field = f"answers[{a_i}].claims[{c_i}]"
            candidates(claim.candidates, field)
            for s_i, span in enumerate(claim.answer_spans):
                check(span, a.answer, f"{field}.answer_spans[{s_i}]")
    for k, control in enumerate(result.controls):
        candidates(control.candidates, f"controls[{k}]")
        origin = control.control.origin
        if origin is not None and control.control.origin_record_id == result.record_id:
            check(origin, texts.get(origin.doc_id, texts.get(None)), f"controls[{k}].control.origin")
