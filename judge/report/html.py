"""report.html: one self-contained page (no network, no script), right-to-left where the text is.

Per record: the source with candidate spans and cited evidence highlighted (coloured by the verdict that
cites it), and each claim with every judge's verdict, rationale and check flags. Summary charts are inline
SVG. Every string that comes from a dataset or a model goes through ``html.escape``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from html import escape

from judge.models import Record
from judge.report.format import fmt
from judge.report.charts import LABEL_COLOURS, heatmap, stacked_labels, value_bars
from judge.results import RecordResult
from judge.scoring import Block, Table, blocks
from judge.verdicts import SEVERITY

RTL_LANGUAGES = ("Hebrew", "Arabic")

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","DejaVu Sans",sans-serif;margin:24px;max-width:1100px;color:#1b1b1b}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}
.num{text-align:right;font-variant-numeric:tabular-nums}
.source,.answer{white-space:pre-wrap;line-height:1.7;background:#fafafa;border:1px solid #e0e0e0;padding:10px;font-size:14px}
mark{padding:0 1px;border-radius:2px}mark.cand{background:#e3f2fd}
mark.supported{background:#c8e6c9}mark.partially_supported{background:#ffecb3}mark.unsupported{background:#eceff1}
mark.contradicted{background:#ffcdd2}mark.judge_error{background:#e1bee7}
.label{display:inline-block;padding:0 6px;border-radius:8px;color:#fff;font-size:12px}
.claim{border-left:4px solid #ccc;padding:4px 10px;margin:8px 0}
.flags{color:#b71c1c;font-size:12px}.muted{color:#666;font-size:12px}
details{margin:6px 0}summary{cursor:pointer}
.warn{background:#fff3e0;border:1px solid #ffb74d;padding:6px 10px}
"""


def _label(label: str) -> str:
    return f'<span class="label" style="background:{LABEL_COLOURS.get(label, "#999")}">{escape(label)}</span>'


def _fmt(v) -> str:
    return escape(fmt(v))


def highlighted(text: str, doc_id, cited: list[tuple[int, int, str]], candidates: list[tuple[int, int]]) -> str:
    """The text with candidate spans (light) and cited spans (by verdict) marked; all of it escaped."""
    cuts = {0, len(text)}
    for s, e, _ in cited:
        cuts.update((s, e))
    for s, e in candidates:
        cuts.update((s, e))
    points = sorted(c for c in cuts if 0 <= c <= len(text))
    out = []
    for a, b in zip(points, points[1:]):
        piece = escape(text[a:b])
        labels = [lbl for s, e, lbl in cited if s <= a and b <= e]
        if labels:
            worst = max(labels, key=lambda lbl: SEVERITY.get(lbl, 0))
            out.append(f'<mark class="{worst}" title="cited; {escape(worst)}">{piece}</mark>')
        elif any(s <= a and b <= e for s, e in candidates):
            out.append(f'<mark class="cand" title="candidate">{piece}</mark>')
        else:
            out.append(piece)
    return "".join(out)


def _record_section(r: RecordResult, record: Record | None) -> str:
    direction = "rtl" if r.language in RTL_LANGUAGES else "ltr"
    parts = [f'<section class="record" id="rec-{escape(r.record_id)}">',
             f"<h3>{escape(r.record_id)} <span class=\"muted\">{escape(r.genre or '')} {escape(str(r.difficulty) if r.difficulty is not None else '')} · {escape(r.language)}</span></h3>"]
    if r.question:
        parts.append(f'<p dir="{direction}" class="question"><b>{escape(r.question)}</b></p>')
    if record is not None:
        for source in record.sources:
            cited, cands = [], []
            for a in r.answers:
                for c in a.claims:
                    for s in c.evidence:
                        if s.doc_id in (source.doc_id, None):
                            cited.append((s.start_char, s.end_char, c.label))
                    for cand in c.candidates:
                        for p in cand.parts:
                            if p.doc_id in (source.doc_id, None):
                                cands.append((p.start_char, p.end_char))
            title = escape(source.title or source.doc_id)
            parts.append(f'<details open><summary>source {title}</summary><div class="source" dir="{direction}" lang="{_lang(r.language)}">'
                         f"{highlighted(source.text, source.doc_id, cited, cands)}</div></details>")
    for a in r.answers:
        parts.append(f"<h4>{escape(a.model)} <span class=\"muted\">family {escape(a.family)} · decomposition {escape(a.decomposition.method)}"
                     + (f" (fallback: {escape(a.decomposition.fallback_reason)})" if a.decomposition.fallback_reason else "") + "</span></h4>")
        if a.generation_error:
            parts.append(f'<p class="flags">{escape(a.generation_error)}</p>')
        parts.append(f'<div class="answer" dir="{direction}" lang="{_lang(r.language)}">{escape(a.answer)}</div>')
        for c in a.claims:
            colour = LABEL_COLOURS.get(c.label, "#999")
            flags = []
            if c.checks.numbers_missing:
                flags.append("numbers not in the evidence: " + ", ".join(c.checks.numbers_missing))
            for m in c.checks.numbers_mismatched:
                flags.append(f"{m.claim} where the evidence says {m.candidate}")
            if c.checks.names_missing:
                flags.append("names not in the evidence: " + ", ".join(c.checks.names_missing))
            verdicts = "".join(
                f"<tr><td>{escape(v.judge)}</td><td>{escape(v.family)}</td><td>{_label(v.label)}</td><td>{escape(', '.join(v.evidence_ids))}</td>"
                f'<td dir="auto">{escape(v.rationale or v.error or "")}</td></tr>'
                for v in c.verdicts
            )
            parts.append(
                f'<div class="claim" style="border-color:{colour}"><div dir="{direction}">{_label(c.label)} {escape(c.text)}</div>'
                + (f'<div class="flags">{escape("; ".join(flags))}</div>' if flags else "")
                + f"<table><tr><th>judge</th><th>family</th><th>label</th><th>evidence</th><th>rationale</th></tr>{verdicts}</table></div>"
            )
    parts.append("</section>")
    return "".join(parts)


