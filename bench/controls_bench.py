"""Do control claims tell a good judge from a bad one? Control accuracy against gold accuracy, per judge.

For each labelled set (the Hebrew answers sample, WiCE, FaithBench) the real `judge run` command runs once
per judge, with controls on; the run's summary gives each judge's accuracy on its controls, and its scores
give the same judge's accuracy against the gold claim labels. Judges: the deterministic judge; scripted
judges on the scripted OpenAI-compatible server (real litellm and instructor) that are lenient (everything
supported), strict (everything unsupported), random (seeded), or an oracle that answers from the truth with
probability p and at random otherwise (gold labels for real claims, the known label for controls); and,
with ``--embedded``, the embedded local models. Prints a table and the Pearson and Spearman correlations.

    python bench/controls_bench.py [--sets he,wice,faithbench] [--wice-limit 120] [--faithbench-limit 80] [--embedded]

Each row also gives, for the same judge in the same run, its recall on the run's planted errors (contradicted
and unsupported controls caught / made) and on the set's real not-grounded claims (gold not supported, flagged /
all), and the gap between them (planted minus real; issue 44): the second table. Sets: he, wice, faithbench,
heq, bundled, dialsummeval. ``noisy-80`` is an honest but noisy judge: the true label with p = 0.8 on every
claim, real or planted, otherwise one of the other three labels (seeded by the claim's text).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))

from judge.testing.scripts import claim_text, pipeline_model  # noqa: E402
from judge.testing.server import ScriptedServer  # noqa: E402
from judge.text import split_sentences  # noqa: E402

LABELS = ("supported", "partially_supported", "unsupported", "contradicted")


# -- the labelled sets, as a dataset file and an answers file with gold claim labels ----------------------


def he_set(tmp: Path, limit: int | None) -> dict:
    return {
        "name": "he_answers_sample",
        "dataset": str(SHARED / "he_qa_sample.json"),
        "answers": str(SHARED / "he_model_answers_sample.jsonl"),
        "decompose": "sentences",
    }


def wice_set(tmp: Path, limit: int | None) -> dict:
    """WiCE claims as one-claim answers (model "wice-claim") with their gold label."""
    from judge.datasets import load

    path = SHARED / "external" / "wice" / "claim_test.jsonl"
    records = load(path, "wice")[: limit or None]
    answers = tmp / "wice_answers.jsonl"
    with answers.open("w", encoding="utf-8") as f:
        for r in records:
            c = r.claims[0]
            f.write(json.dumps({"record_id": r.id, "model": "wice-claim", "answer": c.text, "gold_claims": [{"text": c.text, "label": c.label}]}) + "\n")
    subset = tmp / "wice.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()[: limit or None]
    subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"name": "wice", "dataset": str(subset), "format": "wice", "answers": str(answers), "decompose": "whole"}


def faithbench_set(tmp: Path, limit: int | None) -> dict:
    """FaithBench summaries, one claim per sentence: a sentence an annotator marked Unwanted.Intrinsic is
    contradicted, Unwanted (extrinsic) unsupported, a sentence with no annotation supported; a sentence
    with only Benign or Questionable marks has no gold label and is left out."""
    records, answers = [], []
    for batch in sorted((SHARED / "external" / "faithbench").glob("batch_*.json")):
        for s in json.loads(batch.read_text(encoding="utf-8"))["samples"]:
            rid = f"fb-{batch.stem}-{s['sample_id']}"
            summary = s["summary"]
            gold = []
            for sent in split_sentences(summary):
                marks = [a for a in s["annotations"] if a["summary_start"] is not None and a["summary_start"] < sent.end and sent.start < a["summary_end"]]
                kinds = {x for a in marks for x in a["label"]}
                if "Unwanted.Intrinsic" in kinds:
                    label = "contradicted"
                elif "Unwanted" in kinds or "Unwanted.Extrinsic" in kinds:
                    label = "unsupported"
                elif marks:
                    continue
                else:
                    label = "supported"
                gold.append({"text": sent.text, "label": label})
            records.append({"id": rid, "question": "Summarize the document.", "source_text": s["source"]})
            answers.append({"record_id": rid, "model": s["metadata"].get("summarizer", "summarizer"), "answer": summary, "gold_claims": gold})
    rng = random.Random(0)
    picked = sorted(rng.sample(range(len(records)), min(limit or len(records), len(records))))
    dataset, answers_path = tmp / "faithbench.json", tmp / "faithbench_answers.jsonl"
    dataset.write_text(json.dumps([records[i] for i in picked], ensure_ascii=False), encoding="utf-8")
    answers_path.write_text("".join(json.dumps(answers[i], ensure_ascii=False) + "\n" for i in picked), encoding="utf-8")
    return {"name": "faithbench", "dataset": str(dataset), "format": "hebrew-qa", "answers": str(answers_path), "decompose": "sentences"}


def bundled_set(tmp: Path, limit: int | None) -> dict:
    """The package's own three Hebrew records with their recorded answers (gold claim labels): small enough for
    the embedded models on a CPU."""
    return {
        "name": "bundled_he_sample",
        "dataset": str(ROOT / "judge" / "data" / "he_sample.json"),
        "answers": str(ROOT / "judge" / "data" / "he_sample_answers.jsonl"),
        "decompose": "sentences",
    }


def heq_set(tmp: Path, limit: int | None) -> dict:
    """HeQ questions as one-claim answers: each question's first gold answer as the answer (supported), or,
    for every other question, another question's gold answer from the same paragraph (unsupported: its words
    are in the source, but it answers something else). Short answers become "<question> <answer>" claims."""
    from judge.datasets import load

    records = load(SHARED / "external" / "heq" / "test_v1.1.json")[: limit or 1000]
    by_context: dict[str, list] = {}
    for r in records:
        by_context.setdefault(r.sources[0].text, []).append(r)
    rows, answers = [], []
    for i, r in enumerate(records):
        right = r.claims[0].text if r.claims else ""
        others = [o.claims[0].text for o in by_context[r.sources[0].text] if o.id != r.id and o.claims and o.claims[0].text not in right and right not in o.claims[0].text]
        wrong = i % 2 == 1 and others
        answer = others[0] if wrong else right
        rows.append({"id": r.id, "question": r.question, "source_text": r.sources[0].text})
        answers.append({"record_id": r.id, "model": "heq-answer", "answer": answer, "gold_claims": [{"text": answer, "label": "unsupported" if wrong else "supported"}]})
    dataset, answers_path = tmp / "heq.json", tmp / "heq_answers.jsonl"
    dataset.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    answers_path.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8")
    return {"name": f"heq{len(rows)}", "dataset": str(dataset), "format": "hebrew-qa", "answers": str(answers_path), "decompose": "sentences"}


def dialsummeval_set(tmp: Path, limit: int | None) -> dict:
    """DialSummEval summaries as whole answers (one claim each; the labels are the answer's): supported where
    all three annotators gave consistency 5, unsupported where their consistency sums to 5 or less (the rule of
    bench/grounding_sets.py); the summaries between are left out. ``limit``: at most this many, drawn seeded."""
    rows = [json.loads(line) for line in (SHARED / "external" / "dialsummeval" / "human_judgment.jsonl").read_text(encoding="utf-8").splitlines()]
    kept = []
    for n, r in enumerate(rows):
        total = sum(a["consistency"] for a in r["annotations"])
        if total == 15 or total <= 5:
            kept.append((n, r, "supported" if total == 15 else "unsupported"))
    if limit and limit < len(kept):
        kept = sorted(random.Random(0).sample(kept, limit), key=lambda k: k[0])
    records: dict[str, dict] = {}
    answers = []
    for n, r, label in kept:
        rid = f"dse-{r['id']}"
        records.setdefault(rid, {"id": rid, "question": "Summarize the dialogue.", "source_text": r["dialogue"]})
        summary = r["summary"].strip()
        answers.append({"record_id": rid, "model": f"system-{r['model_id']}", "answer": summary, "gold_claims": [{"text": summary, "label": label}]})
    dataset, answers_path = tmp / "dialsummeval.json", tmp / "dialsummeval_answers.jsonl"
    dataset.write_text(json.dumps(list(records.values()), ensure_ascii=False), encoding="utf-8")
    answers_path.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8")
    return {"name": "dialsummeval", "dataset": str(dataset), "format": "hebrew-qa", "answers": str(answers_path), "decompose": "whole"}


SETS = {"he": he_set, "wice": wice_set, "faithbench": faithbench_set, "bundled": bundled_set, "heq": heq_set, "dialsummeval": dialsummeval_set}


# -- the scripted judges ------------------------------------------------------------------------------------


def truth_table(labelled: dict, controls: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """(question, claim text) -> its true label: gold claims of the answers, and the run's controls (read from
    a first run: the same data and seed make the same controls)."""
    from judge.datasets import load

    questions = {r.id: r.question.strip() for r in load(labelled["dataset"], labelled.get("format"))}
    truth = {}
    for line in Path(labelled["answers"]).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for g in row["gold_claims"]:
            truth[(questions.get(row["record_id"], ""), g["text"].strip())] = g["label"]
    truth.update(controls)
    return truth


class _ByModel:
    """Recorded answers looked up by (record id, model) alone: the run may have normalised an answer's text."""

    def __init__(self, answers_path: str):
        from types import SimpleNamespace

        self.by = {}
        for line in Path(answers_path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            gold = [SimpleNamespace(text=g["text"], label=g["label"], support=[]) for g in row["gold_claims"]]
            self.by[(row["record_id"], row["model"])] = SimpleNamespace(gold_claims=gold)

    def get(self, key):
        return self.by.get(key[:2])


def matched_truth(labelled: dict, run_dir: Path) -> dict[tuple[str, str], str]:
    """(question, the run's claim text) -> the gold label the run's scoring pairs that claim with
    (judge.metrics.gold.matched_gold): a claim read with its question, or cut otherwise than the gold, gets the
    label it is scored against, so that ``right`` is right on every scored claim."""
    from judge.datasets import load
    from judge.metrics.gold import matched_gold
    from judge.results import RecordResult

    records = {r.id: r for r in load(labelled["dataset"], labelled.get("format"))}
    recorded = _ByModel(labelled["answers"])
    out = {}
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        r = RecordResult.model_validate_json(line)
        for a in r.answers:
            m = matched_gold(records.get(r.record_id), a, recorded)
            for claim, gold in (m.pairs if m else []):
                if gold.label is not None:
                    out[(r.question.strip(), claim.text.strip())] = gold.label
    return out


def _question(request: dict) -> str:
    import html
    import re

    from judge.testing.scripts import user_text

    m = re.search(r"<question>(.*?)</question>", user_text(request), re.S)
    return html.unescape(m.group(1)).strip() if m else ""


def scripted(kind: str, truth: dict[tuple[str, str], str], p: float = 1.0, detector=None):
    """A scripted judge's pipeline model. ``detector``: (control model, per-label models) of train_detector."""
    def label_for(cid: str, request: dict) -> str:
        text = claim_text(request, cid).strip()
        rng = random.Random(f"{kind}:{text}")
        if kind == "lenient":
            return "supported"
        if kind == "call-shape":
            from tests.test_controls_attacks import SHAPE_RULES, shape_judge

            return shape_judge(SHAPE_RULES["alone supported, else by place"])(cid, request)
        if kind == "detector":
            from tests.test_controls_attacks import detector_judge

            return detector_judge(*detector)(cid, request)
        if kind == "fail-one-label":
            true = truth.get((_question(request), text))
            return "supported" if true in (None, "contradicted") else true
        if kind == "strict":
            return "unsupported"
        if kind == "noisy":  # honest but noisy: the true label with probability p, else one of the other three
            true = truth.get((_question(request), text))
            if true is None:
                return rng.choice(LABELS)
            return true if rng.random() < p else rng.choice([lbl for lbl in LABELS if lbl != true])
        if kind == "random":
            return rng.choice(LABELS)
        if kind == "surface":
            from tests.test_controls_run import surface_cheater

            return surface_cheater(cid, request)
        true = truth.get((_question(request), text))
        return true if true is not None and rng.random() < p else rng.choice(LABELS)

    return pipeline_model(label_for)


# -- one run per judge ----------------------------------------------------------------------------------------


def run_one(labelled: dict, judge: str, models: dict, tmp: Path) -> dict:
    config = {
        "name": f"{labelled['name']}-{judge}",
        "dataset": {"path": labelled["dataset"], **({"format": labelled["format"]} if labelled.get("format") else {})},
        "answers": {"path": labelled["answers"]},
        "models": models,
        "decompose": {"method": labelled["decompose"]},
        "adjudicate": {"judges": [judge], "batch_claims": True, "triage": False},
        "cache_dir": str(tmp / "cache"),
        "record_concurrency": 4,
        "controls": {"per_label": PER_LABEL[0]},  # the default gate and cap: each run says passed / failed / unverified
    }
    path = tmp / f"{config['name']}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "judge.cli", "run", str(path), "--runs-dir", str(tmp / "runs"), "--json", "--no-progress"],
        capture_output=True, text=True, cwd=ROOT,
    )
    if out.returncode not in (0, 3):
        raise SystemExit(f"{config['name']}: exit {out.returncode}\n{out.stderr[-2000:]}")
    summary = json.loads(out.stdout)
    run_dir = Path(summary["run_dir"])
    scores = json.loads((run_dir / "scores.json").read_text(encoding="utf-8"))
    health = next(h for h in summary["judge_health"]["judges"] if h["judge"] == judge)
    jh = summary["judge_health"]
    cost = jh["cost"]
    share = (cost["prompt_tokens"] + cost["completion_tokens"]) / jh["judge_tokens"] if jh.get("judge_tokens") else None
    tells = jh.get("tells") or {}
    gold = scores["gold_labels"][judge]
    recall = {r["label"]: f"{r['correct']}/{r['controls']}" for r in health["by_label"]}
    gold_recall = {k: v["recall"] for k, v in gold.get("per_label", {}).items()}
    planted, real = planted_recall(run_dir, judge), real_recall(gold)
    return {
        "set": labelled["name"],
        "judge": judge,
        "status": health["status"],
        "control_recall": recall,
        "gold_recall": gold_recall,
        "run_dir": str(run_dir),
        "control_accuracy": health["accuracy"],
        "control_ci95": health["accuracy_ci95"],
        "controls": health["controls"],
        "gold_accuracy": gold["accuracy"],
        "gold_claims": gold["n"] if "n" in gold else gold.get("support"),
        "verdict": health["verdict"],
        "seconds": round(time.perf_counter() - started, 1),
        "exit": out.returncode,
        "token_share": share,
        "detector_auc": tells.get("detector_auc"),
        "kinds": {r["label"]: f"{r['correct']}/{r['controls']}" for r in health["by_kind"]},
        "planted": planted,
        "real": real,
        "gap": planted["recall"] - real["recall"] if planted["n"] and real["n"] else None,
    }


