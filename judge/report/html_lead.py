"""The top of report.html, its first screen: the claims that are not grounded (or, with none, the first answers'
claims), then the sections with nothing to say and the glossary; every string from data escaped and
bidi-isolated (:func:`data_html`)."""

from __future__ import annotations

from html import escape

from judge.report.charts import LABEL_COLOURS
from judge.report.glossary import ABSENT_TITLE, GLOSSARY
from judge.scoring import Block
from judge.scoring.first_claims import FirstClaims, FirstClaimsSection
from judge.scoring.ungrounded import NotGrounded, NotGroundedSection, more_line, passage_text, summary_line


def label_html(label: str) -> str:
    return f'<span class="label" style="background:{LABEL_COLOURS.get(label, "#999")}">{escape(label)}</span>'


def data_html(text) -> str:
    """A data string inline: escaped and bidi-isolated, so U+202E and friends cannot reorder the page."""
    return f"<bdi>{escape(str(text))}</bdi>"


def in_answer_html(pieces) -> str:
    """An answer with the claim's pieces in <mark>, each escaped and bidi-isolated, all in one isolate in the
    answer's own direction: pieces isolated one by one in an English line read a Hebrew answer backwards (and
    dir="auto" skips the pieces' own <bdi>s, finding no letter)."""
    inner = "".join(f"<mark>{data_html(p.text)}</mark>" if p.claim else data_html(p.text) for p in pieces)
    return f'<bdi class="answer" dir="{_direction("".join(p.text for p in pieces))}">{inner}</bdi>'


def _direction(text: str) -> str:
    """'rtl' when the text's first strong letter is right to left (Hebrew, Arabic), else 'ltr'."""
    import unicodedata

    for ch in text:
        kind = unicodedata.bidirectional(ch)
        if kind in ("R", "AL"):
            return "rtl"
        if kind == "L":
            return "ltr"
    return "ltr"


def not_grounded(value) -> str:
    """The top of the page: the not-grounded claims, most severe first, each linked to its claim below."""
    ng = NotGrounded.model_validate(value)
    parts = [f'<h2 id="not-grounded">{escape(NotGroundedSection.title)}</h2>', f"<p>{escape(summary_line(ng))}</p>"]
    for c in ng.claims:
        parts.append(
            f'<div class="ng" data-label="{escape(c.label)}" data-model="{escape(c.model)}" data-disagree="{int(c.judges_disagree)}">'
            f'<a href="#{c.anchor}">{label_html(c.label)} {data_html(c.record_id)} · {data_html(c.model)}</a>: <bdi>{escape(c.text)}</bdi>'
            f'<div class="in-answer" dir="auto">in its answer{"" if c.located else " (its words were not found there)"}: '
            f"{in_answer_html(c.answer)}</div>"
            f'<div class="passage">passage: {data_html(passage_text(c.passage))}</div>'
            + (f'<div class="muted">why: {data_html(c.rationale)}</div>' if c.rationale else "")
            + (f'<div class="flags">checks: {data_html("; ".join(c.flags))}</div>' if c.flags else "")
            + (f'<div class="muted">judges: {data_html("; ".join(c.rulings))}</div>' if c.rulings else "") + "</div>"
        )
    more = more_line(ng, "every claim is listed under Records below (use the filters) and in results.jsonl")
    if more:
        parts.append(f'<p class="muted">{escape(more)}</p>')
    return "".join(parts)


def first_claims(value) -> str:
    """The first answers with their claims and labels (judge.scoring.first_claims), each claim linked to its
    place under Records: what the first screen shows when no claim is not grounded."""
    if value is None:
        return ""
    fc = FirstClaims.model_validate(value)
    parts = [f'<h2 id="first-claims">{escape(FirstClaimsSection.title)}</h2>', f"<p>{escape(fc.lead_line())}</p>"]
    for a in fc.answers:
        items = "".join(
            f'<li class="top-claim" dir="auto" data-label="{escape(c.label)}" data-model="{escape(a.model)}" data-disagree="0">'
            f'<a href="#{c.anchor}">{label_html(c.label)}</a> <bdi>{escape(c.text)}</bdi></li>' for c in a.claims)
        if not a.total:
            items = f'<li class="muted">{data_html(a.no_claims_line())}</li>'
        parts.append(f'<div class="lead-answer"><b>{data_html(a.record_id)} · {data_html(a.model)}</b> '
                     f'<span class="muted">({escape(a.count_line())})</span><ul>{items}</ul></div>')
    if more := fc.more_line("every claim is listed under Records below and in results.jsonl"):
        parts.append(f'<p class="muted">{escape(more)}</p>')
    return "".join(parts)


def absent(collapsed: list[Block]) -> str:
    """Sections with nothing to say for this run: one line each, saying what is absent."""
    if not collapsed:
        return ""
    items = "".join(f"<li><b>{escape(b.title)}</b>: {data_html(b.text)}</li>" for b in collapsed)
    return f'<h2 id="absent">{escape(ABSENT_TITLE)}</h2><ul class="absent">{items}</ul>'


def glossary() -> str:
    """The terms a newcomer meets on the page (judge.report.glossary), at the end of the summary."""
    items = "".join(f"<dt>{escape(term)}</dt><dd>{escape(gloss)}</dd>" for term, gloss in GLOSSARY.items())
    return f'<details id="glossary"><summary>Glossary: the terms of this report</summary><dl class="glossary">{items}</dl></details>'
