"""Conflicts in the source itself: what must stop a free ``supported``.

A claim found verbatim is not grounded when the same source later takes the sentence back ("Correction:
the figure was mistyped and should read ...") or says the same thing elsewhere with another number, date
or name. Two kinds, each a verified span of the source:

- ``correction``: a sentence in which the source corrects itself (English, Hebrew, Portuguese, Arabic,
  Spanish: a correction label opening it, an editorial phrase, or a word of the family beside a word of
  publishing; never a narrative "mistakenly" or "corrected") that refers to the claim: it shares a number
  with it or gives one in the claim's slot, shares enough of its content words, or follows right after a
  sentence that says what the claim says (a name alone is no reference: a correction names what its
  article is about, "the Mandeans" under an article about Mosul's Christians);
- ``near_duplicate``: another sentence that says nearly the same (most of the claim's content words) and
  states the same slot of the same entity otherwise: a number of the same kind and unit beside the same
  words (:func:`judge.stages.slots.aligned_mismatches`), or a name in the place of the claim's that is no
  fuller or shorter form of it and no organisation around it. A short answer ("Roy Orbison") names no slot:
  only a full proposition can be contradicted by a name.

A conflict makes the deterministic judge say contradicted, so each is called only when the source states
the same thing otherwise; what is merely missing is left to the coverage and the judges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from judge.results import Conflict
from judge.stages.words import sentence_bounds, sentence_forms
from judge.stages.names import name_present, name_tokens, names_in, related_names
from judge.stages.numbers import is_month, numbers_in
from judge.stages.slots import aligned_mismatches, holds_lead, lead_words
from judge.text import content_words, word_forms
from judge.text.normalize import normalized
from judge.text.bounds import find_word
from judge.text.memo import text_memo
from judge.text.proposition import not_a_proposition

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
_FIGURE = re.compile(
    r"(?<![\w])(?:figure|figures|number|numbers|amount|date|percentage|total|sum|número|numero|valor|data|cifra"
    r"|נתון|נתונים|מספר|המספר|הנתון|סכום|תאריך|אחוז|رقم|الرقم|عدد|العدد|تاريخ|نسبة)(?![\w])"
)
RELATED_MIN_SHARE = 0.3  # a correction that shares this much of the claim's content words refers to it
NEAR_DUPLICATE_MIN_SHARE = 0.7  # a sentence that shares this much says the same thing
ADJACENT_MIN_SHARE = 0.5  # a correction right after a sentence sharing this much refers to that sentence


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


@dataclass(frozen=True)
class _SourceView:
    """A source's sentences, their word forms and their correction cues, built once. No inverted index: a
    claim asks for a few dozen forms, and building one for every form of the source cost more than the
    claims' look-ups in the sentences' forms, and held a view's largest part in memory."""

    bounds: tuple[tuple[int, int], ...]
    forms: tuple[frozenset[str], ...]
    cues: dict[int, str]  # sentence index -> cue

    def holding(self, forms: tuple[str, ...]) -> set[int]:
        """The sentences that hold any of ``forms``."""
        return {i for i, fs in enumerate(self.forms) if not fs.isdisjoint(forms)}


@text_memo()
def _view(text: str) -> _SourceView:
    """Cached by text: every claim of a record asks for the same sources (a str caches its own hash); the
    cache is bounded by the characters of its sources, since a view grows with its source. The source is
    normalised once and read sentence by sentence in that one normalisation."""
    nt = normalized(text)
    bounds = sentence_bounds(text)
    cut = np.searchsorted(nt.starts, [x for a, b in bounds for x in (a, b)])
    sentences = [nt.text[cut[2 * i] : cut[2 * i + 1]].strip() for i in range(len(bounds))]
    forms = sentence_forms(text)  # the one per-sentence reading of a source (judge.stages.words), shared with reading.py
    editorial, published = _EDITORIAL.search(nt.text) is not None, _PUBLISHED.search(nt.text) is not None
    cues = {i: cue for i, x in enumerate(sentences) if (cue := _cue(x, editorial, published)) is not None}
    return _SourceView(bounds, forms, cues)


def _claim_words(claim: str) -> list[str]:
    return [w for w in dict.fromkeys(content_words(normalized(claim).text)) if not w[0].isdigit()]


def _shares(claim_words: list[str], view: _SourceView) -> dict[int, float]:
    """Share of the claim's words each sentence holds (sentences holding none are left out)."""
    if not claim_words:
        return {}
    hits: dict[int, int] = {}
    for w in claim_words:
        for i in view.holding(word_forms(w)):
            hits[i] = hits.get(i, 0) + 1
    return {i: n / len(claim_words) for i, n in hits.items()}


