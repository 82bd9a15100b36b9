"""The plain format for users' own data: the README's example, sniffing, answers recorded and generated in one
file, and one plain line per mistake in the data or the config."""

import json
import re

import yaml

from judge.datasets import load, load_checked, sniff
from judge.datasets.plain import DEFAULT_ANSWER_MODEL
from judge.results import RecordResult
from judge.testing.scripts import pipeline_model
from tests.conftest import ROOT, cli_inproc


def readme_example() -> tuple[str, str]:
    """The JSONL lines and the config shown under "Your own data" in the README."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.split(r"^#+ Your own data.*$", text, maxsplit=1, flags=re.M)[1]
    jsonl = re.search(r"```jsonl\n(.*?)```", section, re.S).group(1)
    config = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    return jsonl, config


def write(tmp_path, name: str, lines: list) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return str(path)


def test_the_readme_example_has_five_lines_and_loads_with_every_answer(tmp_path):
    jsonl, _ = readme_example()
    assert len(jsonl.strip().splitlines()) == 5
    path = tmp_path / "my_data.jsonl"
    path.write_text(jsonl, encoding="utf-8")
    assert sniff(path) == "plain"
    records = load(path)
    assert [r.id for r in records] == ["q1", "q2", "q3", "q4", "q5"]
    assert records[0].sources[0].doc_id == "q1" and records[0].source_text.startswith("The Golden Gate")
    assert records[2].sources[0].doc_id == "w1" and records[2].sources[0].title == "Hamlet"
    assert [(a.record_id, a.model) for a in records[3].answers] == [("q4", "model-a"), ("q4", "model-b")]
    assert records[0].answers[0].model == DEFAULT_ANSWER_MODEL
    gold = records[4].answers[0].gold_claims[0]
    assert gold.label == "supported" and records[4].source_text[gold.support[0].start_char : gold.support[0].end_char] == records[4].source_text


def test_the_readme_command_evaluates_the_five_lines(tmp_path):
    jsonl, config = readme_example()
    (tmp_path / "my_data.jsonl").write_text(jsonl, encoding="utf-8")
    (tmp_path / "my_run.yaml").write_text(config, encoding="utf-8")
    result = cli_inproc("run", str(tmp_path / "my_run.yaml"), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["records"] == 5 and summary["answers"] == 6
    results = [RecordResult.model_validate_json(x) for x in (tmp_path / "runs").glob("*/results.jsonl").__next__().read_text().splitlines()]
    models = {(r.record_id, a.model) for r in results for a in r.answers}
    assert ("q4", "model-a") in models and ("q4", "model-b") in models and ("q1", "answer") in models
    assert all(a.claims for r in results for a in r.answers), "every recorded answer is split into judged claims"


def test_answer_model_name_is_configurable(tmp_path):
    path = write(tmp_path, "d.jsonl", [{"id": "a", "source": "Water boils at 100 C.", "answer": "Water boils at 100 C."}])
    assert load(path, answer_model="gpt-4o")[0].answers[0].model == "gpt-4o"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"dataset": {"path": "d.jsonl", "answer_model": "my-bot"}}))
    result = cli_inproc("run", str(tmp_path / "c.yaml"), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    line = next((tmp_path / "runs").glob("*/results.jsonl")).read_text().splitlines()[0]
    assert RecordResult.model_validate_json(line).answers[0].model == "my-bot"


def test_recorded_and_generated_answers_in_one_file(scripted_server, tmp_path):
    server = scripted_server(pipeline_model(answer="Paris is the capital of France."))
    data = write(tmp_path, "mixed.jsonl", [
        {"id": "r1", "question": "Capital of France?", "source": "Paris is the capital of France.", "answer": "Paris is the capital."},
        {"id": "r2", "question": "Capital of France?", "source": "Paris is the capital of France."},
    ])
    config = {
        "dataset": {"path": data},
        "models": {"writer": {"model": "openai/writer", "api_base": server.base_url, "family": "fam-a", "timeout": 3, "max_attempts": 1}},
        "generate": {"models": ["writer"]},
        "cache_dir": str(tmp_path / "cache"),
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    result = cli_inproc("run", str(tmp_path / "c.yaml"), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    results = {r.record_id: r for r in (RecordResult.model_validate_json(x) for x in next((tmp_path / "runs").glob("*/results.jsonl")).read_text().splitlines())}
    assert [(a.model, a.answer) for a in results["r1"].answers] == [("answer", "Paris is the capital.")]
    assert [(a.model, a.answer) for a in results["r2"].answers] == [("writer", "Paris is the capital of France.")]
    assert server.stats.requests == 1, "only the record without an answer is sent to the model under test"


def test_a_record_with_no_answer_and_no_model_under_test_is_refused_by_name(tmp_path):
    write(tmp_path, "d.jsonl", [{"id": "ok", "source": "S.", "answer": "A."}, {"id": "lonely", "source": "S."}])
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"dataset": {"path": "d.jsonl"}}))
    result = cli_inproc("run", str(tmp_path / "c.yaml"), "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"{tmp_path / 'd.jsonl'}: record lonely: field answer: expected an answer (answer or answers), found none, "
        "and the config names no generate.models to write one"
    ]


def test_data_mistakes_are_one_plain_line_each_naming_record_field_expected_and_found(tmp_path):
    path = write(tmp_path, "bad.jsonl", [
        {"id": "a1", "source": "S.", "answer": 3},
        {"id": "a2", "source": "S.", "sources": [{"id": "x", "text": "S."}]},
        {"id": "a3", "source": "S.", "anwser": "typo"},
        {"id": "a4", "sources": [{"text": "no id"}]},
        {"id": "a5", "source": "Short.", "answer": "A.", "gold_claims": [{"text": "A.", "label": "maybe"}]},
        {"id": "a6", "source": "Short.", "answer": "A.", "gold_claims": [{"text": "A.", "label": "supported", "support": [{"start_char": 2, "end_char": 99}]}]},
        {"id": "a7", "sources": [{"id": "d", "text": "T."}], "answer": "A.", "gold_claims": [{"text": "A.", "label": "supported", "support": [{"doc_id": "nope", "start_char": 0, "end_char": 1}]}]},
    ])
    result = cli_inproc("validate", path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr and "pydantic" not in result.stderr and "errors.pydantic.dev" not in result.stderr
    assert f"{path}: record a1: field answer: expected a valid string, found 3 (number)" in lines
    assert any(line.startswith(f"{path}: record a2: ") and "exactly one of source" in line for line in lines)
    assert any(line.startswith(f"{path}: record a3: field anwser: unknown field") for line in lines)
    assert f"{path}: record a4: field sources[0].id: required field is missing" in lines
    assert any(line.startswith(f"{path}: record a5: field gold_claims[0].label: expected 'supported'") and "found 'maybe' (string)" in line for line in lines)
    assert any(line.startswith(f"{path}: record a6: field gold_claims[0].support[0]") and "out of range" in line for line in lines)
    assert f"{path}: record a7: field gold_claims[0].support[0].doc_id: expected one of the record's source ids (d), found 'nope'" in lines
    assert len(lines) == 7


def test_gold_claims_by_model_go_to_their_answers(tmp_path):
    path = write(tmp_path, "d.jsonl", [{
        "id": "r", "source": "Lima is the capital of Peru.", "answers": {"a": "Lima.", "b": "Cusco."},
        "gold_claims": {"b": [{"text": "Cusco.", "label": "contradicted"}]},
    }])
    loaded = load_checked(path)
    assert not loaded.problems
    answers = {a.model: a for a in loaded.items[0].answers}
    assert answers["a"].gold_claims == [] and answers["b"].gold_claims[0].label == "contradicted"


def test_run_config_mistakes_are_plain_lines_without_a_pydantic_dump(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"id": "a", "source": "S.", "answer": "A."}\n')
    bad = {"dataset": {"path": "d.jsonl", "formt": "plain"}, "search": {"k": "many"}, "record_concurrency": 0}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(bad))
    result = cli_inproc("run", str(tmp_path / "c.yaml"), "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert "errors.pydantic.dev" not in result.stderr and "validation error" not in result.stderr and "Traceback" not in result.stderr
    config = str(tmp_path / "c.yaml")
    assert any(line.startswith(f"{config}: field dataset.formt: unknown field") for line in lines)
    assert f"{config}: field search.k: expected a valid integer, unable to parse string as an integer, found 'many' (string)" in lines
    assert any(line.startswith(f"{config}: field record_concurrency: expected greater than or equal to 1") and "found 0 (number)" in line for line in lines)
    assert len(lines) == 3
