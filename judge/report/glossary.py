"""The glossary: one short line for every term a newcomer meets in the reports, written once here for every
format (docs/scores.md repeats it word for word, which tests/test_report_lead.py checks)."""

from __future__ import annotations

from judge.verdicts import JUDGE_ERROR, UNSURE

GLOSSARY: dict[str, str] = {
    "supported, partially supported, unsupported, contradicted": "what the judges say of a claim against the evidence: "
    "all of it is stated there; its core is, with a detail the evidence lacks; the evidence does not state it; "
    "part of it conflicts with the evidence",
    "not grounded": "a claim that is not supported: contradicted, unsupported, partially supported or unsure",
    UNSURE: "the no-model judge could not decide with confidence and no model judge took the claim: it counts as "
    "not grounded and gets no credit",
    JUDGE_ERROR: "the judge's call still failed after its retries: the claim has no verdict",
    "faithfulness": "(supported + half the partially supported) / judged claims: 1.0 when every claim is supported",
    "hallucination rate": "(unsupported + contradicted) / judged claims",
    "control claims": "claims of known label mixed into the run to catch a broken or lenient judge; passing means "
    "it caught the planted errors, not that its verdicts are right",
    "call-equivalents": "the judge calls the controls cost, counted in calls (a control that shared a call counts "
    "its share of that call)",
    "AUC per surface feature": "how well one surface feature alone (length, share_question, ...) tells control "
    "claims from real ones: 0.5 not at all, 1.0 perfectly; above 0.7 a judge could spot the controls",
    "share_question": "a surface feature: the share of the claim's content words that are in the question",
    "detector AUC": "the same measure for the run's own detector, a model trained on all the features at once",
    "no-model judge": "the judge named deterministic: a rule over how the claim's words line up with its span, and a "
    "small model fitted on human-labelled claims; it makes no model call",
    "fitted score": "the no-model judge's estimate, from 0 to 1, that a claim is supported; its thresholds (such as "
    "supported from 0.80) turn it into a label, and the rule's own findings can overrule it",
    "span, passage, evidence": "the exact piece of a source a claim is judged against, shown after passage:; "
    "the claim's words are its content words",
    "checks": "tests run on every claim before the judges: a number, date or name the evidence lacks or states "
    "otherwise, a denial dropped or added",
    "triage": "claims that copy a source sentence, settled as supported with no judge call",
    "free verdicts": "verdicts that cost no model call (triage, or the no-model judge alone), with their precision "
    "against gold labels where the data has them",
    "evidence ceiling": "of the claims gold labels call supported, the share whose gold support span the search "
    "offered to the judges: no judge can do better than what it is shown",
}


ABSENT_TITLE = "Not measured for this run"  # the heading of the sections with nothing to say, a line each

