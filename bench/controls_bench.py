"""Do control claims tell a good judge from a bad one? Control accuracy against gold accuracy, per judge.

For each labelled set (the Hebrew answers sample, WiCE, FaithBench) the real `judge run` command runs once
per judge, with controls on; the run's summary gives each judge's accuracy on its controls, and its scores
give the same judge's accuracy against the gold claim labels. Judges: the deterministic judge; scripted
judges on the scripted OpenAI-compatible server (real litellm and instructor) that are lenient (everything
supported), strict (everything unsupported), random (seeded), or an oracle that answers from the truth with
probability p and at random otherwise (gold labels for real claims, the known label for controls); and,
with ``--embedded``, the embedded local models. Prints a table and the Pearson and Spearman correlations.

    python bench/controls_bench.py [--sets he,wice,faithbench] [--wice-limit 120] [--faithbench-limit 80] [--embedded]
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


SETS = {"he": he_set, "wice": wice_set, "faithbench": faithbench_set, "bundled": bundled_set, "heq": heq_set}


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


def _question(request: dict) -> str:
    import html
    import re

    from judge.testing.scripts import user_text

    m = re.search(r"<question>(.*?)</question>", user_text(request), re.S)
    return html.unescape(m.group(1)).strip() if m else ""


def scripted(kind: str, truth: dict[tuple[str, str], str], p: float = 1.0, detector=None):
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
    }


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

    x = [r["control_accuracy"] for r in rows]
    y = [r["gold_accuracy"] for r in rows]
    return {"n": len(rows), "pearson": float(pearsonr(x, y).statistic), "spearman": float(spearmanr(x, y).statistic)}


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
    args = ap.parse_args()
    PER_LABEL[0] = args.per_label
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in args.sets.split(","):
            limit = {"wice": args.wice_limit, "faithbench": args.faithbench_limit, "heq": args.heq_limit}.get(name)
            labelled = SETS[name](tmp, limit)
            probe = run_one(labelled, "deterministic", {}, tmp)
            controls = {}
            from judge.results import RecordResult

            for line in Path(probe["run_dir"], "results.jsonl").read_text(encoding="utf-8").splitlines():
                r = RecordResult.model_validate_json(line)
                controls.update({(r.question.strip(), c.control.text.strip()): c.control.label for c in r.controls})
            truth = truth_table(labelled, controls)
            other = "wice" if name != "wice" else "he"  # the detector is trained on another set
            detector = train_detector(other, tmp / "train", {"wice": args.wice_limit}.get(other)) if not args.judges or "detector" in args.judges else None
            judges = {
                "surface-cheater": scripted("surface", truth),
                "lenient": scripted("lenient", truth),
                "fail-one-label": scripted("fail-one-label", truth),
                "call-shape": scripted("call-shape", truth),
                "detector": scripted("detector", truth, detector=detector),
                "right": scripted("oracle", truth, 1.0),
                "strict": scripted("strict", truth),
                "random": scripted("random", truth),
                "oracle-90": scripted("oracle", truth, 0.9),
                "oracle-60": scripted("oracle", truth, 0.6),
            }
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
                    row = run_one(labelled, judge, models, tmp)
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
    overall = correlations(rows)
    print(f"all rows: n={overall['n']}, Pearson r={overall['pearson']:.2f}, Spearman rho={overall['spearman']:.2f}")
    for name in dict.fromkeys(r["set"] for r in rows):
        c = correlations([r for r in rows if r["set"] == name])
        print(f"{name}: n={c['n']}, Pearson r={c['pearson']:.2f}, Spearman rho={c['spearman']:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "correlation": overall}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