NOT_GROUNDED = ("partially_supported", "unsupported", "contradicted")


def planted_recall(run_dir: Path, judge: str) -> dict:
    """The judge's recall on the run's planted errors (contradicted and unsupported controls, none withdrawn):
    caught = called partially supported, unsupported or contradicted (unsure or a judge error is a miss), the
    rule real_recall uses. (The canary itself counts only contradicted and unsupported as caught.)"""
    from judge.results import RecordResult

    k = n = 0
    by = {"contradicted": [0, 0], "unsupported": [0, 0]}
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        for c in RecordResult.model_validate_json(line).controls:
            if c.control.label not in by or c.withdrawn:
                continue
            said = next((v.label for v in c.verdicts if v.judge == judge), None)
            hit = said in NOT_GROUNDED
            by[c.control.label][0] += hit
            by[c.control.label][1] += 1
            k, n = k + hit, n + 1
    return {"caught": k, "n": n, "recall": k / n if n else None, "by_label": {lbl: f"{a}/{b}" for lbl, (a, b) in by.items()}}


def real_recall(gold: dict) -> dict:
    """The judge's recall on the run's real not-grounded claims (gold partially supported, unsupported or
    contradicted), from the run's own gold confusion (scores.json): called partially supported, unsupported or
    contradicted (not supported, not unsure, no judge error) / all such claims; and the same on contradicted and
    unsupported gold claims only (the labels controls plant)."""
    confusion = gold.get("confusion", {})

    def share(golds):
        n = sum(sum(confusion.get(g, {}).values()) for g in golds)
        k = sum(confusion.get(g, {}).get(p, 0) for g in golds for p in NOT_GROUNDED)
        return k, n

    k, n = share(NOT_GROUNDED)
    k_cu, n_cu = share(("unsupported", "contradicted"))
    return {"caught": k, "n": n, "recall": k / n if n else None, "cu_caught": k_cu, "cu_n": n_cu, "cu_recall": k_cu / n_cu if n_cu else None}


