"""Claims per judge call are bounded (issue 28.5): a long answer is cut into calls of at most call_claims
claims and about call_tokens tokens, every claim still judged once; a control answer is cut by the same
rule, in calls of its own (issue 37)."""

from __future__ import annotations

import json
import re

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.judges.calls import call_groups
from judge.testing.scripts import pipeline_model
from tests.conftest import BUNDLED_SAMPLE, cli_inproc


@settings(deadline=None, max_examples=300, derandomize=True)
@given(sizes=st.lists(st.integers(1, 5000), min_size=1, max_size=80), tokens=st.integers(200, 3000), most=st.integers(1, 12))
def test_groups_keep_order_and_bounds(sizes, tokens, most):
    groups = call_groups(sizes, tokens, most)
    assert [i for g in groups for i in g] == list(range(len(sizes)))  # every claim once, in order
    for g in groups:
        assert len(g) <= most and (len(g) == 1 or sum(sizes[i] for i in g) <= tokens * 4)


def test_a_long_answer_is_judged_in_several_bounded_calls(scripted_server, tmp_path):
    server = scripted_server(pipeline_model())
    record = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))[0]
    sentences = [s.strip() + "." for s in re.split(r"[.?!]\s", record["source_text"]) if len(s.split()) > 3]
    # 200 distinct sentences, each a run of 4 or more words of a source sentence
    words = [s.rstrip(".").split() for s in sentences]
    windows = [" ".join(w[a:a + n]) + "." for n in range(max(map(len, words)), 3, -1) for a in range(max(map(len, words))) for w in words
               if a + n <= len(w)]
    assert len(set(windows)) >= 200
    answer = " ".join(list(dict.fromkeys(windows))[:200])
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"record_id": record["id"], "model": "long-model", "family": "fam-a", "answer": answer}, ensure_ascii=False) + "\n", encoding="utf-8")
    data = tmp_path / "data.json"
    data.write_text(json.dumps([record], ensure_ascii=False), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "name": "long", "dataset": {"path": str(data)}, "answers": {"path": str(answers)},
        "models": {"judge-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b"}},
        "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["judge-b"], "triage": False, "call_tokens": 3000, "call_claims": 24},
        "controls": {"per_label": 4, "gate": False, "max_share": 0.5}, "cache_dir": str(tmp_path / "cache"),
    }, allow_unicode=True))
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    bodies = [json.dumps(b, ensure_ascii=False) for b in server.stats.bodies if "judge-b" in json.dumps(b)]
    shown = [re.findall(r'<claim id=\\"(\d+)\\"', b) for b in bodies]
    assert len(bodies) >= 200 // 24 and all(1 <= len(ids) <= 24 for ids in shown)
    assert all(len(b) < 3000 * 4 * 3 for b in bodies)  # prompt, schema and one claim's passages over the budget at most
    ids = [i for call in shown for i in call]
    assert all(len(call) == len(set(call)) for call in shown)
    results = [json.loads(line) for line in (tmp_path / "runs").glob("*/results.jsonl").__next__().read_text(encoding="utf-8").splitlines()]
    claims = [c for r in results for a in r["answers"] for c in a["claims"]]
    controls = [c for r in results for c in r["controls"]]
    assert len(claims) == 200 and all(c["label"] == "supported" and c["verdicts"][0]["how"] == "model" for c in claims)
    assert len(ids) == len(claims) + len(controls) and summary["usage"]["errors"] == 0
    texts = {c["control"]["text"] for c in controls}
    control_calls = [b for b, ids in zip(bodies, shown) if any(t in b for t in texts)]
    assert controls and control_calls and all(1 <= len(ids) <= 24 for ids in shown)  # a control answer is cut the same way
    assert 12 <= len(controls) <= 24  # as many as the answer's claims, at most controls.max_per_answer
