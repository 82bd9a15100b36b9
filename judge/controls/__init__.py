"""Control claims: claims whose label is known by construction, made from the run's own claims and judged in
calls of their own shaped like the real ones (make, mix), and the judges' health computed from their verdicts
on them, with exact intervals: a canary that fails only a plainly broken judge (health)."""

from judge.controls.make import ControlClaim, ControlData, ControlsConfig, Verified, certain, control_answer
from judge.verdicts import CONTROL_LABELS

__all__ = ["CONTROL_LABELS", "ControlClaim", "ControlData", "ControlsConfig", "Verified", "certain", "control_answer"]
