"""The score section of each judge's health on its control claims (judge.controls.health, from the run's summary)."""

from __future__ import annotations

from judge.scoring.base import Block, Section, Table


class JudgeHealth(Section):
    """Each judge on its control claims (judge.controls.health, from the run's summary): recall per label with
    exact intervals, the gate's status and the cost of the controls. Reports lead with it whenever the judges
    are not verified."""

    key, title = "judge_health", "Judge health on control claims"

    def result(self, context):
        return context["run"].health

    @classmethod
    def block(cls, value, scores):
        from judge.controls.health import HealthReport

        if not value or not value.get("judges"):
            return None
        report = HealthReport.model_validate(value)
        if not any(j.controls for j in report.judges):  # no judge saw a control: nothing to show but why
            return Block(cls.title, text=report.headline())
        headers, rows = report.table()
        return Block(cls.title, [Table(headers, rows)], lines=[report.headline(), *report.run_lines()])

    @staticmethod
    def headline(value) -> str | None:
        """The line every report opens with: whether the judges were verified on their controls."""
        from judge.controls.health import HealthReport

        return HealthReport.model_validate(value).headline() if value else None

    @staticmethod
    def failing(value) -> bool:
        """The judges are not verified: a gated judge failed or lacked evidence, or the gate or controls are off."""
        from judge.controls.health import HealthReport

        if not value:
            return False
        report = HealthReport.model_validate(value)
        return bool(report.failed) or not report.enabled or not report.gate