def _lang(language: str) -> str:
    return {"Hebrew": "he", "Arabic": "ar", "Portuguese": "pt", "Spanish": "es"}.get(language, "en")


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.headers)
    body = "".join("<tr>" + "".join(f'<td class="{"num" if not isinstance(v, str) else ""}">{_fmt(v)}</td>' for v in row) + "</tr>" for row in t.rows)
    return ((f"<p>{escape(t.title)}</p>" if t.title else "") + f"<table><tr>{head}</tr>{body}</table>"
            + (f'<p class="muted">{escape(t.note)}</p>' if t.note else ""))


# Charts drawn above a section's tables (inline SVG)
CHARTS = {
    "by_model": lambda v: stacked_labels(v, "labels per model under test"),
    "by_genre": lambda v: value_bars({k: r["faithfulness"] for k, r in v.items()}, "faithfulness by genre"),
    "by_difficulty": lambda v: value_bars({k: r["faithfulness"] for k, r in v.items()}, "faithfulness by difficulty"),
    "judge_agreement": lambda v: heatmap(v["judges"], {(p["a"], p["b"]): p["cohen_kappa"] for p in v["pairwise"]}, "Cohen's kappa between judges"),
}


def _block(key: str, block: Block, value) -> str:
    parts = [f"<h2>{escape(block.title)}</h2>"]
    if key in CHARTS and value:
        parts.append(CHARTS[key](value))
    if block.text:
        parts.append(f"<p>{escape(block.text)}</p>")
    parts += [_table(t) for t in block.tables]
    return "".join(parts)


def render(scores: dict, results: Iterable[RecordResult], records: dict[str, Record]) -> Iterator[str]:
    """The page, piece by piece (records are rendered one at a time, so memory does not grow with the run)."""
    name = scores.get("name") or "run"
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">',
             f"<title>judge report: {escape(name)}</title><style>{CSS}</style></head><body>",
             f"<h1>judge report: {escape(name)}</h1>",
             f"<p class=\"muted\">{escape(scores.get('run_dir', ''))} · judges: {escape(', '.join(scores.get('judges', [])))} · {scores.get('records', 0)} records</p>"]
    if scores.get("same_family_clashes"):
        parts.append(f'<p class="warn">Same-family judging allowed by the config: {escape("; ".join(scores["same_family_clashes"]))}</p>')
    parts += [_block(key, block, scores.get(key)) for key, block in blocks(scores)]
    usage = scores.get("usage") or {}
    if usage:
        parts.append(f"<p class=\"muted\">model calls {usage.get('calls', 0)}, cache hits {usage.get('cache_hits', 0)}, tokens "
                     f"{usage.get('prompt_tokens', 0)} + {usage.get('completion_tokens', 0)}, cost ${usage.get('cost_usd', 0):.4f}"
                     + (f", wall time {scores['wall_seconds']:.1f} s" if scores.get("wall_seconds") else "") + "</p>")
    parts.append("<h2>Records</h2>")
    yield "\n".join(parts)
    for r in results:
        yield "\n" + _record_section(r, records.get(r.record_id))
    yield "\n</body></html>"


def agreement_page(agreement: dict) -> str:
    from judge.scoring.agreement import JudgeAgreement

    block = JudgeAgreement.block(agreement, {})
    body = _block(JudgeAgreement.key, block, agreement) if block else "<p>Fewer than two judges: nothing to compare.</p>"
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>judge agreement</title><style>{CSS}</style></head><body><h1>Agreement between judges</h1>"
            f"<p class=\"muted\">{escape(', '.join(agreement['runs']))}</p>{body}</body></html>")
