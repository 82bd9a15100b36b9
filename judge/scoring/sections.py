"""Score sections: each declares the gold it needs, takes the run's answers one at a time, and returns a typed
result. scores.json, the terminal, report.md, report.html and compare all iterate over SECTIONS, so a new metric
is one new class in this list (docs/extending.md).
"""

from __future__ import annotations

from judge.scoring.base import Section
from judge.scoring.decomposition import Decomposition
from judge.scoring.evidence import ChunkAttribution, Evidence, EvidenceCeilingSection
from judge.scoring.gold_labels import ClaimMatching, FreeVerdictsSection, GoldLabels
from judge.scoring.health import JudgeHealth
from judge.scoring.human import Human
from judge.scoring.judges_gold import JudgesVsGold
from judge.scoring.models import ModelComparison
from judge.scoring.rates import ByDifficulty, ByGenre, ByJudge, ByModel, Overall, PerAnswer

__all__ = [
    "SECTIONS", "ByDifficulty", "ByGenre", "ByJudge", "ByModel", "ChunkAttribution", "ClaimMatching", "Decomposition", "Evidence", "EvidenceCeilingSection",
    "FreeVerdictsSection", "GoldLabels", "Human", "JudgeHealth", "JudgesVsGold", "ModelComparison", "Overall", "PerAnswer",
]

SECTIONS: tuple[type[Section], ...] = (
    Overall, JudgeHealth, ModelComparison, ByModel, ByJudge, PerAnswer, Decomposition, GoldLabels, JudgesVsGold, FreeVerdictsSection, ClaimMatching, Evidence, EvidenceCeilingSection,
    ChunkAttribution, ByGenre, ByDifficulty, Human,
)
