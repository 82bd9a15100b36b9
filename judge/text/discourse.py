"""Discourse tokens: what opens a reply without stating anything ("Yes,", "That's right.", "Sure!", "No problem.").

They are no claim and never an answer's content: the source never writes "Yes", so a claim made of one is
judged on nothing, and one glued to a sentence ("Yes, the Amazon flows ...") hides the sentence's own words.
A leading run of them is left out of a claim's quote (its offsets still slice the answer exactly); a piece
that is nothing else is dropped, unless it is the whole answer (then it answers the question: "yes").

A token counts only when punctuation or the end of the text closes it ("No, it opened in 1933", not "No one
knows"), so a word that opens a statement is never taken for one.
"""

from __future__ import annotations

import re

# A bare answer to a yes/no question, and those of them that say no: one list for admitting such an answer
# (judge.stages.claims) and for reading it with its question (judge.stages.evidence).
YES_NO = frozenset("yes no yeah yep nope true false כן לא נכון sim não nao نعم لا كلا".split())
NEGATIVE_ANSWERS = frozenset("no nope false לא não nao لا كلا".split())

_TOKENS = """
yes|yeah|yep|yup|no|nope|sure|of course|certainly|absolutely|definitely|indeed|right|correct|exactly|okay|ok|
well|oh|ah|hmm|great question|good question|that's right|that is right|that's correct|that is correct|
that's true|that is true|you're right|you are right|no problem|not at all|true|
כן|לא|נכון|בטח|בהחלט|אכן|ודאי|בוודאי|
sim|não|nao|claro|certo|exato|exatamente|com certeza|de fato|isso mesmo|é verdade|
نعم|لا|كلا|بالتأكيد|طبعا
"""
_ALTERNATIVES = "|".join(
    re.escape(t).replace("'", "['\u2019]").replace(r"\ ", r"\s+")
    for t in sorted({t.strip() for t in re.split(r"[|\n]", _TOKENS) if t.strip()}, key=len, reverse=True)
)
# one token, closed by punctuation (a comma, a full stop, an exclamation, a dash...) or by the end of the text
_TOKEN = re.compile(rf"(?:{_ALTERNATIVES})(?![\w'\u2019])(?:[ \t]*(?:[,.!;:\u060c]+|[\u2014\u2013]|-(?=\s))|[ \t]*$)\s*", re.IGNORECASE)


def leading_discourse(text: str, start: int = 0, end: int | None = None) -> int:
    """Where the run of discourse tokens that opens ``text[start:end]`` ends (``start`` when there is none);
    punctuation before the first token goes with it ("— Yes, ...")."""
    end = len(text) if end is None else end
    at = start
    while True:
        lead = at
        while lead < end and not text[lead].isalnum():
            lead += 1
        m = _TOKEN.match(text, lead, end)
        if m is None or m.end() == lead:
            return at
        at = m.end()


def only_discourse(text: str) -> bool:
    """Whether ``text`` holds words, all of them discourse tokens ("That's right.", "Sure!", "Yes")."""
    stripped = text.strip()
    return any(c.isalnum() for c in stripped) and leading_discourse(stripped) >= len(stripped.rstrip())
