"""Pinned baselines: ``judge baseline save RUN --name main`` copies a finished run into ``baselines/main/``
(a folder to commit, or to cache in CI), and ``--baseline main`` (``judge run``, ``judge compare``, the
pytest plugin) resolves the name there. A run directory's path is accepted wherever a name is.

A baseline is a run directory of its own (run.json, config.yaml, results.jsonl, summary.json, scores.json and
report.md when present; not calls.jsonl nor report.html) plus BASELINE.json saying where it came from. Its
config.yaml is written anew without any credential of an api_base (user:password@, api-key=, ...), whatever
the run's own holds: a baseline is committed. Saving
a name again replaces it whole, never half: the new copy is written beside it and swapped in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from judge import files
import time
from pathlib import Path

from judge.runs.store import RunDirError

BASELINES_ENV = "JUDGE_BASELINES_DIR"
DEFAULT_DIR = "baselines"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
FILES = ("run.json", "config.yaml", "results.jsonl", "selected.ids", "summary.json", "scores.json", "report.md")
REQUIRED = ("run.json", "config.yaml", "results.jsonl", "summary.json")
MARKER = "BASELINE.json"


def baselines_dir(given: str | Path | None = None) -> Path:
    """The folder of pinned baselines: ``given``, else $JUDGE_BASELINES_DIR, else ./baselines."""
    return Path(given or os.environ.get(BASELINES_ENV) or DEFAULT_DIR)


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise RunDirError(f"baseline name {str(name)[:80]!r}: expected letters, digits, '.', '_' or '-' (at most 64), starting with a letter or digit")
    return name


REFUSED = "refused (require: calibrated)"  # the failure line of a judge require: calibrated refused (controls.health)


def save_baseline(run_dir: str | Path, name: str, directory: str | Path | None = None, allow_failed: bool = False) -> Path:
    """Pin the finished run ``run_dir`` as baseline ``name`` under ``directory``; returns the baseline's folder.

    Refused: a run that did not finish (no summary.json), a run that cannot pass (its judges failed or were
    unverified, too many judge errors; ``allow_failed`` accepts it), a file of the run that is a link. A run
    whose only failures are judges ``require: calibrated`` refused is pinned, marked "judge not calibrated" in
    BASELINE.json (issue 49.2: a push that cannot calibrate still pins a baseline; every pull request against it
    is refused the same way, exit 3, rather than exit 2 for want of a baseline)."""
    from judge.runs.run import Run

    _check_name(name)
    source = Path(run_dir)
    run = Run.open(source)  # not a run directory, another version's: RunDirError
    if not run.summary:
        raise RunDirError(f"{source} has no summary.json: the run did not finish, so it cannot be a baseline (judge run CONFIG --resume {source})")
    from judge.runs.selection import check_whole

    check_whole(run.store, run.summary_model)  # a summary that says complete is held to the run's own files (issue 50.12)
    uncalibrated = [f for f in run.failures if REFUSED in f]
    if run.failures and len(uncalibrated) == len(run.failures):
        allow_failed = True  # the one failure a push that could not calibrate has: pinned, marked
    if run.failures and not allow_failed:
        raise RunDirError(f"{source} cannot pass, so it is no baseline: " + "; ".join(run.failures) + " (--allow-failed pins it anyway)")
    root = baselines_dir(directory)
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise RunDirError(f"{root}: expected a folder for baselines (not a link, not a file)")
    root.mkdir(parents=True, exist_ok=True)
    target = root / name
    if target.is_symlink() or (target.exists() and not (target / MARKER).is_file()):
        raise RunDirError(f"{target} exists and is not a baseline judge saved: remove it or choose another name")
    tmp = files.make_temp_dir(root, f".{name}.")  # the umask's mode: a baseline is read by CI and other users
    try:
        for file in FILES:
            src = source / file
            if src.is_symlink():
                raise RunDirError(f"{src} is a symbolic link: a baseline copies only the run's own files")
            if not src.exists():
                if file in REQUIRED:
                    raise RunDirError(f"{src} is missing: the run is incomplete")
                continue
            data = _read_run_file(src, file)  # the reading door: a plain file within its bound (a device there: one line)
            if file == "config.yaml":  # written anew: a run made before api_base credentials were scrubbed holds them
                data = _shareable_config(run)
            if file == "results.jsonl" and data and not data.endswith(b"\n"):
                data = data[: data.rfind(b"\n") + 1]  # a torn last line is no finished record
            (tmp / file).write_bytes(data)
        summary = run.summary_model
        marker = {
            "name": name, "source": str(source.resolve()), "config_name": (run.manifest or {}).get("name"),
            "config_hash": summary.config_hash, "prompts": summary.prompts, "records": summary.records,
            "overall": summary.overall.model_dump() if summary.overall is not None else None, "saved_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **({"judge_not_calibrated": "; ".join(uncalibrated)} if uncalibrated else {}),
        }
        (tmp / MARKER).write_text(json.dumps(marker, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        old = None
        if target.exists():
            old = root / f".{name}.old-{os.getpid()}"
            os.replace(target, old)
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def marked(folder: str | Path) -> dict:
    """``{"judge_not_calibrated": why}`` when the baseline just saved in ``folder`` is marked so, else {}."""
    data = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
    why = data.get("judge_not_calibrated") if isinstance(data, dict) else None
    return {"judge_not_calibrated": why} if why else {}


def marked_line(folder: str | Path) -> str:
    """What ``judge baseline save`` adds to its line for a baseline marked "judge not calibrated"."""
    why = marked(folder).get("judge_not_calibrated")
    return f'. Marked "judge not calibrated" ({why}): every pull request against it exits 3 until judge calibrate succeeds' if why else ""


def _read_run_file(src: Path, file: str) -> bytes:
    """A run's file for its baseline copy, through the reading door: a plain file (a device or pipe is refused,
    never read), results.jsonl within its lines' bound, the others within a JSON file's."""
    from judge.input_files import InputFileError, max_file_bytes, read_plain

    try:
        if file not in ("results.jsonl", "selected.ids"):  # the two a run's size decides: read line by line, each within its bound
            return read_plain(src, limit=max_file_bytes())
        from judge.runs.store import RunStore

        with RunStore._open_read(src) as f:
            return b"".join(line for _, line in RunStore._lines(f))
    except InputFileError as e:
        raise RunDirError(str(e)) from None


def _read_marker(marker: Path) -> tuple[object, str | None]:
    """A baseline's BASELINE.json through the input boundary (a plain file within its bound; JSON within the
    depth, number and text limits): (its value, None), or (None, why it cannot be read)."""
    from judge.boundary import parse_json
    from judge.errors import InputError
    from judge.input_files import read_plain

    try:
        return parse_json(read_plain(marker, limit=1_000_000), str(marker)), None
    except InputError as e:
        return None, " ".join(str(e).split())[:200]


def _shareable_config(run) -> bytes:
    """The run's config as a baseline (a folder to commit) holds it: no credential of any api_base."""
    import yaml

    return yaml.safe_dump(run.config.shareable(), allow_unicode=True, sort_keys=False).encode("utf-8")


