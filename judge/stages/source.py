"""A source read once for the Evidence's whole-source readings (an extractor: no claim here): its sentences, their
forms, its numbers and its correction cues, where it corrects itself (English, Hebrew, Portuguese, Arabic,
Spanish), read by :func:`judge.stages.evidence.find_conflicts`."""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np

from judge.stages.numbers import is_month, source_numbers
from judge.stages.words import sentence_bounds, sentence_forms
from judge.text.memo import text_memo
from judge.text.tokens import SHARED_START
from judge.text import content_words
from judge.text.normalize import normalized

# Cues matched on normalised (lower-cased, quote- and dash-unified) sentences. A correction is the source
# correcting itself, which editors write in a few set ways: a label opening the sentence ("Correction:",
# "תיקון:", "Errata:", "تصحيح:") or an editorial phrase ("should read", "an earlier version of this
# article", "נפלה טעות", "onde se lê"). A word of the same family inside a narrative ("the dam was corrected",
# "the Egyptians mistakenly believed", "כפי שנהוג לחשוב בטעות", "توضيح" in an essay) is no correction: it is
# a cue only with a word of publishing beside it ("בטעות נכתב", "was incorrectly reported").
_LABELS = (
    r"correction|corrections|clarification|erratum|errata|retraction|update|updated|editor'?s note"
    r"|correção|correcao|correções|correcoes|errata|retificação|retificacao|esclarecimento|atualização|atualizacao"
    r"|nota do editor|nota da redação|nota da redacao|corrección|correccion|fe de erratas|aclaración|aclaracion|actualización"
    r"|תיקון|תיקונים|הבהרה|עדכון|הערת העורך|הערת המערכת|טעות"
    r"|تصحيح|تصويب|استدراك|توضيح|تحديث|تنويه"
)
_LABEL = re.compile(rf"^[\W_]{{0,3}}(?:{_LABELS})\s*(?::|\s-\s)")
_EDITORIAL = re.compile(
    r"(?<![\w])(?:mistyped|misprint|misprinted|misstated|misreported|misquoted|typo|typographical error"
    r"|should (?:have )?read|incorrectly (?:stated|reported|said|gave|listed|identified|named)"
    r"|(?:an earlier|a previous|the original) version of this|this (?:article|story|report) (?:has been|was) (?:corrected|updated)"
    r"|onde se lê|onde se le|leia-se|erro de digitação|erro de digitacao|fe de erratas|debe decir|donde dice)(?![\w])"
    r"|(?<![\u05d0-\u05ea])[והבלמשכ]{0,2}(?:נפלה טעות|טעות הקלדה|טעות דפוס|צ\"ל|הנתון הנכון|המספר הנכון)(?![\u05d0-\u05ea])"
    r"|(?<![\u0621-\u064a])[وفبلك]?(?:خطأ مطبعي|والصحيح|الصواب|صوابه|سقط سهوا|ورد خطأ|ورد سهوا)(?![\u0621-\u064a])"
)
# Narrative words of the family, a cue only beside a word of publishing.
_LATIN_WORDS = re.compile(
    r"(?<![\w])(?:corrected|correction|erroneously|mistakenly|wrongly|incorrectly|in error|was wrong|corrigido|corrigida"
    r"|corrigimos|retificado|retificada|erroneamente|equivocadamente|por engano|corregido|corregida)(?![\w])"
)
_HEBREW = re.compile(
    r"(?<![\u05d0-\u05ea])[והבלמשכ]{0,2}(?:תיקון|תוקן|תוקנה|טעות|טעויות|שגיאה|שגוי|שגויה|עודכן|צריך להיות|צריכה להיות|הנכון הוא)"
    r"(?![\u05d0-\u05ea])"
)
_ARABIC = re.compile(r"(?<![\u0621-\u064a])[وفبلك]?(?:ال)?(?:تصحيح|تصويب|خطأ|خطا|الصحيح|سهوا)(?![\u0621-\u064a])")
_PUBLISHED = re.compile(
    r"(?<![\w])(?:written|wrote|printed|published|reported|stated|listed|quoted|article|story|headline|caption"
    r"|escrito|escrita|publicado|publicada|informado|informada|noticiado|matéria|materia|artigo|reportagem|legenda"
    r"|escrito|publicado|artículo|articulo|nota)(?![\w])"
    r"|(?<![\u05d0-\u05ea])[והבלמשכ]{0,2}(?:נכתב|נכתבה|נכתבו|פורסם|פורסמה|פורסמו|דווח|דווחה|צוין|צוינה|הכתבה|בכתבה|הידיעה|בידיעה|הנתון|בנתון|הכותרת)"
    r"(?![\u05d0-\u05ea])"
    r"|(?<![\u0621-\u064a])[وفبلك]?(?:كتب|نشر|ورد|ذكر|المقال|الخبر|الرقم)(?![\u0621-\u064a])"
)
_UPDATE = re.compile(r"update|atualiza|actualiza|עדכון|تحديث")  # the labels a page's time stamp also wears
_CLOCK_WORDS = frozenset("st nd rd th am pm a.m p.m et ct mt pt utc gmt edt est cdt cst mdt mst pdt pst bst cet cest ist idt".split())


