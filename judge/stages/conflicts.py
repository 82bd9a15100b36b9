"""Conflicts in the source itself: what must stop a free ``supported``.

A claim found verbatim is not grounded when the same source later takes the sentence back ("Correction:
the figure was mistyped and should read ...") or says the same thing elsewhere with another number, date
or name. Two kinds, each a verified span of the source:

- ``correction``: a sentence with a correction cue (English, Hebrew, Portuguese, Arabic, Spanish) that
  refers to the claim: it shares a number or a name with it, shares enough of its content words, or follows
  right after a sentence that says what the claim says;
- ``near_duplicate``: another sentence that says nearly the same (most of the claim's content words) with a
  number or date in the same context that differs, or with a different name where the claim's is missing.

When in doubt a conflict is reported: it costs a model call, a wrong free verdict costs trust.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from judge.results import Conflict
from judge.stages.checks import aligned_mismatches, names_in, numbers_in
from judge.text import content_words, normalize, split_sentences, word_forms

# Cues matched on normalised (lower-cased, quote- and dash-unified) sentences.
_LATIN_CUES = (
    r"correction|corrections|corrected|erratum|errata|clarification|retraction|retracted|mistyped|misprint"
    r"|misstated|misreported|misquoted|typo|typographical error|should (?:have )?read|should (?:have )?said"
    r"|incorrectly (?:stated|reported|said|gave|listed)|an earlier version|a previous version|was wrong"
    r"|update:|updated:|editor'?s note"
    r"|correção|correcao|corrigido|corrigida|corrigimos|errata|retificação|retificacao|retificado|retificada"
    r"|esclarecimento|onde se lê|onde se le|leia-se|erro de digitação|erro de digitacao|atualização:|atualizacao:"
    r"|corrección|correccion|fe de erratas|debe decir|donde dice|actualización:"
)
_LATIN = re.compile(rf"(?<![\w])(?:{_LATIN_CUES})(?![\w])")
# Hebrew words take one-letter prefixes (ו ה ב ל מ ש כ): "בטעות", "והתיקון".
_HEBREW = re.compile(
    r"(?<![\u05d0-\u05ea])[והבלמשכ]{0,2}(?:תיקון|תיקונים|תוקן|תוקנה|טעות|טעויות|שגיאה|שגוי|שגויה|עדכון:|עודכן"
    r"|הבהרה|צ\"ל|צריך להיות|צריכה להיות|צריך היה|הנתון הנכון|המספר הנכון|הנכון הוא|טעות הקלדה|נפלה טעות)"
    r"(?![\u05d0-\u05ea])"
)
_ARABIC = re.compile(
    r"(?<![\u0621-\u064a])[وفبلك]?(?:ال)?(?:تصحيح|تصويب|استدراك|توضيح|تحديث:|خطأ|خطأ مطبعي|والصحيح|الصحيح|الصواب|صوابه)"
    r"(?![\u0621-\u064a])"
)
_FIGURE = re.compile(
    r"(?<![\w])(?:figure|figures|number|numbers|amount|date|percentage|total|sum|número|numero|valor|data|cifra"
    r"|נתון|נתונים|מספר|המספר|הנתון|סכום|תאריך|אחוז|رقم|الرقم|عدد|العدد|تاريخ|نسبة)(?![\w])"
)
RELATED_MIN_SHARE = 0.3  # a correction that shares this much of the claim's content words refers to it
NEAR_DUPLICATE_MIN_SHARE = 0.7  # a sentence that shares this much says the same thing
ADJACENT_MIN_SHARE = 0.5  # a correction right after a sentence sharing this much refers to that sentence


def correction_cue(sentence: str) -> str | None:
    """The correction cue in ``sentence``, or None."""
    text = normalize(sentence).text
    for pattern in (_LATIN, _HEBREW, _ARABIC):
        m = pattern.search(text)
        if m:
            return m.group().strip()
    return None


@dataclass(frozen=True)
class _SourceView:
    """A source's sentences, their word forms, an inverted index and their correction cues, built once."""

    bounds: tuple[tuple[int, int], ...]
    forms: tuple[frozenset[str], ...]
    postings: dict[str, tuple[int, ...]]
    cues: dict[int, str]  # sentence index -> cue


