"""report.html: one self-contained page (no network; one inline script, admitted by its hash), right-to-left
where the text is: the not-grounded claims first (judge.report.html_lead), the score sections, the glossary,
then each record's source with its spans highlighted and each claim with every judge's verdict. Every string
from a dataset or a model goes through ``html.escape`` inside a ``<bdi>`` or an element with ``dir``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Iterator
from html import escape

from judge.models import Record
from judge.report.charts import LABEL_COLOURS, heatmap, stacked_labels, value_bars
from judge.report.format import fmt, no_bidi, prompts_line
from judge.report.html_lead import absent, first_claims, glossary, not_grounded
from judge.report.html_lead import data_html as _d
from judge.report.html_lead import label_html as _label
from judge.report.labelling import CSS as LABELLING_CSS
from judge.report.labelling import SCRIPT as LABELLING_SCRIPT
from judge.report.labelling import section as labelling_section
from judge.results import RecordResult
from judge.scoring import Block, Table, blocks
from judge.scoring.first_claims import FirstClaims, FirstClaimsSection
from judge.scoring.health import JudgeHealth
from judge.text.language import ENGLISH, LANGUAGES, language_name
from judge.text.language import direction as text_direction
from judge.scoring.ungrounded import (
    NotGrounded,
    NotGroundedSection,
    best_passage,
    check_flags,
    claim_anchor,
    judges_disagree,
    nearest_candidate,
    passage_text,
)
from judge.verdicts import NOT_GROUNDED, SEVERITY, UNSUPPORTED, shown_labels, unsure_line


# The page's one script: click a claim to outline its spans in the source (and a span to go back to its
# claim); filter claims by label, model and judge disagreement. The Content-Security-Policy admits exactly
# this text by its sha256, so a script planted in data (escaped anyway) could not run.
SCRIPT = """(function () {
  function has(list, id) { return (" " + (list || "") + " ").indexOf(" " + id + " ") >= 0; }
  function spans(id) {
    var all = Array.prototype.slice.call(document.querySelectorAll("mark[data-c], mark[data-n]"));
    var cited = all.filter(function (m) { return has(m.dataset.c, id); });
    return cited.length ? cited : all.filter(function (m) { return has(m.dataset.n, id); });
  }
  function clear() {
    Array.prototype.forEach.call(document.querySelectorAll(".outlined"), function (e) { e.classList.remove("outlined"); });
  }
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (t.closest("a, select, input, label, summary")) { return; }
    var mark = t.closest("mark[data-c], mark[data-n]");
    if (mark) {
      var back = (mark.dataset.c || mark.dataset.n).split(" ")[0];
      var claim = back && document.getElementById(back);
      if (claim) { clear(); claim.classList.add("outlined"); claim.scrollIntoView({block: "center"}); }
      return;
    }
    var c = t.closest(".claim");
    if (!c) { return; }
    clear();
    c.classList.add("outlined");
    var found = spans(c.id);
    found.forEach(function (m) { m.classList.add("outlined"); });
    if (found.length) { found[0].scrollIntoView({block: "center"}); }
  });
  var label = document.getElementById("f-label"), model = document.getElementById("f-model"), disagree = document.getElementById("f-disagree");
  function apply() {
    var shown = 0, items = document.querySelectorAll(".claim[data-label], .ng[data-label], .top-claim[data-label]");
    Array.prototype.forEach.call(items, function (e) {
      var ok = (!label.value || e.dataset.label === label.value) && (!model.value || e.dataset.model === model.value)
        && (!disagree.checked || e.dataset.disagree === "1");
      e.classList.toggle("filtered", !ok);
      if (ok && e.classList.contains("claim")) { shown += 1; }
    });
    document.getElementById("f-count").textContent = shown + " claims shown";
  }
  [label, model, disagree].forEach(function (e) { e.addEventListener("change", apply); });
})();"""
SCRIPT += LABELLING_SCRIPT  # the labelling mode (judge.report.labelling): part of the one script
SCRIPT_HASH = "'sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii") + "'"

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
sup.eid{font-size:10px;color:#37474f;background:#fff;border:1px solid #90a4ae;border-radius:3px;padding:0 2px;margin:0 1px}
.outlined{outline:3px solid #1565c0;outline-offset:1px}.claim{cursor:pointer}.filtered{display:none}
.passage{font-size:12px;color:#37474f}.in-answer{font-size:13px;margin:2px 0}.in-answer mark{background:#ffe082;font-weight:600}.ng{border-left:4px solid #e0e0e0;padding:2px 8px;margin:6px 0}
.filters{position:sticky;top:0;background:#fff;padding:4px 0;border-bottom:1px solid #eee;z-index:1}
.lead-answer{margin:6px 0}.lead-answer ul{margin:2px 0;padding-left:20px}.top-claim{margin:2px 0;font-size:14px}
ul.lines{margin:4px 0;padding-left:20px}ul.lines li{margin:2px 0}ul.absent li{margin:2px 0}dl.glossary dt{font-weight:600}dl.glossary dd{margin:0 0 4px 16px}
""" + LABELLING_CSS


