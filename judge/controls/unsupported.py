"""Unsupported controls, never contradicted by the source the call shows: a claim aligned to its source with
a detail that source does not state added (who says so: a report of a year that no source of the record writes), or a claim another record's data makes about its own subject, said of this record's subject,
that this record's sources do not make. Neither keeps a number, date or name the source could contradict."""

from __future__ import annotations

import random
import re

from judge.controls.data import ControlData
from judge.controls.lexicon import DETAILS, month_pattern
from judge.controls.reword import split_terminal
from judge.controls.shapes import named_subject, number_matches, number_shape
from judge.stages.names import names_in
from judge.text import content_words, normalize, word_forms

UNRELATED_MAX_SCORE = 0.5  # an "about" control's best candidate in its record scores below this
MAX_SHARED = 0.5  # and at most this share of its content words (its subject's aside) is written in the record's sources


def _whole(phrase: str, text: str) -> re.Match | None:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text)


def added_detail(text: str, record_id: str, data: ControlData, rng: random.Random) -> tuple[str, str] | None:
    """The claim with who says so added: a report of a year no source of the record writes (the source states
    the claim, not that a report of that year did). A name is not used: the data's names are places and
    works as often as people ("according to Great Malvern")."""
    language = data.language(record_id)
    table = DETAILS.get(language, {})
    own = " ".join(s.text for s in data.records[record_id].sources)
    options: list[tuple[str, str]] = []
    years = [n for kind, pool in data.numbers.items() if kind.startswith("year:") for n in pool if n not in own]
    stated = [int(m.group()) for m in number_matches(own) if number_shape(m.group()).startswith("year:")]
    if years:  # a year near the source's latest: a report of 1881 on this year's budget reads as planted
        latest = max(stated, default=max(int(y) for y in years))
        years.sort(key=lambda y: (abs(int(y) - latest), y))
        options += [(t, rng.choice(years[:8])) for t in table.get("year", ())]
    if not options:
        return None
    template, value = rng.choice(options)
    body, end = split_terminal(text)
    made = template.format(claim=body, year=value, name=value) + (end or ".")
    return made, f"added: {template.format(claim='...', year=value, name=value)}"


def _topical(record_id: str, data: ControlData) -> list[str]:
    """Donors of the record's language, nearest topic first (most words shared with its question)."""
    record = data.records[record_id]
    language = data.language(record_id)
    asked = set(content_words(normalize(record.question).text))
    donors = [r for r, d in data.donors.items() if r != record_id and d.language == language and d.subject]
    return sorted(donors, key=lambda r: (-len(asked & data.donors[r].words), r))


def about_subject(record_id: str, data: ControlData, rng: random.Random, turn: int = 0) -> tuple[str, str] | None:
    """A claim another record's data makes about its subject (its dataset's claims and answers, else a
    sentence of its source), said of this record's subject instead: about what this source is about, but
    not what it says. Kept only with no number, month or other name this source could contradict, and few
    of its words in this record's sources."""
    record = data.records[record_id]
    subject = named_subject(record)
    own = " ".join(s.text for s in record.sources)
    if not subject or not _whole(subject, own):
        return None
    own_forms = {f for w in content_words(normalize(own).text) for f in word_forms(w)}
    subject_words = set(content_words(normalize(subject).text))
    pattern = month_pattern(data.language(record_id))
    donors = _topical(record_id, data)[:24]
    rng.shuffle(donors)
    for donor_id in donors[:8]:
        donor = data.donors[donor_id]
        said = list(donor.claims) + [s.text for s in donor.sentences()]
        said = [t for t in said if _whole(donor.subject, t) and not number_matches(t) and not (pattern and pattern.search(t))]
        rng.shuffle(said)
        for claim in said:
            at = _whole(donor.subject, claim)
            made = claim[: at.start()] + (subject[:1].upper() + subject[1:] if at.start() == 0 else subject) + claim[at.end():]
            if any(n not in subject and n not in donor.subject for n in names_in(made)):
                continue  # another name: the source may say otherwise of it
            words = [w for w in content_words(normalize(made).text) if w not in subject_words]
            if len(words) < 3 or sum(1 for w in words if set(word_forms(w)) & own_forms) > MAX_SHARED * len(words):
                continue
            best = data.best_match(record_id, made)
            if best is not None and best.score >= UNRELATED_MAX_SCORE:
                continue
            return made, f"a claim of record {donor_id} about {donor.subject}, said of {subject}"
    return None