PER_LABEL = [24]


def train_detector(name: str, tmp: Path, limit: int | None):
    """The control detector of tests/test_controls_attacks.py, trained on set ``name``'s controls and real
    claims (every answer given a control answer)."""
    import numpy as np

    from bench.detector import fit
    from judge.controls.make import ControlsConfig
    from bench.tells import DETECTOR_FEATURES, measure
    from judge.datasets import load

    tmp.mkdir(parents=True, exist_ok=True)
    labelled = SETS[name](tmp, limit)
    records = load(labelled["dataset"], labelled.get("format"))
    by: dict[str, list[list[str]]] = {}
    for line in Path(labelled["answers"]).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        by.setdefault(row["record_id"], []).append([s.text for s in split_sentences(row["answer"])])
    made = measure(records, lambda r: by.get(r.id, []), config=ControlsConfig(max_share=0.5), keep=True)
    controls, real = made["rows"]["controls"], made["rows"]["real"]
    x = np.asarray([[r[f] for f in DETECTOR_FEATURES] for r in controls + real])
    control = fit(x, np.asarray([1.0] * len(controls) + [0.0] * len(real)))
    labels = ("supported", "contradicted", "unsupported")
    return control, {lbl: fit(x[: len(controls)], np.asarray([float(r["label"] == lbl) for r in controls])) for lbl in labels}


