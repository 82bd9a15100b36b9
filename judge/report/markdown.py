"""report.md: the run's score sections as Markdown tables (for a PR comment or a CI log), led by the claims.
Every string from data or a config goes through :func:`md`, so a ``<script>`` in a model name stays text and a
``|`` cannot open a table cell.
"""

from __future__ import annotations

import re

from judge.report.format import fmt, fmt_ci, prompts_line
from judge.report.glossary import ABSENT_TITLE, GLOSSARY
from judge.scoring import blocks
from judge.scoring.health import JudgeHealth
from judge.text.control import one_line
from judge.verdicts import NOT_GROUNDED, unsure_line

_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def md(text) -> str:
    """Data as inert Markdown: HTML metacharacters as entities, Markdown markup backslash-escaped, one line."""
    s = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # a line break in data shown as ⏎
    return _SPECIAL.sub(r"\\\1", s)


def _cell(v) -> str:
    return md(v) if isinstance(v, str) else fmt(v)


def _table(headers: list[str], rows: list[list]) -> list[str]:
    return ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)] + ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]


def marked(pieces: list[dict]) -> str:
    """An answer with the claim's pieces in bold (data escaped; the bold markers go inside any spaces at a
    piece's edges, where Markdown would not see them)."""
    out = []
    for p in pieces:
        text = md(p["text"])
        if p.get("claim") and text.strip():
            lead, core, trail = text[: len(text) - len(text.lstrip())], text.strip(), text[len(text.rstrip()):]
            text = f"{lead}**{core}**{trail}"
        out.append(text)
    return "".join(out)


def _in_answers(value: dict | None) -> list[str]:
    """Under the not-grounded table: each claim in the answer it comes from, numbered as the table's rows."""
    claims = (value or {}).get("claims") or []
    if not claims:
        return []
    lines = ["", "Each claim in its answer (the claim in bold):", ""]
    for n, c in enumerate(claims, 1):
        where = "" if c.get("located", True) else " (its words were not found in the answer)"
        lines.append(f"{n}. {md(c['label'].replace('_', ' '))}, {md(c['record_id'])} · {md(c['model'])}{where}: {marked(c.get('answer') or [])}")
    return lines


def answers_claims(value: dict | None, where: str = "report.html") -> list[str]:
    """The first answers of the run, each with its claims and their labels (judge.scoring.first_claims), then a
    count of the rest: on every report.md, whether or not a claim is not grounded."""
    if value is None:
        return []
    from judge.scoring.first_claims import FirstClaims, FirstClaimsSection

    fc = FirstClaims.model_validate(value)
    lines = ["", f"## {FirstClaimsSection.title}", "", fc.lead_line()]
    for a in fc.answers:
        lines += ["", f"**{md(a.record_id)} · {md(a.model)}** ({md(a.count_line())})", ""]
        lines += [f"- **{md(c.label)}**: {md(c.text)}" for c in a.claims] or [f"- {md(a.no_claims_line())}"]
    if more := fc.more_line(where):
        lines += ["", md(more)]
    return lines


def _absent(collapsed: list[tuple[str, str]]) -> list[str]:
    """Sections with nothing to say for this run, a line each (what is absent), after the sections that have."""
    if not collapsed:
        return []
    return ["", f"## {ABSENT_TITLE}", ""] + [f"- **{md(title)}**: {md(text)}" for title, text in collapsed]


def glossary() -> list[str]:
    return ["", "## Glossary", ""] + [f"- **{md(term)}**: {md(gloss)}" for term, gloss in GLOSSARY.items()]


