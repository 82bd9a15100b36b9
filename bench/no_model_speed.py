"""The no-model path's speed and peak memory, against another checkout of the project in the same run.

    python bench/no_model_speed.py --baseline CHECKOUT [--records 400] [--rounds 2] [--controls]

The input is real text from the shared data: FaithBench and DialSummEval summaries with their sources, WiCE
claims with their evidence and the Hebrew model answers with their records (``--records`` of them, taken in
turn from each set). Each checkout runs ``judge.evaluate`` on the same input in a fresh child process
(its own code first on the path): sentence claims, the deterministic judge, no controls unless
``--controls``, no reports, no cache. Claims/s is claims over the child's CPU time inside ``evaluate``
(import and start-up aside; on a machine shared with other work, CPU time is what the load does not
change), wall time beside it; peak RSS is the child's VmHWM. The checkouts alternate round by round, so a
load falls on both; the best round of each is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = r"""
import json, sys, time
records, answers, controls = json.load(open(sys.argv[1]))
import judge
config = {"name": "speed", "decompose": {"method": "sentences"}, "adjudicate": {"judges": ["deterministic"]}}
if not controls:
    config["controls"] = False
t, cpu = time.perf_counter(), time.process_time()
run = judge.evaluate(config, records=records, answers=answers, runs_dir=sys.argv[2], use_cache=False, reports=False)
seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
claims = sum(1 for _ in run.claims())
hwm = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")]
print(json.dumps({"seconds": seconds, "cpu": cpu, "claims": claims, "peak_kb": int(hwm[0])}))
"""


def inputs(data: Path, n: int) -> tuple[list[dict], dict]:
    """``n`` records taken in turn from the sets, with one answer each (plain format)."""
    sets: list[list[tuple[str, str, str]]] = []
    fb = []
    for path in sorted((data / "external" / "faithbench").glob("batch_*.json")):
        fb += [(s["source"], s["summary"], "") for s in json.loads(path.read_text(encoding="utf-8"))["samples"]]
    sets.append(fb)
    lines = (data / "external" / "dialsummeval" / "human_judgment.jsonl").read_text(encoding="utf-8").splitlines()
    sets.append([(r["dialogue"], r["summary"], "") for r in map(json.loads, lines)])
    wice = []
    for line in (data / "external" / "wice" / "claim_test.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        text = r.get("evidence") or r.get("source") or r.get("sources")
        if isinstance(text, list):
            text = "\n".join(x if isinstance(x, str) else x.get("text", "") for x in text)
        claim = r.get("claim") or r.get("text")
        if text and claim:
            wice.append((text, claim, ""))
    sets.append(wice)
    he = {r["id"]: r for r in json.loads((data / "he_qa_sample.json").read_text(encoding="utf-8"))} if (data / "he_qa_sample.json").exists() else {}
    answers_he = []
    path = data / "he_model_answers_sample.jsonl"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            a = json.loads(line)
            r = he.get(a.get("record_id"))
            if r and a.get("answer"):
                answers_he.append((r["source_text"], a["answer"], r.get("question", "")))
    sets.append(answers_he)
    sets = [s for s in sets if s]
    records, answers = [], {}
    for i in range(n):
        source, answer, question = sets[i % len(sets)][(i // len(sets)) % len(sets[i % len(sets)])]
        records.append({"id": f"r{i}", "question": question, "source": source})
        answers[f"r{i}"] = answer
    return records, answers


def measure(checkout: Path, payload: Path, workdir: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    runs = Path(tempfile.mkdtemp(dir=workdir))
    out = subprocess.run([sys.executable, "-c", CHILD, str(payload), str(runs)], capture_output=True, text=True, cwd=workdir, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{checkout}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout of the code to compare with")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--records", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--controls", action="store_true")
    args = ap.parse_args(argv)
    records, answers = inputs(args.data, args.records)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        payload = work / "input.json"
        payload.write_text(json.dumps([records, answers, args.controls]), encoding="utf-8")
        results: dict[str, list[dict]] = {"baseline": [], "now": []}
        for _ in range(args.rounds):
            for name, checkout in (("baseline", args.baseline), ("now", ROOT)):
                results[name].append(measure(checkout, payload, work))
                r = results[name][-1]
                print(f"{name}: {r['claims']} claims, {r['cpu']:.1f} s CPU ({r['claims'] / r['cpu']:.0f} claims/s), {r['seconds']:.1f} s wall, "
                      f"peak {r['peak_kb'] / 1024:.0f} MB", flush=True)
    best = {k: min(v, key=lambda r: r["cpu"]) for k, v in results.items()}
    rate = {k: r["claims"] / r["cpu"] for k, r in best.items()}
    print(f"records {len(records)}, controls {'on' if args.controls else 'off'}: best rounds")
    for k in ("baseline", "now"):
        print(f"  {k}: {rate[k]:.0f} claims per CPU second, {best[k]['cpu']:.1f} s CPU, {best[k]['seconds']:.1f} s wall, "
              f"peak RSS {best[k]['peak_kb'] / 1024:.0f} MB")
    print(f"  speed ratio now/baseline: {rate['now'] / rate['baseline']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
