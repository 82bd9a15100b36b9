"""Control claims: claims whose label is known by construction, made from the run's own verified claims and
mixed into the judges' calls to measure each judge on the run's own data (make, mix), and the judges'
health computed from their verdicts on them, with exact intervals and a gate on their lower bounds (health)."""

from judge.controls.make import (
    ControlClaim,
    ControlData,
    ControlsConfig,
    Verified,
    control_count,
    controls_for_answer,
    floor_plan,
    verified,
)
from judge.verdicts import CONTROL_LABELS

__all__ = ["CONTROL_LABELS", "ControlClaim", "ControlData", "ControlsConfig", "Verified", "control_count", "controls_for_answer", "floor_plan", "verified"]
