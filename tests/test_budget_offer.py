"""`search.budget_tokens` / `search.budget_share`: the judges are offered evidence by token budget
(judge.search.offer) instead of the top k; offsets stay exact and the budget holds for every claim."""

import json
from pathlib import Path

import pytest
import yaml

from judge.datasets import load
from judge.results import RecordResult
from judge.search.index import CHARS_PER_TOKEN
from tests.conftest import BUNDLED_SAMPLE, ROOT, assert_spans_exact, cli_inproc

BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"


def _run(tmp_path: Path, name: str, search: dict) -> list[RecordResult]:
    config = {
        "name": name,
        "dataset": {"path": str(BUNDLED_SAMPLE)},
        "answers": {"path": str(BUNDLED_ANSWERS)},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["deterministic"]},
        "search": search,
        "cache_dir": str(tmp_path / "cache"),
        "controls": {"gate": False},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = cli_inproc("run", str(path), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    run_dir = Path(json.loads(result.stdout)["run_dir"])
    return [RecordResult.model_validate_json(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _offered_chars(candidates) -> int:
    return sum(p.end_char - p.start_char for c in candidates for p in c.parts)


@pytest.mark.parametrize("search", [{"budget_share": 0.1}, {"budget_tokens": 30}])
def test_a_budgeted_run_offers_exact_spans_within_the_budget(tmp_path, search):
    records = {r.id: r for r in load(BUNDLED_SAMPLE)}
    results = _run(tmp_path, "budgeted", search)
    top_k = {(r.record_id, a.model, c.claim_id): c.candidates for r in _run(tmp_path, "topk", {"k": 5}) for a in r.answers for c in a.claims}
    claims = offered = differs = 0
    for r in results:
        sources = {s.doc_id: s.text for s in records[r.record_id].sources}
        total = sum(len(t) for t in sources.values())
        budget = search.get("budget_tokens") or max(1, round(search["budget_share"] * total / CHARS_PER_TOKEN))
        for a in r.answers:
            for c in a.claims:
                claims += 1
                assert_spans_exact(c.candidates, sources.__getitem__)
                assert _offered_chars(c.candidates) <= budget * CHARS_PER_TOKEN, (r.record_id, c.text)
                offered += bool(c.candidates)
                differs += [x.excerpt for x in c.candidates] != [x.excerpt for x in top_k[(r.record_id, a.model, c.claim_id)]]
    assert claims > 10 and offered > claims // 2
    assert differs > 0  # the setting changes what is offered


def test_both_budgets_at_once_is_a_config_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        yaml.safe_dump({"name": "bad", "dataset": {"path": str(BUNDLED_SAMPLE)}, "answers": {"path": str(BUNDLED_ANSWERS)},
                        "search": {"budget_tokens": 50, "budget_share": 0.2}}),
        encoding="utf-8",
    )
    result = cli_inproc("run", str(path), "--runs-dir", str(tmp_path / "runs"))
    assert result.returncode == 2 and "budget_share" in result.stderr and "Traceback" not in result.stderr