def _only_a_time(rest: str) -> bool:
    """An update label followed by a date or a time and nothing else ("Updated: July 5, 2018 8:08 AM EDT")
    stamps a page; it corrects nothing (a "Correction:" with a bare year still may)."""
    words = content_words(rest)  # ``rest`` is normalized: lower case
    dated = any(is_month(w) or ":" in w or (w.isdigit() and len(w) == 4) for w in words)  # "Updated: 12" is no stamp
    return dated and all(w[0].isdigit() or is_month(w) or w in _CLOCK_WORDS for w in words)


def correction_cue(sentence: str) -> str | None:
    """The correction cue in ``sentence``: a correction label opening it, an editorial phrase, or a word of
    the family beside a word of publishing; None for anything else."""
    return _cue(normalized(sentence).text.strip())


def _cue(text: str, editorial: bool = True, published: bool = True) -> str | None:
    """:func:`correction_cue` of a normalised sentence. ``editorial`` / ``published`` False: the whole text the
    sentence is from holds no editorial phrase / word of publishing, so neither is looked for in it (a match
    inside a sentence is one in its text: a sentence is cut at spaces, which end every phrase the patterns
    look behind or ahead of)."""
    for pattern in (_LABEL, _EDITORIAL) if editorial else (_LABEL,):
        if pattern is _LABEL and ":" not in text and "-" not in text:
            continue  # a label is followed by a colon or a dash
        m = pattern.search(text)
        if m and not (pattern is _LABEL and _UPDATE.search(m.group()) and _only_a_time(text[m.end() :])):
            return m.group().strip(" :-")
    if published and _PUBLISHED.search(text):
        for pattern in (_LATIN_WORDS, _HEBREW, _ARABIC):
            m = pattern.search(text)
            if m:
                return m.group().strip()
    return None


def sentence_cues(whole: str, sentences: list[str]) -> dict[int, str]:
    """Each normalised sentence of the normalised text ``whole`` that holds a cue -> its cue (the editorial and
    publishing words looked for in a sentence only where ``whole`` holds one)."""
    editorial, published = _EDITORIAL.search(whole) is not None, _PUBLISHED.search(whole) is not None
    return {i: cue for i, x in enumerate(sentences) if (cue := _cue(x, editorial, published)) is not None}


# A word naming a figure: a correction of one that gives no value may still be the claim's.
FIGURE_WORD = re.compile(
    r"(?<![\w])(?:figure|figures|number|numbers|amount|date|percentage|total|sum|número|numero|valor|data|cifra"
    r"|נתון|נתונים|מספר|המספר|הנתון|סכום|תאריך|אחוז|رقم|الرقم|عدد|العدد|تاريخ|نسبة)(?![\w])"
)


class SourceView:
    """A source read once for every whole-source reading (kept by text: every claim of a record asks for the
    same sources), each part computed when first asked. No inverted index: a claim asks for a few dozen forms,
    and one for every form of the source cost more than the look-ups and held the view's largest part."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        return sentence_bounds(self.text)

    @cached_property
    def forms(self) -> tuple[frozenset[str], ...]:
        """Each sentence's word forms."""
        return sentence_forms(self.text)

    @cached_property
    def every(self) -> frozenset[str]:
        return frozenset().union(*self.forms)

    @cached_property
    def starts(self) -> dict[str, list[str]]:
        """Every form by its first letters (for a shared start)."""
        out: dict[str, list[str]] = {}
        for f in self.every:
            out.setdefault(f[:SHARED_START], []).append(f)
        return out

    @cached_property
    def numbers(self) -> frozenset[str]:
        return source_numbers(self.text)

    @cached_property
    def cues(self) -> dict[int, str]:
        """Sentence index -> its correction cue, read in one normalisation of the source."""
        nt = normalized(self.text)
        cut = np.searchsorted(nt.starts, [x for a, b in self.bounds for x in (a, b)])
        return sentence_cues(nt.text, [nt.text[cut[2 * i] : cut[2 * i + 1]].strip() for i in range(len(self.bounds))])

    def holding(self, forms: tuple[str, ...]) -> set[int]:
        """The sentences that hold any of ``forms``."""
        return {i for i, fs in enumerate(self.forms) if not fs.isdisjoint(forms)}


@text_memo()
def source_view(text: str) -> SourceView:
    return SourceView(text)
