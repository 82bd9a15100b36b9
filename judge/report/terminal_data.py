"""The terminal tables of the data and model commands (validate, search-eval, retrieval, align, rater agreement;
families, ping, doctor). Commands compute; these functions only draw.
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from judge.report.console import console, fmt, say


def validation(rep: dict) -> None:
    c = console()
    t = Table(title=f"{rep['file']} ({rep['format']})", show_header=False)
    for key in ("records", "claims", "spans", "spans_verified", "rating_entries"):
        t.add_row(key, str(rep[key]))
    t.add_row("genres", ", ".join(f"{k} {v}" for k, v in rep["genres"].items()) or "-")
    t.add_row("difficulties", ", ".join(f"{k}: {v}" for k, v in rep["difficulties"].items()) or "-")
    if rep["rating_entries"]:  # a file without human ratings (an answers file) has no agreement to show
        t.add_row("perfect agreement (records)", fmt(rep["perfect_agreement"]))
        t.add_row("alpha, ordinal, pooled", fmt(rep["alpha_pooled"]))
        for dim, value in rep["alpha_by_dimension"].items():
            t.add_row(f"  alpha {dim}", fmt(value))
    sid = rep["sentence_ids"]
    t.add_row("sentence_id agrees with our segmentation", f"{sid['agree']} of {sid['stated']} (information)")
    for key in ("answers_by_model", "gold_labels"):
        if key in rep:
            t.add_row(key, ", ".join(f"{k} {v}" for k, v in rep[key].items()))
    t.add_row("errors", str(len(rep["errors"])))
    c.print(t)
    if "repairs" in rep:
        found = sum(1 for r in rep["repairs"] if r["new"])
        c.print(f"repairs proposed: {found} of {len(rep['repairs'])} broken spans")
        for r in rep["repairs"]:
            target = f"[{r['new'][0]}, {r['new'][1]}) by {r['method']} ({r['score']:.2f})" if r["new"] else "not found"
            c.print(f"  {r['record_id']} {r['field']}: [{r['old'][0]}, {r['old'][1]}) -> {target}", markup=False, soft_wrap=True)
    if "repairs_written" in rep:
        w = rep["repairs_written"]
        c.print(f"wrote {w['path']} with {w['applied']} spans repaired", markup=False)


def search_eval(rep: dict, path: Path, k: int) -> None:
    metrics = [m for m in rep["overall"] if m not in ("claims", "spans")]
    t = Table(title=f"search-eval {path} (k={k}, {rep['overall']['claims']} claims, {rep['overall']['spans']} spans)")
    t.add_column("group")
    for m in metrics:
        t.add_column(m, justify="right")
    t.add_row("judge.search", *(fmt(rep["overall"][m]) for m in metrics))
    t.add_row("plain BM25", *(fmt(rep["baseline_overall"][m]) for m in metrics))
    t.add_row("ratio", *(fmt(rep["ratio_to_baseline"][m]) for m in metrics))
    for g, row in rep["by_group"].items():
        t.add_row(f"{g} ({row['claims']})", *(fmt(row[m]) for m in metrics))
    c = console()
    c.print(t)
    c.print(f"{rep['found_rule']}; search time {rep['seconds']:.2f} s (indexing included)", soft_wrap=True)
    if "budget" in rep:
        o = rep["offered"]
        c.print(
            f"top-{k} offers {o['ours']['sentences_per_claim']} sentences, {o['ours']['tokens_per_claim']} tokens per claim "
            f"({o['ours']['share_of_source']:.3f}x the source); hit {fmt(o['ours']['hit'])} against plain BM25 given the same "
            f"sentences {fmt(o['plain_same_sentences']['hit'])}", soft_wrap=True)
        b = Table(title=f"hit within a token budget (source: {rep['source_tokens_per_claim']} tokens per claim)")
        for col in ("budget", "x source", "hit", "span recall", "sentences", "BM25 same sentences", "ratio", "BM25 same tokens", "ratio"):
            b.add_column(col, justify="right")
        for row in rep["budget"]:
            ours = row["ours"]
            b.add_row(str(row["budget_tokens"]), f"{ours['share_of_source']:.3f}", fmt(ours["hit"]), fmt(ours["span_recall"]),
                      str(ours["sentences_per_claim"]), fmt(row["plain_same_sentences"]["hit"]), fmt(row["ratio_same_sentences"]),
                      fmt(row["plain_same_tokens"]["hit"]), fmt(row["ratio_same_tokens"]))
        c.print(b)


def retrieval(rep: dict, bench_dir: Path) -> None:
    from judge.metrics.retrieval import retrieval_notes, retrieval_tables

    c = console()
    for t in retrieval_tables(rep, str(bench_dir)):
        c.print(t)
    for n in retrieval_notes(rep):
        c.print(n, markup=False)


def aligned(rep: dict) -> None:
    rate = f"{rep['rate']:.2%}" if rep["rate"] is not None else "n/a"
    say(f"kept {rep['kept']} of {rep['total']} rows ({rate}); dropped {rep['dropped']}: {rep['reasons']}; "
        f"matched by {rep['match_branches']}; title-suffix fallbacks {rep['suffix_fallbacks']}; wrote {rep['out']}")


def rater_agreement(rep: dict) -> None:
    t = Table(title=f"{rep['name']}: {rep['items']} items, {rep['annotators']} annotators, scale {rep['scale'][0]}-{rep['scale'][-1]}")
    for col in ("dimension", "alpha (ordinal)", "perfect agreement (units)"):
        t.add_column(col)
    for d in rep["dimensions"]:
        t.add_row(d, fmt(rep["alpha_by_dimension"][d]), fmt(rep["perfect_agreement_by_dimension"][d]))
    t.add_row("pooled", fmt(rep["alpha_pooled"]), fmt(rep["perfect_agreement_units"]))
    c = console()
    c.print(t)
    c.print(f"perfect agreement over items (all dimensions): {fmt(rep['perfect_agreement'])} ({rep['perfect_agreement_items']} of {rep['items']})", markup=False)
    for note in rep["notes"]:
        c.print(f"note: {note}", markup=False, soft_wrap=True)


def families(out: dict, config: Path | None) -> None:
    t = Table(title="model families (first matching pattern wins; then the provider prefix)")
    t.add_column("pattern on a model name")
    t.add_column("family")
    for row in out["patterns"]:
        t.add_row(row["pattern"], row["family"])
    for provider, family in out["providers"].items():
        t.add_row(f"provider {provider}/...", family)
    c = console()
    c.print(t)
    if "models" in out:
        m = Table(title=str(config))
        for col in ("name", "model", "family"):
            m.add_column(col)
        for name, row in out["models"].items():
            m.add_row(name, row["model"], row["family"] + (" (override)" if row["override"] else ""))
        c.print(m)


def ping(name: str, out: dict) -> None:
    answer, record, cache = out["answer"], out["call"], out["cache"]
    c = console()
    c.print(f"{name} ({record['model_id']}, family {record['family']}): {answer['label']}: {answer['rationale']}", markup=False, soft_wrap=True)
    cost = "unknown" if record["cost_usd"] is None else f"${record['cost_usd']:.6f}"
    c.print(
        f"cached: {record['cached']}; attempts {record['attempts']}; tokens {record['prompt_tokens']} + {record['completion_tokens']}; "
        f"cost {cost}; {record['latency_s']:.2f} s; cache hits {cache['hits']}, misses {cache['misses']}",
        soft_wrap=True,
    )


def doctor(out: dict) -> None:
    c = console()
    inst = out["installed"]
    c.print(f"python {inst['python']}; " + ", ".join(f"{k} {v or 'not installed'}" for k, v in inst["packages"].items()),
            soft_wrap=True, markup=False)
    t = Table(title=f"models of {out['models_file']}")
    for col in ("name", "model", "usable", "why not"):
        t.add_column(col, overflow="fold")
    for m in out["models"]:
        t.add_row(m["name"], m["model"], "yes" if m["problem"] is None else "no", m["problem"] or "")
    c.print(t)
