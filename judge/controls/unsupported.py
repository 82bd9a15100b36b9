"""Unsupported controls: a verified claim about another subject (the record's key entity swapped for another
record's subject the source never mentions), or, as a last resort, another record's own claim on the nearest
topic."""

from __future__ import annotations

import random
import re

from judge.controls.data import ControlData
from judge.controls.shapes import Sentence, WORD, name_shape, subject_of
from judge.models import Record
from judge.stages.names import names_in
from judge.text import content_words, normalize


def _key_entity(text: str, record: Record) -> str | None:
    """What a claim is about: the record's subject where the claim names it, else its longest name that the
    question names too, else its first name (a claim about the record's subject names it, or one of its parts)."""
    subject = subject_of(record)
    if subject and len(subject.split()) >= 2 and _whole(subject, text):  # one word may be a verb or an adjective
        return subject
    names = [n for n in names_in(text) if name_shape(n) not in (None, "acronym") and _whole(n, text)]
    asked = [n for n in names if n in record.question]
    pick = max(asked, key=len) if asked else (names[0] if names else None)
    return pick


def _whole(phrase: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def swap_subject(text: str, record_id: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    """The claim's key entity replaced by another record's subject (or a name of the data) of the same
    language that its own sources never mention: the same sentence, now about something the source is silent
    on. Its length, its words shared with the question and passage, and its similarity stay a real claim's."""
    record = data.records[record_id]
    old = _key_entity(text, record)
    if not old:
        return None
    own = normalize(" ".join(s.text for s in record.sources)).text
    old_words = set(WORD.findall(old.lower()))
    language = data.language(record_id)
    pool = [x for x in data.subjects.get(language, []) if x != old]
    if name_shape(old):
        pool += [n for n in data.names if name_shape(n) == name_shape(old)]
    pool = [x for x in dict.fromkeys(pool) if normalize(x).text not in own and not (set(WORD.findall(x.lower())) & old_words)]
    if not pool:
        return None
    new = rng.choice(sorted(pool))
    new = new[:1].upper() + new[1:] if text.startswith(old) else new
    at = re.search(rf"(?<!\w){re.escape(old)}(?!\w)", text)
    return text[: at.start()] + new + text[at.end() :], f"{old} -> {new} (absent from the source)"


def unrelated_claim(record_id: str, data: ControlData, rng: random.Random, turn: int = 0) -> tuple[str, Sentence] | None:
    """A claim-like sentence of another record on the nearest topic (most words shared with this record's
    question), as it stands: a last resort where no claim of the answer names what it is about."""
    record = data.records[record_id]
    language = data.language(record_id)
    asked = set(content_words(normalize(record.question).text))
    donors = [r for r, d in data.donors.items() if r != record_id and d.language == language and (d.has_sentences or d.claims)]
    if not donors:
        return None
    donors.sort(key=lambda r: (not data.donors[r].claims, -len(asked & data.donors[r].words), r))
    near = donors[: max(1, min(3, len(donors)))]
    donor = near[turn % len(near)]  # the nth control of a record takes the next donor, then the donor's next claim
    if data.donors[donor].claims:  # a real claim of another record, as the dataset states it
        claims = sorted(data.donors[donor].claims, key=lambda t: (-len(asked & set(content_words(normalize(t).text))), t))
        text = claims[(turn // len(near)) % len(claims)]
        return text, Sentence(donor, "", 0, 0, "")
    sentences = data.donors[donor].sentences()
    sentences.sort(key=lambda s: (-len(asked & set(content_words(normalize(s.text).text))), s.start))
    sentence = rng.choice(sentences[: max(1, min(3, len(sentences)))])
    return sentence.text, sentence
