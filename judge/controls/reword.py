"""Supported controls: a verified claim reworded by rule (a lead-in moved, a synonym swapped, a word form
rewritten) where triage would otherwise settle it as it stands; the meaning is unchanged."""

from __future__ import annotations

import re

from judge.controls.lexicon import LEAD_INS, REWRITES, SYNONYMS
from judge.controls.shapes import WORD
from judge.stages.names import CAPITALISED_STOPWORDS
from judge.text.language import ARABIC, CASE_INSENSITIVE


# -- supported ------------------------------------------------------------------------------------------


def match_case(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def split_terminal(text: str) -> tuple[str, str]:
    m = re.search(r"[.!?\u061f\u06d4]+[\"'\u05f3\u05f4\u201d\u2019\u00bb)\]]*$", text)
    return (text[: m.start()], m.group()) if m else (text, "")


def move_lead_in(text: str, language: str) -> str | None:
    """"According to X, Y." -> "Y, according to X." and the reverse; None when neither form applies."""
    body, end = split_terminal(text)
    lead_ins = LEAD_INS.get(language, ())
    comma = "،" if language == ARABIC and "، " in body else ","
    first = body.find(comma + " ")  # a clause comma, not a thousands separator
    lower = body.lower()
    if 0 < first < 0.6 * len(body) and any(lower.startswith(w + " ") for w in lead_ins):
        lead, rest = body[:first].strip(), body[first + 1 :].strip()
        if len(WORD.findall(rest)) >= 3:
            lead = lead[:1].lower() + lead[1:] if lead.split()[0].lower() in lead_ins or lead.split()[0] in CAPITALISED_STOPWORDS else lead
            return f"{rest[:1].upper() + rest[1:]}{comma} {lead}{end}"
    last = body.rfind(comma + " ")
    tail = body[last + 1 :].strip() if last > 0 else ""
    if tail and len(tail) < 0.5 * len(body) and any(tail.lower().startswith(w + " ") for w in lead_ins):
        head = body[:last].strip()
        if len(WORD.findall(head)) >= 3:
            head = head[:1].lower() + head[1:] if head.split()[0] in CAPITALISED_STOPWORDS else head
            return f"{tail[:1].upper() + tail[1:]}{comma} {head}{end}"
    return None


def swap_synonyms(text: str, language: str) -> str | None:
    """Words of the language's synonym table replaced (whole words; case of the first letter kept)."""
    table = SYNONYMS.get(language, {})
    if not table:
        return None
    flags = re.IGNORECASE if language in CASE_INSENSITIVE else 0
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(rf"(?<!\w)({'|'.join(re.escape(k) for k in keys)})(?!\w)", flags)
    out = pattern.sub(lambda m: match_case(table[m.group(1).lower()] if flags else table[m.group(1)], m.group(1)), text)
    return out if out != text else None


def rewrite_forms(text: str, language: str) -> str | None:
    """Meaning-keeping rewrites of the language's table ("12%" -> "12 percent", Hebrew "כ־12" -> "בערך 12")."""
    out = text
    for pattern, replacement in REWRITES.get(language, ()):
        out = re.sub(pattern, replacement, out)
    return out if out != text else None


_PARENTHETICAL = re.compile(r"\s*\([^()]{1,80}\)")


def drop_parenthetical(text: str, language: str = "") -> str | None:
    """A parenthetical aside dropped ("Irene Hervey (born 1909) was an actress." -> "Irene Hervey was an
    actress."): what is left is still stated by the source, and no longer a verbatim copy that triage settles."""
    out = _PARENTHETICAL.sub("", text, count=1)
    return out if out != text and len(WORD.findall(out)) >= 5 else None


def reword(text: str, language: str) -> str | None:
    """The sentence reworded by every rule that applies (an aside dropped, clause order, synonyms, number
    forms), or None."""
    out = text
    for rule in (drop_parenthetical, move_lead_in, swap_synonyms, rewrite_forms):
        out = rule(out, language) or out
    return out if out != text else None