def render(scores: dict) -> str:
    lines = [f"# judge report: {md(scores.get('name') or 'run')}", "",
             f"Run {md(scores.get('run_dir'))}; judges: {md(', '.join(scores.get('judges', [])))}; {scores.get('records')} records. "
             "Terms are explained in the Glossary at the end."]
    if headline := JudgeHealth.headline(scores.get(JudgeHealth.key)):
        lines += ["", f"**{md(headline)}**"]
    for note in scores.get("notes") or []:
        lines += ["", f"**{md(note.split(':', 1)[0])}**" + (f": {md(note.split(':', 1)[1].strip())}" if ":" in note else "")]
    if scores.get("same_family_clashes"):
        lines += ["", "**Same-family judging** (allowed by the config): " + md("; ".join(scores["same_family_clashes"]))]
    if unsure := unsure_line(((scores.get("overall") or {}).get("labels")) or {}):
        lines += ["", f"**{md(unsure)}**"]
    collapsed, shown = [], blocks(scores)
    if all(key != "not_grounded" for key, _ in shown):
        lines += answers_claims(scores.get("first_claims"))
    for key, block in shown:
        if key != "not_grounded" and block.text and not block.tables and not block.lines:
            collapsed.append((block.title, block.text))
            continue
        lines += ["", f"## {md(block.title)}", ""]
        if block.text:
            lines += [md(block.text), ""]
        if block.lines:  # a sentence a line, never run together
            lines += [f"- {md(line)}" for line in block.lines] + [""]
        for i, t in enumerate(block.tables):
            if i:
                lines.append("")
            if t.title:
                lines += [md(t.title), ""]
            lines += _table(t.headers, t.rows)
            if t.note:
                lines += ["", md(t.note)]
        if key == "not_grounded":
            lines += _in_answers(scores.get(key))
            lines += answers_claims(scores.get("first_claims"))
    lines += _absent(collapsed)
    from judge.results import Usage

    u = Usage.model_validate(scores.get("usage") or {}).model_dump()  # numbers only (scores read it typed from summary.json): no markup
    if prompts := prompts_line(scores.get("prompts")):
        lines += ["", "## Prompts", "", md(prompts)]
    lines += ["", "## Cost", "", f"Model calls {u.get('calls', 0)} (errors {u.get('errors', 0)}), cache hits {u.get('cache_hits', 0)}, "
              f"tokens {u.get('prompt_tokens', 0)} + {u.get('completion_tokens', 0)}, cost ${u.get('cost_usd', 0):.4f}"
              + (f", wall time {scores['wall_seconds']:.1f} s" if scores.get("wall_seconds") else "") + "."]
    lines += glossary()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)) + "\n"  # one blank line between blocks (data never holds a line break: md)


def model_pairs_md(result: dict) -> str:
    """``judge compare --model-a/--model-b --md``: the two models' rates with intervals and their paired difference."""
    from judge.scoring.models import ModelComparison, as_comparison

    block = ModelComparison.block(as_comparison(result), {})
    lines = [f"# judge compare: {md(result['model_a'])} against {md(result['model_b'])}", "",
             f"A: {md(result['model_a'])} of {md(result['run_a'])}; B: {md(result['model_b'])} of {md(result['run_b'])}."]
    for t in block.tables:
        lines += [""] + ([md(t.title), ""] if t.title else []) + _table(t.headers, t.rows) + (["", md(t.note)] if t.note else [])
    return "\n".join(lines) + "\n"


def judges_lines(result: dict) -> list[str]:
    """How far the comparison's judges are to be trusted, and how changed verdicts were confirmed."""
    out = []
    verified = result.get("judges_verified") or {}
    if verified:
        out.append("Judges verified on their controls: " + ", ".join(f"run {k.upper()} {'yes' if v else 'NO'}" for k, v in verified.items()) + ".")
    conf = result.get("confirmation")
    if conf and conf.get("not_reasked"):
        out.append(f"Changed verdicts not re-asked: {conf['not_reasked']}.")
    elif conf:
        claims = conf.get("claims") or []
        counted = sum(1 for c in claims if c["side"] == "b" and c["label"] in NOT_GROUNDED)
        usage = conf.get("usage") or {}
        out.append(f"Changed verdicts re-asked {conf['samples']} or more times each ({len(claims)} claims, judges {', '.join(conf.get('judges') or []) or 'none'}; "
                   f"noise floor {conf['floor']:.3f} from {conf.get('floor_from') or 'the default'}; {usage.get('calls', 0)} calls, "
                   f"{usage.get('cache_hits', 0)} cached): {counted} of B's held, the rest were the judge's noise.")
        for line in ([usage["stopped"]] if usage.get("stopped") else []) + list(usage.get("refused_passages") or []):
            out.append(md(f"Re-asks: {line}."))  # a spent budget, a forged passage: said, never silent
    return out


