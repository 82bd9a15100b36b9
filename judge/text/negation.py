"""Negation: which words negate, and which words a negation governs.

One list for every stage: the claim boundary (a "no" answer written without its negation), the
deterministic judge (a claim that adds a negation its evidence lacks, or drops one its evidence has).
A claim that keeps a sentence's words but drops its negation ("the crater was formed by a meteorite"
from "formed by erosion, and not by a meteorite") shares nearly all its words with the source: only the
negation's scope tells it from a faithful claim.
"""

from __future__ import annotations

import re

from judge.text.normalize import normalize
from judge.text.tokens import STOPWORDS, text_forms, word_forms, words

NEGATIONS = frozenset(
    """
    not no never none nor cannot neither nobody nothing without n't isn't wasn't aren't weren't doesn't don't
    didn't won't can't couldn't hasn't haven't hadn't
    לא אין אינו אינה אינם אינן מעולם בלי ללא
    não nao nunca nem nenhum nenhuma jamais sem
    لا لم لن ليس ليست غير بدون
    """.split()
)
# Words that negate in some uses only (Arabic ما "not" / "what", Hebrew אף "not one" / "even"): the claims
# boundary reads them as negations, so a "no" answer written with one is kept; a denial's scope never starts at one.
NEGATES_IN_SOME_USES = frozenset("ما אף".split())
# Hebrew joins "and" and "that" to the word after them: ולא "and not", שלא "that not", ושאין "and that there
# is no". Only these two letters: כ and ב before לא make other words (כלא "prison").
_HEBREW_JOINED = re.compile(r"^(?:ו|ש|וש)(?=[\u05d0-\u05ea])")
# A negation followed by one of these limits rather than denies ("not only", "no fewer than 300", "לא רק",
# "não só"); one with these later in its clause dates rather than denies ("did not return until 1950").
_LIMITS = frozenset("only just merely less more fewer least רק פחות יותר só apenas somente menos فقط أقل أكثر".split())
_DATES = frozenset("until till before עד לפני até antes حتى قبل".split())
# A denial of one of these affirms what follows ("not a coincidence that", "no doubt that", "never forgot",
# "did not stop", "אין ספק ש", "לא במקרה", "não há dúvida", "nunca deixou de"): among the first two words
# it governs.
_AFFIRMS = frozenset(
    """
    doubt doubts coincidence accident surprise surprising wonder secret question lose lost forget forgot
    forgotten fail failed fails stop stopped stops cease ceased hesitate hesitated deny denied unlike
    ספק במקרה מקרה פלא סוד שכח שכחה הפסיק הפסיקה חדל חדלה היסס פעם
    dúvida duvida acaso coincidência surpresa segredo deixou deixa esqueceu parou hesitou negou
    شك صدفة غريبا
    """.split()
)
# A denial of saying or knowing says nothing of what follows ("did not mention that", "did not confirm the
# funding", "it is not clear whether", "לא ציין", "não confirmou").
_SAYS_NOTHING = frozenset(
    """
    mention mentioned say said report reported confirm confirmed disclose disclosed specify specified comment
    commented explain explained reveal revealed know known knew clear sure certain whether
    ציין ציינה אמר אמרה הזכיר הזכירה פירט פירטה אישר אישרה ברור ידוע בטוח
    mencionou disse confirmou informou revelou explicou claro sabe certo
    """.split()
)
_NOT_DENYING = _AFFIRMS | _SAYS_NOTHING
_CLAUSE_END = re.compile(r"([,;:.!?()\[\]\u2014\u2013\u060c\u061b\u061f\u05be]|\s-\s|\bbut\b|\bאלא\b|\bmas\b|\bلكن\b)")
_ASKS = ("?", "\u061f")  # a negation in a question asks, it does not deny ("Didn't all your hair fall out?")
SCOPE_WORDS = 4  # the content words after a negation that it governs, at most
_WINDOW = 12  # words after a negation read for its scope, a limit or a date ("did not return to the town until")


def is_negation(word: str) -> bool:
    """``word`` (lower-cased, normalised) negates: in the list, a contraction in n't, or a Hebrew negation
    with ו or ש joined to it."""
    return word in NEGATIONS or word.endswith("n't") or _HEBREW_JOINED.sub("", word) in NEGATIONS


def negated(text: str, loosely: bool = False) -> bool:
    """``text`` holds a negation; ``loosely``: or a word that negates in some of its uses only."""
    return any(is_negation(w) or (loosely and w in NEGATES_IN_SOME_USES) for w in words(normalize(text).text))


def negation_scopes(text: str) -> list[list[str]]:
    """For each denial in ``text``: the content words after it in its clause, at most :data:`SCOPE_WORDS`
    ("not by a meteorite impact" -> [meteorite, impact]). A negation that limits ("not only"), dates ("not
    until"), affirms ("no doubt that"), denies saying ("did not mention that") or asks governs nothing here."""
    scopes = []
    parts = _CLAUSE_END.split(normalize(text).text)
    for clause, end in zip(parts[::2], parts[1::2] + [""]):
        if end in _ASKS:
            continue
        ws = words(clause)
        for i, w in enumerate(ws):
            rest = ws[i + 1 : i + 1 + _WINDOW]  # a window: a clause without punctuation costs linear time
            if not is_negation(w) or (rest and rest[0] in _LIMITS) or _DATES.intersection(rest):
                continue
            after = [x for x in rest if not is_negation(x) and x not in STOPWORDS]
            if after and not _NOT_DENYING.intersection(after[:2]):
                scopes.append(after[:SCOPE_WORDS])
    return scopes


def dropped_negation(claim: str, evidence: str) -> bool:
    """The claim states without negation what ``evidence`` denies: the claim has no negation, and a denial
    of the evidence governs at least two of the claim's words (all of them when it governs one)."""
    if negated(claim):
        return False
    mine = text_forms(claim)
    for scope in negation_scopes(evidence):
        hits = sum(any(f in mine for f in word_forms(w)) for w in scope)
        if hits >= min(2, len(scope)):
            return True
    return False
