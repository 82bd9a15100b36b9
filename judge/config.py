"""Run configs (YAML): what to evaluate, with which models, and how.

Relative paths are relative to the config file. Models are named: inline under ``models:``, or taken from
``models_file:`` (e.g. configs/models.yaml). A judge is named too: a registered judge (``deterministic``,
judge.judges.registry) or a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judge.controls.make import ControlsConfig
from judge.errors import InputError
from judge.llm.config import ConfigFileError, ModelConfig, load_models, read_yaml
from judge.models import omitted_when_empty
from judge.problems import problems_from_validation
from judge.thresholds import Thresholds
from judge.judges.deterministic import DeterministicThresholds
from judge.judges.registry import model_judges
from judge.verdicts import DETERMINISTIC


RUN_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # a run's name is part of its directory's name


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class DatasetRef(_Section):
    path: str
    format: str | None = None
    # format beir: path is the benchmark folder; each query's top_k chunks of retrieval_run become its sources
    retrieval_run: str | None = None
    top_k: int = Field(5, ge=1, le=100)
    fingerprint: str | None = None  # expected corpus fingerprint (else manifest.json)
    allow_fingerprint_mismatch: bool = False
    answer_model: str = Field("answer", min_length=1)  # plain format: the model name credited with a record's `answer`

    @model_validator(mode="after")
    def _run_for_beir(self):
        if self.format == "beir" and not self.retrieval_run:
            raise ValueError("dataset.format beir needs dataset.retrieval_run (the retrieval run whose chunks the answers were written from)")
        return self


class AnswersRef(_Section):
    """Recorded answers: an ``answers`` file, or the records' own reference answers (``reference: true``; model
    "reference", family "human"), the ones human raters scored. With ``generate.models`` too, each record is
    judged with both: its recorded answers (of known quality, where they carry gold labels) beside the models'
    own. With neither, the answers are in the dataset itself (plain format; a record without one is refused)."""

    path: str | None = None
    reference: bool = False

    @model_validator(mode="after")
    def _one_source(self):
        if (self.path is None) == (not self.reference):
            raise ValueError("answers: give either path (an answers file) or reference: true")
        return self


PROMPT_VARIANT = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$"  # part of an answer's label: MODEL+VARIANT


class GenerateSection(_Section):
    models: list[str] = []  # models under test, by name
    # The answer's length is the stage's, not the model's: sized to what the answer prompt asks for, it
    # overrides the model config's max_tokens for generation only. An answer cut there is kept (truncated).
    max_tokens: int | None = Field(None, ge=1)
    # Answer prompts under test, by variant name: {v1: prompts/answer_v1.j2, ...} (paths relative to the
    # config). Each model answers with each variant; an answer is labelled MODEL+VARIANT and records its
    # prompt's name and hash. Empty: the shipped prompts/answer.j2, answers labelled by model alone.
    prompts: dict[str, str] = {}

    @model_validator(mode="after")
    def _variant_names(self):
        import re

        for name in self.prompts:
            if not re.match(PROMPT_VARIANT, name):
                raise ValueError(f"generate.prompts: variant name {name[:40]!r}: expected letters, digits, '.', '_' or '-' (at most 32), "
                                 "starting with a letter or digit")
        if self.prompts and not self.models:
            raise ValueError("generate.prompts needs generate.models (the models that answer with each prompt)")
        return self

    _omit_empty = omitted_when_empty("prompts")  # no variants: dumped (and hashed) as before variants existed

    def variants(self) -> list[str | None]:
        """The prompt variants each model answers with: the configured names, or [None] (the shipped prompt)."""
        return list(self.prompts) or [None]


class DecomposeSection(_Section):
    """llm: a model splits answers into claims; sentences: one claim per sentence; whole: the answer is one
    claim (for data whose answers are already single claims, like WiCE)."""

    method: Literal["llm", "sentences", "whole"] = "sentences"
    model: str | None = None  # required for method llm

    @model_validator(mode="after")
    def _model_for_llm(self):
        if self.method == "llm" and not self.model:
            raise ValueError("decompose.method llm needs decompose.model")
        return self


class SearchSection(_Section):
    """What the judges are shown per claim: the top ``k`` candidates (the default), or, with one of the
    budgets set, whole sentences chosen jointly within a token budget (``judge.search.offer``):
    ``budget_tokens`` per claim, or ``budget_share`` of the record's source tokens (characters / 4)."""

    k: int = Field(5, ge=1, le=20)
    context_chars: int = Field(80, ge=0, le=1000)
    budget_tokens: int | None = Field(None, ge=1, le=1_000_000)
    budget_share: float | None = Field(None, gt=0, le=1)

    @model_validator(mode="after")
    def _one_budget(self) -> SearchSection:
        if self.budget_tokens is not None and self.budget_share is not None:
            raise ValueError("set one of budget_tokens and budget_share, not both")
        return self


