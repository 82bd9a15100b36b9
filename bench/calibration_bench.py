"""Is an honest judge trusted, and a lenient judge or a control detector refused, through calibration on real
labelled claims (issue 44)? Per labelled set and scripted judge: ``judge calibrate`` on one half of the set's
records (its gold claim labels), then ``judge run`` on the other half with ``calibration:`` and
``require: calibrated``; the row gives the calibration's not-grounded recall with its exact interval, the
held-out half's real recall, the run's exit and its trust line.

    python bench/calibration_bench.py [--sets he,heq,wice,faithbench,dialsummeval] [--judges right,noisy-80,...]

Judges are those of bench/controls_bench.py (scripted OpenAI-compatible servers on 127.0.0.1, real litellm and
instructor): ``right`` (gold on every real claim), ``noisy-80`` (the true label with p = 0.8, else another),
``lenient`` (always supported), ``detector`` (the control detector trained on another set: supported wherever
it takes a claim for real), ``surface-cheater`` (flags claims by surface tells of a made control).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.controls_bench import SETS, matched_truth, run_one, scripted, train_detector, truth_table  # noqa: E402
from judge.results import RecordResult  # noqa: E402
from judge.runs.calibration import MIN_EACH  # noqa: E402
from judge.testing.server import ScriptedServer  # noqa: E402

JUDGES = ("right", "noisy-80", "lenient", "detector", "surface-cheater")
LIMITS = {"wice": 200, "faithbench": 80, "heq": 300, "dialsummeval": 0}
EACH, LEAST = MIN_EACH + 5, 60  # a calibration wants MIN_EACH labelled claims a side; a margin for claims the run cuts otherwise


def _order(record_id: str) -> int:
    return int(hashlib.sha256(record_id.encode()).hexdigest(), 16)


def split(labelled: dict, tmp: Path) -> list[dict]:
    """The set cut in two by record id: records in a seeded order (their id's hash) go to calibration until it
    holds at least ``EACH`` gold claims on either side (grounded, not grounded) and ``LEAST`` in all, the
    fewest a calibration counts as enough, with a margin; the rest is held out. Each part is a dataset file and
    an answers file of its own records."""
    answers = [json.loads(line) for line in Path(labelled["answers"]).read_text(encoding="utf-8").splitlines() if line.strip()]
    by: dict[str, list] = {}
    for a in answers:
        by.setdefault(a["record_id"], []).append(a)
    cal: set[str] = set()
    sides = [0, 0]
    for rid in sorted(by, key=_order):
        if min(sides) >= EACH and sum(sides) >= LEAST:
            break
        cal.add(rid)
        for a in by[rid]:
            for g in a["gold_claims"]:
                sides[g["label"] == "supported"] += 1
    text = Path(labelled["dataset"]).read_text(encoding="utf-8")
    out = []
    for keep, tag in ((cal, "cal"), (set(by) - cal, "test")):
        part = dict(labelled, name=f"{labelled['name']}-{tag}")
        data = tmp / f"{part['name']}{Path(labelled['dataset']).suffix}"
        if labelled.get("format") == "wice":
            lines = [line for line in text.splitlines() if line.strip() and json.loads(line)["meta"]["id"] in keep]
            data.write_text("\n".join(lines) + "\n", encoding="utf-8")
        else:
            data.write_text(json.dumps([r for r in json.loads(text) if r["id"] in keep], ensure_ascii=False), encoding="utf-8")
        ans = tmp / f"{part['name']}_answers.jsonl"
        ans.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers if a["record_id"] in keep), encoding="utf-8")
        out.append(dict(part, dataset=str(data), answers=str(ans)))
    return out


def config(part: dict, judge: str, models: dict, tmp: Path, calibration: Path | None) -> Path:
    cfg = {
        "name": part["name"],
        "dataset": {"path": part["dataset"], **({"format": part["format"]} if part.get("format") else {})},
        "answers": {"path": part["answers"]},
        "models": models,
        "decompose": {"method": part["decompose"]},
        "adjudicate": {"judges": [judge], "batch_claims": True, "triage": False},
        "cache_dir": str(tmp / "cache"),
        "record_concurrency": 4,
    }
    if calibration is not None:
        cfg.update({"calibration": str(calibration), "require": "calibrated"})
    path = tmp / f"{part['name']}-{judge}.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "judge.cli", *args], capture_output=True, text=True, cwd=ROOT)


def one(cal: dict, test: dict, judge: str, models: dict, tmp: Path) -> dict:
    out_file = tmp / f"{cal['name']}-{judge}.calibration.json"
    c = cli("calibrate", str(config(cal, judge, models, tmp, None)), "--out", str(out_file), "--json", "--no-progress", "--runs-dir", str(tmp / "runs"))
    if c.returncode != 0:
        return {"judge": judge, "calibrate_exit": c.returncode, "error": c.stderr.strip().splitlines()[-1:]}
    made = json.loads(c.stdout)["judges"][judge]
    r = cli("run", str(config(test, judge, models, tmp, out_file)), "--json", "--no-progress", "--runs-dir", str(tmp / "runs"))
    row = {"judge": judge, "calibration": made, "exit": r.returncode}
    try:
        summary = json.loads(r.stdout)
        trust = ((summary.get("judge_health") or {}).get("trust")) or []
        row["trust"] = next((t for t in trust if t.get("judge") == judge), None)
        row["real"] = held_out_recall(Path(summary["run_dir"]), judge)
    except (json.JSONDecodeError, KeyError):
        row["stderr"] = r.stderr.strip().splitlines()[-2:]
    return row


def held_out_recall(run_dir: Path, judge: str) -> str:
    scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
    gold = scores["gold_labels"][judge]
    confusion = gold.get("confusion") or {}
    flagged = total = 0
    for true, row in confusion.items():
        if true == "supported":
            continue
        for said, k in row.items():
            total += k
            flagged += k if said in ("partially_supported", "unsupported", "contradicted") else 0
    return f"{flagged}/{total}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="he,heq,wice,faithbench,dialsummeval")
    ap.add_argument("--judges", default=",".join(JUDGES))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    detectors: dict = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in args.sets.split(","):
            labelled = SETS[name](tmp, LIMITS.get(name))
            probe = run_one(labelled, "deterministic", {}, tmp)
            controls = {}
            for line in Path(probe["run_dir"], "results.jsonl").read_text(encoding="utf-8").splitlines():
                rr = RecordResult.model_validate_json(line)
                controls.update({(rr.question.strip(), c.control.text.strip()): c.control.label for c in rr.controls})
            truth = truth_table(labelled, controls)
            truth.update(matched_truth(labelled, Path(probe["run_dir"])))
            other = "wice" if name != "wice" else "he"
            if "detector" in args.judges and other not in detectors:
                detectors[other] = train_detector(other, tmp / "train", LIMITS.get(other))
            kinds = {"right": ("oracle", 1.0), "noisy-80": ("noisy", 0.8), "lenient": ("lenient", 1.0),
                     "detector": ("detector", 1.0), "surface-cheater": ("surface", 1.0)}
            cal, test = split(labelled, tmp)
            for judge in args.judges.split(","):
                kind, p = kinds[judge]
                srv = ScriptedServer(scripted(kind, truth, p, detector=detectors.get(other)), keep_bodies=False).start()
                try:
                    models = {judge: {"model": f"openai/{judge}", "api_base": srv.base_url, "family": "scripted", "timeout": 30, "max_attempts": 2}}
                    row = {"set": name, **one(cal, test, judge, models, tmp)}
                finally:
                    srv.stop()
                rows.append(row)
                print(json.dumps(row), flush=True)
    print("\n| set | judge | calibrated on (claims) | not-grounded recall [95%] | grounded flagged (noise) | held-out real recall | exit with require: calibrated |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        c = r.get("calibration") or {}
        rec = c.get("not_grounded_recall") or {}
        lo, hi = rec.get("ci95") or (0, 0)
        interval = f"{rec['k']}/{rec['n']} [{lo:.2f}, {hi:.2f}]" if rec else "-"
        noise = c.get("noise") or {}
        noise = f"{noise['k']}/{noise['n']}" if noise else "-"
        refused = (r.get("trust") or {}).get("refused")
        why = f" (refused: {refused})" if refused else ""
        print(f"| {r['set']} | {r['judge']} | {c.get('claims', '-')} | {interval} | {noise} | {r.get('real', '-')} | {r.get('exit', r.get('calibrate_exit'))}{why} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
