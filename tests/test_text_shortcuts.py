"""The no-model path's shortcuts (issue 48) read texts exactly as the longer ways they replace: each is
checked against that way on random texts built from the characters and shapes that matter."""

from __future__ import annotations

import importlib
import random
from itertools import chain

import numpy as np
import pytest

from judge.search.index import _reading, _sentence_terms
from judge.stages import names, source
from judge.stages.words import sentence_bounds
from judge.text.sentences import sentences_of, split_sentences
from judge.text.tokens import word_forms, word_spans, words

N = importlib.import_module("judge.text.normalize")  # the module (judge.text.normalize is also a function)

PIECES = [
    "Dr. Smith", "3.5", "1. Item", "2. Next", "U.S.", "said:", "\u200bX", "a\u200e.", "word.\u200b Next", 'end."', "(a)",
    'ש"ח', "ש''ח", "\ufb01ne", "e.g. this", "4.1.", "x'", "'y", "\n\n", "\n- bullet", "Speaker: hi", "50%", "1,450",
    "...", "\u2026", "?!", "  ", "\t", "é", "e\u0301", "\u0661\u0662", "\u0915\u094d\u0937\u093f", "\u05b0\u05d0", "-",
    "\u2014", "O'Brien", "Smith's", "“Quoted”", "Correction: the figure is 12.", "It was mistyped.", "should read 15",
    "נפלה טעות בכתבה", "תיקון: המספר הוא 5", "خطأ مطبعي", "Update: July 5, 2018 8:08 AM EDT", "was incorrectly reported",
    "Errata: foo", "An earlier version of this article said 3.", " ", " ", ". ", "word", "Word", "the", "The",
]


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30))) for _ in range(n)]


def _general(text: str, fold: bool) -> N.NormalizedText:
    saved = N._one_to_one
    N._one_to_one = lambda *a: None
    try:
        return N.normalize(text, fold)
    finally:
        N._one_to_one = saved


@pytest.mark.parametrize("fold", [False, True])
def test_the_identity_map_of_a_short_text_is_the_general_one(fold):
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(0x250)] + [chr(c) for c in range(0x590, 0x660)] + list("\u200b\u00a0\ufb01\u2019\u201c")
    texts = _texts(300, 1) + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25))) for _ in range(2000)]
    shortcut = 0
    for text in texts:
        a, b = N.normalize(text, fold), _general(text, fold)
        assert a.text == b.text and a.starts.dtype == b.starts.dtype == a.ends.dtype == np.int64
        assert np.array_equal(a.starts, b.starts) and np.array_equal(a.ends, b.ends), repr(text)
        shortcut += N._one_to_one(text, fold) is not None
    assert shortcut > 300  # the shortcut is taken, not only declined


def test_the_index_terms_from_one_tokenisation_are_each_sentences_own():
    for text in _texts(600, 2) + [" ".join(_texts(40, 3))]:
        r = _reading.__wrapped__(text)
        per_slice = [list(chain.from_iterable(map(word_forms, words(r.norm.text[a:b])))) for a, b in r.norm_ranges]
        assert _sentence_terms(r.norm.text, r.norm_ranges) == per_slice, repr(text)


def test_cues_looked_for_only_where_the_source_holds_a_phrase_are_the_same():
    for text in _texts(600, 4):
        nt = N.normalized(text)
        bounds = sentence_bounds(text)
        cut = np.searchsorted(nt.starts, [x for a, b in bounds for x in (a, b)])
        sentences = [nt.text[cut[2 * i] : cut[2 * i + 1]].strip() for i in range(len(bounds))]
        every = {i: c for i, x in enumerate(sentences) if (c := source._cue(x)) is not None}
        assert source.source_view.__wrapped__(text).cues == every, repr(text)


def test_the_text_before_a_word_is_read_as_a_copy_of_it_was():
    def copied(text: str, at: int) -> bool:  # the definition before issue 48
        before = text[:at].rstrip(" \t\"'“‘«(*-\u2022")
        return not before or before[-1] in ".!?:\n\u2026"

    for text in _texts(300, 5):
        assert all(names._opens_sentence(text, at) == copied(text, at) for at in range(len(text) + 1)), repr(text)


def test_kept_readings_hand_out_what_a_fresh_reading_would():
    text = " ".join(_texts(60, 6))
    norm = N.normalized(text).text
    spans = word_spans(norm)
    spans.clear()  # the caller's own list: the kept spans are untouched
    assert word_spans(norm) == [(m.start(), m.end(), m.group()) for m in importlib.import_module("judge.text.tokens")._WORD.finditer(norm)]
    assert list(sentences_of(text)) == split_sentences(text)
