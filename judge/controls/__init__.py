"""Control claims: claims whose label is known by construction, mixed into the judges' calls to measure
each judge on the run's own data (make), and the judges' health computed from their verdicts on them (health)."""

from judge.controls.make import (
    CONTROL_LABELS,
    ControlClaim,
    ControlData,
    ControlsConfig,
    control_count,
    controls_for_record,
    floor_plan,
)

__all__ = ["CONTROL_LABELS", "ControlClaim", "ControlData", "ControlsConfig", "control_count", "controls_for_record", "floor_plan"]
