"""Judges by name. A config's ``adjudicate.judges`` lists names: a registered judge (``deterministic``, or
one a user registers) or else a model of the config, which becomes a ModelJudge.

    register_judge("nli", lambda name, setup: MyNliJudge(name))   # then: judges: [nli, some-model]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from judge.judges.base import Judge
from judge.judges.deterministic import DeterministicJudge, DeterministicThresholds
from judge.judges.model import ModelJudge
from judge.llm import LLM, ModelConfig
from judge.prompts import Prompt
from judge.verdicts import DETERMINISTIC, NO_MODEL, PANEL, REFERENCE_MODEL, TRIAGE


@dataclass
class JudgeSetup:
    """What a judge may need to be built: the run's models, the LLM port, the judge prompt and settings."""

    models: dict[str, ModelConfig] = field(default_factory=dict)
    llm: LLM | None = None
    prompt: Prompt | None = None
    batch: bool = True
    context_chars: int = 80
    full_context: bool = False
    call_tokens: int = 6000
    call_claims: int = 32
    thresholds: DeterministicThresholds = field(default_factory=DeterministicThresholds)


Factory = Callable[[str, JudgeSetup], Judge]
_REGISTRY: dict[str, Factory] = {DETERMINISTIC: lambda name, setup: DeterministicJudge(setup.thresholds, name)}


def register_judge(name: str, factory: Factory) -> None:
    """Make ``name`` usable in configs; the factory builds the judge once per run."""
    _REGISTRY[name] = factory


def registered_judges() -> list[str]:
    """The judges one can name with no model: the built-in rule (``deterministic``) and any registered."""
    return list(_REGISTRY)


def needs_model(name: str) -> bool:
    """A judge name that must name a model of the config (it is no registered judge)."""
    return name not in _REGISTRY


def model_judges(names: list[str]) -> list[str]:
    return [n for n in names if needs_model(n)]


RESERVED = (DETERMINISTIC, TRIAGE, PANEL, NO_MODEL, REFERENCE_MODEL)  # names the results give other meanings


def check_panel_names(judges: list[str], models: dict[str, ModelConfig]) -> None:
    """Each judge of a panel is one row of every table, keyed by its name (a model judge's label): a name
    given twice would merge two judges into one row (hiding one that failed every call), and a model judge
    named like a built-in one (deterministic, triage, panel, ...) would merge with it. ValueError naming them."""
    twice = sorted({n for n in judges if judges.count(n) > 1})
    if twice:
        raise ValueError(f"adjudicate.judges: {', '.join(twice)} listed twice; each judge once")
    for key in (k for k in models if k in _REGISTRY or k in RESERVED):
        raise ValueError(f"models: a model may not be named {key!r}: the name is reserved for a built-in judge or a result field")
    labels: dict[str, str] = {}
    for name in judges:
        label = models[name].label if needs_model(name) and name in models else name
        if needs_model(name) and (label in RESERVED or label in _REGISTRY):
            raise ValueError(f"models.{name}: name {label!r} is reserved (a built-in judge or a result field); give the judge another name")
        if label in labels:
            raise ValueError(f"adjudicate.judges: {labels[label]} and {name} are both named {label!r}; judges of a panel need distinct names")
        labels[label] = name


def build_judge(name: str, setup: JudgeSetup) -> Judge:
    if not needs_model(name):
        return _REGISTRY[name](name, setup)
    if name not in setup.models:
        raise KeyError(f"no model named {name!r} (known: {', '.join(setup.models) or 'none'})")
    return ModelJudge(setup.llm, setup.models[name], setup.prompt, batch=setup.batch, context_chars=setup.context_chars, full_context=setup.full_context,
                      call_tokens=setup.call_tokens, call_claims=setup.call_claims)
