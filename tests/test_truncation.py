"""An answer cut at max_tokens is kept and flagged ``truncated``, not an error: through the scripted server
(real litellm and instructor, whose IncompleteOutputException the port turns back into the partial answer)."""

import json
from pathlib import Path

import yaml

from judge.datasets import load
from judge.models import Span
from judge.results import RecordResult
from judge.stages.claims import UNFINISHED, AnswerClaim, drop_unfinished
from judge.testing.server import Reply, schema_of
from tests.conftest import BUNDLED_SAMPLE, cli_inproc


def test_an_answer_cut_at_max_tokens_is_kept_flagged_and_judged(scripted_server, tmp_path):
    records = load(BUNDLED_SAMPLE)
    first_sentence = {r.id: r.source_text.split(".")[0] + "." for r in records}

    def script(request: dict, n: int) -> Reply:
        assert "answer" in (schema_of(request) or {}).get("properties", {})
        text = json.dumps(request["messages"], ensure_ascii=False)
        rid = next(rid for rid, s in first_sentence.items() if json.dumps(s, ensure_ascii=False)[1:-1] in text)
        # the JSON stops mid-string, as a model's does when max_tokens runs out
        return Reply(raw='{"answer": ' + json.dumps(first_sentence[rid] + " It was later moved to the", ensure_ascii=False)[:-1], finish_reason="length")

    server = scripted_server(script)
    config = {
        "name": "cut",
        "dataset": {"path": str(BUNDLED_SAMPLE)},
        "models": {"writer": {"model": "openai/writer", "api_base": server.base_url, "family": "fam-a", "max_tokens": 40, "timeout": 5, "max_attempts": 1}},
        "generate": {"models": ["writer"]},
        "decompose": {"method": "sentences"},
        "adjudicate": {"judges": ["deterministic"]},
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))

    def run() -> list[RecordResult]:
        result = cli_inproc("run", str(path), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress")
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["answers_truncated"] == 3
        assert summary["notes"] == [], "no embedded model: no demonstration note"
        run_dir = summary["run_dir"]
        return [RecordResult.model_validate_json(line) for line in Path(run_dir, "results.jsonl").read_text().splitlines()]

    results = run()
    assert server.stats.requests == 3, "a cut answer is not re-asked"
    for r in results:
        (a,) = r.answers
        assert a.truncated and a.generation_error is None
        assert a.answer == first_sentence[r.record_id] + " It was later moved to the"
        assert any(c.label != "judge_error" for c in a.claims), "the kept answer is decomposed and judged"
        # its unfinished last sentence is no claim: set apart with the reason, never judged
        assert [c.text for c in a.claims] == [first_sentence[r.record_id]]
        assert [(d.quote, d.reason) for d in a.decomposition.dropped] == [("It was later moved to the", UNFINISHED)]
    again = run()  # from the cache: the flag survives
    assert server.stats.requests == 3
    assert all(a.truncated for r in again for a in r.answers)


def test_only_the_unfinished_last_sentence_of_a_cut_answer_is_set_apart():
    def claims(answer: str, *texts: str) -> list[AnswerClaim]:
        out = []
        for t in texts:
            start = answer.index(t)
            out.append(AnswerClaim(t, [Span(doc_id="answer", start_char=start, end_char=start + len(t), excerpt=t)]))
        return out

    cut = "The bridge opened in 1937. It is painted orange. It was later moved to the"
    kept, dropped = drop_unfinished(cut, claims(cut, "The bridge opened in 1937.", "It is painted orange.", "It was later moved to the"))
    assert [c.text for c in kept] == ["The bridge opened in 1937.", "It is painted orange."]
    assert [(d.text, d.reason) for d in dropped] == [("It was later moved to the", UNFINISHED)]
    whole = "The bridge opened in 1937. It is painted orange.\u201d "  # cut right after a sentence's end: nothing unfinished
    assert drop_unfinished(whole, claims(whole, "The bridge opened in 1937.", "It is painted orange."))[1] == []
    hebrew = "ההשקעה נאמדת ב־85 מיליון ש״ח. ב־2018, התחילה המע"
    kept, dropped = drop_unfinished(hebrew, claims(hebrew, "ההשקעה נאמדת ב־85 מיליון ש״ח.", "ב־2018, התחילה המע"))
    assert [c.text for c in kept] == ["ההשקעה נאמדת ב־85 מיליון ש״ח."] and dropped[0].quote == "ב־2018, התחילה המע"


def test_a_claim_with_finished_sentences_is_kept_and_an_abbreviation_is_no_sentence_end():
    """A whole-answer claim (decompose.method: whole) or an LLM decomposer's claim that also holds finished
    sentences is kept: dropping it lost every finished sentence of a cut answer. A cut right after "Dr." is
    unfinished; a sentence closed by markdown emphasis or an emoji is finished."""
    cut = "The bridge opened in 1937. It is painted orange. It was later moved to the"
    whole = [AnswerClaim(cut, [Span(doc_id="answer", start_char=0, end_char=len(cut), excerpt=cut)])]
    assert drop_unfinished(cut, whole) == (whole, [])
    doctor = "The bridge opened in 1937. It was designed by Dr."
    start = doctor.index("It was")
    claim = AnswerClaim(doctor[start:], [Span(doc_id="answer", start_char=start, end_char=len(doctor), excerpt=doctor[start:])])
    assert drop_unfinished(doctor, [claim])[0] == []
    for finished in ("It is painted **orange.**", "It is painted orange. \U0001f642", "It opened in 1937.\u201d"):
        claim = AnswerClaim(finished, [Span(doc_id="answer", start_char=0, end_char=len(finished), excerpt=finished)])
        assert drop_unfinished(finished, [claim]) == ([claim], []), finished


def test_an_answer_that_writes_a_chat_templates_turn_marker_ends_there(tmp_path):
    """Issue 46.2: an embedded answer ran on past its turn ("... דקות״. <|im_end|><|im_start|>user> <source> ...")
    and the terminal and the report showed the made-up conversation. The answer ends at the marker, and a
    max_tokens reached after it cut nothing of the answer: its last sentence is judged, not set apart."""
    import json as _json

    import yaml as _yaml

    from judge.runs.run import Run
    from judge.testing.server import Reply, ScriptedServer
    from tests.conftest import cli_inproc as _cli

    answer = "The bridge opened in 1937. It is 2.7 km long. <|im_end|><|im_start|>user <question> tag</question> <question>"
    with ScriptedServer(lambda request, n: Reply(body={"answer": answer})) as server:
        (tmp_path / "data.jsonl").write_text(_json.dumps({"id": "b", "question": "When did the bridge open?",
                                                          "source": "The bridge opened in 1937. It is 2.7 km long."}) + "\n")
        config = {"name": "turn", "dataset": {"path": "data.jsonl"}, "decompose": {"method": "sentences"},
                  "models": {"writer": {"model": "openai/writer", "api_base": server.base_url, "family": "fam-w", "timeout": 10}},
                  "generate": {"models": ["writer"]}, "adjudicate": {"judges": ["deterministic"]}, "cache_dir": str(tmp_path / "cache")}
        (tmp_path / "turn.yaml").write_text(_yaml.safe_dump(config))
        result = _cli("run", str(tmp_path / "turn.yaml"), "--runs-dir", str(tmp_path / "runs"), "--json", "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run = Run.open(_json.loads(result.stdout)["run_dir"])
    (r,) = run.results()
    (a,) = r.answers
    assert a.answer == "The bridge opened in 1937. It is 2.7 km long." and not a.truncated
    assert [c.text for c in a.claims] == ["The bridge opened in 1937.", "It is 2.7 km long."]
    assert "<|im_" not in (run.path / "report.md").read_text(encoding="utf-8")
