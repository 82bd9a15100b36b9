"""The terminal tables of a run: its summary, the not-grounded claims, the score sections, compare and judge
agreement (rich, on judge.report.console). Commands compute; these functions only draw.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from judge.report.console import ID, console, data, fmt
from judge.report.format import fmt_ci
from judge.report.glossary import GLOSSARY
from judge.verdicts import INFO, letters, shown_labels, unsure_line

# Where the terms of the lines above are explained, a line each (judge.report.glossary; a renamed term fails here)
GLOSSARY_POINTER = ("terms (" + ", ".join(t for t in ("faithfulness", "triage", "free verdicts", "evidence ceiling", "control claims") if GLOSSARY[t])
                    + ", ...): explained in the Glossary at the end of report.md and report.html")


def sentence(text: str) -> str:
    """A line that says something ends as a sentence does (a first line without its full stop reads as cut)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?:" else text + "."


def not_grounded(value: dict | None, where: str) -> None:
    """The not-grounded claims, most severe first, capped (judge.scoring.ungrounded builds the list)."""
    from judge.scoring.ungrounded import TERMINAL_CAP, NotGrounded, passage_text, summary_line

    if value is None:
        return
    ng = NotGrounded.model_validate(value)
    c = console()
    c.print(summary_line(ng) + (":" if ng.total else ""), markup=False, soft_wrap=True)
    for x in ng.claims[:TERMINAL_CAP]:  # data one line each, cut (a 5 MB claim is in report.html, not on the terminal)
        c.print(f"  {x.label.upper()}  {data(x.record_id, ID)} / {data(x.model, ID)}: {data(x.text)}", markup=False, soft_wrap=True)
        c.print(f"      passage: {data(passage_text(x.passage))}", markup=False, soft_wrap=True)
        if x.rationale:
            c.print(f"      why: {data(x.rationale)}", markup=False, soft_wrap=True)
        if x.flags:
            c.print(f"      checks: {data('; '.join(x.flags))}", markup=False, soft_wrap=True)
        if x.rulings:
            c.print(f"      judges: {data('; '.join(x.rulings))}", markup=False, soft_wrap=True)
    more = ng.total - min(len(ng.claims), TERMINAL_CAP)
    if more > 0:
        c.print(f"  {more} more not shown: {where}", markup=False, soft_wrap=True)


