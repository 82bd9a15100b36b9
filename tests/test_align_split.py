"""``judge align --engine ray`` reads a corpus split once by shard (issue 29.3): each shard's part holds exactly
the chunks of its titles, the split is reused while the corpus is unchanged, and a shard's index and its
duplicate-id problems are the ones the whole-corpus pass gave. No Ray needed: the split and the shard index are
plain functions (the Ray runs are in tests/test_ray_engine.py)."""

from __future__ import annotations

import json
import os

import pytest

from judge.align_ray import _shard_index, split_corpus
from judge.datasets.flashrag import TitleIndex, base_title, parse_chunk, share_of
from judge.problems import DatasetError
from tests.test_flashrag import CHUNKS


def _corpus(tmp_path, chunks=CHUNKS, name="corpus.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks), encoding="utf-8")
    return path


def test_each_part_holds_exactly_its_shards_chunks_and_the_split_is_written_once(tmp_path):
    corpus = _corpus(tmp_path)
    folder = split_corpus(corpus, 3)
    assert folder is not None and folder.parent == tmp_path / ".judge-split" and (folder / "DONE").exists()
    lines = []
    for i in range(3):
        part = (folder / f"titles-{i}.jsonl").read_text(encoding="utf-8").splitlines()
        assert all(share_of(base_title(parse_chunk(json.loads(line)).title), 3) == i for line in part)
        lines += part
    assert sorted(lines) == sorted(corpus.read_text(encoding="utf-8").splitlines())
    stamp = (folder / "DONE").stat().st_mtime_ns
    assert split_corpus(corpus, 3) == folder and (folder / "DONE").stat().st_mtime_ns == stamp  # reused, not rewritten
    assert split_corpus(corpus, 2) != folder  # another shard count, another split
    os.utime(corpus, ns=(1, 1))
    assert split_corpus(corpus, 3) != folder  # the corpus changed (its time): split again


def test_a_shards_index_from_its_part_is_the_index_of_its_share(tmp_path):
    corpus = _corpus(tmp_path)
    folder = split_corpus(corpus, 3, tmp_path / "elsewhere")
    assert folder.parent == tmp_path / "elsewhere"
    for i in range(3):
        share = TitleIndex(corpus, share=(i, 3))
        part = _shard_index(str(corpus), i, 3, str(folder))
        assert sorted(part.offsets) == sorted(share.offsets)
        for title in share.offsets:
            assert part.chunks(title) == share.chunks(title)


def test_duplicate_ids_and_bad_lines_give_the_whole_corpus_problems(tmp_path):
    chunks = CHUNKS + [{"id": "7", "contents": '"Alpha Town"\nA second text under an old id.'}, {"id": "30", "title": "Beta River", "text": "x"}]
    corpus = _corpus(tmp_path, chunks)
    with pytest.raises(DatasetError) as whole:
        TitleIndex(corpus)
    folder = split_corpus(corpus, 3)
    found = []
    for i in range(3):
        try:
            _shard_index(str(corpus), i, 3, str(folder))
        except DatasetError as e:
            found += e.problems
    assert sorted(found, key=lambda p: p.record_id) == whole.value.problems
    broken = _corpus(tmp_path, CHUNKS[:3] + ["not a chunk"] + CHUNKS[3:], name="broken.jsonl")
    with pytest.raises(DatasetError) as local:
        TitleIndex(broken)
    with pytest.raises(DatasetError) as split:
        split_corpus(broken, 3)
    assert split.value.problems == local.value.problems and "line 4" in split.value.problems[0].record_id
    assert not list((tmp_path / ".judge-split").glob("broken.jsonl.*"))  # nothing half-written is left to reuse


def test_an_unwritable_place_for_the_split_falls_back_to_reading_the_whole_corpus(tmp_path):
    corpus = _corpus(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert split_corpus(corpus, 2, blocker / "sub") is None
