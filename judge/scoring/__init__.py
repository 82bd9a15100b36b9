"""``judge score``: a run's results against whatever gold its data carries, section by section
(judge.scoring.sections lists them), in one streamed pass over the results; the records are loaded once.
"""

from __future__ import annotations

from judge.runs.run import Run
from judge.metrics.gold import matched_gold
from judge.scoring.base import AnswerItem, Block, Section, Table
from judge.scoring.sections import SECTIONS

__all__ = ["SECTIONS", "AnswerItem", "Block", "Section", "Table", "blocks", "gold_scores", "score", "sections_of"]


def sections_of(run: Run, labels=None) -> list[Section]:
    """Every section, each fed every answer once: the claims first; agreement with a panel, the corrected rates
    with human labels."""
    from judge.scoring.agreement import JudgeAgreement
    from judge.scoring.first_claims import FirstClaimsSection
    from judge.scoring.ungrounded import NotGroundedSection

    sections = [NotGroundedSection(), FirstClaimsSection(), *(cls() for cls in SECTIONS)]
    if len(run.config.adjudicate.judges) > 1:
        sections.append(JudgeAgreement(run.config.adjudicate.judges))
    if labels is not None:
        from judge.scoring.corrected import Corrected

        sections.append(Corrected(labels))
    return sections


def score(run: Run, labels=None) -> dict:
    """The scores of a run (what scores.json holds), in the sections' order; ``labels``: human labels
    (judge.labels.load.load_labels) for the corrected rates."""
    records, recorded = run.records, run.recorded
    sections = sections_of(run, labels)
    count = 0
    for r in run.results():
        count += 1
        record = records.get(r.record_id)
        for a in r.answers:
            item = AnswerItem(r, a, record, matched_gold(record, a, recorded))
            for s in sections:
                s.add(item)
    context = {"summary": run.summary, "manifest": run.manifest, "records": records, "run": run}
    values = {s.key: _dump(s.result(context)) for s in sections}
    manifest = run.manifest
    head = {"run_dir": str(run.path), "name": manifest.get("name"), "judges": run.config.adjudicate.judges, "records": count}
    from judge.results import Usage

    usage = run.summary_part("usage", Usage)  # typed when read back: a string or markup there is one line naming the field
    tail = {"usage": usage.model_dump() if usage is not None else None, "wall_seconds": manifest.get("wall_seconds"), "same_family_clashes": manifest.get("same_family_clashes", []),
            "prompts": manifest.get("prompts", {})}
    agreement = values.pop("judge_agreement", None)
    corrected = values.pop("corrected", None)
    from judge.runs.summary import notes

    demonstration = notes(run.config)  # embedded models: every report says "demonstration" at its top
    out = {**head, **({"corrected": corrected} if corrected is not None else {}), **values, **tail, **({"notes": demonstration} if demonstration else {})}
    if agreement is not None:
        out["judge_agreement"] = agreement
    return out


def blocks(scores: dict) -> list[tuple[str, Block]]:
    """What every report shows of a scores.json, section by section: (section key, block)."""
    from judge.scoring.agreement import JudgeAgreement
    from judge.scoring.corrected import Corrected
    from judge.scoring.ungrounded import NotGroundedSection

    out = []
    for cls in (NotGroundedSection, Corrected, *SECTIONS, JudgeAgreement):
        block = cls.block(scores.get(cls.key), scores)
        if block is not None:
            out.append((cls.key, block))
    from judge.scoring.health import JudgeHealth
    from judge.scoring.models import ModelComparison

    out.sort(key=lambda kb: kb[0] != ModelComparison.key)  # several models under test: which is better comes first of the numbers
    if JudgeHealth.failing(scores.get(JudgeHealth.key)):  # a judge that fails its controls leads the summary sections
        out.sort(key=lambda kb: kb[0] != JudgeHealth.key)
    out.sort(key=lambda kb: kb[0] != NotGroundedSection.key)  # the claims lead every report; each opens with its judges' headline
    return out


def _dump(value):
    return value.model_dump(exclude_unset=True) if value is not None else None


def gold_scores(scores: dict) -> dict:
    """The sections that need gold (labels, spans, human ratings, qrels), as a run's summary quotes them."""
    out = {cls.key: scores.get(cls.key) for cls in SECTIONS if cls.needs}
    if scores.get("corrected") is not None:  # human labels make the rate to trust
        out["corrected"] = scores["corrected"]
    return out
