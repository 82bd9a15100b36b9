"""False alarms on correct answers and wrong free verdicts, on every labelled set at hand (issue 24, parts 2-3).

    python bench/free_verdicts_bench.py [--data /work/shared/data] [--limit N] [--show 3]

Every claim is searched as a run does (top 5 candidates over its record's sources), checked against the whole
source (numbers, names, corrections, near-duplicates), judged by the deterministic rule (the shipped profile of
its language, reading the whole source and the question as a run does) and offered to triage. For each set:

- ``alarm``: correct claims the checks flag (a conflict in the source, or a number stated otherwise beside the
  same words): the checks call a correct claim contradicted;
- ``contra``: correct claims the deterministic judge labels contradicted (for a QA set, also per answer);
- ``free``: claims triage settles ``supported`` at no cost, and ``free wrong``: those whose gold says the claim
  (or the answer it belongs to) is not supported;
- ``wrong contra``: wrong claims the deterministic judge calls contradicted (what the checks find in real
  errors; on the Hebrew answers, 12 of the wrong claims are gold-contradicted).

Sets (read from ``--data``; each is skipped when absent):

- HaluEval QA (``external/halueval_qa``): 500 questions, the extractive right answer and a ChatGPT-written
  hallucinated one, each split into sentences as ``decompose: sentences`` does (a short answer is one claim);
- HeQ (Hebrew) and FaQuAD (Portuguese): each answerable question's first gold answer (correct), the source
  sentence that holds it (correct), and another question's gold answer from the same paragraph, when it is
  at most 6 words (wrong: a noun phrase found verbatim that answers something else);
- ARCD (Arabic): two sentences of each paragraph, as claims of it (correct, verbatim);
- WiCE test: supported claims correct; partially and not supported wrong;
- FaithBench: summary sentences no annotator marked are correct; those with an "Unwanted" span wrong;
- DialSummEval: sentences of summaries all three annotators rated 5 for consistency (correct);
- the shared Hebrew answers: gold-supported claims correct, the others wrong;
- "<set> perturbed": each correct claim of a set (short answers aside) whose first number is not its first
  word, with that number changed: wrong in the very slot the source states, so ``caught`` (the checks flag
  it) and ``contra`` (the deterministic judge says contradicted) measure what the checks still find.

``JUDGE_SRC`` (a folder holding a ``judge`` package) runs the same bench on another tree, e.g. the
baseline exported with ``git archive``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, os.environ.get("JUDGE_SRC") or str(ROOT))

from judge.judges.base import ClaimToJudge, JudgeContext, offer  # noqa: E402
from judge.judges.triage import triage  # noqa: E402
from judge.models import Source  # noqa: E402
from judge.pipeline import candidates  # noqa: E402
from judge.config import SearchSection  # noqa: E402
from judge.search import Index  # noqa: E402
from judge.stages.evidence import check_claim  # noqa: E402
from judge.judges.deterministic import DeterministicThresholds, fitted_score, load_weights, no_model_label  # noqa: E402
from judge.stages.evidence import read_evidence  # noqa: E402
from judge.text import split_sentences  # noqa: E402

SEARCH = SearchSection()
SHORT_ANSWER_WORDS = 6  # another question's answer this short is a wrong answer, not a statement of its own
_TRIAGE_TAKES_CONTEXT = len(inspect.signature(triage).parameters) > 1


@dataclass
class Item:
    dataset: str
    group: str  # the answer (or record) the claim belongs to
    claim: str
    correct: bool | None  # None: counted for neither (a gold label between the two)
    language: str  # he, en, pt, ar
    sources: dict[str, str]
    question: str = ""
    kind: str = ""  # short answer, source sentence, ...


@dataclass
class Tally:
    correct: int = 0
    wrong: int = 0
    alarm: list = field(default_factory=list)
    contra: list = field(default_factory=list)
    free_right: int = 0
    free_wrong: list = field(default_factory=list)
    answers_correct: set = field(default_factory=set)
    answers_contra: set = field(default_factory=set)
    caught_alarm: int = 0  # perturbed claims the checks flag
    caught_contra: int = 0  # perturbed claims the deterministic judge calls contradicted
    wrong_contra: int = 0  # wrong claims (perturbed ones aside) the deterministic judge calls contradicted


# -- the sets -----------------------------------------------------------------------------------------------
def halueval(data: Path, limit: int | None) -> list[Item]:
    path = data / "external" / "halueval_qa" / "qa_one-turn_data.json"
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()[:limit]):
        r = json.loads(line)
        src = {"knowledge": r["knowledge"]}
        for answer, correct in ((r["right_answer"], True), (r["hallucinated_answer"], False)):
            for s in split_sentences(answer) or []:
                out.append(Item("HaluEval QA", f"{n}:{correct}", s.text, correct, "en", src, r["question"], "answer sentence"))
    return out


def _squad_like(name: str, path: Path, language: str, limit: int | None) -> list[Item]:
    if not path.exists():
        return []
    out = []
    paragraphs = [p for d in json.loads(path.read_text(encoding="utf-8"))["data"] for p in d["paragraphs"]]
    for pi, p in enumerate(paragraphs[:limit]):
        context = p["context"]
        src = {"p": context}
        sentences = split_sentences(context)
        qas = [q for q in p["qas"] if not q.get("is_impossible") and q["answers"]]
        for qi, q in enumerate(qas):
            gold = q["answers"][0]
            texts = {a["text"].strip() for a in q["answers"]}
            group = f"{pi}:{qi}"
            out.append(Item(name, group, gold["text"].strip(), True, language, src, q["question"], "short answer"))
            at = gold["answer_start"]
            holder = next((s for s in sentences if s.start <= at < s.end), None)
            if holder is not None and len(holder.text) < 400:
                out.append(Item(name, group + ":s", holder.text, True, language, src, q["question"], "source sentence"))
            other = qas[(qi + 1) % len(qas)]["answers"][0]["text"].strip() if len(qas) > 1 else None
            # A short answer is wrong for a question it does not answer; a whole sentence stays a true statement.
            if other and len(other.split()) <= SHORT_ANSWER_WORDS and not any(other in t or t in other for t in texts):
                out.append(Item(name, group + ":w", other, False, language, src, q["question"], "another question's answer"))
    return out


def heq(data: Path, limit: int | None) -> list[Item]:
    return _squad_like("HeQ", data / "external" / "heq" / "test_v1.1.json", "he", limit)


def faquad(data: Path, limit: int | None) -> list[Item]:
    return _squad_like("FaQuAD", data / "external" / "faquad" / "dataset.json", "pt", limit)


def arcd(data: Path, limit: int | None) -> list[Item]:
    path = data / "external" / "beir_arcd_sample" / "corpus.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[:limit]:
        doc = json.loads(line)
        sentences = split_sentences(doc["text"])
        for s in sentences[:: max(1, len(sentences) // 2)][:2]:
            out.append(Item("ARCD", doc["_id"], s.text, True, "ar", {doc["_id"]: doc["text"]}, kind="source sentence"))
    return out


def wice(data: Path, limit: int | None) -> list[Item]:
    path = data / "external" / "wice" / "claim_test.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[:limit]:
        r = json.loads(line)
        correct = {"supported": True, "not_supported": False, "partially_supported": False}[r["label"]]
        out.append(Item("WiCE", r["meta"]["id"], r["claim"], correct, "en", {"page": " ".join(r["evidence"])}, kind=r["label"]))
    return out


def faithbench(data: Path, limit: int | None) -> list[Item]:
    folder = data / "external" / "faithbench"
    out = []
    samples = [s for path in sorted(folder.glob("batch_*.json")) for s in json.loads(path.read_text(encoding="utf-8"))["samples"]]
    for s in samples[:limit]:
        marked = [a for a in s["annotations"] if a.get("summary_start") is not None]
        for sent in split_sentences(s["summary"]):
            inside = [a for a in marked if a["summary_start"] < sent.end and sent.start < a["summary_end"]]
            unwanted = any("Unwanted" in a["label"] for a in inside)
            correct = False if unwanted else (True if not inside else None)
            out.append(Item("FaithBench", str(s["sample_id"]), sent.text, correct, "en", {"source": s["source"]}, kind="summary sentence"))
    return out


def dialsummeval(data: Path, limit: int | None) -> list[Item]:
    path = data / "external" / "dialsummeval" / "human_judgment.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[:limit]:
        r = json.loads(line)
        if all(a["consistency"] == 5 for a in r["annotations"]):
            for sent in split_sentences(r["summary"]):
                out.append(Item("DialSummEval", f'{r["id"]}:{r["model_id"]}', sent.text, True, "en", {"dialogue": r["dialogue"]}, kind="summary sentence"))
    return out


def hebrew_answers(data: Path, limit: int | None) -> list[Item]:
    qa, answers = data / "he_qa_sample.json", data / "he_model_answers_sample.jsonl"
    if not (qa.exists() and answers.exists()):
        return []
    records = {r["record_id"] if "record_id" in r else r["id"]: r for r in _records(qa)}
    out = []
    for n, line in enumerate(answers.read_text(encoding="utf-8").splitlines()[:limit]):
        a = json.loads(line)
        r = records[a["record_id"]]
        for g in a["gold_claims"]:
            correct = {"supported": True}.get(g["label"], False)
            out.append(Item("Hebrew answers", f"{n}", g["text"], correct, "he", {"d": r["source_text"]}, r.get("question", ""), g.get("kind", "")))
    return out


def _records(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = data if isinstance(data, list) else data.get("records", data.get("data", []))
    for r in rows:
        r.setdefault("id", r.get("id") or r.get("record_id"))
    return rows


SETS = (halueval, heq, faquad, arcd, wice, faithbench, dialsummeval, hebrew_answers)
_FIRST_NUMBER = re.compile(r"(?<![\w.,])(\d{1,4})(?![\d.,]\d)")


def perturbed(items: list[Item]) -> list[Item]:
    """Each correct claim with a number that is not the claim's opening word, with that number changed (a
    year by 3, another number by 1 or a tenth of it): wrong by construction, in the slot the source states.
    What the checks must still catch."""
    out = []
    for item in items:
        if not item.correct or item.kind == "short answer":
            continue
        m = _FIRST_NUMBER.search(item.claim)
        if m is None or m.start() == 0:
            continue
        n = int(m.group(1))
        new = n + 3 if 1000 <= n <= 2100 else n + max(1, n // 10)
        claim = item.claim[: m.start()] + str(new) + item.claim[m.end() :]
        out.append(Item(item.dataset + " perturbed", item.group, claim, False, item.language, item.sources, item.question, "number changed"))
    return out


# -- one claim ------------------------------------------------------------------------------------------------
_INDEXES: dict[tuple[str, str], Index] = {}


def _index(doc_id: str, text: str) -> Index:
    key = (doc_id, text)
    if key not in _INDEXES:
        if len(_INDEXES) > 64:
            _INDEXES.clear()
        _INDEXES[key] = Index(text, doc_id)
    return _INDEXES[key]


def judge_item(item: Item) -> tuple[bool, str, str, bool]:
    """(the checks flag it, the detail, the deterministic label, triage settles it)."""
    indexes = [_index(d, t) for d, t in item.sources.items()]
    found = candidates(indexes, item.claim, SEARCH)
    checks = check_claim(item.claim, found, dict(item.sources))
    features = read_evidence(item.claim, found, checks, item.question, tuple(item.sources.values()), item.language)  # as a run reads it
    label, why = no_model_label(fitted_score(load_weights(), features), features, DeterministicThresholds().profile(item.language), checks)
    alarm = bool(checks.conflicts or checks.numbers_mismatched)
    if checks.conflicts:
        detail = f"{checks.conflicts[0].kind}: {checks.conflicts[0].detail} [{checks.conflicts[0].excerpt[:300]}]"
    elif checks.numbers_mismatched:
        m = checks.numbers_mismatched[0]
        part = next((p.excerpt for c in found for p in c.parts if m.candidate in p.excerpt.replace(",", "")), "")
        detail = f"mismatch with a candidate: it says {m.candidate} where the claim says {m.claim} [{part[:300]}]"
    else:
        detail = why
    claim = ClaimToJudge("1", item.claim, offer(found, "1"), checks)
    if _TRIAGE_TAKES_CONTEXT:
        sources = [Source(doc_id=d, text=t) for d, t in item.sources.items()]
        settled = triage(claim, JudgeContext(question=item.question, language=item.language, sources=sources)) is not None
    else:
        settled = triage(claim) is not None
    return alarm, detail, label, settled


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--limit", type=int, default=None, help="records (lines, paragraphs) per set")
    ap.add_argument("--show", type=int, default=3, help="examples of each kind of error to print")
    ap.add_argument("--sets", default="", help="comma-separated subset of set names (function names)")
    ap.add_argument("--dump", type=Path, default=None, help="write every error (JSON lines) to this file")
    args = ap.parse_args(argv)
    chosen = [f for f in SETS if not args.sets or f.__name__ in args.sets.split(",")]
    tallies: dict[str, Tally] = defaultdict(Tally)
    t0 = time.perf_counter()
    for make in chosen:
        items = make(args.data, args.limit)
        for item in items + perturbed(items):
            t = tallies[item.dataset]
            alarm, detail, label, settled = judge_item(item)
            if item.kind == "number changed":
                t.caught_alarm += alarm
                t.caught_contra += label == "contradicted"
            if item.correct:
                t.correct += 1
                t.answers_correct.add(item.group)
                if alarm:
                    t.alarm.append((item, detail))
                if label == "contradicted":
                    t.contra.append((item, detail))
                    t.answers_contra.add(item.group)
                t.free_right += settled
            elif item.correct is False:
                t.wrong += 1
                t.wrong_contra += label == "contradicted" and item.kind != "number changed"
                if settled:
                    t.free_wrong.append((item, ""))
    print(f"{'set':<26}{'correct':>8}{'alarm':>7}{'contra':>8}{'answers':>9}{'contra':>8}{'wrong':>7}{'free':>6}{'free wrong':>11}{'precision':>10}"
          f"{'caught':>8}{'contra':>8}{'wrong contra':>13}")
    for name, t in tallies.items():
        free = t.free_right + len(t.free_wrong)
        precision = f"{t.free_right / free:.3f}" if free else "-"
        caught = (f"{t.caught_alarm:>8}{t.caught_contra:>8}") if name.endswith("perturbed") else f"{'':>16}{t.wrong_contra:>13}"
        print(f"{name:<26}{t.correct:>8}{len(t.alarm):>7}{len(t.contra):>8}{len(t.answers_correct):>9}{len(t.answers_contra):>8}"
              f"{t.wrong:>7}{free:>6}{len(t.free_wrong):>11}{precision:>10}{caught}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as f:
            for name, t in tallies.items():
                for what, rows in (("alarm", t.alarm), ("contradicted", t.contra), ("free_wrong", t.free_wrong)):
                    for item, detail in rows:
                        f.write(json.dumps({"set": name, "error": what, "claim": item.claim, "kind": item.kind, "detail": detail}, ensure_ascii=False) + "\n")
    for name, t in tallies.items():
        for what, rows in (("alarm on a correct claim", t.alarm), ("contradicted, correct", t.contra), ("free verdict, wrong", t.free_wrong)):
            for item, detail in rows[: args.show]:
                print(f"[{name}] {what}: {item.claim[:100]!r} ({item.kind}) {detail[:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
