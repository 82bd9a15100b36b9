"""The labelled sets the deterministic judge is calibrated and held out on, each claim searched, checked and
reduced to the claim's Evidence as a run reads it, with the two baselines' scores beside them.

Sets (``--data``: the shared data folder; ``--halueval``: a folder with HaluEval's ``qa_one-turn_data.json``):

- ``hebrew answers``: the shared Hebrew sample's gold claims, 4 labels (claim level, macro-F1);
- ``WiCE``: the test claims, 3 labels (claim level, accuracy; "not supported" holds our contradicted);
- ``FaithBench``: summary sentences (a run's sentence claims, list numbers dropped): no annotator mark is correct, an "Unwanted" span wrong (each sentence
  is its own answer);
- ``DialSummEval``: whole summaries: all three raters gave consistency 5 (correct), or their consistency
  adds up to 5 or less (wrong); a summary is its sentences;
- ``HaluEval QA`` (RUCAIBox/HaluEval, MIT): 500 questions with their knowledge passage, the extractive
  right answer and a ChatGPT-written hallucinated one;
- ``HeQ`` (Hebrew) and ``FaQuAD`` (Portuguese): extractive QA, correct answers only. The wrong answer is
  constructed: another question's gold answer from the same paragraph (at most 6 words, not overlapping the
  right one), read with this question: its words are in the source, but it answers something else.

The QA sets' answers are made claims as a run with ``decompose: sentences`` makes them (a short answer
becomes "<question> <answer>", flagged as read with its question). Answer-level sets: an answer is judged correct when every one of its claims is ``supported``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path


from judge.datasets import load
from judge.pipeline import candidates
from judge.config import SearchSection
from judge.search import Index
from judge.stages.evidence import check_claim
from judge.stages.claims import answer_part
from judge.stages.decompose import sentence_claims
from judge.stages.evidence import Evidence, read_evidence
from judge.text import content_words, normalize, split_sentences, word_forms

SHORT_ANSWER_WORDS = 6


@dataclass
class Item:
    dataset: str
    group: str  # the answer the claim belongs to (answer-level sets), else the record
    text: str
    label: str  # gold: one of LABELS (binary sets: supported / unsupported)
    language: str
    sources: dict[str, str]
    question: str = ""
    answer_level: bool = False
    collapse_contradicted: bool = False  # the set's "not supported" holds contradictions too
    features: Evidence | None = None
    triage: bool = False
    overlap: float = 0.0  # share of the claim's content words some source writes (the bag-of-words baseline)
    bm25: float = 0.0  # best sentence's BM25 score over the most the claim's terms could score
    gold_sets: list = field(default_factory=list)
    offered: list = field(default_factory=list)
    found: list = field(default_factory=list)  # the candidates the search offered
    checks: object = None  # their checks (judge.results.ClaimChecks)

    def seen_as(self, label: str) -> str:
        return "unsupported" if self.collapse_contradicted and label == "contradicted" else label


# -- baselines' scores -----------------------------------------------------------------------------------------
def _terms(text: str) -> list[str]:
    return [word_forms(w)[-1] for w in content_words(normalize(text).text)]


def overlap(claim: str, sources: dict[str, str]) -> float:
    """The bag of words: the share of the claim's distinct content words found (in any form) in the source."""
    mine = set(content_words(normalize(claim).text))
    if not mine:
        return 1.0
    forms = {f for t in sources.values() for w in content_words(normalize(t).text) for f in word_forms(w)}
    return sum(any(f in forms for f in word_forms(w)) for w in mine) / len(mine)


_BM25: dict[str, tuple[object, float]] = {}  # rank_bm25.BM25Okapi (pip install -e '.[bench]')


