"""Claims are the answer's (DESIGN): the one boundary where a decomposer's output becomes the claims of a run.

Whatever wrote them (the LLM decomposer, the sentence splitter, the whole answer), a claim is admitted only
when:

- it carries a located quote of the answer: ``answer[start:end] == excerpt`` (the quote found exactly, then
  after normalisation, then the claim itself, then by the span search);
- it is no question, instruction or pleasantry, and has content words;
- its content words are the answer's or the question's. The stated tolerance: every number is found, and
  of the other content words at most one in five is missing (a word is found in any of its forms: stem,
  plural, Hebrew and Arabic prefixes, or a shared start of 5+ letters covering 3/4 of the shorter word);
- it says something its quote says (a content word in common), unless the quote is a bare yes or no: a
  claim made of the question's words alone restates the question;
- from a full-sentence answer it is a full proposition, not a fragment; it is no repeat of a kept claim.

A claim that fails is dropped with its reason (kept in results.jsonl, counted in the summary); when nothing
the LLM wrote is kept, the answer falls back to sentences. A short answer that means something only with its
question ("yes", "Delhi", "Arthur's Magazine") becomes a claim read with the question,
``"<question> <answer>"``, flagged ``reads_question``, for every method.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from judge.models import Span
from judge.results import DroppedClaim
from judge.text import normalize, split_sentences
from judge.text.bounds import find_word
from judge.text.letters import ALNUM_RUN
from judge.text.negation import negated
from judge.text.discourse import NEGATIVE_ANSWERS, YES_NO, leading_discourse, only_discourse
from judge.text.proposition import QUESTION, latin_script, not_a_proposition, own_clause
from judge.text.sentences import FULL_STOPS, LIST_MARKER, ends_a_sentence
from judge.text.tokens import STOPWORDS, content_words, share_start, word_forms

ANSWER_DOC = "answer"
MISSING_SHARE = 0.2  # of a claim's content words other than numbers, at most this share may be missing

# First words of a request to the reader: imperatives that set a task. Only forms that are no past tense,
# participle or noun as well (Hebrew ``כתוב`` "written", ``בחרו`` "they chose"; Arabic ``صف`` "row"; English
# "Split", "Output", "Select"): a missed instruction is caught by the trace, a wrongly dropped claim is lost.
IMPERATIVES = frozenset(
    """
    answer explain describe list write summarize summarise translate provide give tell ask respond reply
    ignore replace consider compare identify choose mention rewrite include skip imagine suppose assume kindly
    let's don't
    אנא בבקשה
    responda explique descreva liste escreva resuma traduza forneça dê diga retorne considere identifique
    escolha cite mencione inclua
    اشرح اكتب أجب اذكر أعط اختر يرجى رجاء
    """.split()
)
PLEASANTRIES = re.compile(
    r"^\W*(?:i hope (?:this|that|it) helps|hope (?:this|that|it) helps|let me know|feel free|good luck|thanks?\b|"
    r"thank you|you're welcome|happy to help|as an ai\b|please\b(?!,? note)|"
    r"por favor|espero que (?:isso )?ajude|obrigad[oa]|תודה|בהצלחה|בשמחה|מקווה שעזרתי|شكرا|من فضلك|أتمنى أن)",
    re.IGNORECASE,
)
_WORD = re.compile(rf"{ALNUM_RUN}(?:['\u2019]{ALNUM_RUN})*")


@dataclass(frozen=True)
class AnswerClaim:
    """A claim admitted at the boundary: its text, where it sits in the answer, whether it reads the question."""

    text: str
    spans: list[Span]
    reads_question: bool = False


@dataclass
class Admitted:
    claims: list[AnswerClaim] = field(default_factory=list)
    dropped: list[DroppedClaim] = field(default_factory=list)


def _terms(text: str) -> list[str]:
    return content_words(normalize(text).text)


def _pool(*texts: str) -> set[str]:
    return {f for t in texts for w in _terms(t) for f in word_forms(w)}


def _found(word: str, pool: set[str]) -> bool:
    forms = set(word_forms(word))
    if forms & pool:
        return True
    return not word[0].isdigit() and any(share_start(f, p) for f in forms for p in pool)


UNFINISHED = "the answer was cut at max_tokens inside this sentence: its model never finished it"
LIST_MARKER_ONLY = "a list item's number or bullet, no statement"
DISCOURSE_ONLY = "a discourse token (yes, sure, that's right), no statement"


def not_a_claim(text: str, whole_answer: bool = False) -> str | None:
    """Why ``text`` is no claim whatever its question: a question, an instruction, a pleasantry, no words.
    A whole answer opening with an interrogative but no question mark is an answer ("qual operação a
    executar", "how the law was passed")."""
    stripped = text.strip()
    words = _WORD.findall(stripped)
    if not words:
        return "no words"
    if not_a_proposition(stripped) == QUESTION and not (whole_answer and stripped.rstrip(")]\"'\u201d\u2019 ")[-1:] not in "?\u061f"):
        return "a question"
    first = words[0].lower().replace("\u2019", "'")
    if first in IMPERATIVES and not stripped[len(words[0]) :].lstrip().startswith(":"):
        return "an instruction"
    if PLEASANTRIES.search(stripped):
        return "a pleasantry, no statement"
    return None


def needs_question(text: str, whole_answer: bool = False) -> bool:
    """An answer with no clause of its own (:func:`judge.text.proposition.own_clause`: "yes", "Delhi", "in
    1952", a phrase with no finite verb) means something only with its question; a full sentence never does.
    Where verbs cannot be told (Hebrew, Arabic), so does a whole answer that is one unpunctuated phrase of at
    most four words ("300 משתתפים בתוכנית", "10 דקות")."""
    if not own_clause(text):
        return True
    stripped = text.strip()
    return (whole_answer and not latin_script(stripped) and len(_WORD.findall(stripped)) <= 4
            and stripped[-1:] not in FULL_STOPS and len(split_sentences(stripped)) <= 1)


def with_question(question: str, text: str) -> str:
    q = question.strip()
    return f"{q} {text.strip()}" if q[-1:] in "?\u061f:.!" else f"{q} \u2014 {text.strip()}"


def answer_part(claim: str, question: str | None) -> str | None:
    """The answer's own words of a claim :func:`with_question` wrote, or None for any other claim: what a
    judge with no model reads as the short answer, beside the question it has apart."""
    q = (question or "").strip()
    if not q or not claim.startswith(q):
        return None
    rest = claim[len(q) :]
    rest = rest[len(" \u2014 ") :] if rest.startswith(" \u2014 ") else rest[1:] if rest.startswith(" ") else None
    return rest or None


def locate(answer: str, quote: str, claim: str, index=None) -> list[Span]:
    """Where ``quote`` (else the claim) sits in the answer, as verified spans; [] if nowhere."""
    for needle in (quote.strip(), claim.strip()):
        at = find_word(answer, needle) if needle else -1  # on word boundaries: "art" is no quote of "start"
        if at >= 0:
            return [_span(answer, at, at + len(needle))]
    norm = normalize(answer)
    for needle in (quote, claim):
        n = normalize(needle).text.strip()
        at = find_word(norm.text, n) if n else -1
        if at >= 0:
            return [_span(answer, *norm.to_original(at, at + len(n)))]
    if index is None:
        from judge.search import Index

        index = Index(answer, ANSWER_DOC)
    for needle in (quote, claim):
        hits = index.search(needle, k=1) if needle.strip() else []
        if hits and hits[0].score >= 0.5:
            return [_span(answer, p.start_char, p.end_char) for p in hits[0].parts]
    return []


def _span(answer: str, start: int, end: int) -> Span:
    """A span of the answer, a leading "Yes," or "That's right." left out of it (judge.text.discourse)."""
    lead = leading_discourse(answer, start, end)
    if lead < end and answer[lead:end].strip():
        start = lead
    return Span(doc_id=ANSWER_DOC, start_char=start, end_char=end, excerpt=answer[start:end])


def _sentence_at(answer: str, start: int) -> str:
    return next((s.text for s in split_sentences(answer) if s.start <= start < s.end), answer)


def trace(text: str, answer: str, question: str) -> tuple[list[str], bool]:
    """The claim's content words found in neither the answer nor the question, and whether it uses words of
    the question that the answer lacks."""
    words = _terms(text)
    in_answer, in_question = _pool(answer), _pool(question)
    missing = [w for w in words if not _found(w, in_answer) and not _found(w, in_question)]
    reads = any(not _found(w, in_answer) and _found(w, in_question) for w in words)
    return missing, reads


def tolerated(missing: list[str], words: int) -> bool:
    numbers = [w for w in missing if w[0].isdigit()]
    return not numbers and len(missing) <= int(MISSING_SHARE * words)


def admit_proposed(answer: str, question: str, proposed: list[tuple[str, str]], index=None) -> Admitted:
    """The LLM decomposer's (text, quote) pairs through the checks of the module docstring."""
    out = Admitted()
    whole_short = needs_question(answer, whole_answer=True)
    first = _first_sentence_end(answer)
    seen: set[frozenset[str]] = set()
    for text, quote in proposed:
        text = text.strip()
        reason, spans, reads = _check(answer, question, text, quote, whole_short, index)
        if reason is None and question.strip() and not reads and (whole_short or (needs_question(text) and spans[0].start_char < first)):
            claim = AnswerClaim(with_question(question, text), spans, True)
        else:
            claim = AnswerClaim(text, spans, reads)
        key = frozenset(_terms(claim.text))
        if reason is None and key in seen:
            reason = "repeats a kept claim"
        if reason is not None:
            out.dropped.append(DroppedClaim(text=text, quote=quote, reason=reason))
            continue
        seen.add(key)
        out.claims.append(claim)
    return out


def _first_sentence_end(answer: str) -> int:
    sentences = split_sentences(answer)
    return sentences[0].end if sentences else len(answer)


def _polar(text: str) -> str | None:
    """"yes" or "no" when ``text`` is a bare yes/no answer ("Yes.", "No, it is not."), else None."""
    words = [w.lower() for w in _WORD.findall(text)]
    if not words or words[0] not in YES_NO or not all(w in YES_NO or w in STOPWORDS for w in words[1:]):
        return None
    return "no" if words[0] in NEGATIVE_ANSWERS else "yes"


def _check(answer: str, question: str, text: str, quote: str, whole_short: bool, index) -> tuple[str | None, list[Span], bool]:
    """(why the claim is dropped or None, its answer spans, whether it reads the question)."""
    if why := not_a_claim(text):
        return why, [], False
    if only_discourse(text) and not whole_short:
        return DISCOURSE_ONLY, [], False
    spans = locate(answer, quote, text, index)
    if not spans:
        return "no quote of the answer", [], False
    words = _terms(text)
    if not words:
        return "no content words", spans, False
    missing, reads = trace(text, answer, question)
    if not tolerated(missing, len(words)):
        return f"not in the answer or the question: {', '.join(missing)}", spans, False
    quoted = " ".join(s.excerpt for s in spans)
    polar = _polar(quoted)
    if polar == "no" and not negated(text, loosely=True):
        return "a 'no' answer written as a statement without its negation", spans, False
    if polar is None and not any(_found(w, _pool(quoted)) for w in words):
        return "says nothing its quote says (the question restated?)", spans, False
    if not whole_short and needs_question(text) and not needs_question(_sentence_at(answer, spans[0].start_char)):
        return "a fragment of a full sentence, no proposition", spans, False
    return None, spans, reads


def admit_sentences(answer: str, question: str, pieces: list[tuple[int, int]]) -> Admitted:
    """Pieces of the answer (sentences, or the whole answer) as claims: questions, instructions and
    pleasantries dropped; a short first piece read with the question (a later one leans on the answer's own
    sentences before it: "It began in 1844.")."""
    out = Admitted()
    whole = len(pieces) == 1
    first = True  # no piece with words of its own before this one
    for start, end in pieces:
        marker = LIST_MARKER.match(answer, start, end)
        if marker and marker.end() >= end:  # a number or bullet alone: no claim, unless it is the whole answer
            if not whole:  # (the whole answer "2." answers "how many?")
                out.dropped.append(DroppedClaim(text=answer[start:end], quote=answer[start:end], reason=LIST_MARKER_ONLY))
                continue
        elif marker:
            start = marker.end()  # "2. The film ..." claims "The film ...": its number is the list's
        if only_discourse(answer[start:end]) and not whole:  # "Sure!", "Yes." before the answer's statements
            out.dropped.append(DroppedClaim(text=answer[start:end], quote=answer[start:end], reason=DISCOURSE_ONLY))
            continue
        spans = [_span(answer, start, end)]  # "Yes, the bridge ..." claims "the bridge ..."
        text = spans[0].excerpt
        if why := not_a_claim(text, whole):
            out.dropped.append(DroppedClaim(text=text, quote=text, reason=why))
        elif question.strip() and first and needs_question(text, whole_answer=whole):
            out.claims.append(AnswerClaim(with_question(question, text), spans, True))
        else:
            out.claims.append(AnswerClaim(text, spans))
        first = False
    return out


def drop_unfinished(answer: str, admitted: list[AnswerClaim]) -> tuple[list[AnswerClaim], list[DroppedClaim]]:
    """The claims of an answer cut at max_tokens that lie wholly in its unfinished last sentence ("it started
    the tra"), set apart with the reason: half a sentence is no statement its model made, and judging it showed
    a newcomer a broken claim first. A claim that also holds finished sentences (a whole-answer claim, an LLM
    decomposer's) is kept; nothing is dropped where the answer ends with a sentence's end."""
    if ends_a_sentence(answer):
        return admitted, []
    pieces = split_sentences(answer)
    if not pieces:
        return admitted, []
    last = pieces[-1].start
    kept, dropped = [], []
    for claim in admitted:
        if claim.spans and all(s.start_char >= last for s in claim.spans):
            dropped.append(DroppedClaim(text=claim.text, quote=answer[last:pieces[-1].end], reason=UNFINISHED))
        else:
            kept.append(claim)
    return kept, dropped
