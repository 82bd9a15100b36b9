"""Controls in real runs, against judges that want to pass without judging: through the scripted server (real
litellm and instructor), judged in calls of their own shaped like the answers' calls (never beside the claim,
answer or record they were made from), measured apart, a canary that fails (exit 3) only a judge plainly broken
on them and never an honest one for want of controls (an uncalibrated judge is said so, and refused only under
require: calibrated), kept to a share of the run, reproducible from the cache."""

from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path

from rapidfuzz import fuzz

from judge.testing.scripts import claim_text, pipeline_model, user_text
from judge.text import content_words, normalize
from tests.conftest import cli_inproc
from tests.test_pipeline import results_of, write_config

_PASSAGE = re.compile(r'<passage id="(\d+)\.\d+">(.*?)</passage>', re.S)


def _run(config: Path, tmp_path: Path, *extra: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress", *extra)
    return result, (json.loads(result.stdout) if result.stdout.strip().startswith("{") else None)


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


OPEN = {"per_label": 4, "max_share": 0.5}  # the bundled sample is 3 records: every answer gets its control answer


def _gated(tmp_path, server, **overrides) -> Path:
    """The config as a user writes it: the default gate (the test helper turns it off), the cap opened."""
    controls = {**OPEN, "gate": True, **overrides.pop("controls", {})}
    return write_config(tmp_path, server, controls=controls, **overrides)


def _health(summary: dict, judge: str) -> dict:
    return next(j for j in summary["judge_health"]["judges"] if j["judge"] == judge)


def surface_cheater(cid: str, request: dict) -> str:
    """The issue's cheater: labels by surface alone. Under 10% of the claim's words in the question and its
    passages: unsupported; a near-copy of a shown passage sentence with a few tokens changed: contradicted;
    anything else: supported."""
    text = user_text(request)
    claim = claim_text(request, cid)
    question = re.search(r"<question>(.*?)</question>", text, re.S)
    passages = [p for c, p in _PASSAGE.findall(text) if c == cid]
    words = set(content_words(normalize(claim).text))
    seen = set(content_words(normalize((question.group(1) if question else "") + " " + " ".join(passages)).text))
    if words and len(words & seen) / len(words) < 0.1:
        return "unsupported"
    for p in passages:
        for sentence in re.split(r"(?<=[.!?])\s+", re.sub(r"</?mark>", "", p)):
            ratio = fuzz.token_sort_ratio(claim, sentence) / 100
            if 0.85 <= ratio < 1.0:
                return "contradicted"
    return "supported"


def test_a_judge_that_calls_everything_supported_never_exits_0_as_trusted(scripted_server, tmp_path):
    """Where the canary has enough planted errors it fails the judge (exit 3); where it has too few, the run
    passes saying the judge is not calibrated, never that it caught anything, and require: calibrated refuses it."""
    server = scripted_server(pipeline_model())  # "supported" to every claim
    config = _gated(tmp_path, server, adjudicate={"judges": ["judge-b"], "triage": False})
    result, summary = _run(config, tmp_path)
    assert result.returncode == 3, result.stderr
    h = _health(summary, "judge-b")
    assert h["passed"] is False and h["status"] == "failed" and "plainly broken" in h["verdict"]
    assert "judge judge-b" in result.stderr and "on its controls" in result.stderr
    result, summary = _run(config, tmp_path, "--limit", "1")
    h = _health(summary, "judge-b")
    assert (result.returncode, h["status"]) in ((3, "failed"), (0, "unchecked")), (result.returncode, h)
    strict = write_config(_folder(tmp_path / "strict"), server, adjudicate={"judges": ["judge-b"], "triage": False}, controls={**OPEN, "gate": True},
                          require="calibrated")
    result, summary = _run(strict, tmp_path / "strict", "--limit", "1")
    assert result.returncode == 3 and "judge judge-b refused (require: calibrated): not calibrated" in result.stderr, result.stderr
    # the terminal says it first, before the table
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs2"), "--no-progress")
    assert result.returncode == 3
    assert result.stdout.index("JUDGES NOT CLEARED") < result.stdout.index("model under test")
    assert "VERIFIED" not in result.stdout and "trustworth" not in result.stdout.lower()
    # at the default cap three records make too few controls to tell: never a swamped run, never a failure for
    # want of controls, never "caught": the first line says the judge is not calibrated
    default = write_config(_folder(tmp_path / "default"), server, adjudicate={"judges": ["judge-b"], "triage": False}, controls={"gate": True})
    result, summary = _run(default, tmp_path / "default")
    assert result.returncode == 0 and _health(summary, "judge-b")["status"] == "unchecked", result.stderr
    text = cli_inproc("run", str(default), "--runs-dir", str(tmp_path / "default" / "runs"), "--no-progress").stdout
    assert text.splitlines()[0].startswith("judge-b NOT CALIBRATED") and "caught" not in text.splitlines()[0]
    cost = summary["judge_health"]["cost"]
    assert cost["shown"] <= 0.2 * sum(v["claims"] for v in summary["by_model"].values()) + 1


def test_a_surface_cheater_is_never_trusted_on_its_controls(scripted_server, tmp_path):
    """The issue's cheater labels by surface: on planted claims it may find enough to pass the canary (which is
    why the canary is no measure of trust), but it is never shown as calibrated, and a config that requires a
    calibrated judge refuses it."""
    server = scripted_server(pipeline_model(surface_cheater))
    result, summary = _run(_gated(tmp_path, server, adjudicate={"judges": ["judge-b"]}), tmp_path)
    h = _health(summary, "judge-b")
    assert (result.returncode, h["status"]) in ((3, "failed"), (0, "passed"), (0, "unchecked")), (result.returncode, h)
    (t,) = summary["judge_health"]["trust"]
    assert not t["calibrated"] and "trust" not in h["verdict"].lower()
    strict = _gated(_folder(tmp_path / "strict"), server, adjudicate={"judges": ["judge-b"]}, require="calibrated")
    result, summary = _run(strict, tmp_path / "strict")
    assert result.returncode == 3 and "refused (require: calibrated)" in result.stderr, result.stderr


def _truth(run_dir: str) -> dict[tuple[str, str], str]:
    """Every control's label by (question, text), from a first run (the same data and seed make the same
    controls); one text may be supported in its own record and unsupported in another's."""
    return {(r.question.strip(), c.control.text.strip()): c.control.label for r in results_of(run_dir) for c in r.controls}


def _question(request: dict) -> str:
    import html

    m = re.search(r"<question>(.*?)</question>", user_text(request), re.S)
    return html.unescape(m.group(1)).strip() if m else ""


def test_an_honest_judge_and_noisy_ones_through_the_whole_run(scripted_server, tmp_path):
    """A first run (gate off) tells the controls; then judges answering from that truth with probability p."""
    probe = scripted_server(pipeline_model())
    _, first = _run(write_config(_folder(tmp_path / "probe"), probe, adjudicate={"judges": ["judge-b"], "triage": False}, controls={**OPEN, "gate": False}), tmp_path / "probe")
    truth = _truth(first["run_dir"])
    assert set(truth.values()) == {"supported", "contradicted", "unsupported"}

    def judge_with(p: float, seed: int):
        rng = random.Random(seed)

        def label(cid, request):
            true = truth.get((_question(request), claim_text(request, cid).strip()), "supported")
            return true if rng.random() < p else rng.choice([x for x in ("supported", "unsupported", "contradicted") if x != true])
        return label

    outcomes = {}
    for p, seed in ((1.0, 0), (0.4, 1), (0.4, 2)):
        server = scripted_server(pipeline_model(judge_with(p, seed)))
        folder = _folder(tmp_path / f"p{p}-{seed}")
        result, summary = _run(write_config(folder, server, adjudicate={"judges": ["judge-b"], "triage": False}, controls={**OPEN, "gate": True}), folder)
        outcomes[(p, seed)] = (result.returncode, _health(summary, "judge-b"))
    code, h = outcomes[(1.0, 0)]
    # an honest judge is never failed, however few the controls: it caught the planted errors, nothing more
    assert (code, h["status"]) == (0, "passed"), h
    assert h["verdict"].startswith("caught planted errors")
    assert all(r["correct"] == r["controls"] for r in h["by_label"])
    for key in ((0.4, 1), (0.4, 2)):  # a guessing judge is no broken one: the canary passes it or cannot tell; its calibration shows it
        assert outcomes[key][0] == 0 and outcomes[key][1]["status"] in ("passed", "unchecked"), outcomes[key]


def _calls(server) -> list[list[str]]:
    """The claims each judge call showed, by text."""
    out = []
    for body in server.stats.bodies:
        text = json.dumps(body, ensure_ascii=False)
        if '"verdicts"' in text or '"label"' in text:
            out.append([html.unescape(json.loads(f'"{c}"')) for c in re.findall(r'<claim id=\\"\d+\\">(.*?)</claim>', text)])
    return [c for c in out if c]


def test_controls_never_sit_beside_their_base_and_calls_keep_their_shape(scripted_server, tmp_path):
    """Every judge call holds real claims only or controls only; a control's call holds nothing of the answer
    it was made from; each control answer has as many claims as its answer showed a judge (a one-claim answer
    gives a one-claim control call); calls.jsonl counts each call's controls; the answers' numbers are those
    of the same run without controls."""
    server = scripted_server(pipeline_model())
    config = write_config(tmp_path, server, adjudicate={"judges": ["judge-b"], "triage": False}, controls={**OPEN, "gate": False})
    result, summary = _run(config, tmp_path)
    assert result.returncode == 0, result.stderr
    results = results_of(summary["run_dir"])
    controls = [c for r in results for c in r.controls]
    assert controls and summary["judge_health"]["cost"]["shown"] == len(controls)
    assert summary["judge_health"]["cost"]["prompt_tokens"] > 0
    texts = {c.control.text for c in controls}
    real = {c.text for r in results for a in r.answers for c in a.claims}
    calls = _calls(server)
    for call in calls:
        mine = [t in texts and t not in real for t in call]
        assert all(mine) or not any(mine), call  # never mixed
    sizes = []
    for r in results:
        for index, a in enumerate(r.answers):
            mine = [c for c in r.controls if c.answer == index]
            if mine:  # the control answer's size: the claims a judge saw of the answer, where the rules can fill it
                sizes.append((len(mine), len(a.claims)))
                assert sorted(c.position for c in mine) == list(range(len(mine)))
                said = {c.text for c in a.claims}
                assert not any(c.control.text in said for c in mine if c.control.label != "supported")
    assert all(n <= m for n, m in sizes) and sum(n for n, _ in sizes) >= 0.7 * sum(m for _, m in sizes), sizes
    for call in calls:
        if call[0] in texts:  # a control call: nothing of the answer it was made from
            origin = next(c for c in controls if c.control.text == call[0])
            record = next(r for r in results if any(c is origin for c in r.controls))
            assert not set(call) & {c.text for c in record.answers[origin.answer].claims if c.text not in texts}
    lines = [json.loads(x) for x in Path(summary["run_dir"], "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    judged = [x for x in lines if x["model"] == "judge-b"]
    assert sum(x["controls"] for x in judged) == len(controls) and any(x["controls"] == 0 for x in judged)
    off, off_summary = _run(write_config(_folder(tmp_path / "off"), server, adjudicate={"judges": ["judge-b"], "triage": False}, controls={"enabled": False}), tmp_path / "off")
    assert off.returncode == 0, off.stderr
    assert off_summary["by_model"] == summary["by_model"]
    assert off_summary["judge_health"]["enabled"] is False


def test_one_claim_answers_give_one_claim_control_calls(scripted_server, tmp_path):
    """One-claim data: a call without controls holds 1 claim, and so does every call with them."""
    rows = [{"id": f"r{i}", "question": f"Question {i}?", "source": f"The bridge number {i} opened to traffic in {1900 + i}. It is {i + 2}.5 km long and "
             f"was built by the Smith Company over {i + 3} years.", "answer": f"The bridge opened to traffic in {1900 + i}."} for i in range(12)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    server = scripted_server(pipeline_model())
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({
        "dataset": {"path": str(data)}, "decompose": {"method": "sentences"},
        "models": {"judge-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b", "timeout": 3, "max_attempts": 2}},
        "adjudicate": {"judges": ["judge-b"], "triage": False}, "controls": {**OPEN, "gate": False}, "cache_dir": str(tmp_path / "cache"),
    }), encoding="utf-8")
    result, summary = _run(config, tmp_path)
    assert result.returncode == 0, result.stderr
    assert sum(len(r.controls) for r in results_of(summary["run_dir"])) >= 6
    assert all(len(call) == 1 for call in _calls(server))


def test_controls_are_byte_identical_from_the_cache(scripted_server, tmp_path):
    server = scripted_server(pipeline_model())
    config = write_config(tmp_path, server, controls={**OPEN, "gate": False})
    first, s1 = _run(config, tmp_path)
    calls = server.stats.requests
    second, s2 = _run(config, tmp_path)
    third, s3 = _run(config, tmp_path)
    assert first.returncode == second.returncode == third.returncode == 0
    assert server.stats.requests == calls  # every call, controls included, answered from the cache
    assert Path(s2["run_dir"], "results.jsonl").read_bytes() == Path(s3["run_dir"], "results.jsonl").read_bytes()
    rejudged = cli_inproc("rejudge", s1["run_dir"], "--judge", "deterministic", "--runs-dir", str(tmp_path / "runs"), "--json")
    assert rejudged.returncode in (0, 3), rejudged.stderr
    r = json.loads(rejudged.stdout)
    (det,) = [j for j in r["judge_health"]["judges"] if j["judge"] == "deterministic"]
    assert det["controls"] == _health(s1, "deterministic")["controls"] and det["status"] == "reported"


README_EXAMPLE = [
    {"id": "q1", "question": "When did the bridge open?", "source": "The Golden Gate Bridge opened in 1937. It is 2.7 km long.", "answer": "It opened in 1937."},
    {"id": "q2", "question": "How long is the bridge?", "source": "The Golden Gate Bridge opened in 1937. It is 2.7 km long.", "answer": "It is 5 km long and painted blue."},
    {"id": "q3", "question": "Who wrote Hamlet?", "sources": [{"id": "w1", "title": "Hamlet", "text": "Hamlet is a tragedy written by William Shakespeare."}], "answer": "William Shakespeare wrote Hamlet."},
    {"id": "q4", "question": "What is the capital of Peru?", "source": "Lima is the capital and largest city of Peru.", "answers": {"model-a": "Lima is the capital of Peru.", "model-b": "The capital is Cusco."}},
    {"id": "q5", "question": "What do bees make?", "source": "Honey bees produce honey from nectar.", "answer": "Bees make honey.",
     "gold_claims": [{"text": "Bees make honey.", "label": "supported", "support": [{"start_char": 0, "end_char": 37}]}]},
]


def test_an_always_supported_judge_never_passes_the_readme_example(scripted_server, tmp_path):
    """The README's five records (a user's first own data): too few controls for the canary, so the run passes
    saying the judge is not calibrated (never "caught"), and a config that requires a calibrated judge exits 3."""
    data = tmp_path / "my_data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in README_EXAMPLE), encoding="utf-8")
    server = scripted_server(pipeline_model())
    config = tmp_path / "my_run.yaml"
    config.write_text(json.dumps({
        "dataset": {"path": str(data)},
        "models": {"judge-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b", "timeout": 3, "max_attempts": 2}},
        "adjudicate": {"judges": ["judge-b"]},
        "cache_dir": str(tmp_path / "cache"),
    }), encoding="utf-8")
    for extra in ((), ("--limit", "1")):
        result, summary = _run(config, tmp_path, *extra)
        assert result.returncode == 0, (extra, result.stdout[-2000:], result.stderr[-2000:])
        (h,) = summary["judge_health"]["judges"]
        assert h["passed"] is not True and not summary["judge_health"]["trust"][0]["calibrated"]
    strict = json.loads(config.read_text(encoding="utf-8"))
    config.write_text(json.dumps({**strict, "require": "calibrated"}), encoding="utf-8")
    result, summary = _run(config, tmp_path)
    assert result.returncode == 3 and "judge judge-b refused (require: calibrated)" in result.stderr, result.stderr
    config.write_text(json.dumps(strict), encoding="utf-8")
    # every answer given controls: an unsupported control holds nothing its source could contradict (never
    # "It is 5 km long and painted blue." against a source saying 2.7 km), and is no other record's claim
    config.write_text(json.dumps({**json.loads(config.read_text(encoding="utf-8")), "controls": {**OPEN, "gate": False}}), encoding="utf-8")
    result, summary = _run(config, tmp_path / "open")
    assert result.returncode == 0, result.stderr
    results = results_of(summary["run_dir"])
    answers = {c.text for r in results for a in r.answers for c in a.claims}
    unsupported = [(r, c.control) for r in results for c in r.controls if c.control.label == "unsupported"]
    for r, c in unsupported:
        source = " ".join(x["source"] if "source" in x else x["sources"][0]["text"] for x in README_EXAMPLE if x["id"] == r.record_id)
        numbers = re.findall(r"\d+(?:\.\d+)?", c.text)
        assert all(n not in source for n in numbers if n not in (c.origin.excerpt if c.origin else "")), c
        assert c.text not in answers and "5 km" not in c.text


def test_no_judge_call_holds_only_controls_when_triage_settles_every_real_claim(scripted_server, tmp_path):
    """Answers that are whole sentences of their sources are settled by triage: their answers get no control
    (the judge would see a call of controls only), while an answer a judge does see gets its controls."""
    source = "The Golden Gate Bridge opened to traffic in 1937. The bridge is painted in a colour called International Orange."
    rows = [
        {"id": f"copy{i}", "question": "When did the bridge open?", "source": source, "answer": "The Golden Gate Bridge opened to traffic in 1937."}
        for i in range(3)
    ] + [{"id": "own", "question": "When did the bridge open?", "source": source, "answer": "Traffic first crossed the Golden Gate Bridge in 1937."}]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    server = scripted_server(pipeline_model())
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({
        "dataset": {"path": str(data)},
        "models": {"judge-b": {"model": "openai/judge-b", "api_base": server.base_url, "family": "fam-b", "timeout": 3, "max_attempts": 2}},
        "adjudicate": {"judges": ["judge-b"], "triage": True},
        "controls": {"gate": False, "per_label": 4},
        "cache_dir": str(tmp_path / "cache"),
    }), encoding="utf-8")
    result, summary = _run(config, tmp_path)
    assert result.returncode == 0, result.stderr
    results = {r.record_id: r for r in results_of(summary["run_dir"])}
    for i in range(3):
        assert all(any(v.how == "triage" for v in c.verdicts) for a in results[f"copy{i}"].answers for c in a.claims)
        assert not results[f"copy{i}"].controls
    made = {c.control.text for c in results["own"].controls}
    for call in _calls(server):  # the real claim alone, or its control answer alone: one claim each
        assert call == ["Traffic first crossed the Golden Gate Bridge in 1937."] or (len(call) == 1 and call[0] in made), call