def bm25(claim: str, sources: dict[str, str]) -> float:
    """rank_bm25's Okapi score of the source sentence that scores best, over the claim's terms' idf summed
    times (k1 + 1), the most they could score (terms the source lacks count at the highest idf)."""
    from rank_bm25 import BM25Okapi  # bench-only: the tests that import this module's other helpers need not install it

    key = "\x00".join(sources.values())
    if key not in _BM25:
        if len(_BM25) > 32:
            _BM25.clear()
        docs = [_terms(s.text) or ["\x00"] for t in sources.values() for s in split_sentences(t)] or [["\x00"]]
        model = BM25Okapi(docs)
        _BM25[key] = (model, max(model.idf.values(), default=1.0))
    model, top = _BM25[key]
    query = _terms(claim)
    if not query:
        return 1.0
    best = float(max(model.get_scores(query)))
    most = sum(max(model.idf.get(q, top), 1e-6) for q in query) * (model.k1 + 1)
    return min(1.0, best / most) if most > 0 and not math.isnan(best) else 0.0


# -- featurising -----------------------------------------------------------------------------------------------
_INDEXES: dict[tuple[str, str], Index] = {}


def featurize(item: Item, search: SearchSection) -> Item:
    if len(_INDEXES) > 64:
        _INDEXES.clear()
    indexes = [_INDEXES.setdefault((d, t), Index(t, d)) for d, t in item.sources.items()]
    item.found = candidates(indexes, item.text, search)
    item.checks = check_claim(item.text, item.found, dict(item.sources))
    item.offered = [(p.doc_id, p.start_char, p.end_char) for c in item.found for p in c.parts]
    return refeaturize(item)


def refeaturize(item: Item) -> Item:
    """The claim's Evidence from the item's searched candidates and checks (the slow part, kept: a cached set
    is re-read with the current reading)."""
    item.features = read_evidence(item.text, item.found, item.checks, item.question, tuple(item.sources.values()), item.language)
    item.triage = item.features.settles_free()
    own = answer_part(item.text, item.question) or item.text  # the baselines read the answer's words, not the question's
    item.overlap = round(overlap(own, item.sources), 6)
    item.bm25 = round(bm25(own, item.sources), 6)
    return item


def claims_of(answer: str, question: str) -> list[str]:
    """An answer's claims as a run with ``decompose: sentences`` makes them (a short answer read with its
    question, "<question> <answer>")."""
    return [c.text for c in sentence_claims(answer, question).claims]


# -- the sets --------------------------------------------------------------------------------------------------
def hebrew_answers(data: Path) -> list[Item]:
    records = {r.id: r for r in load(data / "he_qa_sample.json")}
    out = []
    for a in load(data / "he_model_answers_sample.jsonl"):
        r = records[a.record_id]
        sources = {s.doc_id: s.text for s in r.sources}
        for g in a.gold_claims:
            spans = [(s.doc_id or r.sources[0].doc_id, s.start_char, s.end_char) for s in g.support]
            out.append(Item("hebrew answers", r.id, g.text, g.label, "he", sources, r.question or "", gold_sets=[spans]))
    return out


def wice(data: Path) -> list[Item]:
    out = []
    for r in load(data / "external" / "wice" / "claim_test.jsonl"):
        sources = {s.doc_id: s.text for s in r.sources}
        for c in r.claims:
            sets = [[(a.doc_id or r.sources[0].doc_id, a.start_char, a.end_char) for a in g] for g in c.gold_sets()]
            out.append(Item("WiCE", r.id, c.text, c.label, "en", sources, gold_sets=sets, collapse_contradicted=True))
    return out


def faithbench(data: Path) -> list[Item]:
    out = []
    for path in sorted((data / "external" / "faithbench").glob("batch_*.json")):
        for s in json.loads(path.read_text(encoding="utf-8"))["samples"]:
            marked = [a for a in s["annotations"] if a.get("summary_start") is not None]
            for n, claim in enumerate(sentence_claims(s["summary"], "").claims):  # a run's claims: list numbers dropped
                start, end = claim.spans[0].start_char, claim.spans[0].end_char
                inside = [a for a in marked if a["summary_start"] < end and start < a["summary_end"]]
                if inside and not any("Unwanted" in x for a in inside for x in a["label"]):
                    continue  # marked, but not as an error: neither correct nor wrong
                if claim.text.rstrip().endswith(":"):
                    continue  # "Here is a concise summary of the passage:": a lead-in, stating nothing to check
                label = "unsupported" if inside else "supported"
                out.append(Item("FaithBench", f'{s["sample_id"]}:{n}', claim.text, label, "en", {"source": s["source"]}, answer_level=True, collapse_contradicted=True))
    return out


