"""Judges that must not pass: they read the call rather than judge the claim. A call-shape judge (labels by
how many claims a call holds, a claim's place and id) and a learned detector (trained on one data set's
controls and real claims, used on another: it answers "supported" where it takes a claim for real, and the
label it learned for controls where it takes one for a control). Both run through the scripted server on the
bundled sample, every answer given its control answer. Planted claims cannot tell them from honest judges
(that is why controls are only a canary): they are never shown as calibrated, and a config that requires a
calibrated judge refuses them (exit 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench.detector import fit, predict
from judge.controls.make import ControlsConfig
from bench.tells import DETECTOR_FEATURES, call_features, features, measure
from judge.datasets import load
from judge.testing.scripts import pipeline_model, shown_claims
from judge.verdicts import CONTRADICTED, SUPPORTED, UNSUPPORTED
from tests.conftest import shared
from tests.test_controls import answer_sentences
from tests.test_controls_run import OPEN, _health, _run, _folder
from tests.test_pipeline import write_config

LABELS = (SUPPORTED, CONTRADICTED, UNSUPPORTED)


def shape_judge(rule):
    """A judge that sees only the call's shape: how many claims, the claim's place and id."""
    def label(cid, request):
        _, claims = shown_claims(request)
        ids = [c for c, _, _ in claims] or [cid]
        return rule(len(ids), ids.index(cid) if cid in ids else 0, cid)
    return label


SHAPE_RULES = {
    "alone supported, else by place": lambda n, i, cid: SUPPORTED if n == 1 else LABELS[i % 3],
    "by id": lambda n, i, cid: LABELS[int(cid) % 3] if cid.isdigit() else SUPPORTED,
}


@pytest.mark.parametrize("rule", sorted(SHAPE_RULES))
def test_a_call_shape_judge_is_never_trusted(scripted_server, tmp_path, rule):
    server = scripted_server(pipeline_model(shape_judge(SHAPE_RULES[rule])))
    config = write_config(_folder(tmp_path), server, adjudicate={"judges": ["judge-b"], "triage": False}, controls={**OPEN, "gate": True},
                          require="calibrated")
    result, summary = _run(config, tmp_path)
    assert result.returncode == 3 and "refused (require: calibrated)" in result.stderr, result.stderr[-2000:]
    assert not summary["judge_health"]["trust"][0]["calibrated"] and _health(summary, "judge-b")["status"] != "reported"


def _trained_detector():
    """Trained on the shared Hebrew answers: whether a claim is a control (claim and call features), and which
    label a control has (one model per label, the likeliest wins)."""
    by = answer_sentences([], load(shared("he_model_answers_sample.jsonl"), "answers"))
    made = measure(load(shared("he_qa_sample.json")), lambda r: by.get(r.id, []), config=ControlsConfig(max_share=0.5), keep=True)
    rows = made["rows"]["controls"] + made["rows"]["real"]
    x = np.asarray([[r[f] for f in DETECTOR_FEATURES] for r in rows])
    y = np.asarray([1.0] * len(made["rows"]["controls"]) + [0.0] * len(made["rows"]["real"]))
    control = fit(x, y)
    cx = x[: len(made["rows"]["controls"])]
    by_label = {lbl: fit(cx, np.asarray([float(r["label"] == lbl) for r in made["rows"]["controls"]])) for lbl in LABELS}
    return control, by_label


def detector_judge(control, by_label):
    def label(cid, request):
        question, claims = shown_claims(request)
        rows = [{**features(t, question, p), **c} for (_, t, p), c in zip(claims, call_features([t for _, t, _ in claims]))]
        at = next((i for i, (c, _, _) in enumerate(claims) if c == cid), 0)
        x = np.asarray([[rows[at][f] for f in DETECTOR_FEATURES]])
        if predict(control, x)[0] < 0.5:
            return SUPPORTED  # a real claim, by its look: the lazy answer
        return max(LABELS, key=lambda lbl: predict(by_label[lbl], x)[0])
    return label


def test_a_detector_trained_on_another_set_is_never_trusted(scripted_server, tmp_path):
    control, by_label = _trained_detector()
    server = scripted_server(pipeline_model(detector_judge(control, by_label)))
    config = write_config(_folder(tmp_path), server, adjudicate={"judges": ["judge-b"], "triage": False}, controls={**OPEN, "gate": True},
                          require="calibrated")
    result, summary = _run(config, tmp_path)
    assert result.returncode == 3, json.dumps(summary["judge_health"] if summary else result.stderr)[-3000:]
    assert not summary["judge_health"]["trust"][0]["calibrated"] and "refused (require: calibrated)" in result.stderr