def _fmt(v) -> str:
    return escape(fmt(v))


def highlighted(text: str, cited: list[tuple[int, int, str, str, str]], candidates: list[tuple[int, int, str]]) -> str:
    """The text, escaped, with candidate spans (light) and cited spans (coloured by the worst verdict citing
    them, opening with their evidence ids) marked, each naming its claims (``data-c`` cited, ``data-n`` offered).
    ``cited``: (start, end, label, claim anchor, evidence id); ``candidates``: (start, end, claim anchor)."""
    cuts = {0, len(text)}
    for s, e, *_ in cited:
        cuts.update((s, e))
    for s, e, _ in candidates:
        cuts.update((s, e))
    points = sorted(c for c in cuts if 0 <= c <= len(text))
    out = []
    for a, b in zip(points, points[1:]):
        starting = sorted({eid for s, _, _, _, eid in cited if s == a})
        if starting:
            out.append(f'<sup class="eid">{escape(" ".join(starting))}</sup>')
        piece = escape(text[a:b])
        covering = [(lbl, anchor, eid) for s, e, lbl, anchor, eid in cited if s <= a and b <= e]
        offered = sorted({anchor for s, e, anchor in candidates if s <= a and b <= e})
        if covering:
            worst = max((lbl for lbl, _, _ in covering), key=lambda lbl: SEVERITY.get(lbl, 0))
            ids = " ".join(sorted({eid for _, _, eid in covering}))
            anchors = " ".join(sorted({anchor for _, anchor, _ in covering}))
            out.append(f'<mark class="{worst}" data-c="{anchors}" data-n="{" ".join(offered)}" title="evidence {escape(ids)}; cited, {escape(worst)}">{piece}</mark>')
        elif offered:
            out.append(f'<mark class="cand" data-n="{" ".join(offered)}" title="candidate">{piece}</mark>')
        else:
            out.append(piece)
    return "".join(out)


def _eid(answer_no: int, cid: str, several: bool) -> str:
    """An evidence id as the page shows it: the judges' id, with the answer's number when a record has several."""
    return f"a{answer_no}:{cid}" if several else cid


def _spans_of(r: RecordResult, doc_id: str) -> tuple[list, list]:
    """The cited spans and candidate parts of every claim of the record that fall in one source."""
    several = len(r.answers) > 1
    cited, cands = [], []
    for i, a in enumerate(r.answers):
        for c in a.claims:
            anchor = claim_anchor(r.record_id, i, c.claim_id)
            for cand in c.candidates:
                for p in cand.parts:
                    if p.doc_id in (doc_id, None):
                        cands.append((p.start_char, p.end_char, anchor))
            for s in c.evidence:
                if s.doc_id not in (doc_id, None):
                    continue
                ids = [cand.id for cand in c.candidates if any((p.start_char, p.end_char) == (s.start_char, s.end_char) for p in cand.parts)]
                for cid in ids or ["?"]:
                    cited.append((s.start_char, s.end_char, c.label, anchor, _eid(i + 1, cid, several)))
    return cited, cands