def resolve_baseline(value: str | Path, directory: str | Path | None = None) -> Path:
    """A run directory as given, else the pinned baseline of that name; RunDirError saying where it looked."""
    given = Path(value)
    if (given / "run.json").is_file():
        return given
    root = baselines_dir(directory)
    text = str(value)
    if NAME.match(text) and (root / text / MARKER).is_file():
        return root / text
    known = list_baselines(directory)
    hint = f" (pinned: {', '.join(b['name'] for b in known)})" if known else f" (none pinned in {root}: judge baseline save RUN_DIR --name NAME)"
    raise RunDirError(f"{text}: neither a run directory nor a baseline pinned in {root}{hint}")


def list_baselines(directory: str | Path | None = None) -> list[dict]:
    """The baselines pinned under ``directory``: their BASELINE.json, with the folder's path."""
    root = baselines_dir(directory)
    out = []
    if root.exists() and not root.is_dir():  # /dev/null, a file: a wrong flag, never "no baseline pinned"
        raise RunDirError(f"{root}: is not a directory (--baselines-dir, or ${BASELINES_ENV}, names the folder of pinned baselines)")
    if root.is_dir():
        for folder in sorted(root.iterdir()):
            marker = folder / MARKER
            if folder.name.startswith(".") or folder.is_symlink() or not marker.is_file():
                continue
            info, why = _read_marker(marker)
            if not isinstance(info, dict):  # listed, never dropped: the user sees which marker to fix
                info = {"problem": f"{marker} is corrupt ({why or 'not a JSON object'}): save the baseline again"}
            out.append({**info, "name": folder.name, "path": str(folder)})
    return out