def dialsummeval(data: Path) -> list[Item]:
    out = []
    for n, line in enumerate((data / "external" / "dialsummeval" / "human_judgment.jsonl").read_text(encoding="utf-8").splitlines()):
        r = json.loads(line)
        total = sum(a["consistency"] for a in r["annotations"])
        if total not in (15,) and total > 5:
            continue
        label = "supported" if total == 15 else "unsupported"
        for text in claims_of(r["summary"], ""):
            out.append(Item("DialSummEval", f"{n}", text, label, "en", {"dialogue": r["dialogue"]}, answer_level=True, collapse_contradicted=True))
    return out


def halueval(folder: Path | None) -> list[Item]:
    path = folder / "qa_one-turn_data.json" if folder else None
    if path is None or not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        r = json.loads(line)
        for answer, label in ((r["right_answer"], "supported"), (r["hallucinated_answer"], "unsupported")):
            for text in claims_of(answer, r["question"]):
                out.append(Item("HaluEval QA", f"{n}:{label}", text, label, "en", {"knowledge": r["knowledge"]}, r["question"], answer_level=True, collapse_contradicted=True))
    return out


def _squad_like(name: str, path: Path, language: str, limit: int | None) -> list[Item]:
    out = []
    paragraphs = [p for d in json.loads(path.read_text(encoding="utf-8"))["data"] for p in d["paragraphs"]]
    for pi, p in enumerate(paragraphs[:limit]):
        src = {"p": p["context"]}
        qas = [q for q in p["qas"] if not q.get("is_impossible") and q["answers"]]
        for qi, q in enumerate(qas):
            texts = {a["text"].strip() for a in q["answers"]}
            right = q["answers"][0]["text"].strip()
            out += [Item(name, f"{pi}:{qi}", t, "supported", language, src, q["question"], answer_level=True, collapse_contradicted=True) for t in claims_of(right, q["question"])]
            other = qas[(qi + 1) % len(qas)]["answers"][0]["text"].strip() if len(qas) > 1 else None
            if other and len(other.split()) <= SHORT_ANSWER_WORDS and not any(other in t or t in other for t in texts):
                out += [Item(name, f"{pi}:{qi}:w", t, "unsupported", language, src, q["question"], answer_level=True, collapse_contradicted=True)
                        for t in claims_of(other, q["question"])]
    return out


def heq(data: Path, limit: int | None = None) -> list[Item]:
    return _squad_like("HeQ", data / "external" / "heq" / "test_v1.1.json", "he", limit)


def faquad(data: Path, limit: int | None = None) -> list[Item]:
    return _squad_like("FaQuAD", data / "external" / "faquad" / "dataset.json", "pt", limit)


def makers(data: Path, halueval_dir: Path | None, limit: int | None = None, extra: Path | None = None) -> dict:
    """Every set's maker by name (unfeaturised); ``extra``: the folder of the sets :mod:`more_sets` reads."""
    from more_sets import more_sets  # it builds on this module's Item

    return {
        "hebrew answers": lambda: hebrew_answers(data),
        "WiCE": lambda: wice(data),
        "FaithBench": lambda: faithbench(data),
        "DialSummEval": lambda: dialsummeval(data),
        "HaluEval QA": lambda: halueval(halueval_dir),
        "HeQ": lambda: heq(data, limit),
        "FaQuAD": lambda: faquad(data, limit),
        **more_sets(extra),
    }


def all_sets(data: Path, halueval_dir: Path | None, search: SearchSection, limit: int | None = None) -> dict[str, list[Item]]:
    """Every set at hand, featurised (a set whose files are absent is left out)."""
    out = {}
    for name, make in makers(data, halueval_dir, limit).items():
        try:
            items = make()
        except FileNotFoundError:
            continue
        if items:
            out[name] = [featurize(i, search) for i in items]
    return out