def _claim(r: RecordResult, i: int, a, c, direction: str, several: bool) -> str:
    """One claim: label, text, flags, the nearest passage when it is not grounded, and every judge's verdict."""
    anchor = claim_anchor(r.record_id, i, c.claim_id)
    colour = LABEL_COLOURS.get(c.label, "#999")
    flags = check_flags(c.checks)
    passage = ""
    if c.label == UNSUPPORTED:
        near = nearest_candidate(c)
        passage = (f'<div class="passage">nearest candidate {escape(_eid(i + 1, near.id, several))} '
                   f"(score {near.score:.2f}): <bdi>{escape(near.text)}</bdi></div>" if near is not None
                   else '<div class="passage">nearest candidate: none found</div>')
    elif c.label in NOT_GROUNDED:
        passage = f'<div class="passage">best passage: {_d(passage_text(best_passage(c)))}</div>'
    verdicts = "".join(
        f"<tr><td>{_d(v.judge)}</td><td>{_d(v.family)}</td><td>{_label(v.label)}</td>"
        f"<td>{escape(', '.join(_eid(i + 1, e, several) for e in v.evidence_ids))}</td>"
        f'<td dir="auto">{escape(v.rationale or v.error or "")}</td></tr>'
        for v in c.verdicts
    )
    return (
        f'<div class="claim" id="{anchor}" tabindex="0" data-label="{escape(c.label)}" data-model="{escape(a.model)}" '
        f'data-disagree="{int(judges_disagree(c))}" style="border-color:{colour}" title="click: outline its spans in the source">'
        f'<div dir="{direction}">{_label(c.label)} <bdi>{escape(c.text)}</bdi></div>'
        + (f'<div class="flags">{_d("; ".join(flags))}</div>' if flags else "") + passage
        + f"<table><tr><th>judge</th><th>family</th><th>label</th><th>evidence</th><th>rationale</th></tr>{verdicts}</table></div>"
    )


def _record_section(r: RecordResult, record: Record | None) -> str:
    direction = text_direction(r.language)
    several = len(r.answers) > 1
    parts = [f'<section class="record" id="rec-{escape(r.record_id)}">',
             f"<h3>{_d(r.record_id)} <span class=\"muted\">{_d(r.genre or '')} {escape(str(r.difficulty) if r.difficulty is not None else '')} · {_d(language_name(r.language))}</span></h3>"]
    if r.question:
        parts.append(f'<p dir="{direction}" class="question"><b>{escape(r.question)}</b></p>')
    if record is not None:
        for source in record.sources:
            cited, cands = _spans_of(r, source.doc_id)
            title = _d(source.title or source.doc_id)
            parts.append(f'<details open><summary>source {title}</summary><div class="source" dir="{direction}" lang="{_lang(r.language)}">'
                         f"{highlighted(source.text, cited, cands)}</div></details>")
    for i, a in enumerate(r.answers):
        parts.append(f"<h4>{f'a{i + 1} · ' if several else ''}{_d(a.model)} <span class=\"muted\">family {_d(a.family)} · decomposition {escape(a.decomposition.method)}"
                     + (f" (fallback: {_d(a.decomposition.fallback_reason)})" if a.decomposition.fallback_reason else "") + "</span></h4>")
        if a.generation_error:
            parts.append(f'<p class="flags">{_d(a.generation_error)}</p>')
        parts.append(f'<div class="answer" dir="{direction}" lang="{_lang(r.language)}">{escape(a.answer)}</div>')
        parts += [_claim(r, i, a, c, direction, several) for c in a.claims]
        if a.decomposition.dropped:  # what decomposition dropped, and why (judge.stages.claims)
            items = "".join(f'<li>{_d(d.text)} <span class="muted">{_d(d.reason)}</span></li>' for d in a.decomposition.dropped)
            parts.append(f'<details class="dropped" dir="{direction}"><summary>{len(a.decomposition.dropped)} dropped by decomposition</summary><ul>{items}</ul></details>')
    parts.append("</section>")
    return "".join(parts)


def _filters(scores: dict) -> str:
    """Filters by label, model under test and judge disagreement (run by the page's one script)."""
    labels = "".join(f'<option value="{escape(lbl)}">{escape(lbl)}</option>' for lbl in shown_labels((scores.get("overall") or {}).get("labels") or {}))
    models = "".join(f'<option value="{escape(m)}" dir="auto">{escape(m)}</option>' for m in (scores.get("by_model") or {}))
    return ('<form id="filters" class="filters">filter claims: '
            f'<label>label <select id="f-label"><option value="">any</option>{labels}</select></label> '
            f'<label>model <select id="f-model"><option value="">any</option>{models}</select></label> '
            '<label><input type="checkbox" id="f-disagree"> judges disagree</label> '
            '<span class="muted" id="f-count"></span></form>')


