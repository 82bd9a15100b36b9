"""Not-grounded claims first (issue 13.1) in the terminal, report.md and the top of report.html; report.md
escaping and report.html bidi isolation (issue 17.10)."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import yaml

from judge.models import Span
from judge.results import AnswerResult, ClaimResult, Decomposition, JudgeVerdict, RecordResult
from judge.scoring.ungrounded import not_grounded
from judge.verdicts import NOT_GROUNDED, SEVERITY, UNSURE
from tests.conftest import BUNDLED_SAMPLE, ROOT, cli_inproc

BUNDLED_ANSWERS = ROOT / "judge" / "data" / "he_sample_answers.jsonl"
# "Mitzpe Ramon has a very large zoo for penguins and white and black polar bears": shares a few words with
# the source (a nearest passage exists) but far too few to be supported
PLANTED = "במצפה רמון פועל גן חיות גדול מאוד לפינגווינים ולדובי קוטב לבנים ושחורים."
MODEL = "evil<script>x|y\u202e"


def _record(rid: str, labels: list[str]) -> RecordResult:
    claims = [ClaimResult(claim_id=i, text=f"{rid} claim {i}", label=lbl,
                          verdicts=[JudgeVerdict(judge="j", model="m", family="f", label=lbl, rationale=f"because {i}")]) for i, lbl in enumerate(labels)]
    answer = AnswerResult(model="m", family="f", answer="x", decomposition=Decomposition(method="sentences"), claims=claims)
    return RecordResult(record_id=rid, question="q", language="en", answers=[answer])


def test_most_severe_first_capped_with_counts():
    results = [_record("r1", ["supported", "partially_supported", "unsupported"]), _record("r2", ["contradicted", "judge_error", "unsupported"])]
    ng = not_grounded(results, cap=3)
    assert ng.total == 4 and ng.labels == {"contradicted": 1, "unsupported": 2, "unsure": 0, "partially_supported": 1}
    assert [(c.record_id, c.label) for c in ng.claims] == [("r2", "contradicted"), ("r1", "unsupported"), ("r2", "unsupported")]
    assert [SEVERITY[c.label] for c in ng.claims] == sorted((SEVERITY[c.label] for c in ng.claims), reverse=True)
    assert ng.claims[0].rationale == "because 0" and ng.claims[0].passage is None and ng.more == 1
    assert {c.label for c in not_grounded(results).claims} == set(NOT_GROUNDED) - {UNSURE}  # these records have no unsure claim


def test_best_passage_is_cited_evidence_else_the_nearest_candidate():
    from judge.results import OfferedCandidate

    cand = lambda cid, s, e, score: OfferedCandidate(id=cid, doc_id="d", start_char=s, end_char=e, excerpt="x" * (e - s), score=score, method="ngram",  # noqa: E731
                                                     parts=[Span(doc_id="d", start_char=s, end_char=e, excerpt="x" * (e - s))])
    r = _record("r", ["unsupported", "partially_supported"])
    r.answers[0].claims[0].candidates = [cand("1.1", 0, 3, 0.2), cand("1.2", 5, 9, 0.6)]
    r.answers[0].claims[1].candidates = [cand("2.1", 0, 3, 0.9), cand("2.2", 5, 9, 0.3)]
    r.answers[0].claims[1].evidence = [Span(doc_id="d", start_char=5, end_char=9, excerpt="xxxx")]
    first, second = not_grounded([r]).claims
    assert (first.passage.text, first.passage.score, first.passage.cited) == ("xxxx", 0.6, False)
    assert (second.passage.text, second.passage.score, second.passage.cited) == ("xxxx", 0.3, True)


def test_each_claim_is_shown_inside_its_answer_marked_and_escaped():
    from judge.report import html, markdown

    answer = "Mitzpe *Ramon* is <b>old</b>.\x1b[2J It has a zoo | for bears. " + "Filler. " * 60
    start = answer.index("It has")
    claims = [ClaimResult(claim_id=0, text="It has a zoo for bears.", label="unsupported",
                          answer_spans=[Span(doc_id="answer", start_char=start, end_char=answer.index("bears.") + 6, excerpt="")]),
              ClaimResult(claim_id=1, text="What is Mitzpe Ramon?", label="unsupported")]  # not located in the answer
    r = RecordResult(record_id="r", question="q", language="en",
                     answers=[AnswerResult(model="m", family="f", answer=answer, decomposition=Decomposition(method="sentences"), claims=claims)])
    located, lost = not_grounded([r]).claims
    assert [p.text for p in located.answer if p.claim] == ["It has a zoo | for bears."] and located.located
    assert located.answer[-1].text == "…", "the answer is cut some way after the claim"
    assert "\x1b" not in "".join(p.text for p in located.answer) and "\ufffd[2J" in located.answer[0].text
    assert not lost.located and not any(p.claim for p in lost.answer) and lost.answer[0].text.startswith("Mitzpe")

    scores = {"name": "t", "not_grounded": not_grounded([r]).model_dump(), "notes": ["demonstration: embedded models"]}
    md = markdown.render(scores)
    assert md.index("**demonstration**: embedded models") < md.index("## Not grounded"), "said at the top"
    line = next(x for x in md.splitlines() if x.startswith("1. "))
    assert "**It has a zoo \\| for bears.**" in line and "&lt;b&gt;old&lt;/b&gt;" in line and "\\*Ramon\\*" in line
    assert "\x1b" not in md and "(its words were not found in the answer)" in next(x for x in md.splitlines() if x.startswith("2. "))
    page = "".join(html.render(scores, [], {}))
    assert "<mark><bdi>It has a zoo | for bears.</bdi></mark>" in page and "&lt;b&gt;old&lt;/b&gt;" in page and "\x1b" not in page
    assert '<p class="warn demo"><bdi>demonstration: embedded models</bdi></p>' in page


class _Isolation(HTMLParser):
    """Collects text with U+202E that is not inside a <bdi> or an element with dir (nor in <title>)."""

    VOID = {"meta", "br", "img", "input", "hr", "link", "rect", "circle", "line", "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.loose, self.seen = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag == "bdi" or tag == "title" or any(k == "dir" for k, _ in attrs))

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if "\u202e" in data:
            self.seen += 1
            if not any(self.stack):
                self.loose.append(data)


def test_a_planted_unsupported_claim_comes_first_everywhere(tmp_path):
    rows = [json.loads(line) for line in BUNDLED_ANSWERS.read_text(encoding="utf-8").splitlines()]
    rows[0]["answer"] += " " + PLANTED
    rows[0]["model"] = MODEL
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"name": "planted", "dataset": {"path": str(BUNDLED_SAMPLE)}, "answers": {"path": str(answers)},
                                      "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]},
                                      "cache_dir": str(tmp_path / "cache")}, allow_unicode=True))
    result = cli_inproc("run", str(config), "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode == 0, result.stderr
    run_dir = Path(next(line for line in result.stdout.splitlines() if "reports: " in line).split("reports: ")[1].split("/report.md")[0])
    scores = json.loads((run_dir / "scores.json").read_text())
    planted = next(c for c in scores["not_grounded"]["claims"] if c["text"] == PLANTED)
    assert planted["label"] == "unsupported" and planted["model"] == MODEL
    nearest = planted["passage"]
    snippet = nearest["text"].split(" … ")[0]
    source = json.loads(BUNDLED_SAMPLE.read_text(encoding="utf-8"))[0]["source_text"]
    assert not nearest["cited"] and nearest["score"] > 0 and snippet in source
    # terminal: the list comes before the summary table, with the claim, its nearest passage and the rationale
    out = result.stdout
    assert out.index(PLANTED) < out.index("model under test") and snippet in out and "not grounded" in out
    assert out.index("CONTRADICTED") < out.index("UNSUPPORTED") < out.index("PARTIALLY_SUPPORTED")
    # report.md: the first section, data escaped (no raw <script>, the pipe cannot split a cell)
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert md.index("## Not grounded") < md.index("## ", md.index("## Not grounded") + 3) and md.index(PLANTED) < md.index("## Verdicts by model")
    assert snippet in md and "<script>" not in md and "evil&lt;script&gt;x\\|y" in md
    header = next(line for line in md.splitlines() if line.startswith("| label | record"))
    row = next(line for line in md.splitlines() if PLANTED in line)
    assert row.replace("\\|", "").count("|") == header.count("|")
    assert f"**{PLANTED}**" in md, "report.md shows the claim marked inside its answer"
    # report.html: before the score sections and the records, linked to the claim below
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    top = html[: html.index("<h2>Records</h2>")]
    assert top.index(PLANTED) < top.index("Verdicts by model under test") and snippet in top and f"score {nearest['score']:.2f}" in top
    assert f"<mark><bdi>{PLANTED}</bdi></mark>" in top, "the top of report.html shows the claim marked inside its answer"
    anchor = planted["anchor"]
    assert f'href="#{anchor}"' in top and f'id="{anchor}"' in html[html.index("<h2>Records</h2>"):]
    # every bidi override of the data sits in an isolate
    iso = _Isolation()
    iso.feed(html)
    assert iso.seen >= 3 and iso.loose == []


def test_a_large_run_page_lists_the_first_records_and_every_record_the_top_links_to():
    """report.html past ``listed`` records (issue 29: 2.6 GB at 1M records): the first records in full, then only
    those the not-grounded list links to, every link landing on its claim, and the rest counted on the page."""
    from judge.report import html

    def record(i: int, label: str) -> RecordResult:
        claims = [ClaimResult(claim_id=0, text=f"claim of record {i}.", label=label)]
        return RecordResult(record_id=f"r{i}", question="q", language="en",
                            answers=[AnswerResult(model="m", family="f", answer=f"claim of record {i}.",
                                                  decomposition=Decomposition(method="sentences"), claims=claims)])

    results = [record(i, "unsupported" if i in (1, 9, 11) else "supported") for i in range(12)]
    scores = {"name": "t", "not_grounded": not_grounded(results).model_dump()}
    page = "".join(html.render(scores, results, {}, listed=4))
    shown = [i for i in range(12) if f'id="rec-r{i}"' in page]
    assert shown == [0, 1, 2, 3, 9, 11], shown
    links = {a for a in re.findall(r'href="#([^"]+)"', page) if a not in ("not-grounded", "glossary")}
    assert len(links) == 3 and all(f'id="{a}"' in page for a in links), "every link of the top list lands on its claim"
    assert "6 more records are not listed" in page and "results.jsonl holds every record" in page
    whole = "".join(html.render(scores, results, {}, listed=12))
    assert all(f'id="rec-r{i}"' in whole for i in range(12)) and "more records are not listed" not in whole


def test_each_judges_own_ruling_is_listed_where_a_panel_judged(capsys):
    """The panel decides, but a model judge's own label (one left out of the panel's verdicts too) is what a
    reader checks it by: listed beside the claim in the terminal, report.md's table and report.html's top."""
    from judge.report import terminal
    from judge.report.html_lead import not_grounded as html_not_grounded
    from judge.scoring.ungrounded import NotGroundedSection

    record = _record("r1", ["unsupported", "contradicted"])
    claim = record.answers[0].claims[0]
    claim.verdicts = [JudgeVerdict(judge="deterministic", model="d", family="none", label="unsupported", rationale="no year"),
                      JudgeVerdict(judge="qwen<b>", model="m", family="qwen", label="contradicted", rationale="wrong year")]
    ng = not_grounded([record])
    first, second = sorted(ng.claims, key=lambda c: c.claim_id)
    assert first.rulings == ["deterministic unsupported", "qwen<b> contradicted"]
    assert second.rulings == [], "one judge: its label is the claim's, nothing to list"
    terminal.not_grounded(ng.model_dump(), "report.md")
    assert "judges: deterministic unsupported; qwen<b> contradicted" in capsys.readouterr().out
    page = html_not_grounded(ng.model_dump())
    assert "judges: <bdi>deterministic unsupported; qwen&lt;b&gt; contradicted</bdi>" in page and "qwen<b>" not in page
    table = NotGroundedSection.block(ng.model_dump(), {}).tables[0]
    assert table.headers[-1] == "judges" and "deterministic unsupported; qwen<b> contradicted" in [row[-1] for row in table.rows]