def correlations(rows: list[dict]) -> dict:
    from scipy.stats import pearsonr, spearmanr

    rows = [r for r in rows if r["control_accuracy"] is not None]
    if len(rows) < 3:
        return {"n": len(rows), "pearson": float("nan"), "spearman": float("nan")}
    x = [r["control_accuracy"] for r in rows]
    y = [r["gold_accuracy"] for r in rows]
    if len(set(x)) < 2 or len(set(y)) < 2:
        return {"n": len(rows), "pearson": float("nan"), "spearman": float("nan")}
    return {"n": len(rows), "pearson": float(pearsonr(x, y).statistic), "spearman": float(spearmanr(x, y).statistic)}


def _share(k: int, n: int) -> str:
    return f"{k}/{n} = {k / n:.2f}" if n else "-"


def planted_table(rows: list[dict]) -> str:
    """Planted against real recall, per set and judge (issue 44), and the range of the gap."""
    out = ["| set | judge | planted recall (C+U caught / made) | real recall (not-grounded flagged / all) | gap | real recall, C+U gold only | exit | canary |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pl, re_ = r["planted"], r["real"]
        gap = f"{r['gap']:+.2f}" if r["gap"] is not None else "-"
        out.append(f"| {r['set']} | {r['judge']} | {_share(pl['caught'], pl['n'])} | {_share(re_['caught'], re_['n'])} | {gap} | "
                   f"{_share(re_['cu_caught'], re_['cu_n'])} | {r['exit']} | {r['status']} |")
    gaps = [r for r in rows if r["gap"] is not None]
    if gaps:
        lo, hi = min(gaps, key=lambda r: r["gap"]), max(gaps, key=lambda r: r["gap"])
        out.append("")
        out.append(f"gap over {len(gaps)} rows with planted errors: {lo['gap']:+.2f} ({lo['set']}, {lo['judge']}) to {hi['gap']:+.2f} ({hi['set']}, {hi['judge']}); "
                   f"|gap| {min(abs(r['gap']) for r in gaps):.2f} to {max(abs(r['gap']) for r in gaps):.2f}")
        for name in dict.fromkeys(r["set"] for r in gaps):
            mine = [r for r in gaps if r["set"] == name]
            lo, hi = min(mine, key=lambda r: r["gap"]), max(mine, key=lambda r: r["gap"])
            passed = [r for r in mine if r["exit"] == 0 and r["status"] == "passed"]
            worst = max(passed, key=lambda r: r["gap"]) if passed else None
            out.append(f"{name}: gap {lo['gap']:+.2f} ({lo['judge']}) to {hi['gap']:+.2f} ({hi['judge']})"
                       + (f"; largest among canary passes {worst['gap']:+.2f} ({worst['judge']})" if worst else ""))
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="he,wice,faithbench")
    ap.add_argument("--wice-limit", type=int, default=120)
    ap.add_argument("--faithbench-limit", type=int, default=80)
    ap.add_argument("--embedded", action="store_true", help="also the embedded local models (slow on CPU)")
    ap.add_argument("--embedded-15b", action="store_true", help="with --embedded: also Qwen2.5-Coder-1.5B")
    ap.add_argument("--judges", default="", help="only these judges (comma-separated names)")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--per-label", type=int, default=24)
    ap.add_argument("--heq-limit", type=int, default=1000)
    ap.add_argument("--dialsummeval-limit", type=int, default=0, help="at most this many DialSummEval summaries (0: all 182 with a clear label)")
    args = ap.parse_args()
    PER_LABEL[0] = args.per_label
    rows = []
    detectors: dict = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in args.sets.split(","):
            limit = {"wice": args.wice_limit, "faithbench": args.faithbench_limit, "heq": args.heq_limit, "dialsummeval": args.dialsummeval_limit}.get(name)
            labelled = SETS[name](tmp, limit)
            probe = run_one(labelled, "deterministic", {}, tmp)  # also the deterministic judge's row
            controls = {}
            from judge.results import RecordResult

            for line in Path(probe["run_dir"], "results.jsonl").read_text(encoding="utf-8").splitlines():
                r = RecordResult.model_validate_json(line)
                controls.update({(r.question.strip(), c.control.text.strip()): c.control.label for c in r.controls})
            truth = truth_table(labelled, controls)
            truth.update(matched_truth(labelled, Path(probe["run_dir"])))
            other = "wice" if name != "wice" else "he"  # the detector is trained on another set
            if (not args.judges or "detector" in args.judges) and other not in detectors:
                detectors[other] = train_detector(other, tmp / "train", {"wice": args.wice_limit}.get(other))
            detector = detectors.get(other)
            own = None
            if not args.judges or "detector-same-set" in args.judges:  # the cheater that learnt this very set's controls
                try:
                    own = train_detector(name, tmp / "train-own", limit)
                except ValueError as e:  # too few controls to learn from (the three bundled records)
                    print(f"{name}: no detector-same-set ({e})", file=sys.stderr)
            judges = {
                "surface-cheater": scripted("surface", truth),
                "lenient": scripted("lenient", truth),
                "fail-one-label": scripted("fail-one-label", truth),
                "call-shape": scripted("call-shape", truth),
                "detector": scripted("detector", truth, detector=detector),
                "detector-same-set": scripted("detector", truth, detector=own) if own is not None else None,
                "right": scripted("oracle", truth, 1.0),
                "strict": scripted("strict", truth),
                "random": scripted("random", truth),
                "oracle-90": scripted("oracle", truth, 0.9),
                "oracle-60": scripted("oracle", truth, 0.6),
                "noisy-80": scripted("noisy", truth, 0.8),
            }
            judges = {k: v for k, v in judges.items() if v is not None}
            servers = {k: ScriptedServer(s, keep_bodies=False).start() for k, s in judges.items()}
            try:
                models = {
                    k: {"model": f"openai/{k}", "api_base": srv.base_url, "family": "scripted", "timeout": 30, "max_attempts": 2}
                    for k, srv in servers.items()
                }
                names = ["deterministic", *judges]
                if args.embedded:
                    models.update({"local-qwen": {"model": "local/qwen2.5-0.5b", "max_tokens": 1024, "max_concurrency": 1, "timeout": 900}})
                    names.append("local-qwen")
                    if args.embedded_15b:
                        models.update({"local-qwen-1.5b": {"model": "local/qwen2.5-coder-1.5b", "max_tokens": 1024, "max_concurrency": 1, "timeout": 900}})
                        names.append("local-qwen-1.5b")
                (tmp / "train").mkdir(exist_ok=True)
                for judge in [n for n in names if not args.judges or n in args.judges.split(",")]:
                    row = probe if judge == "deterministic" else run_one(labelled, judge, models, tmp)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
            finally:
                for srv in servers.values():
                    srv.stop()
    print()
    print("| set | judge | controls | control recall S / C / U | exit | gate | detector AUC | token share | gold claims | gold recall S / C / U | gold accuracy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cr = " / ".join(r["control_recall"].get(k, "-") for k in ("supported", "contradicted", "unsupported"))
        gr = " / ".join(f"{r['gold_recall'][k]:.2f}" if r["gold_recall"].get(k) is not None else "-" for k in ("supported", "contradicted", "unsupported"))
        auc = f"{r['detector_auc']:.2f}" if r["detector_auc"] is not None else "-"
        share = f"{r['token_share']:.1%}" if r["token_share"] is not None else "-"
        print(f"| {r['set']} | {r['judge']} | {r['controls']} | {cr} | {r['exit']} | {r['status']} | {auc} | {share} | {r['gold_claims']} | {gr} | {r['gold_accuracy']:.2f} |")
    print()
    print(planted_table(rows))
    print()
    overall = correlations(rows)
    print(f"all rows: n={overall['n']}, Pearson r={overall['pearson']:.2f}, Spearman rho={overall['spearman']:.2f}")
    for name in dict.fromkeys(r["set"] for r in rows):
        c = correlations([r for r in rows if r["set"] == name])
        print(f"{name}: n={c['n']}, Pearson r={c['pearson']:.2f}, Spearman rho={c['spearman']:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "correlation": overall}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
