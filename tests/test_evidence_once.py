"""One Evidence per claim (issue 48, Done-when): an instrumented run computes each alignment once per (claim,
span), each claim's Evidence and feature vector once per claim and input, and triage's reading once per
claim. The counters wrap the uncached computations themselves (the memo's inner function), so a cache that
missed, or a reader that built its own value, would count twice."""

from __future__ import annotations

import collections
import importlib

import judge
from judge.stages import alignment, evidence
from judge.text.memo import SPAN_CACHE_CHARS, text_memo
from tests.conftest import ROOT

triage = importlib.import_module("judge.judges.triage")  # the module (judge.judges exports the function by its name)


def test_a_run_reads_each_claim_once(tmp_path, monkeypatch):
    aligned: collections.Counter = collections.Counter()
    read: collections.Counter = collections.Counter()
    featured: collections.Counter = collections.Counter()
    triaged: collections.Counter = collections.Counter()

    inner = alignment._align.__wrapped__

    def counted_align(claim, span):
        aligned[(claim, span)] += 1
        return inner(claim, span)

    monkeypatch.setattr(alignment, "_align", text_memo(max_chars=SPAN_CACHE_CHARS)(counted_align))
    real_read = evidence.read_evidence

    def counted_read(text, candidates, *rest):
        read[(text, tuple(c.text for c in candidates), rest[1:])] += 1
        e = real_read(text, candidates, *rest)
        real_features = e._features
        object.__setattr__(e, "_features", lambda: (featured.update([text]), real_features())[1])
        return e

    monkeypatch.setattr(evidence, "read_evidence", counted_read)
    real_refusal = triage._refusal

    def counted_refusal(claim, context, inputs):
        triaged[(claim.cid, claim.text)] += 1
        return real_refusal(claim, context, inputs)

    monkeypatch.setattr(triage, "_refusal", counted_refusal)
    data = ROOT / "judge" / "data"
    run = judge.evaluate({"name": "once", "dataset": {"path": str(data / "he_sample.json")},
                          "answers": {"path": str(data / "he_sample_answers.jsonl")},
                          "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]}},
                         runs_dir=tmp_path / "runs", use_cache=False, reports=False)
    claims = list(run.claims())
    assert len(claims) >= 10 and aligned and read and triaged
    assert max(aligned.values()) == 1, [k for k, v in aligned.items() if v > 1][:3]
    assert max(read.values()) == 1, [k[0] for k, v in read.items() if v > 1][:3]
    assert featured and max(featured.values()) == 1
    assert max(triaged.values()) == 1
    assert len(read) >= len(claims) - sum(c.label == "unsupported" and not c.evidence for c in claims)  # every judged claim read
