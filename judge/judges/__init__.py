"""Judges: the Judge protocol, the model and deterministic judges, triage (a pre-judge), panels and a
registry that builds them from a config's names."""

from judge.judges.base import ClaimToJudge, Judge, JudgeContext, offer, spans_of
from judge.judges.deterministic import DeterministicJudge, DeterministicThresholds, deterministic_verdict
from judge.judges.model import ModelJudge
from judge.judges.panel import Panel, panel_verdict
from judge.judges.registry import JudgeSetup, build_judge, model_judges, needs_model, register_judge
from judge.judges.triage import triage

__all__ = [
    "ClaimToJudge", "DeterministicJudge", "DeterministicThresholds", "Judge", "JudgeContext", "JudgeSetup", "ModelJudge",
    "Panel", "build_judge", "deterministic_verdict", "model_judges", "needs_model", "offer", "panel_verdict",
    "register_judge", "spans_of", "triage",
]
