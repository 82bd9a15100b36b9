"""``judge align --engine ray``: the alignment of :mod:`judge.align` on Ray Data, for corpora whose title index
does not fit one machine (the 21M-chunk wiki-18 on small workers).

Each row's units (one per supporting fact or hop) go to the shard of their base title (so the suffix fallback
finds its chunks in the same shard); ``groupby(shard).map_groups`` gives each shard to one task, which indexes
its titles only and aligns with the local rule (:func:`judge.align.align_unit`); the driver puts rows back
together in hop order (:func:`judge.align.combine`), so output and report equal the local engine's. Every node
must reach the corpus and its split at the same path (shared storage).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

from judge.align import AlignStats, Unit, UnitResult, align_unit, combine, row_units
from judge.datasets.flashrag import TitleIndex, base_title, duplicate_id_problems, read_corpus, share_of
from judge.problems import DatasetError, Problem


SPLIT_FORMAT = 1  # the layout of a split corpus; a new one is written when it changes
SPLIT_DIR = ".judge-split"  # beside the corpus by default: where the corpus is, every node already reads


def split_key(corpus: Path, shards: int) -> str:
    """What a split stands for: the corpus (its resolved path, size and modification time) and the shard count."""
    st = corpus.stat()
    blob = f"{SPLIT_FORMAT}\0{corpus.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{shards}"
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def split_corpus(corpus: str | Path, shards: int, root: str | Path | None = None) -> Path | None:
    """The corpus split by shard, written once (``root``, default ``.judge-split`` beside the corpus) and reused
    while the corpus is unchanged, so shard i's task reads only its part; the one pass checks every line as the
    local index does. None when ``root`` cannot be written (each shard then reads the whole corpus)."""
    corpus = Path(corpus)
    root = Path(root) if root is not None else corpus.parent / SPLIT_DIR
    try:
        folder = root / f"{corpus.name}.{split_key(corpus, shards)}"
    except OSError as e:
        raise DatasetError([Problem(file=str(corpus), message=f"cannot read the corpus: {e.strerror or e}")]) from None
    if (folder / "DONE").exists():
        return folder
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=root))
    except OSError:
        return None
    problems: list[Problem] = []
    try:
        titles = [open(tmp / f"titles-{i}.jsonl", "wb") for i in range(shards)]  # noqa: SIM115 (closed below)
        ids = [open(tmp / f"ids-{i}.tsv", "w", encoding="utf-8", errors="surrogatepass") for i in range(shards)]  # noqa: SIM115
        try:
            for lineno, _, line, chunk in read_corpus(corpus, problems):
                titles[share_of(base_title(chunk.title), shards)].write(line if line.endswith(b"\n") else line + b"\n")
                ids[share_of(chunk.id, shards)].write(f"{json.dumps(chunk.id)}\t{lineno}\n")
        finally:
            for f in titles + ids:
                f.close()
        if problems:
            raise DatasetError(problems[:50])
        (tmp / "DONE").write_text(f"{corpus}\n", encoding="utf-8", errors="surrogatepass")
        try:
            os.rename(tmp, folder)
        except OSError:  # another process wrote the same split meanwhile: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _shard_index(corpus: str, shard: int, shards: int, split: str | None) -> TitleIndex:
    """Shard ``shard``'s title index: from its part of the split corpus (its ids checked from its id part), or,
    without a split, from a pass over the whole corpus keeping its share."""
    if split is None:
        return TitleIndex(corpus, share=(shard, shards))
    index = TitleIndex(Path(split) / f"titles-{shard}.jsonl", check_ids=False)
    with open(Path(split) / f"ids-{shard}.tsv", encoding="utf-8", errors="surrogatepass") as f:
        pairs = ((json.loads(cid), int(line)) for cid, _, line in (row.rstrip("\n").partition("\t") for row in f))
        problems = duplicate_id_problems(corpus, pairs)
    if problems:
        raise DatasetError(problems[:50])
    return index


def _align_shard(batch: dict, corpus: str, shards: int, split: str | None = None) -> dict:
    """One shard's units (a Ray Data batch of numpy columns): its share of the title index, then each unit."""
    import time

    shard = int(batch["shard"][0])
    started = time.perf_counter()
    try:
        index = _shard_index(corpus, shard, shards, split)
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


def align_on_ray(rows: list[dict], corpus: str | Path, workers: int | None = None, timings: list | None = None,
                 address: str | None = None, split_dir: str | Path | None = None, split: bool = True) -> tuple[list[dict], AlignStats]:
    """The kept rows and the stats, as :func:`judge.align.align` gives them, computed on Ray Data. ``timings``
    receives each shard's seconds (benchmarks); ``address``: the cluster (None: a local Ray); ``split``: shards
    read their part of the corpus split once (:func:`split_corpus`)."""
    from judge.raylib import RayUnavailable, connect

    connect(address)  # Ray missing or the cluster unreachable: a clear error, before any work
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
        folder = split_corpus(corpus, shards, split_dir) if split else None
        ds = ray.data.from_items(items).groupby("shard").map_groups(
            _align_shard, fn_kwargs={"corpus": str(corpus), "shards": shards, "split": str(folder) if folder else None}, batch_format="numpy")
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