def summary(s: dict) -> None:
    t = Table(title=f"{s['run_dir']}  ({s['records']} records, {s['answers']} answers)")
    t.add_column("model under test", overflow="fold")
    rows = list(s["by_model"].items()) + [("all", s["overall"])]
    judges = s.get("by_judge", {}) if len(s.get("by_judge", {})) > 1 else {}  # a panel: each judge's own labels (issue 17.10)
    shown = shown_labels(*(r["labels"] for _, r in rows), *(r["labels"] for r in judges.values()))
    for col in ("claims", letters(shown), "faithful", "halluc."):
        t.add_column(col, justify="right", no_wrap=True)
    t.caption = (
        ", ".join(f"{INFO[k].letter} {k.replace('_', ' ')}" for k in shown) + "; faithfulness = "
        "(S + 0.5 P) / judged claims; hallucination = (U + C) / judged claims"
    )
    for model, r in rows:
        counts = "/".join(str(r["labels"].get(k, 0)) for k in shown)
        t.add_row(model, str(r["claims"]), counts, fmt(r["faithfulness"]), fmt(r["hallucination_rate"]))
    if judges:
        t.add_section()
        for judge, r in judges.items():
            counts = "/".join(str(r["labels"].get(k, 0)) for k in shown)
            t.add_row(f"judge {judge}", str(r["claims"]), counts, fmt(r["faithfulness"]), fmt(r["hallucination_rate"]))
    from judge.controls.health import HealthReport

    c = console()
    health = HealthReport.model_validate(s["judge_health"]) if s.get("judge_health") else None
    if health is not None:  # whether the judges can be trusted comes before their numbers
        c.print(sentence(health.headline()), soft_wrap=True, markup=False)
    if s.get("unknown_family_answer_models"):
        from judge.llm.families import UNKNOWN_FAMILY_HINT

        c.print(f"WARNING: cannot tell the model family of the recorded answers of {data(', '.join(s['unknown_family_answer_models']))}: "
                f"the cross-family rule is not checked for them ({UNKNOWN_FAMILY_HINT})", soft_wrap=True, markup=False)
    # the claims not grounded first, each with its passage: what the tool is for; then the models ranked
    not_grounded(s.get("not_grounded"), f"{s['run_dir']}/report.md, report.html (top, and every claim under Records)")
    model_comparison(s.get("model_comparison"))
    c.print(t)
    if line := unsure_line(s["overall"]["labels"]):
        c.print(line, soft_wrap=True, markup=False)
    if health is not None and health.judges:
        gate = f" (gate: recall >= {health.floor:.2f} on every label, {health.confidence:.0%} lower bound)" if health.gate and health.enabled else " (not gated)"
        c.print(f"judge health on control claims{gate}:", soft_wrap=True, markup=False)
        for line in health.model_copy(update={"tells": None}).lines():  # the tells' AUC is the report's (judge health), not a line to act on
            c.print(f"  {line}", soft_wrap=True, markup=False)
    for line in free_lines(s):
        c.print(line, soft_wrap=True, markup=False)
    u = s["usage"]
    run = s.get("run", {})
    cost = "unknown (no price for these models)" if u["unknown_cost_calls"] and u["unknown_cost_calls"] >= u["calls"] else \
        f"${u['cost_usd']:.4f}" + (f" (+{u['unknown_cost_calls']} calls of unknown price)" if u["unknown_cost_calls"] else "")
    c.print(
        f"judges: {', '.join(s['judges'])}; claims triaged: {s['claims_triaged']}; model calls {u['calls']} "
        f"(errors {u['errors']}), cache hits {u['cache_hits']}, tokens {u['prompt_tokens']} + {u['completion_tokens']}, cost {cost}",
        soft_wrap=True, markup=False,
    )
    if s.get("unpriced_models"):
        from judge.llm.cost import PRICE_HINT

        c.print(f"no price known for {', '.join(s['unpriced_models'])}: their cost is reported as unknown; {PRICE_HINT}", soft_wrap=True, markup=False)
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
        c.print(GLOSSARY_POINTER, soft_wrap=True, markup=False)
    if run and not run.get("complete", True):
        c.print(f"incomplete: {run['records_finished']}/{run['records_selected']} records ({run.get('stopped_early')}); finish with --resume", soft_wrap=True, markup=False)


def model_comparison(value: dict | None) -> None:
    """Several models under test: each one's rates with intervals, every pair, the ranking (after the claims)."""
    from judge.scoring.models import ModelComparison

    block = ModelComparison.block(value, {})
    if block is None:
        return
    print_tables(console(), block)


def model_pairs(result: dict) -> None:
    """``judge compare --model-a/--model-b``: two models on the same records."""
    from judge.scoring.models import as_comparison

    model_comparison(as_comparison(result))
    console().print(f"A: {result['model_a']} of {result['run_a']}; B: {result['model_b']} of {result['run_b']}", markup=False, soft_wrap=True)


