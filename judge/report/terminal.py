"""The terminal: every table and line the command line prints (rich), and the progress bar of a run.

Commands compute; these functions only draw what they are given. Numbers are written by report.format.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from judge.report.format import fmt as _fmt_places
from judge.report.format import fmt_ci
from judge.text.control import defuse
from judge.verdicts import VERDICT_LABELS


def fmt(x) -> str:
    return _fmt_places(x, 4)


class _DataConsole(Console):
    """A console for data: never markup, never control sequences (judge.text.control)."""

    def render_str(self, text: str, **kwargs):
        return super().render_str(defuse(text), **kwargs)


def console(stderr: bool = False) -> Console:
    return _DataConsole(highlight=False, markup=False, stderr=stderr)  # data (model names, genres, ids) is never markup


def print_json(obj) -> None:
    """``obj`` as indented JSON, written piece by piece (a scores dict's per_answer rows are read back from disk)."""
    from judge.jsonstream import json_parts

    write = getattr(sys.stdout, "write_json", sys.stdout.write)  # the CLI's masked stdout masks strings, never numbers
    for part in json_parts(obj):
        write(part)


def pretty_json(obj) -> None:
    console().print_json(json.dumps(obj))


def problems(lines) -> None:
    """One line per problem, on stderr."""
    for p in lines:
        sys.stderr.write(defuse(f"{p}") + "\n")


def say(text: str) -> None:
    console().print(text, markup=False, soft_wrap=True)


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


class Progress:
    """A rich progress bar: records, claims, model calls, cache hits, tokens, cost and ETA."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.claims = self.calls = self.hits = self.tokens = 0
        self.cost = 0.0
        self.bar = None

    def start(self, total: int, done: int) -> None:
        if not self.enabled:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as Bar

        self.bar = Bar(
            TextColumn("records"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"), TimeRemainingColumn(),
            console=console(stderr=True),
        )
        self.task = self.bar.add_task("run", total=total, completed=done, stats="")
        self.bar.start()

    def advance(self, result) -> None:
        self.claims += sum(len(a.claims) for a in result.answers)
        u = result.usage
        self.calls += u.calls
        self.hits += u.cache_hits
        self.tokens += u.prompt_tokens + u.completion_tokens
        self.cost += u.cost_usd
        if self.bar is not None:
            stats = f"claims {self.claims} | calls {self.calls} | cache hits {self.hits} | tokens {self.tokens} | ${self.cost:.4f}"
            self.bar.update(self.task, advance=1, stats=stats)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def not_grounded(value: dict | None, where: str) -> None:
    """The not-grounded claims, most severe first, capped (judge.scoring.ungrounded builds the list)."""
    from judge.scoring.ungrounded import TERMINAL_CAP, NotGrounded, passage_text, summary_line

    if value is None:
        return
    ng = NotGrounded.model_validate(value)
    c = console()
    c.print(summary_line(ng) + (":" if ng.total else ""), markup=False, soft_wrap=True)
    for x in ng.claims[:TERMINAL_CAP]:
        c.print(f"  {x.label.upper()}  {x.record_id} / {x.model}: {x.text}", markup=False, soft_wrap=True)
        c.print(f"      passage: {passage_text(x.passage)}", markup=False, soft_wrap=True)
        if x.rationale:
            c.print(f"      why: {x.rationale}", markup=False, soft_wrap=True)
        if x.flags:
            c.print(f"      checks: {'; '.join(x.flags)}", markup=False, soft_wrap=True)
    more = ng.total - min(len(ng.claims), TERMINAL_CAP)
    if more > 0:
        c.print(f"  {more} more not shown: {where}", markup=False, soft_wrap=True)


def summary(s: dict) -> None:
    t = Table(title=f"{s['run_dir']}  ({s['records']} records, {s['answers']} answers)")
    t.add_column("model under test", overflow="fold")
    for col in ("claims", "S/P/U/C/E", "faithful", "halluc."):
        t.add_column(col, justify="right", no_wrap=True)
    rows = list(s["by_model"].items()) + [("all", s["overall"])]
    t.caption = (
        "S supported, P partially supported, U unsupported, C contradicted, E judge error; faithfulness = "
        "(S + 0.5 P) / judged claims; hallucination = (U + C) / judged claims"
    )
    for model, r in rows:
        counts = "/".join(str(r["labels"][k]) for k in VERDICT_LABELS)
        t.add_row(model, str(r["claims"]), counts, fmt(r["faithfulness"]), fmt(r["hallucination_rate"]))
    if len(s.get("by_judge", {})) > 1:  # a panel: each judge's own labels, so that one judge's errors show (issue 17.10)
        t.add_section()
        for judge, r in s["by_judge"].items():
            counts = "/".join(str(r["labels"][k]) for k in VERDICT_LABELS)
            t.add_row(f"judge {judge}", str(r["claims"]), counts, fmt(r["faithfulness"]), fmt(r["hallucination_rate"]))
    from judge.controls.health import HealthReport

    c = console()
    health = HealthReport.model_validate(s["judge_health"]) if s.get("judge_health") else None
    if health is not None:  # whether the judges can be trusted comes before their numbers
        c.print(health.headline(), soft_wrap=True, markup=False)
    if s.get("unknown_family_answer_models"):
        from judge.llm.families import UNKNOWN_FAMILY_HINT

        c.print(f"WARNING: cannot tell the model family of the recorded answers of {', '.join(s['unknown_family_answer_models'])}: "
                f"the cross-family rule is not checked for them ({UNKNOWN_FAMILY_HINT})", soft_wrap=True, markup=False)
    not_grounded(s.get("not_grounded"), f"{s['run_dir']}/report.md, report.html (top, and every claim under Records)")
    c.print(t)
    if health is not None and health.judges:
        gate = f" (gate: recall >= {health.floor:.2f} on every label, {health.confidence:.0%} lower bound)" if health.gate and health.enabled else " (not gated)"
        c.print(f"judge health on control claims{gate}:", soft_wrap=True, markup=False)
        for line in health.lines():
            c.print(f"  {line}", soft_wrap=True, markup=False)
    u = s["usage"]
    run = s.get("run", {})
    cost = f"${u['cost_usd']:.4f}" + (f" (+{u['unknown_cost_calls']} calls of unknown price)" if u["unknown_cost_calls"] else "")
    c.print(
        f"judges: {', '.join(s['judges'])}; claims triaged: {s['claims_triaged']}; model calls {u['calls']} "
        f"(errors {u['errors']}), cache hits {u['cache_hits']}, tokens {u['prompt_tokens']} + {u['completion_tokens']}, cost {cost}",
        soft_wrap=True, markup=False,
    )
    if s.get("outcome"):
        from judge.runs.outcome import Outcome

        for e in Outcome.model_validate(s["outcome"]).errors:  # the cause, not only a count
            c.print(f"errors: {e.line()}", soft_wrap=True, markup=False)
    for note in s.get("notes", []):
        c.print(note, soft_wrap=True, markup=False)
    if s.get("same_family_clashes"):
        c.print("same-family judging (allowed by allow_same_family): " + "; ".join(s["same_family_clashes"]), soft_wrap=True, markup=False)
    if s.get("scores") is not None:
        c.print(f"reports: {s['run_dir']}/report.md, report.html, scores.json", soft_wrap=True, markup=False)
    if run and not run.get("complete", True):
        c.print(f"incomplete: {run['records_finished']}/{run['records_selected']} records ({run.get('stopped_early')}); finish with --resume", soft_wrap=True, markup=False)


def compare(result: dict) -> None:
    c = console()
    t = Table(title=f"B - A over {result['records_compared']} records (A {result['run_a']}, B {result['run_b']})")
    for col in ("metric", "A", "B", "delta", "records worse/better/same", "sign test p", "95% CI (bootstrap)"):
        t.add_column(col)
    for name, m in result["metrics"].items():
        r = m.get("records") or {}
        counts = f"{r['worse']}/{r['better']}/{r['ties']}" if r else "-"
        t.add_row(name, fmt(m["a"]), fmt(m["b"]), f"{m['delta']:+.4f}", counts, fmt(r.get("p_value")), fmt_ci(m["ci95"], 4, signed=True))
    c.print(t)
    if result["note"]:
        c.print(result["note"], markup=False, soft_wrap=True)
    _claim_changes(c, f"{_claims(result['flips'])} whose verdict flipped", result["flips"])
    claims = result.get("claims") or {}
    _claim_changes(c, f"{_claims(claims.get('newly_ungrounded', []))} newly ungrounded in B", claims.get("newly_ungrounded", []), why=True)
    _claim_changes(c, f"{_claims(claims.get('worsened', []))} not grounded in both and worse in B", claims.get("worsened", []), why=True)
    _claim_changes(c, f"{_claims(claims.get('fixed', []))} fixed in B (ungrounded in A; supported or gone in B)", claims.get("fixed", []))
    for key, run in (("only_a", "A"), ("only_b", "B")):
        if claims.get(key):
            c.print(f"{_claims(claims[key])} only in run {run} (no claim of the other run matched)", markup=False, soft_wrap=True)
    for g in result["gates"]:  # the claims are in the tables above: each gate's own line (--json has the full reason)
        c.print(("FAIL " if g["failed"] else "ok   ") + f"{g['gate']}: {g.get('summary') or g['why']}", markup=False, soft_wrap=True)
    if result.get("failed"):
        c.print(f"run B: {result['run_b']}; report: {Path(result['run_b']) / 'report.html'}", markup=False, soft_wrap=True)


CLAIM_ROWS = 20  # rows of a claim table in the terminal (--json has them all)


def _claims(rows: list) -> str:
    return f"{len(rows)} claim" + ("" if len(rows) == 1 else "s")


def _claim_changes(c: Console, title: str, rows: list[dict], why: bool = False) -> None:
    """A table of changed claims, labels never cut (the claim text folds), capped with a count; ``why``: with
    the reason and best passage of B's verdict."""
    if not rows:
        return
    t = Table(title=title + (f" (first {CLAIM_ROWS}; --json lists all)" if len(rows) > CLAIM_ROWS else ""))
    t.add_column("record", overflow="fold")
    t.add_column("model", overflow="fold")
    t.add_column("claim", overflow="fold", ratio=1)
    t.add_column("A", no_wrap=True)
    t.add_column("B", no_wrap=True)
    if why:
        t.add_column("reason; passage", overflow="fold", ratio=1)
    for x in rows[:CLAIM_ROWS]:
        cells = [x["record_id"], x["model"], x["claim"], x["a"] or "-", x["b"] or "-"]
        if why:
            cells.append("; ".join(v for v in (x.get("reason"), x.get("passage")) if v) or "-")
        t.add_row(*(Text(str(v)) for v in cells))
    c.print(t)


def agreement(rep: dict, written: list[Path]) -> None:
    c = console()
    t = Table(title="pairwise agreement")
    for col in ("judge a", "judge b", "claims", "kappa", "alpha (nominal)"):
        t.add_column(col)
    for p in rep["pairwise"]:
        t.add_row(p["a"], p["b"], str(p["claims"]), fmt(p["cohen_kappa"]), fmt(p["alpha_nominal"]))
    c.print(t)
    j = Table(title="per judge")
    for col in ("judge", "family", "claims", "accuracy vs gold", "accuracy on controls", "calls", "cost $", "latency s"):
        j.add_column(col)
    for name, v in rep["per_judge"].items():
        ctl = v.get("controls") or {}
        on_controls = f"{fmt(ctl['accuracy'])} of {ctl['n']}" + (f", {ctl['status']}" if ctl.get("status") else "") if ctl.get("n") else "n/a"
        j.add_row(name, str(v["family"]), str(v["claims"]), fmt((v["vs_gold"] or {}).get("accuracy")), on_controls, str(v["calls"]), fmt(v["cost_usd"]), fmt(v["mean_latency_s"]))
    c.print(j)
    for name, v in rep["per_judge"].items():  # each judge's controls by kind (a changed number, a negation, another record's claim...)
        kinds = (v.get("controls") or {}).get("by_kind") or {}
        if kinds:
            c.print(f"controls of {name} by kind: " + ", ".join(f"{k} {r['correct']}/{r['controls']}" for k, r in kinds.items()), markup=False, soft_wrap=True)
    if rep.get("triaged_claims"):
        c.print(f"{_claims(range(rep['triaged_claims']))} settled by triage (verbatim, no judge call) are left out of every judge's numbers",
                markup=False, soft_wrap=True)
    for p in rep["self_preference"]:
        if p["own_family_answers"]:
            c.print(f"self-preference of {p['judge']} ({p['family']}): {p['self_preference']:+.3f} over {p['own_family_answers']} answers", markup=False)
    split = rep.get("disagreements") or []
    c.print(f"{_claims(split)} on which the judges disagree" + (":" if split else ""), markup=False, soft_wrap=True)
    for d in split[:CLAIM_ROWS]:
        c.print(f"  {d['record_id']} / {d['model']}: {d['claim']}", markup=False, soft_wrap=True)
        for judge, v in d["judges"].items():
            c.print(f"      {judge}: {v['label']}" + (f": {v['rationale']}" if v["rationale"] else ""), markup=False, soft_wrap=True)
    if len(split) > CLAIM_ROWS:
        c.print(f"  {len(split) - CLAIM_ROWS} more: every one is in {written[0]}", markup=False, soft_wrap=True)
    c.print("written: " + ", ".join(map(str, written)), markup=False, soft_wrap=True)


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


def scores(scores: dict, run_dir: Path) -> None:
    """The score sections as tables (the same blocks as report.md and report.html)."""
    from judge.scoring import blocks

    c = console()
    c.print(f"{scores.get('name') or 'run'}: judges {', '.join(scores.get('judges', []))}; {scores.get('records')} records", markup=False, soft_wrap=True)
    for key, block in blocks(scores):
        if key == "not_grounded":
            not_grounded(scores.get(key), f"{run_dir / 'report.md'}, {run_dir / 'report.html'}")
            continue
        if block.text:
            c.print(f"{block.title}: {block.text}", markup=False, soft_wrap=True)
        for i, t in enumerate(block.tables):
            table = Table(title=block.title if i == 0 else t.title, caption=t.note)
            for h in t.headers:
                table.add_column(h, overflow="fold")
            for row in t.rows:
                table.add_row(*(fmt(v) for v in row))
            c.print(table)
    c.print(f"written: {run_dir / 'scores.json'}, {run_dir / 'report.md'}, {run_dir / 'report.html'}", markup=False, soft_wrap=True)


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