def _lang(language: str) -> str:
    return language if language in LANGUAGES else ENGLISH


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.headers)
    body = "".join("<tr>" + "".join(f'<td class="num">{_fmt(v)}</td>' if not isinstance(v, str) else f"<td>{_d(v)}</td>" for v in row) + "</tr>" for row in t.rows)
    return ((f"<p>{escape(t.title)}</p>" if t.title else "") + f"<table><tr>{head}</tr>{body}</table>"
            + (f'<p class="muted">{escape(t.note)}</p>' if t.note else ""))


# Charts drawn above a section's tables (inline SVG), each only where it compares something: two models, two
# genres (or difficulties) that rest on more than one claim each, a pair of judges with a kappa
CHARTS = {
    "by_model": (lambda v: len(v) >= 2, lambda v: stacked_labels(v, "labels per model under test")),
    "by_genre": (lambda v: _bars(v) >= 2, lambda v: value_bars({k: r["faithfulness"] for k, r in v.items()}, "faithfulness by genre")),
    "by_difficulty": (lambda v: _bars(v) >= 2, lambda v: value_bars({k: r["faithfulness"] for k, r in v.items()}, "faithfulness by difficulty")),
    "judge_agreement": (lambda v: any(p["cohen_kappa"] is not None for p in v["pairwise"]),
                        lambda v: heatmap(v["judges"], {(p["a"], p["b"]): p["cohen_kappa"] for p in v["pairwise"]}, "Cohen's kappa between judges")),
}


def _bars(rates: dict) -> int:
    """The bars of a by-field chart that rest on more than one claim and have a value."""
    return sum(1 for k, r in rates.items() if k != "n/a" and r["faithfulness"] is not None and r["claims"] > 1)


def _block(key: str, block: Block, value) -> str:
    parts = [f"<h2>{escape(block.title)}</h2>"]
    if key in CHARTS and value and CHARTS[key][0](value):
        parts.append(CHARTS[key][1](value))
    if block.text:
        parts.append(f"<p>{escape(block.text)}</p>")
    if block.lines:  # a sentence a line, never run together
        parts.append('<ul class="lines">' + "".join(f"<li>{_d(line)}</li>" for line in block.lines) + "</ul>")
    parts += [_table(t) for t in block.tables]
    return "".join(parts)


# Records the page lists in full (a few KB each): at 1M records a page of all of them was 2.6 GB, more than a
# browser opens (bench/README.md, issue 29). Past this, only records the not-grounded list links to.
RECORDS_LISTED = 5_000


