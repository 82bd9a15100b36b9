"""A failed run never looks like a passed one (issue 11): models that cannot be called are refused before the
first record (exit 2); a run whose judge calls failed, whose stage failed for every record or that judged
nothing writes everything and exits 3, naming the cause in the terminal; `judge doctor` says which models
can be called. Real litellm and instructor calls against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import textwrap

from judge.testing.scripts import pipeline_model
from judge.testing.server import Reply
from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc

BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"


def _config(tmp_path, server_url: str, extra: str = "", judge_extra: str = "", name: str = "loud") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"name: {name}\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {BUNDLED_ANSWERS}}}\n"
        f"models:\n  j: {{model: openai/j, family: fam-j, api_base: '{server_url}', max_attempts: 1, timeout: 5{judge_extra}}}\n"
        f"decompose: {{method: sentences}}\nadjudicate: {{judges: [j], triage: false, batch_claims: false}}\n"
        f"controls: {{enabled: false}}\ncache_dir: {tmp_path / 'cache'}\n{extra}"
    )
    return str(path)


def _run(config: str, tmp_path, *more: str):
    return cli_inproc("run", config, "--runs-dir", str(tmp_path / "runs"), "--no-progress", *more)


def test_every_judge_call_failing_exits_3_and_names_the_cause(scripted_server, tmp_path):
    server = scripted_server(lambda request, n: Reply(status=401))
    result = _run(_config(tmp_path, server.base_url), tmp_path)
    assert result.returncode == 3, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "run failed: every claim" in result.stderr
    assert "judge failed for every claim with j" in result.stderr
    assert "AuthenticationError" in result.stderr and "scripted status 401" in result.stderr  # the cause
    assert "errors: judge with j:" in result.stdout  # the terminal summary shows it too, not only "errors 5"
    run_dir = next((tmp_path / "runs").iterdir())
    assert (run_dir / "summary.json").exists() and (run_dir / "report.html").exists()  # everything is written
    outcome = json.loads((run_dir / "summary.json").read_text())["outcome"]
    assert outcome["judged"] == 0 and outcome["reasons"]


def test_a_gate_cannot_pass_a_run_whose_judge_failed(scripted_server, tmp_path):
    ok = scripted_server(pipeline_model())
    base = _run(_config(tmp_path, ok.base_url, name="base"), tmp_path, "--name", "base")
    assert base.returncode == 0, base.stderr[-2000:]
    baseline = next((tmp_path / "runs").iterdir())
    down = scripted_server(lambda request, n: Reply(status=401))
    result = _run(_config(tmp_path, down.base_url, name="broken"), tmp_path, "--baseline", str(baseline), "--gate", "faithfulness:0.02")
    assert result.returncode == 3, result.stdout[-2000:] + result.stderr[-2000:]


def test_max_error_rate_decides_between_0_and_3(scripted_server, tmp_path):
    good = pipeline_model()

    def flaky(request, n):  # every third judge call fails for good (max_attempts 1)
        return Reply(status=400) if n % 3 == 0 else good(request, n)

    server = scripted_server(flaky)
    strict = _run(_config(tmp_path, server.base_url, name="strict"), tmp_path)
    assert strict.returncode == 3, strict.stderr[-2000:]
    assert "ended in judge_error; max_error_rate is 0" in strict.stderr
    assert "scripted status 400" in strict.stderr
    tolerant = _run(_config(tmp_path, server.base_url, extra="max_error_rate: 0.9\n", name="tolerant"), tmp_path, "--no-cache")
    assert tolerant.returncode == 0, tolerant.stderr[-2000:]
    assert "errors: judge with j:" in tolerant.stdout  # tolerated, still shown with its cause


def test_missing_key_is_refused_before_the_first_call(scripted_server, tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGE_TEST_ABSENT_KEY", raising=False)
    server = scripted_server(pipeline_model())
    config = _config(tmp_path, server.base_url, judge_extra=", api_key_env: JUDGE_TEST_ABSENT_KEY")
    result = _run(config, tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "model j (openai/j): environment variable JUDGE_TEST_ABSENT_KEY (its api_key_env) is not set" in result.stderr
    assert server.stats.requests == 0  # not one call
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # no run directory either


def test_unreachable_server_is_refused_before_any_record(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    result = _run(_config(tmp_path, f"http://127.0.0.1:{port}/v1"), tmp_path)
    assert result.returncode == 2 and "not reachable" in result.stderr and "judge doctor" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_run_that_judged_nothing_exits_3(tmp_path):
    data = tmp_path / "empty.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "question": "q?", "source": "The sky is blue.", "answer": " "}) + "\n" for i in range(2)))
    config = tmp_path / "c.yaml"
    config.write_text(f"name: nothing\ndataset: {{path: {data}}}\ndecompose: {{method: sentences}}\n"
                      f"adjudicate: {{judges: [deterministic]}}\ncache_dir: {tmp_path / 'cache'}\n")
    result = _run(str(config), tmp_path)
    assert result.returncode == 3, result.stdout[-2000:] + result.stderr[-2000:]
    assert "nothing was judged" in result.stderr


def test_doctor_says_which_models_can_be_called(scripted_server, tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGE_TEST_ABSENT_KEY", raising=False)
    server = scripted_server()
    models = tmp_path / "models.yaml"
    models.write_text(textwrap.dedent(f"""\
        models:
          up: {{model: openai/up, api_base: '{server.base_url}'}}
          keyless: {{model: anthropic/claude-3-5-haiku-latest, api_key_env: JUDGE_TEST_ABSENT_KEY}}
          nowhere: {{model: local/no-such-model}}
        """))
    result = cli_inproc("doctor", "--models", str(models), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    problems = {m["name"]: m["problem"] for m in out["models"]}
    assert problems["up"] is None
    assert "JUDGE_TEST_ABSENT_KEY" in problems["keyless"]
    assert "unknown embedded model" in problems["nowhere"]
    assert out["installed"]["packages"]["litellm"]  # what is installed, with versions
    assert server.stats.requests == 0  # doctor calls no model
    table = cli_inproc("doctor", "--models", str(models))
    assert table.returncode == 0 and "keyless" in table.stdout


def test_a_run_stopped_by_its_budget_exits_3_saying_it_is_incomplete(scripted_server, tmp_path):
    server = scripted_server(pipeline_model())
    price = ", price: {input_per_million: 100000.0, output_per_million: 100000.0}"
    config = _config(tmp_path, server.base_url, extra="max_cost_usd: 0.01\nrecord_concurrency: 1\n", judge_extra=price)
    result = _run(config, tmp_path)
    assert result.returncode == 3, result.stdout[-2000:] + result.stderr[-2000:]
    assert "run failed: incomplete" in result.stderr and "--resume" in result.stderr


def test_a_bad_port_and_credentials_in_api_base(tmp_path):
    from judge.llm.preflight import server_problem

    assert "Port out of range" in server_problem("http://localhost:99999/v1", 1)
    line = server_problem("http://user:s3cr3tpassword@127.0.0.1:1/v1?api_key=abcdefghijklmnop", 1)
    assert "s3cr3tpassword" not in line and "abcdefghijklmnop" not in line and "127.0.0.1:1/v1" in line


def test_a_misspelt_judge_names_every_judge_one_can_give_and_the_nearest(tmp_path):
    """`judges: [determinstic]` (issue 46.7): refused before any record, saying the judge is unknown, the nearest
    name (deterministic, a rule no models: list holds) and every name one can give, rules and models alike."""
    config = tmp_path / "typo.yaml"
    config.write_text(f"name: typo\ndataset: {{path: {BUNDLED_SAMPLE}}}\nanswers: {{path: {BUNDLED_ANSWERS}}}\n"
                      "models:\n  qwen-judge: {model: openai/qwen-judge, family: qwen, api_base: 'http://127.0.0.1:9/v1'}\n"
                      f"decompose: {{method: sentences}}\nadjudicate: {{judges: [determinstic, qwen-judg]}}\ncache_dir: {tmp_path / 'cache'}\n")
    result = _run(str(config), tmp_path)
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    line = result.stderr.strip()
    assert "Traceback" not in line and not (tmp_path / "runs").exists()
    assert "unknown judges 'determinstic' (did you mean 'deterministic'?), 'qwen-judg' (did you mean 'qwen-judge'?)" in line, line
    known = line.split("known: ", 1)[1]  # every judge one can name (a judge another test registered may be among them)
    assert {"deterministic", "qwen-judge"} <= set(known.replace(";", ",").split(", ")) and "unknown model name" not in line, line
    # a model under test that is not there is a model name, with its nearest
    config.write_text(config.read_text().replace("[determinstic, qwen-judg]", "[deterministic]").replace(f"answers: {{path: {BUNDLED_ANSWERS}}}\n", "")
                      + "generate: {models: [qwen-judgee]}\n")
    result = _run(str(config), tmp_path)
    assert result.returncode == 2 and "unknown model name 'qwen-judgee' (did you mean 'qwen-judge'?)" in result.stderr, result.stderr
