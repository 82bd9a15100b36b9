"""Human-labelled sets of other genres, brought for the learned judge's leave-one-dataset-out figures (issue 35).

The files live outside the repository (``--extra DIR``, default ``/work/data-extra``), one folder per set;
bench/README.md ("The learned no-model judge") records each set's origin, licence and label mapping.

- ``BEGIN`` (google/BEGIN-dataset, CC BY 4.0; ``begin/*.tsv``): knowledge-grounded dialogue responses of four
  models (GPT-2, T5, CTRL, DoHA) on Wizard of Wikipedia, CMU-DoG and Topical-Chat, each rated by people "Fully
  attributable" (correct) or "Not fully attributable" (wrong) to its knowledge snippet; "Generic" left out.
  A response is read on its own (the previous turn is no question: read with it, a short reply would be
  glued to it). A seeded sample of ``BEGIN_SAMPLE`` responses.
- ``FaithDial audit`` (McGill-NLP/FaithDial ``data-audit``, MIT; ``faithdial/*/*.csv``): the same three
  dialogue benchmarks' gold responses and three models' responses, each with its BEGIN label by people:
  "entailment" alone correct, any "hallucination" wrong, the rest (generic, uncooperative) left out.
- ``QAGS CNN/DM`` and ``QAGS XSum`` (W4ngatang/qags ``data/mturk_*.jsonl``; the repository states no licence:
  read here for measurement only, never copied into the project): news summaries (Bottom-Up on CNN/DM,
  BART on XSum) split into sentences by the authors, each sentence judged supported or not by three crowd
  workers; a sentence is correct when most say yes, a summary when every sentence is.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

from grounding_sets import Item, claims_of

BEGIN_SAMPLE = 1200
FAITHDIAL_SAMPLE = 1000


def _answer(name: str, group: str, answer: str, label: str, source: str) -> list[Item]:
    return [Item(name, group, t, label, "en", {"knowledge": source}, answer_level=True, collapse_contradicted=True) for t in claims_of(answer, "")]


def begin(folder: Path, sample: int = BEGIN_SAMPLE) -> list[Item]:
    rows = []
    for path in sorted((folder / "begin").glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as f:
            rows += [(path.stem, n, r) for n, r in enumerate(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))]
    if not rows:
        raise FileNotFoundError(folder / "begin")
    labels = {"Fully attributable": "supported", "Not fully attributable": "unsupported"}
    rows = [x for x in rows if x[2].get("begin_label") in labels and (x[2].get("response") or "").strip()]
    rows = random.Random("begin").sample(rows, min(sample, len(rows)))
    out = []
    for stem, n, r in rows:
        out += _answer("BEGIN", f"{stem}:{n}", r["response"], labels[r["begin_label"]], r["knowledge"])
    return out


def faithdial(folder: Path, sample: int = FAITHDIAL_SAMPLE) -> list[Item]:
    rows = []
    for path in sorted((folder / "faithdial").glob("*/*.csv")):
        with path.open(encoding="utf-8", newline="") as f:
            for n, r in enumerate(csv.DictReader(f)):
                values = list(r.values())
                source, response = (r.get("knowledge") or r.get("evidence") or ""), values[2] or ""
                tags = {t.strip().lower() for t in (r.get("begin_label") or r.get("BEGIN") or "").split(",") if t.strip()}
                label = "supported" if tags == {"entailment"} else "unsupported" if any("hallucination" in t for t in tags) else None
                if label and response.strip() and source.strip():
                    rows.append((f"{path.parent.name}/{path.stem}:{n}", response, label, source))
    if not rows:
        raise FileNotFoundError(folder / "faithdial")
    rows = random.Random("faithdial").sample(rows, min(sample, len(rows)))
    return [i for g, resp, label, src in rows for i in _answer("FaithDial audit", g, resp, label, src)]


def qags(folder: Path, which: str) -> list[Item]:
    path = folder / "qags" / f"mturk_{which}.jsonl"
    name = {"cnndm": "QAGS CNN/DM", "xsum": "QAGS XSum"}[which]
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        r = json.loads(line)
        for s in r["summary_sentences"]:
            votes = [a["response"] == "yes" for a in s["responses"]]
            label = "supported" if sum(votes) * 2 > len(votes) else "unsupported"
            out += [Item(name, str(n), t, label, "en", {"article": r["article"]}, answer_level=True, collapse_contradicted=True)
                    for t in claims_of(s["sentence"], "")]
    return out


def more_sets(folder: Path | None) -> dict:
    """Makers of the brought sets, by name (each raises FileNotFoundError when its files are absent)."""
    if folder is None:
        return {}
    return {
        "BEGIN": lambda: begin(folder),
        "FaithDial audit": lambda: faithdial(folder),
        "QAGS CNN/DM": lambda: qags(folder, "cnndm"),
        "QAGS XSum": lambda: qags(folder, "xsum"),
    }
