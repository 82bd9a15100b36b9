"""Claims as a reader reads them, and spans on token boundaries, over every labelled set (issue 35).

Each set's answers are decomposed as a run with ``decompose: sentences`` does
(:func:`judge.stages.decompose.sentence_claims`, the question given where the set has one) and each claim is
searched in its sources as a run does (:func:`judge.pipeline.candidates`, the default search). Counted:

- ``read with question``: claims the boundary read with their question;
- ``false glue``: of those, the ones whose own words are a full sentence (:func:`full_sentence`: 6 words or
  more with a finite verb, no dependent clause), which a reader reads alone;
- ``full sentences`` and ``rule glues``: every claim that is a full sentence, and how many of them the
  boundary's rule (:func:`judge.stages.claims.needs_question`) would read with a question were it an answer's
  first sentence: the rule's false-glue rate on every set, those without questions too;
- ``spans inside a token``: emitted spans (every candidate's parts, and each claim's quote of the answer)
  that start or end inside a word or a number of their text (:func:`judge.text.bounds.on_word_boundaries`).

The finite-verb test here is a plain oracle written apart from the rule under test
(judge.text.proposition.own_clause): a word after the first that may be a finite verb (in English text, one
lemminflect knows as a third-person or past form, not right after a determiner or a preposition; a closed
list of auxiliaries and copulas in English, Portuguese and Hebrew; Portuguese past endings), not within three
words after a relative pronoun, not before "by" (a participle), not capitalised (a name); a text that opens
with a subordinator or a relative ("because", "justamente porque", "que") is a dependent clause. No tagger runs here without a
model download, so it is a count by rule too: it errs towards calling a phrase a sentence.

    PYTHONPATH=. python bench/claims_reading.py [--data ../shared/data] [--limit N]

Point PYTHONPATH at another checkout to measure its code (main, before) with the same oracle.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
FULL_SENTENCE_WORDS = 6
_OPENS_DEPENDENT = frozenset("because since porque pois que כי מפני משום כיוון".split())
_RELATIVES = frozenset("who whom which that whose where que qual cujo cuja onde אשר".split())
_FINITE = frozenset(
    """
    is are was were has have had does did will would can could may might must shall should am
    isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't can't couldn't
    é são era eram foi foram será serão tem têm tinha tinham teve tiveram há havia houve pode podem está estão
    estava estavam possui possuem fica ficam
    היה היתה הייתה היו יהיה תהיה יש אין נמצא נמצאת נמצאים
    """.split()
)
_PT_FINITE_ENDINGS = re.compile(r"(?:ou|aram|eram|iram|avam)$")


_NOMINAL_BEFORE = frozenset(
    """the a an this these those his her its their our my your some many several few no each every any all both of in
    on at by for from with to into over under about after before between during without than as""".split()
)


def _may_be_finite(word: str) -> bool:
    """lemminflect knows ``word`` as a third-person or past form of a verb ("flows", "dated", "wrote")."""
    import lemminflect

    return any(
        word in forms for lemma in lemminflect.getAllLemmas(word, upos="VERB").get("VERB", ())
        for tag, forms in lemminflect.getAllInflections(lemma, upos="VERB").items() if tag in ("VBZ", "VBD")
    )


def full_sentence(text: str) -> bool:
    """6 words or more, a finite verb after the first word (not right after a relative pronoun), and no
    dependent clause ("because ...")."""
    found = _WORD.findall(text)
    words = [w.lower().replace("\u2019", "'") for w in found]
    if len(words) < FULL_SENTENCE_WORDS or _OPENS_DEPENDENT.intersection(words[:2]) or words[0] in _RELATIVES:
        return False  # "because ...", "justamente porque ...", "que ele acredita ...", "desde que ..."
    from judge.text.language import detect_language

    english = detect_language(text) == "en"
    if re.fullmatch(r"(?:it|that|there|he|she|what)'s", words[0]):
        return True  # "It's a series of ..."
    for i in range(1, len(words)):
        w, before = words[i], words[i - 1]
        if _RELATIVES.intersection(words[max(0, i - 3) : i]) or found[i][:1].isupper() or (i + 1 < len(words) and words[i + 1] == "by"):
            continue  # a relative clause's verb; a word of a name ("São Francisco"); a participle ("directed by")
        if w in _FINITE or re.fullmatch(r"(?:it|that|there|he|she|what)'s", w):
            return True
        if english and w.isalpha() and before not in _NOMINAL_BEFORE and _may_be_finite(w):
            return True
        if not english and len(w) >= 5 and _PT_FINITE_ENDINGS.search(w) and "a" <= w[0] <= "z":
            return True
    return False


# -- the sets: (set, answer, question, {doc id: source text}) ---------------------------------------------------
def _hebrew(data: Path) -> Iterator[tuple[str, str, dict]]:
    records = {r["id"]: r for r in json.loads((data / "he_qa_sample.json").read_text(encoding="utf-8"))}
    for r in records.values():
        yield r["reference_answer"], r["question"], {"source": r["source_text"]}
    for line in (data / "he_model_answers_sample.jsonl").read_text(encoding="utf-8").splitlines():
        a = json.loads(line)
        r = records[a["record_id"]]
        yield a["answer"], r["question"], {"source": r["source_text"]}


def _squad_like(path: Path, limit: int | None) -> Iterator[tuple[str, str, dict]]:
    paragraphs = [p for d in json.loads(path.read_text(encoding="utf-8"))["data"] for p in d["paragraphs"]]
    for p in paragraphs[:limit]:
        for q in p["qas"]:
            if q.get("answers"):
                yield q["answers"][0]["text"], q["question"], {"p": p["context"]}


def _wice(data: Path) -> Iterator[tuple[str, str, dict]]:
    from judge.datasets import load  # the sources as a run reads them (the adapter joins the evidence)

    for r in load(data / "external" / "wice" / "claim_test.jsonl"):
        for c in r.claims:
            yield c.text, "", {s.doc_id: s.text for s in r.sources}


def _faithbench(data: Path) -> Iterator[tuple[str, str, dict]]:
    for path in sorted((data / "external" / "faithbench").glob("batch_*.json")):
        for s in json.loads(path.read_text(encoding="utf-8"))["samples"]:
            yield s["summary"], "", {"source": s["source"]}


def _dialsummeval(data: Path) -> Iterator[tuple[str, str, dict]]:
    seen = set()
    for line in (data / "external" / "dialsummeval" / "human_judgment.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["summary"] not in seen:
            seen.add(r["summary"])
            yield r["summary"], "", {"dialogue": r["dialogue"]}


def labelled_sets(data: Path, limit: int | None = None) -> dict[str, Iterator[tuple[str, str, dict]]]:
    """Every labelled set of the shared data, as (answer, question, sources) triples."""
    return {
        "hebrew answers": _hebrew(data),
        "HeQ": _squad_like(data / "external" / "heq" / "test_v1.1.json", limit),
        "FaQuAD": _squad_like(data / "external" / "faquad" / "dataset.json", limit),
        "WiCE": _wice(data),
        "FaithBench": _faithbench(data),
        "DialSummEval": _dialsummeval(data),
    }


def measure(triples, search=None, with_spans: bool = True) -> dict:
    """The counts of the module docstring over (answer, question, sources) triples, with examples."""
    from judge.pipeline import candidates
    from judge.config import SearchSection
    from judge.search import Index
    from judge.stages.claims import answer_part
    from judge.stages.claims import needs_question
    from judge.stages.decompose import sentence_claims
    from judge.text.bounds import on_word_boundaries

    search = search or SearchSection()
    out = {"answers": 0, "claims": 0, "read with question": 0, "false glue": 0, "spans": 0, "spans inside a token": 0, "full sentences": 0, "rule glues": 0,
           "glue examples": [], "span examples": []}
    for answer, question, sources in triples:
        out["answers"] += 1
        admitted = sentence_claims(answer, question)
        indexes = [Index(t, d) for d, t in sources.items()] if with_spans else []
        for c in admitted.claims:
            out["claims"] += 1
            own = (answer_part(c.text, question) or c.text) if c.reads_question else c.text
            full = full_sentence(own)
            if c.reads_question:
                out["read with question"] += 1
                if full:
                    out["false glue"] += 1
                    out["glue examples"].append(own)
            if full:
                out["full sentences"] += 1
                if needs_question(own):
                    out["rule glues"] += 1
                    out["glue examples"].append(own)
            spans = [(answer, s.start_char, s.end_char) for s in c.spans]
            for cand in candidates(indexes, c.text, search) if indexes else []:
                spans += [(sources[p.doc_id], p.start_char, p.end_char) for p in cand.parts]
            for text, start, end in spans:
                out["spans"] += 1
                if not on_word_boundaries(text, start, end):
                    out["spans inside a token"] += 1
                    out["span examples"].append(text[max(0, start - 10) : end + 10])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    ap.add_argument("--limit", type=int, default=None, help="paragraphs of HeQ and FaQuAD (all by default)")
    ap.add_argument("--examples", type=int, default=3)
    args = ap.parse_args()
    import judge

    print(f"code: {Path(judge.__file__).parent}")
    print("| set | answers | claims | read with question | false glue | full sentences | rule glues | rule's rate | spans | inside a token | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, triples in labelled_sets(args.data, args.limit).items():
        t = time.perf_counter()
        m = measure(triples)
        rate = m["rule glues"] / m["full sentences"] if m["full sentences"] else 0.0
        print(f"| {name} | {m['answers']} | {m['claims']} | {m['read with question']} | {m['false glue']} | {m['full sentences']} | "
              f"{m['rule glues']} | {rate:.3f} | {m['spans']} | {m['spans inside a token']} | {time.perf_counter() - t:.0f} |")
        for ex in m["glue examples"][: args.examples]:
            print(f"    glued: {ex[:120]!r}")
        for ex in m["span examples"][: args.examples]:
            print(f"    span: {ex[:120]!r}")


if __name__ == "__main__":
    main()