def free_lines(s: dict) -> list[str]:
    """Decomposition's drops and fallbacks, the free verdicts' share and precision, the evidence ceiling
    (issue 24.5): a line each, on every run, saying "not measured" where the data has no gold for it."""
    dropped = "; ".join(f"{r} {n}" for r, n in (s.get("claims_dropped_by_reason") or {}).items())
    lines = [f"decomposition: {s['overall']['claims']} claims, {s.get('claims_read_with_question', 0)} read with the question; "
             f"dropped {s.get('claims_dropped', 0)}" + (f" ({dropped})" if dropped else "")
             + f"; answers fallen back to sentences {s.get('decomposition_fallbacks', 0)}"]
    gold = s.get("scores") or {}
    free = gold.get("free_verdicts") or {}
    run = free.get("run")
    if run:
        line = (f"free verdicts: triage {run['triage']} of {run['claims']} claims ({fmt(run['triage_share'])}), no model call "
                f"{run['no_model_call']} ({fmt(run['no_model_call_share'])})")
        if free.get("triage"):
            line += (f"; precision against gold: triage {fmt(free['triage']['precision'])} ({free['triage']['settled']}), "
                     f"no model call {fmt(free['no_model_call']['precision'])} ({free['no_model_call']['settled']})")
        else:
            line += "; precision not measured (no gold claim labels)"
        lines.append(line)
        from judge.judges.deterministic import load_weights  # their precision as measured held out

        if note := load_weights().free_note():
            lines.append(note)
    ceiling = gold.get("evidence_ceiling")
    if "scores" in s and s["scores"] is not None:
        lines.append(f"evidence ceiling: {fmt(ceiling['ceiling'])} of {ceiling['claims']} gold-supported claims had their gold support offered"
                     if ceiling else "evidence ceiling: not measured (no gold support spans)")
    return lines


def compare(result: dict) -> None:
    from judge.report.markdown import judges_lines

    c = console()
    v = result.get("verdict") or {}
    if v.get("line"):  # the verdict first: passed or failed, which gate, why
        c.print(v["line"], markup=False, soft_wrap=True)
        for line in v.get("gates", []):
            c.print(f"  {line}", markup=False, soft_wrap=True)
    for line in judges_lines(result):
        c.print(line, markup=False, soft_wrap=True)
    t = Table(title=f"B - A over {result['records_compared']} records, paired per record (A {result['run_a']}, B {result['run_b']})")
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
    corrected = result.get("corrected") or {}
    if corrected and not corrected.get("available") and any(g.get("kind") == "bound" for g in result["gates"]):
        c.print(f"corrected rates: {corrected['why']}", markup=False, soft_wrap=True)
    for level, models in (corrected.get("levels") or {}).items():  # human labels on both runs (judge.scoring.corrected_compare)
        for model, metrics in models.items():
            for metric, d in metrics.items():
                c.print(f"corrected {level} {metric.replace('_', ' ')} ({model}): A {d['a']:.3f}, B {d['b']:.3f}, B - A {d['delta']:+.3f} "
                        f"{fmt_ci(d['ci95'], 3, signed=True)}", markup=False, soft_wrap=True)
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
        c.print(f"  {data(d['record_id'], ID)} / {data(d['model'], ID)}: {data(d['claim'])}" + (f" (gold: {data(d['gold'])})" if d.get("gold") else ""),
                markup=False, soft_wrap=True)
        for judge, v in d["judges"].items():
            c.print(f"      {data(judge, ID)}: {v['label']}" + (f": {data(v['rationale'])}" if v["rationale"] else ""), markup=False, soft_wrap=True)
    if len(split) > CLAIM_ROWS:
        c.print(f"  {len(split) - CLAIM_ROWS} more: every one is in {written[0]}", markup=False, soft_wrap=True)
    c.print("written: " + ", ".join(map(str, written)), markup=False, soft_wrap=True)


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
        for line in block.lines:  # a sentence a line, never run together
            c.print(f"  {line}", markup=False, soft_wrap=True)
        print_tables(c, block)
    c.print(f"written: {run_dir / 'scores.json'}, {run_dir / 'report.md'}, {run_dir / 'report.html'}", markup=False, soft_wrap=True)
    c.print(GLOSSARY_POINTER, markup=False, soft_wrap=True)


def print_tables(c, block) -> None:
    """A score block's tables, the first titled with the block's title."""
    for i, tb in enumerate(block.tables):
        t = Table(title=block.title if i == 0 else tb.title, caption=tb.note)
        for h in tb.headers:
            t.add_column(h, overflow="fold")
        for row in tb.rows:
            t.add_row(*(fmt(v) for v in row))
        c.print(t)