def compare(result: dict, rows: int = 50) -> str:
    """``judge compare --md`` (and ``judge run --baseline --md``), for a PR comment: the verdict first (passed or
    failed, which gate and why, what to do), then the judges, the paired deltas, the claim-level differences."""
    v = result.get("verdict") or {}
    lines = [f"# judge compare: {md(v.get('line') or ('FAIL' if result.get('failed') else 'PASS'))}", ""]
    lines += [f"- **{md(line.split(': ', 1)[0])}**: {md(line.split(': ', 1)[1]) if ': ' in line else ''}" for line in v.get("gates", [])]
    lines += ["", f"B - A over {result['records_compared']} records: A {md(result['run_a'])}; B {md(result['run_b'])}."]
    lines += [md(line) for line in judges_lines(result)]
    if result.get("note"):
        lines += ["", md(result["note"])]
    def records(m):
        r = m.get("records") or {}
        return (f"{r['worse']}/{r['better']}/{r['ties']}", fmt(r["p_value"], 4)) if r else ("-", "-")

    lines += ["", "Rates are per record, paired (a record counts where both runs have its rate); delta = mean of B - A over those records.", ""]
    lines += _table(["metric", "A", "B", "delta", "records worse/better/same", "sign test p", "95% CI (bootstrap)"],
                           [[name, fmt(m["a"], 4), fmt(m["b"], 4), f"{m['delta']:+.4f}", *records(m), fmt_ci(m["ci95"], 4, signed=True)]
                            for name, m in result["metrics"].items()])
    corrected = [[level, model, metric.replace("_", " "), fmt(d["a"], 3), fmt(d["b"], 3), f"{d['delta']:+.3f}", fmt_ci(d["ci95"], 3, signed=True)]
                 for level, models in ((result.get("corrected") or {}).get("levels") or {}).items()
                 for model, metrics in models.items() for metric, d in metrics.items()]
    if corrected:  # human labels on both runs (judge.scoring.corrected_compare)
        lines += ["", "## Corrected by human labels (PPI++)", ""] + _table(["level", "model", "metric", "A", "B", "B - A", "95% interval"], corrected)
    if result["gates"]:
        lines += ["", "## Gates", ""] + [f"- **{'FAIL' if g['failed'] else 'ok'}** {md(g['gate'])}: {md(g['why'])}" for g in result["gates"]]
    claims = result.get("claims") or {}
    for title, items in (("Newly ungrounded in B", claims.get("newly_ungrounded", [])), ("Worse in B", claims.get("worsened", [])),
                         ("Fixed in B", claims.get("fixed", [])),
                         ("Verdict flips", result.get("flips", []))):
        if items:
            lines += ["", f"## {title} ({len(items)})", ""] + _table(
                ["record", "model", "claim", "A", "B", "reason; passage"],
                [[c["record_id"], c["model"], c["claim"], c["a"] or "-", c["b"] or "-", "; ".join(v for v in (c.get("reason"), c.get("passage")) if v) or "-"]
                 for c in items[:rows]])
            if len(items) > rows:
                lines += ["", f"{len(items) - rows} more: judge compare --json lists all."]
    for key, run in (("only_a", "A"), ("only_b", "B")):
        if claims.get(key):
            lines += ["", f"{len(claims[key])} claims only in run {run}."]
    asked = (result.get("confirmation") or {}).get("claims") or []
    if asked:
        lines += ["", f"## Changed verdicts re-asked ({len(asked)})", ""] + _table(
            ["run", "record", "model", "claim", "verdict", "re-asks", "not grounded / answered", "p (noise)", "counts as"],
            [[c["side"].upper(), c["record_id"], c["model"], c["claim"], c["original"], ", ".join(f"{k} {v}" for k, v in c["votes"].items()),
              f"{c['not_grounded']}/{c['answered']}", "-" if c["p_value"] is None else fmt(c["p_value"], 4),
              c["label"] + ("" if c["decided"] else " (undecided: too few re-asks for the noise floor)")] for c in asked[:rows]])
    return "\n".join(lines) + "\n"
