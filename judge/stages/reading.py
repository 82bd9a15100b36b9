"""What the candidates cannot tell the deterministic judge: what the whole source never says, and what a
short answer means.

- Absent: a content word, name or number of the claim that no source of the record writes in any form.
  The candidates may cover the rest of the claim; what the source never writes cannot be supported by it
  ("First for Women was *started* first", an invented "William Conrad").
- Negation: a claim that says "not", "never", "לא", "não" where its evidence says none of them denies what
  the evidence states.
- A short answer ("Delhi", "yes", "Arthur's Magazine") means what its question asks: it is read as the
  question and the answer together, against the passage of the source (one sentence or two in a row) that
  holds every content word of the answer and the most of the question's. "Delhi" is supported by "The
  Oberoi Group ... head office in Delhi" for "... head office in what city?", not by a sentence that only
  names Delhi; a "yes" or "no" has no words of its own, so its passage is the one that holds the most of
  its question.
"""

from __future__ import annotations

from judge.stages.words import sentence_forms
from judge.stages.claims import answer_part
from judge.stages.names import name_present, names_in
from judge.stages.numbers import numbers_in, source_numbers
from judge.stages.slots import present
from judge.text import content_words, word_forms
from judge.text.normalize import normalized
from judge.text.memo import text_memo
from judge.text.tokens import SHARED_START, share_start, text_forms
from judge.text.proposition import INTERROGATIVES, own_clause

YES_NO = frozenset("yes no yeah yep nope true false כן לא נכון sim não nao نعم لا".split())
PASSAGE_SENTENCES = 2  # a short answer's passage: at most this many sentences in a row


def short_answer(claim: str, question: str | None) -> str | None:
    """The answer's own words when the claim means what its question asks, else None: a claim the boundary
    wrote as "<question> <answer>" (:func:`judge.stages.claims.answer_part`, what runs judge), or a short
    answer or a phrase with no clause of its own given beside its question."""
    if not (question and question.strip()):
        return None
    part = answer_part(claim, question)
    if part is not None:
        return part
    return None if own_clause(claim) else claim  # the boundary's rule (judge.stages.claims.needs_question)


@text_memo()
def _source_view(text: str) -> tuple[frozenset[str], tuple[frozenset[str], ...], frozenset[str], dict[str, list[str]]]:
    """(every word form of the source, each sentence's forms, every number of the source, its forms by their
    first letters)."""
    sentences = sentence_forms(text) or (frozenset(),)
    every = frozenset().union(*sentences)
    starts: dict[str, list[str]] = {}
    for f in every:
        starts.setdefault(f[:SHARED_START], []).append(f)
    return every, sentences, source_numbers(text), starts


def _found(word: str, forms: frozenset[str]) -> bool:
    return any(f in forms for f in word_forms(word))


def _written(word: str, text: str) -> bool:
    """The source writes the word in some form: its forms (prefixes, plural, stem), or another form of it
    by a shared start (a suffix apart, :func:`judge.text.tokens.share_start`)."""
    every, _, _, starts = _source_view(text)
    forms = word_forms(word)
    return any(f in every for f in forms) or any(share_start(f, o) for f in forms for o in starts.get(f[:SHARED_START], ()))


def absent_words(claim: str, sources: tuple[str, ...]) -> tuple[list[str], int, float]:
    """The claim's content words that no source writes in any form (numbers are :func:`absent_names_numbers`'s),
    the longest run of them in a row (a content phrase the source never writes), and their share of the
    claim's distinct content words (one new word in a six-word answer is more than in a summary's thirty).
    How long a run and how large a share keep a claim from "supported" is fitted per profile."""
    out, run, longest = [], 0, 0
    every = content_words(normalized(claim).text)
    for w in every:
        if w[0].isdigit() or any(_written(w, t) for t in sources):
            run = 0
            continue
        run += 1
        longest = max(longest, run)
        out.append(w)
    absent = list(dict.fromkeys(out))
    return absent, longest, round(len(absent) / len(set(every)), 6) if every else 0.0


def absent_names_numbers(claim: str, sources: tuple[str, ...]) -> list[str]:
    """The claim's names and numbers that no source holds (a name in any fuller or shorter form)."""
    numbers = set().union(*(_source_view(t)[2] for t in sources)) if sources else set()
    out = [n for n in numbers_in(claim) if not present(n, numbers)]
    return out + [n for n in names_in(claim) if not any(name_present(n, t) for t in sources)]


def question_reading(claim: str, question: str, sources: tuple[str, ...]) -> tuple[float, bool]:
    """(the share of the question's content words held by the passage of the source that holds every content
    word of the answer and the most of the question's; whether any passage holds the answer's words)."""
    answer = [w for w in dict.fromkeys(content_words(normalized(claim).text)) if w not in YES_NO]
    asked = [
        w for w in dict.fromkeys(content_words(normalized(question).text))
        if w not in INTERROGATIVES and not any(_found(w, text_forms(a)) for a in answer)
    ]
    best, holds = 0.0, False
    for text in sources:
        sentences = _source_view(text)[1]
        for i in range(len(sentences)):
            for n in range(1, PASSAGE_SENTENCES + 1):
                if i + n > len(sentences):
                    break
                passage = frozenset().union(*sentences[i : i + n])
                if not all(_found(w, passage) for w in answer):
                    continue
                holds = True
                share = sum(_found(w, passage) for w in asked) / len(asked) if asked else 1.0
                best = max(best, share)
    return round(best, 6), holds