@lru_cache(maxsize=16)
def _view(text: str) -> _SourceView:
    """Cached by text: every claim of a record asks for the same sources (a str caches its own hash); a
    few entries, since records run a handful at a time and a view grows with its source."""
    bounds = tuple((s.start, s.end) for s in split_sentences(text))
    forms = tuple(frozenset(_forms(text[a:b])) for a, b in bounds)
    postings: dict[str, list[int]] = {}
    for i, fs in enumerate(forms):
        for f in fs:
            postings.setdefault(f, []).append(i)
    cues = {i: cue for i, (a, b) in enumerate(bounds) if (cue := correction_cue(text[a:b])) is not None}
    return _SourceView(bounds, forms, {f: tuple(v) for f, v in postings.items()}, cues)


def _forms(text: str) -> set[str]:
    return {f for w in content_words(normalize(text).text) for f in word_forms(w)}


def _claim_words(claim: str) -> list[str]:
    return [w for w in dict.fromkeys(content_words(normalize(claim).text)) if not w[0].isdigit()]


def _shares(claim_words: list[str], view: _SourceView) -> dict[int, float]:
    """Share of the claim's words each sentence holds (sentences holding none are left out)."""
    if not claim_words:
        return {}
    hits: dict[int, int] = {}
    for w in claim_words:
        for i in {i for f in word_forms(w) for i in view.postings.get(f, ())}:
            hits[i] = hits.get(i, 0) + 1
    return {i: n / len(claim_words) for i, n in hits.items()}


def find_conflicts(claim: str, sources: dict[str | None, str], own: list[tuple[str | None, int, int]] = ()) -> list[Conflict]:
    """Sentences of ``sources`` (doc_id -> text) that retract or contradict ``claim``.

    ``own`` lists (doc_id, start, end) spans the claim was found in (its best candidate); the sentences
    they touch are never a conflict."""
    claim_words = _claim_words(claim)
    claim_numbers = set(numbers_in(claim))
    claim_names = names_in(claim)
    claim_name_forms = {normalize(n).text for n in claim_names}
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
                why = _refers(claim, claim_numbers, claim_name_forms, shares, i, sentence)
                if why:
                    out.append(_conflict("correction", doc_id, start, end, text, f"correction cue {view.cues[i]!r}; {why}"))
                    continue
            if shares.get(i, 0.0) >= NEAR_DUPLICATE_MIN_SHARE:
                detail = _differs(claim, claim_names, sentence)
                if detail:
                    out.append(_conflict("near_duplicate", doc_id, start, end, text, detail))
    return out


def _refers(claim: str, claim_numbers: set[str], claim_names: set[str], shares: dict[int, float], i: int, sentence: str) -> str:
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
    if claim_numbers and _FIGURE.search(normalize(sentence).text):
        return "it corrects a figure without giving it, and the claim states one"
    norm = normalize(sentence).text
    shared_names = [n for n in claim_names if n in norm]
    if shared_names:
        return f"it names {', '.join(shared_names)}"
    if shares.get(i, 0.0) >= RELATED_MIN_SHARE:
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
    mismatches = aligned_mismatches(claim, [sentence])
    if mismatches:
        return "; ".join(f"says {m.candidate} where the claim says {m.claim}" for m in mismatches)
    norm = normalize(sentence).text
    missing = [n for n in claim_names if normalize(n).text not in norm]
    others = [n for n in names_in(sentence) if normalize(n).text not in normalize(claim).text]
    if missing and others:
        return f"names {others[0]} where the claim names {missing[0]}"
    return ""


def _conflict(kind: str, doc_id: str | None, start: int, end: int, text: str, detail: str) -> Conflict:
    return Conflict(kind=kind, doc_id=doc_id, start_char=start, end_char=end, excerpt=text[start:end], detail=detail)