def test_rejudge_adds_controls_until_the_gate_has_its_evidence(scripted_server, tmp_path):
    """A run made with no controls (or too few) is rejudged with --controls-per-label: the new judge meets
    controls made from the run's stored claims, in calls of their own, and is gated on them; the claims keep
    their verdict order (each real claim still gets its own label)."""
    server = scripted_server(pipeline_model())
    first_dir = _folder(tmp_path / "first")
    made, first = _run(write_config(first_dir, server, adjudicate={"judges": ["deterministic"], "triage": False}, controls={"enabled": False, "max_share": 0.5}), first_dir)
    assert made.returncode == 0, made.stderr
    assert all(not r.controls for r in results_of(first["run_dir"]))
    models = tmp_path / "more.yaml"
    models.write_text(f"models:\n  judge-c:\n    model: openai/judge-c\n    api_base: {server.base_url}\n    family: fam-c\n")

    def rejudge(*extra):
        out = cli_inproc("rejudge", first["run_dir"], "--judge", "judge-c", "--models", str(models), "--runs-dir", str(tmp_path / "runs"), "--json", *extra)
        return out, (json.loads(out.stdout) if out.stdout.strip().startswith("{") else None)

    plain, plain_summary = rejudge()  # the run's config: controls off, nothing added, and the report says so
    assert plain.returncode == 0, plain.stderr
    assert all(not r.controls for r in results_of(plain_summary["run_dir"])) and plain_summary["judge_health"]["enabled"] is False

    more, summary = rejudge("--controls-per-label", "4")  # an always-"supported" judge, now with controls: fails the canary
    assert more.returncode == 3, json.dumps(summary["judge_health"])[:3000]
    h = _health(summary, "judge-c")
    assert h["status"] == "failed" and h["controls"] > 0
    new = results_of(summary["run_dir"])
    controls = [c for r in new for c in r.controls]
    assert {c.control.label for c in controls} >= {"supported", "unsupported"}
    assert len({c.control.id for r in new for c in r.controls}) == len(controls)
    for o, n in zip(results_of(first["run_dir"]), new):
        for index, (ao, an) in enumerate(zip(o.answers, n.answers)):
            assert [c.text for c in ao.claims] == [c.text for c in an.claims]
            assert all(c.verdicts and c.verdicts[0].judge == "judge-c" for c in an.claims)
            mine = sorted(c.position for c in n.controls if c.answer == index)  # places in its control answer, each once
            assert mine == list(range(len(mine)))
    # the controls were asked in calls of their own
    texts = {c.control.text for c in controls}
    calls = [call for call in _calls(server) if set(call) & texts]
    assert calls and all(set(call) <= texts for call in calls)