def render(scores: dict, results: Iterable[RecordResult], records: dict[str, Record], *, listed: int = RECORDS_LISTED,
           sheet: list | None = None) -> Iterator[str]:
    """The page, piece by piece (one record at a time, so memory does not grow with the run): the first
    RECORDS_LISTED records, then those the not-grounded list links to; ``sheet``: for the labelling mode."""
    name = scores.get("name") or "run"
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:; script-src {SCRIPT_HASH}">',
             f"<title>judge report: {escape(no_bidi(name))}</title><style>{CSS}</style></head><body>",
             f"<h1>judge report: {_d(name)}</h1>",
             f"<p class=\"muted\">{_d(scores.get('run_dir', ''))} · judges: {_d(', '.join(scores.get('judges', [])))} · {scores.get('records', 0)} records"
             ' · terms: <a href="#glossary">glossary</a></p>']
    if headline := JudgeHealth.headline(scores.get(JudgeHealth.key)):
        parts.append(f'<p class="{"muted" if headline.startswith("judges passed") else "warn"} health">{_d(headline)}</p>')
    for note in scores.get("notes") or []:
        parts.append(f'<p class="warn demo">{_d(note)}</p>')
    if scores.get("same_family_clashes"):
        parts.append(f'<p class="warn">Same-family judging allowed by the config: {_d("; ".join(scores["same_family_clashes"]))}</p>')
    if unsure := unsure_line(((scores.get("overall") or {}).get("labels")) or {}):
        parts.append(f'<p class="warn unsure">{_d(unsure)}</p>')
    parts.append(_filters(scores))
    shown, collapsed = blocks(scores), []
    if all(key != NotGroundedSection.key for key, _ in shown):
        parts.append(first_claims(scores.get(FirstClaimsSection.key)))
    for key, block in shown:  # the claims first (judge.scoring.blocks), then the summary sections
        if key == NotGroundedSection.key:
            parts.append(not_grounded(scores[key]))
            if not NotGrounded.model_validate(scores[key]).total:  # none: the first answers' claims take the first screen
                parts.append(first_claims(scores.get(FirstClaimsSection.key)))
        elif block.text and not block.tables and not block.lines:
            collapsed.append(block)
        else:
            parts.append(_block(key, block, scores.get(key)))
    parts.append(absent(collapsed))
    usage = scores.get("usage") or {}
    if usage:
        from judge.results import Usage

        usage = Usage.model_validate(usage).model_dump()  # numbers only (scores read it typed from summary.json): no markup
        parts.append(f"<p class=\"muted\">model calls {usage.get('calls', 0)}, cache hits {usage.get('cache_hits', 0)}, tokens "
                     f"{usage.get('prompt_tokens', 0)} + {usage.get('completion_tokens', 0)}, cost ${usage.get('cost_usd', 0):.4f}"
                     + (f", wall time {scores['wall_seconds']:.1f} s" if scores.get("wall_seconds") else "") + "</p>")
    if prompts := prompts_line(scores.get("prompts")):
        parts.append(f'<p class="muted prompts">{_d(prompts)}</p>')
    parts.append(glossary())
    parts.append(labelling_section(sheet or [], name, text_direction))
    parts.append("<h2>Records</h2>")
    yield "\n".join(parts)
    linked = _linked_records(scores)
    shown = left = 0
    for r in results:
        if shown < listed or r.record_id in linked:
            yield "\n" + _record_section(r, records.get(r.record_id))
            shown += 1
        else:
            left += 1
    if left:
        yield (f'\n<p class="warn">{left:,} more record{"s are" if left != 1 else " is"} not listed: past the first {listed:,} records the page '
               f"lists only those the not-grounded list above links to, so that a browser can open it. results.jsonl holds "
               f"every record; a run of fewer records (--limit, --shard, judge merge) lists them all.</p>")
    yield f"\n<script>{SCRIPT}</script>\n</body></html>"


def _linked_records(scores: dict) -> set[str]:
    """The records the claim lists at the top link to: always listed, so every link lands."""
    ng, first = scores.get(NotGroundedSection.key), scores.get(FirstClaimsSection.key)
    return ({c.record_id for c in NotGrounded.model_validate(ng).claims} if ng else set()) | (
        {a.record_id for a in FirstClaims.model_validate(first).answers} if first else set())


def agreement_page(agreement: dict) -> str:
    from judge.scoring.agreement import JudgeAgreement

    block = JudgeAgreement.block(agreement, {})
    body = _block(JudgeAgreement.key, block, agreement) if block else "<p>Fewer than two judges: nothing to compare.</p>"
    split = agreement.get("disagreements")
    if split is not None:
        rows = "".join(
            f"<tr><td>{_d(d['record_id'])}</td><td>{_d(d['model'])}</td><td dir=\"auto\">{escape(d['claim'])}</td>"
            f"<td>{_label(d['gold']) if d.get('gold') else '-'}</td><td>"
            + "".join(f"<div>{_d(j)}: {_label(v['label'])} <bdi>{escape(v['rationale'])}</bdi></div>" for j, v in d["judges"].items())
            + "</td></tr>" for d in split)
        body += (f"<h2>Claims the judges disagree on ({len(split)})</h2>"
                 + (f"<table><tr><th>record</th><th>model</th><th>claim</th><th>gold</th><th>each judge's label and rationale</th></tr>{rows}</table>" if split else "<p>None.</p>"))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>judge agreement</title><style>{CSS}</style></head><body><h1>Agreement between judges</h1>"
            f"<p class=\"muted\">{_d(', '.join(agreement['runs']))}</p>{body}</body></html>")
