"""report.md: the run's numbers as Markdown tables (for a PR comment or a CI log)."""

from __future__ import annotations

from judge.verdicts import PANEL, VERDICT_LABELS


def _fmt(v) -> str:
    if v is None:
        return "n/a"
    return f"{v:.3f}" if isinstance(v, float) else str(v).replace("|", "\\|")


def _table(headers: list[str], rows: list[list]) -> list[str]:
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)] + ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]


def render(scores: dict) -> str:
    lines = [f"# judge report: {scores.get('name') or 'run'}", "", f"Run `{scores.get('run_dir')}`; judges: {', '.join(scores.get('judges', []))}; {scores.get('records')} records.", ""]
    if scores.get("same_family_clashes"):
        lines += ["**Same-family judging** (allowed by the config): " + "; ".join(scores["same_family_clashes"]), ""]
    labels = VERDICT_LABELS
    lines += ["## Verdicts by model under test", ""]
    lines += _table(["model", "claims", *labels, "faithfulness", "hallucination rate"],
                    [[m, r["claims"], *(r["labels"][lbl] for lbl in labels), r["faithfulness"], r["hallucination_rate"]] for m, r in (scores.get("by_model") or {}).items()])
    for key, title in (("by_genre", "genre"), ("by_difficulty", "difficulty")):
        if scores.get(key):
            lines += ["", f"## Faithfulness by {title}", ""]
            lines += _table([title, "claims", "faithfulness", "hallucination rate"], [[k, r["claims"], r["faithfulness"], r["hallucination_rate"]] for k, r in scores[key].items()])
    if scores.get("by_judge"):
        lines += ["", "## Verdicts by judge", ""]
        lines += _table(["judge", "claims", *labels], [[j, r["claims"], *(r["labels"][lbl] for lbl in labels)] for j, r in scores["by_judge"].items()])
    if scores.get("gold_labels"):
        lines += ["", "## Against gold claim labels", ""]
        lines += _table(["judge", "claims", "accuracy", "macro-F1"], [[j, g["n"], g["accuracy"], g["macro_f1"]] for j, g in scores["gold_labels"].items()])
        panel = scores["gold_labels"].get(PANEL)
        if panel:
            cols = list(next(iter(panel["confusion"].values())).keys())
            lines += ["", "Confusion matrix of the panel (rows: gold, columns: predicted):", ""]
            lines += _table(["gold \\ predicted", *cols], [[g, *(row[c] for c in cols)] for g, row in panel["confusion"].items()])
            lines += ["", "Per label:", ""]
            lines += _table(["label", "precision", "recall", "F1", "support"], [[lbl, v["precision"], v["recall"], v["f1"], v["support"]] for lbl, v in panel["per_label"].items()])
        m = scores["claim_matching"]
        lines += ["", f"Claims matched to gold: {m['matched']}; unmatched predicted: {m['predicted']}; unmatched gold: {m['gold']}."]
    if scores.get("evidence"):
        e = scores["evidence"]
        lines += ["", "## Cited evidence against reference spans", ""]
        lines += _table(["claims", "precision", "recall", "F1", "IoU", "sentence hit rate"], [[e["claims"], e["precision"], e["recall"], e["f1"], e["iou"], e["sentence_hit_rate"]]])
    if scores.get("chunk_attribution"):
        c = scores["chunk_attribution"]
        lines += ["", "## Cited chunks against the qrels", ""]
        lines += _table(["answers", "cited chunks", "precision", "recall (relevant retrieved)", "recall (all relevant)"],
                        [[c["answers"], c["cited"], c["precision"], c["recall_of_retrieved_relevant"], c["recall_of_all_relevant"]]])
    human = scores.get("human") or {}
    lines += ["", "## The judge against human raters", ""]
    if "reason" in human:
        lines.append(f"Not computed: {human['reason']}.")
    else:
        ci = lambda c: f"[{c[0]:.3f}, {c[1]:.3f}]" if c else "n/a"  # noqa: E731
        lines += _table(["dimension", "items", "alpha judge", "95% CI", "alpha human ceiling", "95% CI", "Spearman rho"],
                        [[d, h["items"], h["alpha_judge"], ci(h.get("alpha_judge_ci95")), h["alpha_human_ceiling"], ci(h.get("alpha_human_ceiling_ci95")), h.get("spearman_rho")] for d, h in human.items()])
    u = scores.get("usage") or {}
    lines += ["", "## Cost", "", f"Model calls {u.get('calls', 0)} (errors {u.get('errors', 0)}), cache hits {u.get('cache_hits', 0)}, "
              f"tokens {u.get('prompt_tokens', 0)} + {u.get('completion_tokens', 0)}, cost ${u.get('cost_usd', 0):.4f}"
              + (f", wall time {scores['wall_seconds']:.1f} s" if scores.get("wall_seconds") else "") + "."]
    return "\n".join(lines) + "\n"
