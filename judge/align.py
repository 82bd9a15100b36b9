"""``judge align``: FlashRAG supporting facts to the wiki-18 chunks that hold them (deterministic, no LLM).

The matching rules (HotpotQA / 2WikiMultiHopQA by sentence: substring or word-trigram recall >= 0.6; MuSiQue
by hop paragraph: substring, 5-gram Jaccard >= 0.5 or 3-gram recall >= 0.5) are in docs/formats.md. A row is
kept only if every supporting fact / hop aligns to a chunk (then it gets ``metadata.gold_doc_ids``, every other
field verbatim); else it is dropped with its reason. An empty supporting text is dropped: it would be a
substring of every chunk of its title, which is title-only labelling, and the card forbids it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from judge.datasets.flashrag import TitleIndex
from judge.problems import DatasetError, Problem, shown
from judge.text import normalize

_WORDS = re.compile(r"\w+")
SENTENCE_TRIGRAM_RECALL = 0.6
PARAGRAPH_JACCARD_5 = 0.5
PARAGRAPH_RECALL_3 = 0.5


def norm(text: str) -> str:
    return " ".join(_WORDS.findall(normalize(text).text))


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def recall(source: str, target: str, n: int) -> float:
    grams = ngrams(source, n)
    return len(grams & ngrams(target, n)) / len(grams) if grams else 0.0


def jaccard(a: str, b: str, n: int) -> float:
    ga, gb = ngrams(a, n), ngrams(b, n)
    return len(ga & gb) / len(ga | gb) if ga | gb else 0.0


def sentence_matches(sentence: str, chunk_text: str) -> str | None:
    """Which branch of the sentence rule matched ('substring', 'trigram_recall'), or None."""
    s, c = norm(sentence), norm(chunk_text)
    if not s:
        return None
    if s in c:
        return "substring"
    if recall(s, c, 3) >= SENTENCE_TRIGRAM_RECALL:
        return "trigram_recall"
    return None


def paragraph_matches(paragraph: str, chunk_text: str) -> str | None:
    """Which branch of the paragraph rule matched, or None."""
    p, c = norm(paragraph), norm(chunk_text)
    if not p or not c:
        return None
    if c in p or p in c:
        return "substring"
    if jaccard(p, c, 5) >= PARAGRAPH_JACCARD_5:
        return "5gram_jaccard"
    if recall(p, c, 3) >= PARAGRAPH_RECALL_3:
        return "3gram_recall"
    return None


@dataclass
class AlignStats:
    total: int = 0
    kept: int = 0
    reasons: Counter = field(default_factory=Counter)
    branches: Counter = field(default_factory=Counter)  # over kept rows
    suffix_fallbacks: int = 0  # over kept rows
    dropped: list[dict] = field(default_factory=list)  # {id, reason, hop, title}

    def drop(self, row: dict, reason: str, hop: int | None = None, title: str | None = None) -> None:
        self.reasons[reason] += 1
        self.dropped.append({"id": row.get("id"), "reason": reason, "hop": hop, "title": title})

    def as_dict(self) -> dict:
        return {
            "kept": self.kept, "total": self.total, "rate": (self.kept / self.total) if self.total else None,
            "dropped": self.total - self.kept, "reasons": dict(self.reasons), "match_branches": dict(self.branches),
            "suffix_fallbacks": self.suffix_fallbacks,
        }


def shape_problems(row: dict, file: str) -> list[Problem]:
    """What makes a row unreadable by the alignment, field by field, checked for every row before any look-up
    (a mistyped row is one line naming it, never a TypeError halfway). A hop whose text is missing or not text
    is no input error: it is dropped as empty_supporting_text."""
    rid = str(row.get("id"))
    out: list[Problem] = []

    def bad(field: str, expected: str, found) -> None:
        out.append(Problem(file=file, record_id=rid, field=f"metadata.{field}", message=f"expected {expected}, found {shown(found)}"))

    meta = row.get("metadata") or {}
    hops = meta.get("question_decomposition")
    if hops:
        if not isinstance(hops, list):
            bad("question_decomposition", "a list of hops (objects with support_paragraph)", hops)
            return out
        for i, hop in enumerate(hops):
            paragraph = hop.get("support_paragraph") if isinstance(hop, dict) else None
            if not isinstance(hop, dict):
                bad(f"question_decomposition[{i}]", "an object with support_paragraph", hop)
            elif paragraph and not isinstance(paragraph, dict):
                bad(f"question_decomposition[{i}].support_paragraph", "an object with title and paragraph_text", paragraph)
            elif paragraph and not isinstance(paragraph.get("title", ""), str):
                bad(f"question_decomposition[{i}].support_paragraph.title", "text", paragraph.get("title"))
        return out
    facts = meta.get("supporting_facts") or []
    if isinstance(facts, dict):
        titles, ids = facts.get("title", []), facts.get("sent_id", [])
        if not isinstance(titles, list) or not all(isinstance(t, str) for t in titles):
            bad("supporting_facts.title", "a list of titles (text)", titles)
        if not isinstance(ids, list):
            bad("supporting_facts.sent_id", "a list of sentence ids", ids)
    elif isinstance(facts, list):
        for i, fact in enumerate(facts):
            if not (isinstance(fact, list) and len(fact) >= 2 and isinstance(fact[0], str)):
                bad(f"supporting_facts[{i}]", "a [title, sentence id] pair", fact)
    else:
        bad("supporting_facts", "a list of [title, sentence id] pairs or {title: [...], sent_id: [...]}", facts)
    ctx = meta.get("context") or {}
    if isinstance(ctx, dict):
        key = "sentences" if "sentences" in ctx else "content"
        titles, texts = ctx.get("title", []), ctx.get(key, [])
        if not isinstance(titles, list) or not all(isinstance(t, str) for t in titles):
            bad("context.title", "a list of titles (text)", titles)
        if not isinstance(texts, list) or not all(isinstance(t, list) for t in texts):
            bad(f"context.{key}", "a list of sentence lists", texts)
    elif isinstance(ctx, list):
        for i, pair in enumerate(ctx):
            if not (isinstance(pair, list) and len(pair) >= 2 and isinstance(pair[0], str) and isinstance(pair[1], list)):
                bad(f"context[{i}]", "a [title, [sentences]] pair", pair)
    else:
        bad("context", "{title: [...], sentences: [...]} or a list of [title, [sentences]] pairs", ctx)
    return out


def check_shapes(rows: list[dict], file: str) -> None:
    """DatasetError naming every mistyped row and field (the first 50), before any row is aligned."""
    problems = [p for row in rows for p in shape_problems(row, file)]
    if problems:
        raise DatasetError(problems[:50])


def _supporting_facts(meta: dict) -> list[tuple[str, int]]:
    sf = meta.get("supporting_facts") or []
    if isinstance(sf, dict):
        return list(zip(sf.get("title", []), sf.get("sent_id", [])))
    return [(x[0], x[1]) for x in sf]


def _context_sentences(meta: dict) -> dict[str, list[str]]:
    ctx = meta.get("context") or {}
    if isinstance(ctx, dict):
        key = "sentences" if "sentences" in ctx else "content"
        return dict(zip(ctx.get("title", []), ctx.get(key, [])))
    return {x[0]: x[1] for x in ctx}


def _hops(meta: dict) -> list[dict]:
    return [h.get("support_paragraph") or {} for h in meta.get("question_decomposition") or []]


@dataclass
class Unit:
    """One supporting fact (a sentence) or hop (a paragraph) of a row: what must align to a chunk of ``title``."""

    kind: str  # "sentence" | "paragraph"
    title: str
    text: object  # a str when well formed; anything else is refused as empty_supporting_text


@dataclass
class UnitResult:
    """How one unit aligned: the reason it failed (None: it matched), the title used, the branches that
    matched and the gold chunk ids, in chunk order."""

    failed: str | None
    used: str | None = None
    branches: dict[str, int] = field(default_factory=dict)
    gold: list[str] = field(default_factory=list)


def row_units(row: dict) -> tuple[list[Unit] | None, tuple[str, int | None, str | None] | None]:
    """A row's units, or why it is dropped before any look-up in the corpus (reason, hop, title)."""
    meta = row.get("metadata") or {}
    if meta.get("question_decomposition"):
        units = [Unit("paragraph", h.get("title", ""), h.get("paragraph_text", "")) for h in _hops(meta)]
    else:
        sentences = _context_sentences(meta)
        units = []
        for hop, (title, sent_id) in enumerate(_supporting_facts(meta)):
            sents = sentences.get(title)
            if sents is None or not isinstance(sent_id, int) or not 0 <= sent_id < len(sents):
                return None, ("sentence_not_in_context", hop, title)
            units.append(Unit("sentence", title, sents[sent_id]))
    if not units:
        return None, ("no_supporting_facts", None, None)
    return units, None


