"""Issue 36, items 7-12, 15, 18-21: the two doors of the file system (judge.files) and the one number parse
(judge.boundary). Each class is tried through every command that meets it:

- an output that is a device, a pipe, a socket, a block device or a folder: written as such or refused in
  one line, never replaced by a regular file (item 7); new files and folders take the umask's mode (item 11);
- every OS error on an input (a link loop, a name too long, EIO after the open) is one line (item 8);
- a pipe or /dev/stdin is read once, never sniffed and lost (item 9); one line of a corpus, of predictions or
  of a stream is capped like one record (item 10);
- a 5,000-digit number, NaN, inf or 1e999 in any file kind is one line naming file, record and field (item 12);
  TREC scores and ranks too (item 15);
- a record id with a newline or a bidi override prints as one line (item 18); a closed stdout is no failed
  gate (item 19); rejudge refuses an unfinished run (item 20); a NUL byte in an API path is one error (item 21).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

import judge
from judge.errors import InputError
from judge.starter import EXAMPLE
from tests.conftest import ROOT, cli_inproc
from tests.test_boundary import CORPUS, ROW, _jsonl, cli, one_line

BIG = "9" * 5000
LONG_NAME = "x" * 300


def _config(tmp: Path, data: Path, **extra) -> Path:
    config = tmp / "run.yaml"
    config.write_text(yaml.safe_dump({"name": "io", "dataset": {"path": str(data)}, "decompose": {"method": "sentences"},
                                      "adjudicate": {"judges": ["deterministic"]}, "cache_dir": str(tmp / "cache"), **extra}), encoding="utf-8")
    return config


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("io")
    data = _jsonl(tmp / "data.jsonl", EXAMPLE)
    result = cli("run", _config(tmp, data), "--runs-dir", tmp / "runs", "--no-progress")
    assert result.exit_code == 0, result.output[-2000:]
    (run,) = (tmp / "runs").iterdir()
    return run


def refused(result, *expect: str) -> str:
    """Exit 2 with one line saying all of ``expect`` (validate prints its table first), no traceback."""
    if not result.output.lstrip().startswith(("/", "┌")) or "│" not in result.output:
        return one_line(result, *expect)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = [line for line in result.output.splitlines() if all(e in line for e in expect)]
    assert len(lines) == 1, (expect, result.output)
    return lines[0]


# -- item 7: outputs that are not regular files ----------------------------------------------------------


def _outputs(tmp: Path, finished: Path, target: Path) -> list[tuple]:
    rows, corpus = _jsonl(tmp / "rows.jsonl", [ROW]), _jsonl(tmp / "corpus.jsonl", CORPUS)
    return [("compare", finished, finished, "--gate", "none", "--md", target),
            ("align", rows, corpus, "--out", target), ("align", rows, corpus, "--out", tmp / "kept.jsonl", "--report", target),
            ("longcontext", rows, corpus, "--out", target, "--num-docs", "2"),
            ("agreement", finished, "--out", target)]


def test_dev_null_is_written_as_such_by_every_output_flag(tmp_path, finished):
    before = os.stat("/dev/null")
    for args in _outputs(tmp_path, finished, Path("/dev/null")):
        result = cli(*args)
        assert result.exit_code == 0, (args, result.output)
        after = os.stat("/dev/null")
        assert stat.S_ISCHR(after.st_mode) and (after.st_rdev, after.st_ino) == (before.st_rdev, before.st_ino), args


def test_a_pipe_is_written_as_such_and_one_with_no_reader_is_refused(tmp_path, finished):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in _outputs(tmp_path, finished, fifo):
        one_line(cli(*args), "no reader")
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
        got = _drained(fifo, lambda: cli(*args))
        assert got["result"].exit_code == 0, (args, got["result"].output)
        assert got["bytes"], args
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode), args  # still the pipe, never a regular file in its place


def _drained(fifo: Path, write) -> dict:
    """Run ``write`` with a reader on ``fifo`` (opened first, so judge finds it), reading all it writes."""
    import time

    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    chunks: list[bytes] = []
    done = threading.Event()

    def drain():
        while True:
            try:
                block = os.read(rfd, 1 << 16)
            except BlockingIOError:
                block = None
            if block:
                chunks.append(block)
            elif done.is_set():
                return
            else:
                time.sleep(0.005)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        result = write()
    finally:
        done.set()
        reader.join(timeout=30)
        os.close(rfd)
    return {"result": result, "bytes": b"".join(chunks)}


def test_a_socket_or_a_folder_is_refused_in_one_line_and_left_as_it_was(tmp_path, finished):
    sock_path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    try:
        for args in _outputs(tmp_path, finished, sock_path):
            one_line(cli(*args), "socket")
            assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    finally:
        server.close()
    folder = tmp_path / "folder"
    folder.mkdir()
    for args in _outputs(tmp_path, finished, folder):
        result = cli(*args)
        assert result.exit_code == 2 and "\n" not in result.output.strip(), (args, result.output)
        assert folder.is_dir() and not any(folder.iterdir())


@pytest.mark.skipif(not any(Path("/dev").glob("loop[0-9]")), reason="no block device to try")
def test_a_block_device_is_refused(tmp_path, finished):
    disk = next(p for p in sorted(Path("/dev").glob("loop[0-9]")) if stat.S_ISBLK(os.stat(p).st_mode))
    for args in _outputs(tmp_path, finished, disk):
        one_line(cli(*args), "block device")


# -- item 11: modes from the umask ------------------------------------------------------------------------


@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_outputs_and_baselines_take_the_umasks_mode(tmp_path, finished, mask):
    old = os.umask(mask)
    try:
        md = tmp_path / "cmp.md"
        assert cli("compare", finished, finished, "--gate", "none", "--md", md).exit_code == 0
        assert stat.S_IMODE(md.stat().st_mode) == 0o666 & ~mask
        os.chmod(md, 0o604)  # a file replaced keeps the mode it had
        assert cli("compare", finished, finished, "--gate", "none", "--md", md).exit_code == 0
        assert stat.S_IMODE(md.stat().st_mode) == 0o604
        kept = tmp_path / "kept.jsonl"
        rows, corpus = _jsonl(tmp_path / "rows.jsonl", [ROW]), _jsonl(tmp_path / "corpus.jsonl", CORPUS)
        assert cli("align", rows, corpus, "--out", kept).exit_code == 0
        assert stat.S_IMODE(kept.stat().st_mode) == 0o666 & ~mask
        result = cli("baseline", "save", finished, "--name", "main", "--baselines-dir", tmp_path / "bl")
        assert result.exit_code == 0, result.output
        assert stat.S_IMODE((tmp_path / "bl" / "main").stat().st_mode) == 0o777 & ~mask
        for f in (tmp_path / "bl" / "main").iterdir():
            assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~mask, f
    finally:
        os.umask(old)


# -- item 8: every OS error on an input is one line ------------------------------------------------------


def _readers(tmp: Path, bad: Path) -> list[tuple]:
    rows, corpus = _jsonl(tmp / "rows.jsonl", [ROW]), _jsonl(tmp / "corpus.jsonl", CORPUS)
    preds = _jsonl(tmp / "preds.jsonl", [{"id": "r1", "answer": "a"}])
    out = tmp / "out.jsonl"
    return [("validate", bad), ("agreement-humans", bad), ("search-eval", bad),
            ("align", bad, corpus, "--out", out), ("align", rows, bad, "--out", out),
            ("longcontext", bad, corpus, "--out", out), ("longcontext", rows, bad, "--out", out),
            ("flashrag-eval", bad, "--corpus", corpus), ("flashrag-eval", rows, "--corpus", bad),
            ("flashrag-eval", rows, "--corpus", corpus, "--predictions", bad),
            ("run", bad), ("families", "--config", bad)]


def test_a_link_loop_a_long_name_and_eio_are_one_line_for_every_reader(tmp_path):
    loop = tmp_path / "loop"
    os.symlink(tmp_path / "loop2", loop)
    os.symlink(loop, tmp_path / "loop2")
    for bad, expect in ((loop, "loop of symbolic links"), (tmp_path / LONG_NAME, "too long"),
                        (Path("/proc/self/mem"), "input/output error")):
        for args in _readers(tmp_path, bad):
            refused(cli(*args), expect)


def test_a_long_name_for_a_folder_or_an_output_is_one_line(tmp_path, finished):
    long = tmp_path / LONG_NAME
    data = _jsonl(tmp_path / "data.jsonl", EXAMPLE)
    for args in (("run", _config(tmp_path, data), "--runs-dir", long, "--no-progress"), ("score", long),
                 ("agreement", finished, "--out", tmp_path / (LONG_NAME + ".html")), ("baseline", "list", "--baselines-dir", long),
                 ("compare", finished, finished, "--md", tmp_path / LONG_NAME)):
        one_line(cli(*args), "too long")


# -- item 9: a pipe is read once --------------------------------------------------------------------------


def _through_a_pipe(args: list[str], data: bytes, tmp: Path) -> subprocess.CompletedProcess:
    """The real CLI with one argument standing for a pipe (/dev/fd/N, what <(cmd) gives)."""
    read, write = os.pipe()
    feeder = threading.Thread(target=lambda: (os.write(write, data), os.close(write)))
    feeder.start()
    try:
        return subprocess.run([sys.executable, "-m", "judge.cli", *[a.replace("PIPE", f"/dev/fd/{read}") for a in args]],
                              capture_output=True, text=True, cwd=ROOT, pass_fds=(read,), timeout=300)
    finally:
        os.close(read)
        feeder.join()


def test_validate_reads_a_pipe_once(tmp_path):
    raw = "".join(json.dumps(r) + "\n" for r in EXAMPLE).encode()
    result = _through_a_pipe(["validate", "PIPE", "--json"], raw, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["records"] == len(EXAMPLE)


def test_a_run_reads_its_dataset_from_stdin(tmp_path):
    config = _config(tmp_path, Path("/dev/stdin"))
    raw = "".join(json.dumps(r) + "\n" for r in EXAMPLE)
    result = subprocess.run([sys.executable, "-m", "judge.cli", "run", str(config), "--runs-dir", str(tmp_path / "runs"), "--no-progress", "--json"],
                            input=raw, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["records"] == len(EXAMPLE)


def test_an_endless_stream_is_one_line_not_a_full_disk():
    result = cli_inproc("validate", "/dev/zero", env={"JUDGE_MAX_RECORD_MB": "1"})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "/dev/zero" in result.stderr and "over 1 MB" in result.stderr


# -- item 10: one record's cap on corpus lines and predictions ---------------------------------------------


def test_a_corpus_line_or_predictions_over_the_record_cap_are_refused(tmp_path):
    huge = "y" * 5000
    rows = _jsonl(tmp_path / "rows.jsonl", [ROW])
    corpus = _jsonl(tmp_path / "corpus.jsonl", CORPUS + [{"id": "9", "title": "T", "text": huge}])
    env = {"JUDGE_MAX_RECORD_MB": "0.001"}  # one record: 1,000 bytes
    for args in (("align", rows, corpus, "--out", tmp_path / "o.jsonl"), ("flashrag-eval", rows, "--corpus", corpus)):
        one_line(cli(*args, env=env), str(corpus), "line 4", "over the 0 MB limit")
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({"r1": huge}), encoding="utf-8")
    result = cli("flashrag-eval", rows, "--corpus", _jsonl(tmp_path / "c2.jsonl", CORPUS), "--predictions", preds, env=env)
    assert result.exit_code == 2 and "over the 0 MB limit" in result.output and "Traceback" not in result.output


# -- item 12: 5,000 digits, NaN, inf, 1e999 in every file kind -------------------------------------------


def test_a_5000_digit_number_is_one_line_in_every_file_kind(tmp_path, finished):
    plain = dict(EXAMPLE[0])
    cases = []
    data = tmp_path / "meta.jsonl"
    data.write_text(json.dumps({**plain, "meta": {"n": 1}}).replace('"n": 1', f'"n": {BIG}') + "\n", encoding="utf-8")
    cases.append((("validate", data), "meta.n"))
    cases.append((("run", _config(tmp_path, data), "--runs-dir", tmp_path / "r1"), "meta.n"))
    config = tmp_path / "big.yaml"
    config.write_text(f"name: x\ndataset: {{path: {data}}}\nrecord_concurrency: {BIG}\n", encoding="utf-8")
    cases.append((("run", config, "--runs-dir", tmp_path / "r2"), "line 3"))
    answers = tmp_path / "answers.jsonl"
    answers.write_text(f'{{"record_id": "a", "model": "m", "answer": "x", "n": {BIG}}}\n', encoding="utf-8")
    cases.append((("validate", answers), "field n"))
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(ROW)[:-1] + f', "n": {BIG}}}\n', encoding="utf-8")
    corpus = _jsonl(tmp_path / "corpus.jsonl", CORPUS)
    cases += [(("align", rows, corpus, "--out", tmp_path / "o.jsonl"), "field n"), (("flashrag-eval", rows, "--corpus", corpus), "field n")]
    preds = tmp_path / "preds.json"
    preds.write_text(f'{{"r1": {BIG}}}', encoding="utf-8")
    cases.append((("flashrag-eval", _jsonl(tmp_path / "rows2.jsonl", [ROW]), "--corpus", corpus, "--predictions", preds), "field r1"))
    for name, text in (("summary.json", '"records": 3'), ("run.json", '"records_selected": 3')):
        run = tmp_path / f"run-{name}"
        import shutil

        shutil.copytree(finished, run)
        raw = (run / name).read_text(encoding="utf-8")
        assert text in raw
        (run / name).write_text(raw.replace(text, text[:-1] + BIG, 1), encoding="utf-8")
        for args in (("score", run), ("compare", run, run), ("baseline", "save", run, "--name", "b", "--baselines-dir", tmp_path / "bl")):
            cases.append((args, name))
    for args, expect in cases:
        refused(cli(*args), "5,000 digits", expect)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_and_infinite_numbers_are_refused_where_json_is_read(tmp_path, value):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({**EXAMPLE[0], "meta": {"score": 1}}).replace('"score": 1', f'"score": {value}') + "\n", encoding="utf-8")
    refused(cli("validate", data), "line 1", "meta.score", "finite")
    preds = tmp_path / "preds.json"
    preds.write_text(f'{{"r1": {value}}}', encoding="utf-8")
    corpus = _jsonl(tmp_path / "corpus.jsonl", CORPUS)
    one_line(cli("flashrag-eval", _jsonl(tmp_path / "rows.jsonl", [ROW]), "--corpus", corpus, "--predictions", preds), "r1", "finite")


@pytest.mark.parametrize("field,value", [("max_cost_usd", "'1e999'"), ("max_cost_usd", ".inf"), ("search", "{min_score: .nan}"),
                                         ("controls", "{floor: '1e999'}")])
def test_an_infinite_or_nan_setting_in_a_run_config_is_refused(tmp_path, field, value):
    """Every section of a run config refuses a number that is not finite ('1e999' is a string to YAML that
    pydantic would read as inf: an unlimited budget written as a limit)."""
    data = _jsonl(tmp_path / "data.jsonl", EXAMPLE)
    config = tmp_path / "run.yaml"
    config.write_text(f"dataset: {{path: {data}}}\ndecompose: {{method: sentences}}\n{field}: {value}\n", encoding="utf-8")
    out = one_line(cli("run", config, "--runs-dir", tmp_path / "runs", "--no-progress"), "run.yaml", field, "finite")
    assert not (tmp_path / "runs").exists(), out


def test_a_baselines_dir_that_is_not_a_directory_is_refused(tmp_path):
    one_line(cli("baseline", "list", "--baselines-dir", os.devnull), os.devnull, "not a directory")
    (tmp_path / "file").write_text("x")
    one_line(cli("baseline", "list", "--baselines-dir", tmp_path / "file"), "not a directory")
    broken = tmp_path / "bl" / "main"
    broken.mkdir(parents=True)
    (broken / "BASELINE.json").write_text("{not json")
    listed = cli("baseline", "list", "--baselines-dir", tmp_path / "bl")
    assert listed.exit_code == 2 and "main:" in listed.output and "corrupt" in listed.output, listed.output  # issue 50.14: listed, then exit 2


# -- item 15: TREC runs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("line,field,expect", [
    ("q1 Q0 d1 1 NaN t", "score", "finite"), ("q1 Q0 d1 1 inf t", "score", "finite"), ("q1 Q0 d1 1 1e999 t", "score", "finite"),
    ("q1 Q0 d1 -3 1.0 t", "rank", "at least 0"), (f"q1 Q0 d1 1 {BIG} t", "score", "5,000 digits"), ("q1 Q0 d1 x 1.0 t", "rank", "whole number"),
])
def test_a_trec_run_refuses_nan_infinite_scores_and_negative_ranks(tmp_path, line, field, expect):
    from judge.datasets.beir import load_run
    from judge.problems import DatasetError

    run = tmp_path / "run.trec"
    run.write_text(f"q1 Q0 d0 1 2.0 t\n{line}\n", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_run(run)
    text = str(info.value)
    assert "\n" not in text and "line 2" in text and f"field {field}" in text and expect in text, text


def test_a_document_ranked_twice_for_one_query_is_refused(tmp_path):
    from judge.datasets.beir import load_run
    from judge.problems import DatasetError

    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d0 1 2.0 t\nq1 Q0 d0 2 1.0 t\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="ranked twice"):
        load_run(run)


# -- item 18: data cannot forge a line or reorder one ----------------------------------------------------------

FORGED = "q1\nJUDGES VERIFIED: every claim grounded"


def test_a_newline_or_bidi_override_in_an_id_prints_as_one_line(tmp_path):
    data = tmp_path / "evil.jsonl"
    data.write_text(json.dumps({"id": FORGED, "question": "Who \u202eled?", "source": "Alice founded the club in 1990.",
                                "answer": "Bob founded the club in 1990. The sky is \u202egreen."}) + "\n"
                    + json.dumps({"id": "q2\nFAKE", "question": "q", "source": "s.", "answer": 5}) + "\n", encoding="utf-8")
    result = cli_inproc("validate", str(data))
    assert result.returncode == 2
    assert not any(line.startswith(("JUDGES", "FAKE")) for line in (result.stdout + result.stderr).splitlines())
    assert "q2\u23ceFAKE" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(data.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    result = cli_inproc("run", str(_config(tmp_path, bad)), "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    out = result.stdout + result.stderr
    assert "q1\u23ceJUDGES VERIFIED" in out
    assert not any(line.startswith("JUDGES") for line in out.splitlines()), out
    assert "\u202e" not in out and "<U+202E>" in out
    (run,) = (tmp_path / "runs").iterdir()
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "\u202e" not in report and "<U+202E>".replace("<", "&lt;").replace(">", "&gt;") in report
    assert not any(line.startswith("JUDGES") for line in report.splitlines())


def test_a_huge_claim_is_cut_on_the_terminal(tmp_path):
    from judge.stages.decompose import MAX_CLAIM_CHARS

    # as long as one claim may be (a longer sentence is set aside unjudged: tests/test_long_claim.py)
    sentence = "Alice founded the club " + " ".join(f"and met member {w}" for w in ("alpha", "beta", "gamma", "delta") * 500)
    sentence = sentence[: MAX_CLAIM_CHARS - 1].rstrip() + "."
    data = _jsonl(tmp_path / "big.jsonl", [{"id": "b", "question": "Who?", "source": "Bob runs a shop.", "answer": sentence}])
    result = cli_inproc("run", str(_config(tmp_path, data)), "--runs-dir", str(tmp_path / "runs"), "--no-progress")
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert sentence not in result.stdout and len(result.stdout) < len(sentence)  # in report.html, not printed whole
    assert "more characters" in result.stdout


# -- item 19: a closed stdout ---------------------------------------------------------------------------------


def test_a_reader_that_goes_away_is_no_failed_gate(tmp_path):
    data = _jsonl(tmp_path / "data.jsonl", EXAMPLE)
    config = _config(tmp_path, data)
    for extra, code in (((), 0), (("--max-hallucination", "0"), 1)):
        shell = (f"{sys.executable} -m judge.cli run {config} --runs-dir {tmp_path / 'runs'} --no-progress {' '.join(extra)}"
                 " | head -c 10 >/dev/null; echo ${PIPESTATUS[0]} >&2")
        result = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr
        assert result.stderr.strip().splitlines()[-1] == str(code), (extra, result.stderr)


# -- items 20 and 21 ------------------------------------------------------------------------------------------


def test_rejudge_refuses_an_unfinished_run(tmp_path, finished):
    import shutil

    for damage in ("no summary", "incomplete"):
        run = tmp_path / damage.replace(" ", "-")
        shutil.copytree(finished, run)
        if damage == "no summary":
            (run / "summary.json").unlink()
        else:
            summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
            summary["run"]["complete"] = False
            (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
        one_line(cli("rejudge", run, "--judge", "deterministic", "--runs-dir", tmp_path / "rr"), "did not finish")
        assert not (tmp_path / "rr").exists() or not any((tmp_path / "rr").iterdir())


@pytest.mark.parametrize("kwargs", [{"runs_dir": "r\x00s"}, {"name": "a\x00b"}])
def test_a_nul_byte_in_an_api_path_is_one_input_error(tmp_path, kwargs):
    with pytest.raises(InputError) as info:
        judge.evaluate(str(_config(tmp_path, _jsonl(tmp_path / "d.jsonl", EXAMPLE))), **kwargs)
    assert "NUL" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(InputError):
        judge.evaluate("configs/deter\x00ministic.yaml")
