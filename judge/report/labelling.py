"""report.html's labelling mode (docs/labels.md): the run's sampled items one at a time, a button and a key per
label. Labels live in the browser (localStorage, per run) until "export labels" writes the filled sheet for
``judge score RUN --labels FILE``; no server, no network, and every string from the data escaped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape

from judge.labels.sheet import CLAIM, SheetRow, vocabulary
from judge.verdicts import SKIP

SKIP_KEY = "s"

SCRIPT = """
(function () {
  var box = document.getElementById("lb");
  if (!box) { return; }
  var items = Array.prototype.slice.call(box.querySelectorAll(".lb-item"));
  var store = "judge-labels:" + box.dataset.run, labels = {}, at = 0, on = false;
  try { labels = JSON.parse(window.localStorage.getItem(store) || "{}"); } catch (e) { labels = {}; }
  items.forEach(function (e) {
    var row = JSON.parse(e.dataset.row);
    if (row.label && !(row.item in labels)) { labels[row.item] = row.label; }
  });
  function save() { try { window.localStorage.setItem(store, JSON.stringify(labels)); } catch (e) { /* private mode: kept in the page */ } }
  function show(i) {
    at = Math.max(0, Math.min(items.length - 1, i));
    items.forEach(function (e, k) { e.classList.toggle("lb-hidden", k !== at); });
    var done = items.filter(function (e) { return labels[JSON.parse(e.dataset.row).item]; }).length;
    document.getElementById("lb-progress").textContent = done + " of " + items.length + " labelled";
    document.getElementById("lb-at").textContent = "item " + (at + 1) + " of " + items.length;
    items.forEach(function (e) {
      var given = labels[JSON.parse(e.dataset.row).item] || "";
      e.querySelector(".lb-given").textContent = given || "none yet";
      Array.prototype.forEach.call(e.querySelectorAll(".lb-btn"), function (b) { b.classList.toggle("lb-chosen", b.dataset.label === given); });
    });
  }
  function give(label) {
    labels[JSON.parse(items[at].dataset.row).item] = label;
    save();
    show(at + 1 < items.length ? at + 1 : at);
  }
  box.addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (!b) { return; }
    if (b.id === "lb-start") { on = true; box.classList.add("lb-on"); show(at); return; }
    if (b.id === "lb-prev") { show(at - 1); return; }
    if (b.id === "lb-next") { show(at + 1); return; }
    if (b.id === "lb-export") { exportLabels(); return; }
    if (b.dataset.label) { on = true; box.classList.add("lb-on"); give(b.dataset.label); }
  });
  document.addEventListener("keydown", function (ev) {
    if (!on || ev.ctrlKey || ev.metaKey || ev.altKey || ev.target.closest("input, select, textarea")) { return; }
    if (ev.key === "ArrowRight") { show(at + 1); return; }
    if (ev.key === "ArrowLeft") { show(at - 1); return; }
    var b = items[at].querySelector('.lb-btn[data-key="' + ev.key.toLowerCase() + '"]');
    if (b) { ev.preventDefault(); give(b.dataset.label); }
  });
  function exportLabels() {
    var text = items.map(function (e) {
      var row = JSON.parse(e.dataset.row);
      row.label = labels[row.item] || "";
      return JSON.stringify(row);
    }).join("\\n") + "\\n";
    var out = document.getElementById("lb-out");
    out.value = text;
    out.hidden = false;
    var a = document.getElementById("lb-download");
    a.href = URL.createObjectURL(new Blob([text], {type: "application/x-ndjson"}));
    a.download = "labels-" + box.dataset.name + ".jsonl";
    a.click();
  }
  show(0);
})();"""

CSS = """
#lb .lb-item{border:1px solid #90a4ae;padding:8px 12px;margin:8px 0}#lb .lb-hidden{display:none}
#lb .lb-btn{margin:2px 4px 2px 0;padding:4px 10px;font-size:14px}#lb .lb-chosen{outline:3px solid #1565c0}
#lb mark.lb-span{background:#ffe082;font-weight:600}#lb .lb-bar{position:sticky;top:0;background:#fff;padding:4px 0}
#lb .lb-claim{font-size:15px;font-weight:600;margin:6px 0}#lb-out{width:100%;height:120px}
"""


def _text(value: str, direction: str) -> str:
    return f'<span dir="{direction}">{escape(value)}</span>'


def _answer(row: SheetRow, direction: str) -> str:
    """The answer with the claim marked (escaped piece by piece)."""
    at = row.claim_in_answer
    if not at or not (0 <= at[0] < at[1] <= len(row.answer)):
        return escape(row.answer)
    return escape(row.answer[:at[0]]) + f"<mark>{escape(row.answer[at[0]:at[1]])}</mark>" + escape(row.answer[at[1]:])


def _item(k: int, row: SheetRow, direction: str) -> str:
    buttons = [(lbl, str(i + 1)) for i, lbl in enumerate(vocabulary(row.level))] + [(SKIP, SKIP_KEY)]
    passages = "".join(
        f'<div class="source lb-passage" dir="{direction}">…{escape(p.before)}<mark class="lb-span">{escape(p.excerpt)}</mark>{escape(p.after)}…</div>'
        for p in row.passages) or '<p class="muted">no passage was offered to the judges</p>'
    what = (f'<div class="lb-claim" dir="{direction}">claim: {escape(row.claim or "")}</div>' if row.level == CLAIM
            else '<div class="lb-claim">is the whole answer grounded in the source (every claim supported)?</div>')
    return (
        f'<div class="lb-item" data-i="{k}" data-row="{escape(json.dumps(row.model_dump(), ensure_ascii=False), quote=True)}">'
        f'<div class="muted"><bdi>{escape(row.record_id)}</bdi> · <bdi>{escape(row.model)}</bdi> · {escape(row.level)}</div>'
        + (f'<p dir="{direction}"><b>{escape(row.question)}</b></p>' if row.question else "")
        + f'<div class="answer" dir="{direction}">{_answer(row, direction)}</div>{what}{passages}'
        + '<div class="lb-buttons">'
        + "".join(f'<button type="button" class="lb-btn" data-label="{escape(lbl)}" data-key="{key}">{escape(key)} · {escape(lbl.replace("_", " "))}</button>'
                  for lbl, key in buttons)
        + '</div><div class="muted">your label: <span class="lb-given"></span></div></div>'
    )


def section(rows: list[SheetRow], run_name: str, direction: Callable[[str], str]) -> str:
    """The labelling mode's section (empty when the run has no sheet)."""
    if not rows:
        return ""
    run_id = rows[0].run_id
    keys = "; ".join(f"{level}s: " + ", ".join(f"{i + 1} {lbl.replace('_', ' ')}" for i, lbl in enumerate(vocabulary(level)))
                     for level in dict.fromkeys(r.level for r in rows))
    return (
        f'<h2 id="labelling">Label a sample ({len(rows)} items)</h2>'
        f'<div id="lb" data-run="{escape(run_id, quote=True)}" data-name="{escape(run_name, quote=True)}">'
        "<p>A random sample of this run's items (judge label). Label each as you read the passages: the corrected rates use your labels "
        "to correct the judge. The judge's verdict is not shown. Keys: "
        f"{escape(keys)}; {SKIP_KEY} skip; arrows move. Your labels stay in this browser until you export them; then run "
        f"<code>judge score RUN --labels FILE</code>.</p>"
        '<div class="lb-bar"><button type="button" id="lb-start">start labelling</button> <span id="lb-progress"></span> · <span id="lb-at"></span> '
        '<button type="button" id="lb-prev">previous</button> <button type="button" id="lb-next">next</button> '
        '<button type="button" id="lb-export">export labels</button><a id="lb-download" hidden>download</a></div>'
        + "".join(_item(k, r, direction(r.language)) for k, r in enumerate(rows))
        + '<textarea id="lb-out" readonly hidden aria-label="the labels, as a sheet"></textarea></div>'
    )
