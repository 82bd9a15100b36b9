"""Text utilities: normalisation with an offset map, sentence segmentation, tokenisation for matching."""

from judge.text.language import detect_language
from judge.text.normalize import NormalizedText, normalize
from judge.text.sentences import Sentence, sentence_index, split_sentences
from judge.text.tokens import content_words, word_forms, words

__all__ = [
    "NormalizedText",
    "Sentence",
    "content_words",
    "detect_language",
    "normalize",
    "sentence_index",
    "split_sentences",
    "word_forms",
    "words",
]
