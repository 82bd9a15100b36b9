"""``judge align`` as a command: read the rows, align them on this machine (judge.align) or on Ray Data
(judge.align_ray), write the kept rows (all or nothing) and, if asked, the report of every dropped row."""

from __future__ import annotations

import json
from pathlib import Path

from judge.align import align, check_shapes
from judge.datasets.flashrag import TitleIndex, load_rows, refuse_overwrite, write_atomic, write_rows


def align_file(data: str | Path, corpus: str | Path, out: str | Path, report: str | Path | None = None,
               engine: str = "local", workers: int | None = None, address: str | None = None, split_dir: str | Path | None = None) -> dict:
    """``judge align``: read, align, write the kept rows (all or nothing) and, if asked, a JSON report that
    lists every dropped row with its reason. Input problems raise DatasetError. ``engine="ray"``: the same
    alignment on Ray Data, the title index split over ``workers`` shards (judge.align_ray), on the cluster at
    ``address`` (None: a local Ray), the corpus split once into ``split_dir`` (default: beside the corpus)."""
    refuse_overwrite(out, (data, corpus))
    rows = load_rows(data)
    check_shapes(rows, str(data))
    if engine == "ray":
        from judge.align_ray import align_on_ray  # Ray Data only when asked

        kept, stats = align_on_ray(rows, corpus, workers, address=address, split_dir=split_dir)
    else:
        kept, stats = align(rows, TitleIndex(corpus))
    write_rows(out, kept, inputs=(data, corpus))
    rep = {**stats.as_dict(), "out": str(out)}
    if report is not None:
        text = json.dumps({**rep, "dropped_rows": stats.dropped}, ensure_ascii=False, indent=1) + "\n"
        write_atomic(report, [text], inputs=(data, corpus, out))
        rep["report"] = str(report)
    return rep
