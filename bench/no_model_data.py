"""The learned judge's training rows: every labelled set's claims searched, checked and featurised once, kept
as JSON on disk (never pickle) so that fitting reruns in seconds.

A row is what the fit and its held-out figures need of one claim: its set, answer, gold label, the features
(:meth:`judge.stages.evidence.Evidence.features`, the one featuriser), the Evidence the judge's labels
are read from, whether triage settles it for free, and the two baselines' scores.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from grounding_sets import Item, bm25, makers, overlap

from judge.judges.base import ClaimToJudge, offer
from judge.stages.evidence import FEATURES, read_evidence  # features() rounds as the rows keep them
from judge.judges.triage import verbatim_refusal
from judge.pipeline import candidates
from judge.config import SearchSection
from judge.search import Index
from judge.stages.evidence import check_claim
from judge.stages.claims import answer_part

SEARCH = SearchSection(k=5)
# Bumped when what a row holds changes (the search, the checks or the featuriser): a cache of another
# version is recomputed, never half-read.
VERSION = "2:" + hashlib.sha256(",".join(FEATURES).encode()).hexdigest()[:12]


def row(item: Item) -> dict:
    """One claim, searched over its record's sources, checked and featurised as a run does."""
    indexes = [Index(t, d) for d, t in item.sources.items()]
    found = candidates(indexes, item.text, SEARCH)
    checks = check_claim(item.text, found, dict(item.sources))
    evidence = read_evidence(item.text, found, checks, item.question or None, tuple(item.sources.values()), item.language)
    vec = evidence.features()
    offered = ClaimToJudge("1", item.text, offer(found, "1"), checks)
    texts = dict(item.sources) | ({None: next(iter(item.sources.values()))} if len(item.sources) == 1 else {})
    own = answer_part(item.text, item.question) or item.text  # the baselines read the answer's words, not the question's
    return {
        "group": item.group, "text": item.text, "label": item.label, "language": item.language,
        "collapse": item.collapse_contradicted, "answer_level": item.answer_level,
        "x": [vec[n] for n in FEATURES], "support": evidence.model_dump(),
        "free": bool(found) and verbatim_refusal(offered, texts) is None,
        "overlap": round(overlap(own, item.sources), 6), "bm25": round(bm25(own, item.sources), 6),
    }


def load_rows(data: Path, extra: Path | None, cache: Path, limit: int | None, only: set[str] | None = None) -> dict[str, list[dict]]:
    """Rows of every set at hand, by set name; a set cached under this VERSION is read, the rest computed."""
    cache.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, make in makers(data, extra / "halueval" if extra else None, limit, extra).items():
        if only and name not in only:
            continue
        path = cache / f"{name.replace(' ', '_').replace('/', '-')}.json"
        if path.exists():
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("version") == VERSION and doc.get("limit") == limit:
                out[name] = doc["rows"]
                continue
        try:
            items = make()
        except FileNotFoundError:
            continue
        t0 = time.perf_counter()
        rows = [row(i) for i in items]
        print(f"{name}: {len(rows)} claims featurised in {time.perf_counter() - t0:.0f} s", flush=True)
        path.write_text(json.dumps({"version": VERSION, "limit": limit, "rows": rows}), encoding="utf-8")
        out[name] = rows
    return out