class AdjudicateSection(_Section):
    judges: list[str] = Field(default_factory=lambda: [DETERMINISTIC], min_length=1)
    batch_claims: bool = True  # the claims of an answer in one call per judge, cut by the two bounds below
    call_tokens: int = Field(6000, ge=200, le=1_000_000)  # about this many tokens of claims and passages a call
    call_claims: int = Field(32, ge=1, le=1000)  # at most this many claims (and controls) a call
    triage: bool = True  # verbatim claims are supported with no model call
    # with a no-model judge (deterministic) and model judges: the no-model judge rules first and only the claims
    # it is unsure of go to the model judges (docs/configs.md); off, every judge rules on every open claim
    cascade: bool = False
    judge_context: Literal["candidates", "full"] = "candidates"
    allow_same_family: bool = False
    deterministic: DeterministicThresholds = DeterministicThresholds()


class RaySection(_Section):
    """engine: ray. address None: a local Ray on this machine; cache shared_dir: cache_dir on storage every
    node reaches (diskcache is safe across processes); cache actor: one actor serves the driver's cache."""

    address: str | None = None
    batch_size: int = Field(8, ge=1, le=10_000)
    cache: Literal["shared_dir", "actor"] = "shared_dir"


class RunConfig(_Section):
    name: str = Field("run", pattern=RUN_NAME)
    dataset: DatasetRef
    answers: AnswersRef | None = None
    models_file: str | None = None
    models: dict[str, ModelConfig] = {}
    generate: GenerateSection = GenerateSection()
    decompose: DecomposeSection = DecomposeSection()
    search: SearchSection = SearchSection()
    adjudicate: AdjudicateSection = AdjudicateSection()
    cache_dir: str = ".cache/judge"
    max_cost_usd: float | None = Field(None, gt=0)
    # claims of known label mixed into the judges' calls: a canary that fails (exit 3) only a judge plainly broken
    # on them; too few of them is never a failure (judge.controls.health)
    controls: ControlsConfig = ControlsConfig()
    # the share of claims that may end in judge_error before the run exits 3 (it still writes everything);
    # below 1, a stage (one model's generation, decomposition or judging) failing for every record exits 3
    # too; a run that judged nothing exits 3 whatever this says
    max_error_rate: float = Field(0.0, ge=0, le=1)
    # absolute bounds on the finished run (overall and per model under test), exit 1 when broken; see
    # judge.thresholds. `judge run --max-hallucination/--min-faithfulness` override them
    thresholds: Thresholds = Thresholds()
    record_concurrency: int = Field(4, ge=1, le=64)
    limit: int | None = Field(None, ge=1)
    engine: Literal["local", "ray"] = "local"  # where records run; results are the same either way
    ray: RaySection = RaySection()
    # a judge calibration file (judge calibrate): each model judge measured once on labelled real claims, adopted
    # by this run while its judge setup (models, settings, judge prompt) is the one calibrated (judge.runs.calibration)
    calibration: str | None = None
    # "calibrated": a model judge not calibrated on enough labelled claims, or whose not-grounded recall's upper
    # bound is below 0.5, is refused (exit 3); unset, an uncalibrated judge is said so in one line and the run passes
    require: Literal["calibrated"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _controls_shorthand(cls, data):
        if isinstance(data, dict):
            if "min_control_accuracy" in data:
                raise ValueError("min_control_accuracy is gone: judges are gated per label on the lower bound of their recall "
                                 "(controls.floor, default 0.4); controls.gate: false reports without gating")
            if data.get("controls") is False or data.get("controls") in ("off", "false"):
                data = {**data, "controls": {"enabled": False}}
        return data


    def shareable(self) -> dict:
        """The config as a run's config.yaml (and a baseline, which is committed) holds it: every api_base (and
        ray.address) without its credentials (user:password@, api-key=, key=, token=, ...: judge.redact);
        keys are never in a config, only the names of their variables."""
        from judge.redact import scrub_url

        data = self.model_dump(mode="json", exclude_none=True)
        for cfg in data.get("models", {}).values():
            if cfg.get("api_base"):
                cfg["api_base"] = scrub_url(cfg["api_base"])
        if (data.get("ray") or {}).get("address"):
            data["ray"]["address"] = scrub_url(data["ray"]["address"])
        return data

    def model(self, name: str) -> ModelConfig:
        if name not in self.models:
            raise KeyError(f"no model named {name!r} (known: {', '.join(self.models) or 'none'})")
        return self.models[name]

    def called_model_names(self) -> list[str]:
        """The names of every model the run calls: models under test, model judges, the LLM decomposer."""
        names = list(self.generate.models) + model_judges(self.adjudicate.judges)
        if self.decompose.method == "llm" and self.decompose.model:
            names.append(self.decompose.model)
        return names

    def check_model_names(self) -> None:
        from judge.judges.registry import registered_judges

        problems = []
        judges = [n for n in model_judges(self.adjudicate.judges) if n not in self.models]
        if judges:  # a judge is a built-in one (a rule) or a model of the config: every name one can give, and the nearest
            problems.append(_unknown("adjudicate.judges: unknown judge", judges, registered_judges() + list(self.models),
                                     "a judge is a rule with no model (" + ", ".join(registered_judges()) + ") or a model named under models"))
        models = [n for n in self.called_model_names() if n not in self.models and n not in judges]
        if models:
            problems.append(_unknown("unknown model name", models, list(self.models), "a model under test or the decomposer is a model named under models"))
        if problems:
            raise ValueError("; ".join(problems))
        from judge.judges.registry import check_panel_names

        check_panel_names(self.adjudicate.judges, self.models)  # one row per judge: names unique, none reserved


def _unknown(what: str, names: list[str], known: list[str], rule: str) -> str:
    """'unknown judge 'determinstic' (did you mean 'deterministic'?); known: ...': each unknown name with its
    nearest known one (difflib), then every name one can give."""
    import difflib

    said = []
    for n in dict.fromkeys(names):
        near = difflib.get_close_matches(n, known, n=1, cutoff=0.6)
        said.append(f"{n!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    return f"{what}{'s' if len(said) > 1 else ''} {', '.join(said)}; {rule}; known: {', '.join(known) or 'none'}"


class ConfigError(InputError, ValueError):
    """A run config that cannot be used; the message names the file and the problem."""


def _resolved(where: str, base: Path, value, field: str, follow_last: bool = True) -> Path:
    """A config's path field, absolute (relative ones taken from ``base``); ConfigError naming the file and the
    field for a value that is no usable path (a NUL character, a name the system refuses, not a string)."""
    from judge.boundary import shown_path

    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: field {field}: expected a path, found {value!r}")
    if "\0" in value:
        raise ConfigError(f"{where}: field {field}: {shown_path(value)!r}: not a usable path (it holds a NUL character)")
    try:
        if Path(value).is_absolute():
            return Path(value)
        full = base / value
        # follow_last False: a link at the path itself is kept as one, so that the reading door can refuse it
        return full.resolve() if follow_last else full.parent.resolve() / full.name
    except (OSError, ValueError, RuntimeError) as e:  # a name too long, a link loop
        raise ConfigError(f"{where}: field {field}: {shown_path(value)}: not a usable path ({e})") from None


def load_run_config(path: str | Path) -> RunConfig:
    path = Path(path)
    try:
        data = read_yaml(path) or {}
    except ConfigFileError as e:
        raise ConfigError(str(e)) from None
    return run_config_from_dict(data, path.resolve().parent, str(path))


def run_config_from_dict(data, base: Path, where: str = "config") -> RunConfig:
    """A run config from its mapping: relative paths (models_file, dataset, answers, cache_dir) are taken
    from ``base``; ``where`` names the config in errors (its file, or "config" for the Python API)."""
    from judge.boundary import check_value, shown_path
    from judge.llm.config import model_entries
    from judge.problems import DatasetError

    path = where = shown_path(where)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    try:  # the input boundary: depth, text keys, no lone surrogate, numbers in range (a file's YAML already was)
        check_value(data, where)
    except DatasetError as e:
        raise ConfigError(str(e)) from None
    data = dict(data)
    try:
        models: dict = {}
        if data.get("models_file"):
            if not isinstance(data["models_file"], str):
                raise ValueError(f"field models_file: expected the path of a models file, found {type(data['models_file']).__name__}")
            models_path = base / data["models_file"]
            models.update({k: v.model_dump(exclude_unset=True) for k, v in load_models(models_path).items()})
        for name, cfg in model_entries(data.get("models"), path).items():
            models[name] = {"name": name, **cfg}
        data["models"] = models
        config = RunConfig.model_validate(data)
        config.check_model_names()
    except ValidationError as e:
        raise ConfigError("\n".join(str(p) for p in problems_from_validation(e, str(path), None))) from None
    except ConfigFileError as e:  # already names its file and field
        raise ConfigError(str(e)) from None
    except (ValueError, FileNotFoundError, KeyError) as e:
        raise ConfigError(f"{path}: {e}") from None
    if config.generate.prompts:  # the user's answer prompts: resolved, and rendered once on a sample record now
        from judge.prompts import load_answer_variant

        resolved_prompts = {}
        for variant, value in config.generate.prompts.items():
            try:
                resolved = (base / value).resolve() if not Path(value).is_absolute() else Path(value)
                found = resolved.is_file()
            except (OSError, ValueError) as e:
                raise ConfigError(f"{path}: generate.prompts.{variant}: {shown_path(value)}: not a usable path ({e})") from None
            if not found:
                raise ConfigError(f"{path}: generate.prompts.{variant}: {value} (resolved to {resolved}) is not a file")
            try:
                load_answer_variant(variant, resolved)
            except ValueError as e:
                raise ConfigError(f"{path}: generate.{e}") from None
            resolved_prompts[variant] = str(resolved)
        config.generate.prompts = resolved_prompts
    for ref, attr in ((config.dataset, "path"), (config.dataset, "retrieval_run"), (config.answers, "path")):
        value = getattr(ref, attr, None) if ref is not None else None
        if value is not None:
            try:
                resolved = (base / value).resolve() if not Path(value).is_absolute() else Path(value)
                found = resolved.exists()  # a NUL in the name: False, "does not exist"
            except (OSError, ValueError) as e:  # a name too long
                raise ConfigError(f"{path}: {shown_path(value)}: not a usable path ({e})") from None
            if not found:
                raise ConfigError(f"{path}: {value} (resolved to {resolved}) does not exist")
            setattr(ref, attr, str(resolved))
    # every path field resolved through one door (issue 50.10: a NUL in calibration: was a ValueError traceback)
    config.cache_dir = str(_resolved(path, base, config.cache_dir, "cache_dir"))
    if config.calibration is not None:  # need not exist yet (judge calibrate writes it)
        config.calibration = str(_resolved(path, base, config.calibration, "calibration", follow_last=False))
    return config