def find_conflicts(claim: str, sources: dict[str | None, str], own: list[tuple[str | None, int, int]] = ()) -> list[Conflict]:
    """Sentences of ``sources`` (doc_id -> text) that retract or contradict ``claim``.

    ``own`` lists (doc_id, start, end) spans the claim was found in (its best candidate); the sentences
    they touch are never a conflict."""
    claim_words = _claim_words(claim)
    claim_numbers = set(numbers_in(claim))
    claim_names = names_in(claim)
    proposition = not_a_proposition(claim) is None  # a short answer names nothing a sentence could name otherwise
    out: list[Conflict] = []
    for doc_id, text in sources.items():
        if doc_id is None and len(sources) > 1:
            continue  # the single-source alias of a named source
        view = _view(text)
        shares = _shares(claim_words, view)
        candidates = sorted(set(view.cues) | {i for i, sh in shares.items() if sh >= NEAR_DUPLICATE_MIN_SHARE})
        for i in candidates:
            start, end = view.bounds[i]
            if any(d == doc_id and start < e and a < end for d, a, e in own):
                continue
            sentence = text[start:end]
            if i in view.cues:
                why = _refers(claim, claim_numbers, claim_names, shares, i, sentence)
                if why:
                    out.append(_conflict("correction", doc_id, start, end, text, f"correction cue {view.cues[i]!r}; {why}"))
                    continue
            if shares.get(i, 0.0) >= NEAR_DUPLICATE_MIN_SHARE:
                detail = _differs(claim, claim_names if proposition else [], sentence)
                if detail:
                    out.append(_conflict("near_duplicate", doc_id, start, end, text, detail))
    return out


def _refers(claim: str, claim_numbers: set[str], claim_names: list[str], shares: dict[int, float], i: int, sentence: str) -> str:
    """Why a correction sentence refers to the claim, or '' when it does not."""
    numbers = set(numbers_in(sentence))
    shared_numbers = claim_numbers & numbers
    if shared_numbers:
        return f"it mentions {', '.join(sorted(shared_numbers))}"
    mismatches = aligned_mismatches(claim, [sentence])
    if mismatches:
        return f"it gives {mismatches[0].candidate} where the claim says {mismatches[0].claim}"
    typos = [(c, n) for c in sorted(claim_numbers) for n in sorted(numbers) if _typo_of(c, n)]
    if typos:
        return f"it gives {typos[0][1]}, a retyping of the claim's {typos[0][0]}"
    if claim_numbers and numbers:
        return ""  # it corrects a figure, and not one of the claim's
    if claim_numbers and _FIGURE.search(normalized(sentence).text):
        return "it corrects a figure without giving it, and the claim states one"
    if shares.get(i, 0.0) >= RELATED_MIN_SHARE:  # a name alone is no reference: a correction names what it is about
        return f"it shares {shares[i]:.0%} of the claim's words"
    if shares.get(i - 1, 0.0) >= ADJACENT_MIN_SHARE:
        return "it follows a sentence that says what the claim says"
    return ""


def _typo_of(a: str, b: str) -> bool:
    """``b`` looks like ``a`` mistyped: the same digits in another order, or one digit changed."""
    da, db = re.sub(r"\D", "", a), re.sub(r"\D", "", b)
    if da == db or len(da) != len(db) or len(da) < 2:
        return False
    return sorted(da) == sorted(db) or sum(x != y for x, y in zip(da, db)) == 1


def _differs(claim: str, claim_names: list[str], sentence: str) -> str:
    """What a sentence that says nearly what the claim says states otherwise: a number in the same slot
    (:func:`judge.stages.slots.aligned_mismatches`), or a name in the place of one of the claim's. That name
    must be no form of any of the claim's ("Roy Kelton Orbison" is Roy Orbison), share no distinctive token
    with them ("MedStar Health" is part of "MedStar Washington Hospital Center"), and stand among the same
    words as the claim's missing name does; a capitalised word opening the sentence is no name."""
    mismatches = aligned_mismatches(claim, [sentence])
    if mismatches:
        return "; ".join(f"says {m.candidate} where the claim says {m.claim}" for m in mismatches)
    if not claim_names:
        return ""
    found = names_in(sentence)
    missing = [n for n in claim_names if not name_present(n, sentence, found)]
    if not missing:
        return ""
    claim_found = names_in(claim)
    others = [n for n in found if not name_present(n, claim, claim_found) and not any(related_names(n, c) for c in claim_names)]
    norm = normalized(claim).text
    for name in missing:
        if any(related_names(name, n) for n in found):
            continue  # its slot holds a form of it or a name around it ("USP de São Paulo" for "USP de São Carlos")
        at = find_word(norm, normalized(name).text)
        lead = lead_words(claim, at) if at > 0 else []
        if not lead or not holds_lead(lead, sentence):
            continue  # the name is what the claim is about, not a slot of it: another name there is another entity
        around = _around(claim, name)
        for other in others:
            if around & _around(sentence, other):
                return f"names {other} where the claim names {name}"
    return ""


def _around(text: str, name: str, span: int = 3) -> set[str]:
    """Forms of the content words right around ``name``'s first occurrence in ``text`` (its slot)."""
    norm = normalized(text).text
    at = find_word(norm, normalized(name).text)
    if at < 0:
        return set()
    before = [w for w in content_words(norm[:at]) if not w[0].isdigit()][-span:]
    after = [w for w in content_words(norm[at + len(normalized(name).text) :]) if not w[0].isdigit()][:span]
    mine = {f for t in name_tokens(name) for f in word_forms(t)}
    return {f for w in before + after for f in word_forms(w)} - mine


def _conflict(kind: str, doc_id: str | None, start: int, end: int, text: str, detail: str) -> Conflict:
    return Conflict(kind=kind, doc_id=doc_id, start_char=start, end_char=end, excerpt=text[start:end], detail=detail)