def align_unit(unit: Unit, index: TitleIndex) -> UnitResult:
    """One unit against the chunks of its title (through the suffix fallback)."""
    if not isinstance(unit.text, str) or not norm(unit.text):
        return UnitResult("empty_supporting_text")
    chunks, used = index.chunks(unit.title)
    if used is None:
        return UnitResult("title_not_in_corpus")
    out = UnitResult(None, used)
    for chunk in chunks:
        branch = sentence_matches(unit.text, chunk.text) if unit.kind == "sentence" else paragraph_matches(unit.text, chunk.text)
        if branch:
            key = f"{unit.kind}:{branch}"
            out.branches[key] = out.branches.get(key, 0) + 1
            if chunk.id not in out.gold:
                out.gold.append(chunk.id)
    if not out.gold:
        out.failed = "no_chunk_matched"
    return out


def combine(row: dict, units: list[Unit], results, stats: AlignStats) -> dict | None:
    """The row with metadata.gold_doc_ids from its units' results (in hop order; the first failed hop drops
    it, with its reason), or None. ``results`` may be lazy: no unit after the first failure is asked for."""
    gold: list[str] = []
    branches: Counter = Counter()
    fallbacks = 0
    for hop, (unit, res) in enumerate(zip(units, results)):
        if res.failed is not None:
            stats.drop(row, res.failed, hop, unit.title)
            return None
        fallbacks += res.used != unit.title
        branches.update(res.branches)
        gold.extend(g for g in res.gold if g not in gold)
    stats.kept += 1
    stats.branches.update(branches)
    stats.suffix_fallbacks += fallbacks
    meta = row.get("metadata") or {}
    return {**row, "metadata": {**meta, "gold_doc_ids": gold}}


def align_row(row: dict, index: TitleIndex, stats: AlignStats) -> dict | None:
    """The row with metadata.gold_doc_ids, or None (dropped; the reason is recorded in ``stats``)."""
    stats.total += 1
    units, early = row_units(row)
    if early is not None:
        stats.drop(row, *early)
        return None
    return combine(row, units, (align_unit(u, index) for u in units), stats)


def align(rows: list[dict], index: TitleIndex) -> tuple[list[dict], AlignStats]:
    check_shapes(rows, "rows")
    stats = AlignStats()
    kept = [r for r in (align_row(row, index, stats) for row in rows) if r is not None]
    return kept, stats
