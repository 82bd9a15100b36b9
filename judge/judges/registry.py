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
from judge.verdicts import DETERMINISTIC


@dataclass
class JudgeSetup:
    """What a judge may need to be built: the run's models, the LLM port, the judge prompt and settings."""

    models: dict[str, ModelConfig] = field(default_factory=dict)
    llm: LLM | None = None
    prompt: Prompt | None = None
    batch: bool = True
    context_chars: int = 80
    full_context: bool = False
    thresholds: DeterministicThresholds = field(default_factory=DeterministicThresholds)


Factory = Callable[[str, JudgeSetup], Judge]
_REGISTRY: dict[str, Factory] = {DETERMINISTIC: lambda name, setup: DeterministicJudge(setup.thresholds, name)}


def register_judge(name: str, factory: Factory) -> None:
    """Make ``name`` usable in configs; the factory builds the judge once per run."""
    _REGISTRY[name] = factory


def needs_model(name: str) -> bool:
    """A judge name that must name a model of the config (it is no registered judge)."""
    return name not in _REGISTRY


def model_judges(names: list[str]) -> list[str]:
    return [n for n in names if needs_model(n)]


def build_judge(name: str, setup: JudgeSetup) -> Judge:
    if not needs_model(name):
        return _REGISTRY[name](name, setup)
    if name not in setup.models:
        raise KeyError(f"no model named {name!r} (known: {', '.join(setup.models) or 'none'})")
    return ModelJudge(setup.llm, setup.models[name], setup.prompt, batch=setup.batch, context_chars=setup.context_chars, full_context=setup.full_context)
