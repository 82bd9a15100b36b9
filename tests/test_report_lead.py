"""Reports that lead with claims (issue 40.4): report.md lists every judged answer with its claims and labels
(the first 50, then a count), also when no claim is not grounded; report.html puts them before the summary
sections; the judge-health sentences stand one per line in every format; sections with nothing to say for the
run are a line each; charts only where they compare something; one glossary, in every report and the docs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judge.controls.health import ControlObservation, judge_health
from judge.report import html, markdown
from judge.report.glossary import GLOSSARY
from judge.results import AnswerResult, ClaimResult, ControlCost, Decomposition, RecordResult
from judge.scoring import AnswerItem, blocks
from judge.scoring.first_claims import FirstClaimsSection
from judge.scoring.health import JudgeHealth
from judge.scoring.ungrounded import not_grounded
from tests.conftest import ROOT, run_cli

TELLS = {"real": 13, "controls": 12, "auc": {"length": 0.76, "share_question": 0.72}, "detector_auc": 0.99}


def _records(n: int, claims: int, label: str = "supported", text: str = "claim") -> list[RecordResult]:
    out = []
    for i in range(n):
        cs = [ClaimResult(claim_id=k, text=f"{text} {i}.{k}", label=label) for k in range(claims)]
        answer = AnswerResult(model="m", family="f", answer="x", decomposition=Decomposition(method="sentences"), claims=cs)
        out.append(RecordResult(record_id=f"r{i}", question="q", language="en", answers=[answer]))
    return out


def _scores(results: list[RecordResult], **extra) -> dict:
    section = FirstClaimsSection()
    for r in results:
        for a in r.answers:
            section.add(AnswerItem(r, a, None, None))
    return {"name": "t", "not_grounded": not_grounded(results).model_dump(), "first_claims": section.result({}).model_dump(), **extra}


def _health(**kwargs) -> dict:
    rows = [ControlObservation(judge="j", control_id=f"{lbl}{i}", label=lbl, kind="claim", answered="supported")
            for lbl in ("supported", "contradicted", "unsupported") for i in range(6)]
    cost = ControlCost(shown=12, calls=6, prompt_tokens=3000, completion_tokens=500, cost_usd=0.0, priced=False)
    return judge_health(rows, cost=cost, judge_tokens=9000, tells=TELLS, **kwargs).model_dump()


def test_report_md_lists_every_answer_with_its_claims_when_none_is_not_grounded():
    results = _records(3, 2)
    results[1].answers[0].claims[0].text = "a <script>x</script> | *claim*"
    results[2].answers[0].generation_error = "timeout after 30 s"
    results[2].answers[0].claims = []
    md = markdown.render(_scores(results))
    assert "No claim is unsupported, contradicted or partially supported." in md
    assert md.index("## Answers and their claims") < md.index("## Glossary")
    assert "All 4 claims, answer by answer" in md
    assert "**r0 · m** (2 claims)" in md and "- **supported**: claim 0.0" in md and "- **supported**: claim 0.1" in md
    assert "- **supported**: a &lt;script&gt;x&lt;/script&gt; \\| \\*claim\\*" in md and "<script>" not in md  # data escaped
    assert "**r2 · m** (0 claims)" in md and "- no claims: the model under test failed (timeout after 30 s)" in md
    assert "more claim" not in md


def test_report_md_shows_the_first_50_claims_then_a_count():
    results = _records(8, 7)  # 56 claims: the 8th answer is cut after one claim
    md = markdown.render(_scores(results))
    listed = [line for line in md.splitlines() if line.startswith("- **supported**: claim ")]
    assert len(listed) == 50 and listed[-1] == "- **supported**: claim 7.0"
    assert "The first 50 of 56 claims" in md and "**r7 · m** (1 of 7 claims shown)" in md
    assert "... and 6 more claims: report.html" in md
    more = _scores(_records(12, 5))  # 60 claims in 12 answers: 10 answers listed, 2 more counted
    assert "... and 10 more claims (of 2 more answers): report.html" in markdown.render(more)


def test_report_md_lists_answers_after_the_not_grounded_claims_before_the_summary():
    results = _records(2, 2)
    results[0].answers[0].claims[1].label = "contradicted"
    scores = _scores(results, judge_health=_health())
    md = markdown.render(scores)
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads[:3] == ["## Not grounded", "## Answers and their claims", "## Judge health on control claims"], heads
    assert "- **contradicted**: claim 0.1" in md


def test_judge_health_sentences_one_per_line_in_every_format(capsys):
    scores = {"name": "t", "judge_health": _health()}
    block = JudgeHealth.block(scores["judge_health"], scores)
    assert block.text is None and len(block.lines) == 5
    starts = ("JUDGES NOT CLEARED", "controls cost: 12 control claims", "controls vs real claims", "AUC per surface feature: length 0.76", "Planted errors")
    assert [line.split(" ", 1)[0] for line in block.lines] == [s.split(" ", 1)[0] for s in starts]
    assert all(line.startswith(s) for line, s in zip(block.lines, starts))
    md = markdown.render(scores).splitlines()
    for s in starts:  # each sentence a list item of its own: it starts a line, and nothing else follows it there
        (line,) = [x for x in md if x.startswith(f"- {s}")]
        assert sum(line.count(t) for t in starts) == 1, line
    page = "".join(html.render(scores, [], {}))
    items = re.findall(r'<ul class="lines">(.*?)</ul>', page)[0]
    assert [re.sub("<[^>]+>", "", li)[: len(s)] for li, s in zip(re.findall(r"<li>(.*?)</li>", items), starts)] == list(starts)
    # the terminal (judge score) prints each on a line of its own
    from judge.report import terminal

    capsys.readouterr()
    terminal.scores({**scores, "records": 0}, Path("/tmp/x"))
    lines = capsys.readouterr().out.splitlines()
    for s in starts[1:]:
        assert any(x.strip().startswith(s) for x in lines), s


def test_sections_with_nothing_to_say_are_a_line_each_and_charts_only_compare():
    results = _records(2, 1)
    rates = {"claims": 1, "labels": {"supported": 1}, "faithfulness": 1.0, "hallucination_rate": 0.0}
    scores = _scores(results, by_genre={"n/a": {**rates, "claims": 2}}, by_difficulty={"1": rates, "2": rates},
                     human={"reason": "the data has no human ratings"}, judge_health=_health(enabled=False) | {"judges": [
                         {**_health()["judges"][0], "controls": 0}]})
    md = markdown.render(scores)
    absent = md[md.index("## Not measured for this run"):]
    assert "- **Faithfulness by genre**: No record of this data has a genre." in absent
    assert "- **The judge against human raters**: Not computed: the data has no human ratings." in absent
    assert "- **Judge health on control claims**: JUDGES UNCHECKED" in absent
    assert "## Faithfulness by genre" not in md and "## The judge against human raters" not in md
    page = "".join(html.render(scores, results, {}))
    assert "<h2>Faithfulness by genre</h2>" not in page and "<li><b>Faithfulness by genre</b>: <bdi>No record of this data has a genre.</bdi></li>" in page
    assert "<h2>Faithfulness by difficulty</h2>" in page and 'aria-label="faithfulness by difficulty"' not in page  # one claim a bar: no chart
    two = {"claims": 3, "labels": {"supported": 3}, "faithfulness": 1.0, "hallucination_rate": 0.0}
    drawn = "".join(html.render({**scores, "by_difficulty": {"1": two, "2": {**two, "faithfulness": 0.5}}}, results, {}))
    assert 'aria-label="faithfulness by difficulty"' in drawn
    agreement = {"judges": ["a", "b"], "pairwise": [{"a": "a", "b": "b", "claims": 0, "cohen_kappa": None, "alpha_nominal": None, "raw_agreement": None}],
                 "per_judge": {}, "self_preference": []}
    page = "".join(html.render({**scores, "judge_agreement": agreement}, results, {}))
    assert "judge_agreement" in dict(blocks({**scores, "judge_agreement": agreement})) and "<h2>Agreement between judges</h2>" in page
    assert "kappa between judges" not in page  # an n/a heatmap is not drawn
    agreement["pairwise"][0]["cohen_kappa"] = 0.4
    assert 'aria-label="Cohen&#x27;s kappa between judges"' in "".join(html.render({**scores, "judge_agreement": agreement}, results, {}))


def test_report_html_top_lists_the_first_answers_claims_linked_and_escaped():
    results = _records(2, 2, text="<img src=x onerror=alert(1)>\u202e")
    scores = _scores(results)
    page = "".join(html.render(scores, results, {}))
    top = page[: page.index("<h2>Records</h2>")]
    assert top.index('id="first-claims"') < top.index('id="glossary"')
    claims = re.findall(r'<li class="top-claim"[^>]*data-label="([^"]+)"[^>]*><a href="#(c[0-9a-f]+)"><span class="label"[^>]*>([^<]+)</span></a> <bdi>([^<]*)</bdi>', top)
    assert len(claims) == 4 and all(lbl == shown == "supported" for lbl, _, shown, _ in claims)
    assert all(f'id="{anchor}"' in page for _, anchor, _, _ in claims), "every claim at the top links to its place under Records"
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;\u202e" in claims[0][3]


def test_one_glossary_in_every_report_and_the_docs():
    scores = _scores(_records(1, 1))
    md = markdown.render(scores)
    page = "".join(html.render(scores, [], {}))
    docs = (ROOT / "docs" / "scores.md").read_text(encoding="utf-8")
    for term in ("call-equivalents", "AUC per surface feature", "share_question", "triage", "evidence ceiling", "free verdicts",
                 "unsure", "faithfulness", "hallucination rate"):
        assert term in GLOSSARY, term
    for term, gloss in GLOSSARY.items():
        assert f"- **{markdown.md(term)}**: {markdown.md(gloss)}" in md
        assert f"<dt>{term}</dt><dd>{gloss}</dd>".replace("'", "&#x27;") in page
        assert f"- **{term}**: {gloss}\n" in docs, f"docs/scores.md's glossary differs on {term!r}"
    assert 'href="#glossary"' in page and "Glossary at the end" in md


@pytest.fixture
def supported_everywhere(scripted_server, tmp_path):
    """The first hour's run: a judge that calls every claim supported, gated on its controls (it fails them):
    no claim is not grounded and the judges are not cleared."""
    from judge.testing.scripts import pipeline_model
    from tests.test_pipeline import write_config

    server = scripted_server(pipeline_model())
    config = write_config(tmp_path, server, adjudicate={"judges": ["judge-b"], "triage": False},
                          controls={"per_label": 4, "max_share": 0.5, "gate": True})
    result = run_cli("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--no-progress", env={"COLUMNS": "250"})
    assert result.returncode == 3, result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir, result


def test_a_run_with_no_claim_not_grounded_lists_its_claims_first(supported_everywhere):
    run_dir, result = supported_everywhere
    scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
    answers = {(a["record_id"], a["model"]): [c["text"] for c in a["claims"]] for a in scores["first_claims"]["answers"]}
    assert scores["not_grounded"]["total"] == 0 and len(answers) == 6 and sum(map(len, answers.values())) == scores["first_claims"]["claims"]
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert md.index("## Answers and their claims") < md.index("## Judge health on control claims") < md.index("## Verdicts by model")
    for (rid, model), texts in answers.items():
        at = md.index(f"**{rid} · {model}**")
        assert all(f"- **supported**: {markdown.md(t)}" in md[at:] for t in texts)
    health = md[md.index("## Judge health on control claims"):]
    assert re.search(r"^- controls cost: \d+ control claims", health, re.M) and re.search(r"^- Planted errors", health, re.M)
    assert not re.search(r"^- AUC per surface feature: ", health, re.M)  # the tells detector is bench's (bench/tells.py): never a run's line
    out = result.stdout  # the terminal: each health line on its own, and where the terms are explained
    assert re.search(r"^  controls cost: ", out, re.M) and re.search(r"^  Planted errors", out, re.M)
    assert "explained in the Glossary at the end of report.md" in out
