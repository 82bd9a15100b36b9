"""Text utilities: normalisation with an offset map, sentence segmentation, tokenisation for matching.

The names are loaded on first use (PEP 562): the command line imports ``judge.text.control`` for every
command, and `judge --help` should not pay for numpy.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judge.text.language import detect_language
    from judge.text.normalize import NormalizedText, normalize
    from judge.text.sentences import Sentence, sentence_index, split_sentences
    from judge.text.tokens import content_words, word_forms, words

_WHERE = {
    "detect_language": "language",
    "NormalizedText": "normalize",
    "normalize": "normalize",
    "Sentence": "sentences",
    "sentence_index": "sentences",
    "split_sentences": "sentences",
    "content_words": "tokens",
    "word_forms": "tokens",
    "words": "tokens",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'judge.text' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"judge.text.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """Importing a submodule binds it on its package; ``judge.text.normalize`` (the module) must not shadow
    ``normalize`` (the function), whichever of the two is imported first."""

    def __setattr__(self, name: str, value) -> None:
        if name in _WHERE and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
