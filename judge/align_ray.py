"""``judge align --engine ray``: the alignment of :mod:`judge.align` on Ray Data, for corpora whose title index
does not fit one machine (the 21M-chunk wiki-18 on small workers).

Each row is cut into its units (one per supporting fact or hop) on the driver; each unit goes to the shard
of its base title (the title without trailing parentheticals, so the suffix fallback finds its chunks in the
same shard). A Ray Data ``groupby(shard).map_groups`` gives each shard's units to one task, which builds the
title index for its shard only (:class:`~judge.datasets.flashrag.TitleIndex` with ``share``: one pass over
the corpus keeping a nth of the titles) and aligns them with the same rule as the local engine
(:func:`judge.align.align_unit`). The driver puts each row back together in hop order
(:func:`judge.align.combine`), so the output and the report equal the local engine's.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from judge.align import AlignStats, Unit, UnitResult, align_unit, combine, row_units
from judge.datasets.flashrag import TitleIndex, base_title, share_of
from judge.problems import DatasetError, Problem


def _align_shard(batch: dict, corpus: str, shards: int) -> dict:
    """One shard's units (a Ray Data batch of numpy columns): its share of the title index, then each unit."""
    import time

    shard = int(batch["shard"][0])
    started = time.perf_counter()
    try:
        index = TitleIndex(corpus, share=(shard, shards))
    except DatasetError as e:  # sent back as data; the driver raises the problems of every shard together
        problems = json.dumps([p.model_dump() for p in e.problems])
        return {"n": [-1], "result": [problems], "shard": [shard]}
    built = time.perf_counter()
    out, marker = [], None
    for n, kind, title, text in zip(batch["n"], batch["kind"], batch["title"], batch["text"]):
        if n < 0:  # the shard's marker: every shard runs, so every shard's share of the id check is made
            marker = len(out)
            out.append("")
            continue
        res = align_unit(Unit(str(kind), str(title), json.loads(text)), index)
        out.append(json.dumps({"failed": res.failed, "used": res.used, "branches": res.branches, "gold": res.gold}))
    if marker is not None:  # the shard's timing and share, for the benchmark
        out[marker] = json.dumps({"shard": shard, "build_s": built - started, "align_s": time.perf_counter() - built,
                                  "units": len(out) - 1, "chunks_held": sum(len(a) for a in index.offsets.values())})
    return {"n": batch["n"], "result": out, "shard": batch["shard"]}


def align_on_ray(rows: list[dict], corpus: str | Path, workers: int | None = None, timings: list | None = None) -> tuple[list[dict], AlignStats]:
    """The kept rows and the stats, as :func:`judge.align.align` gives them, computed on Ray Data.
    ``timings``: a list that receives each shard's build and alignment seconds (benchmarks)."""
    from judge.runs.ray_engine import RayUnavailable, connect

    connect(None)  # Ray missing: a clear error, before any work
    try:
        import ray
        import ray.data
    except ImportError as e:
        raise RayUnavailable(f"align --engine ray needs Ray Data ({e.name} is missing): pip install 'judge[ray]'") from None
    logging.getLogger("ray.data").setLevel(logging.WARNING)  # its per-dataset notices would bury the report
    ray.data.DataContext.get_current().enable_progress_bars = False

    shards = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    stats = AlignStats()
    plans: list[tuple[list[Unit] | None, tuple | None]] = [row_units(row) for row in rows]
    items, first = [], []
    for units, _ in plans:
        first.append(len(items))
        for u in units or []:  # the text as JSON: a malformed one (not a string) must reach the rule as it is
            items.append({"n": len(items), "kind": u.kind, "title": u.title, "text": json.dumps(u.text),
                          "shard": share_of(base_title(u.title), shards)})
    results: list[UnitResult | None] = [None] * len(items)
    items += [{"n": -2, "kind": "", "title": "", "text": "null", "shard": s} for s in range(shards)]
    if items:
        ds = ray.data.from_items(items).groupby("shard").map_groups(
            _align_shard, fn_kwargs={"corpus": str(corpus), "shards": shards}, batch_format="numpy")
        problems: dict[int, list[Problem]] = {}
        for row in ds.iter_rows():
            if row["n"] == -1:
                problems[int(row["shard"])] = [Problem(**p) for p in json.loads(row["result"])]
            if row["n"] == -2 and timings is not None and row["result"]:
                timings.append(json.loads(row["result"]))
            if row["n"] < 0:
                continue
            r = json.loads(row["result"])
            results[int(row["n"])] = UnitResult(r["failed"], r["used"], r["branches"], r["gold"])
        if problems:
            raise DatasetError(_merged(problems))
    kept = []
    for row, (units, early), start in zip(rows, plans, first):
        stats.total += 1
        if early is not None:
            stats.drop(row, *early)
            continue
        out = combine(row, units, results[start:start + len(units)], stats)
        if out is not None:
            kept.append(out)
    return kept, stats


def _merged(by_shard: dict[int, list[Problem]]) -> list[Problem]:
    """The local index's problems from the shards': a corpus that does not parse fails every shard alike
    (one copy is kept); duplicate ids are split over the shards by id (all kept, sorted by id as locally)."""
    lists = [by_shard[s] for s in sorted(by_shard)]
    if any(p.field != "id" for p in lists[0]):
        return lists[0][:50]
    return sorted((p for ps in lists for p in ps), key=lambda p: p.record_id or "")[:50]
