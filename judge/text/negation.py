"""Negation: which words negate, and which words a negation governs.

One list for every stage: the claim boundary (a "no" answer written without its negation), the alignment
(:mod:`judge.stages.alignment`: a denial kept, dropped or added within the aligned clause). A denial may be
said in other words: "refused to", "declined to", "failed to", "has yet to", "טרם", "recusou-se a" deny
what follows as "not" does, so "refused to show up" and "chose not to show up" are the same denial.
A claim that keeps a sentence's words but drops its negation ("the crater was formed by a meteorite"
from "formed by erosion, and not by a meteorite") shares nearly all its words with the source: only the
negation's scope tells it from a faithful claim.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from judge.text.memo import text_memo
from judge.text.normalize import normalized
from judge.text.tokens import STOPWORDS, word_spans, words

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
    refuse refused refusing decline declined
    ספק במקרה מקרה פלא סוד שכח שכחה הפסיק הפסיקה חדל חדלה היסס פעם סירב סירבה
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
_CLAUSE_END = re.compile(r"([,;:.!?()\[\]\u2014\u2013\u060c\u061b\u061f\u05be]|\s-\s|\bbut\b|\bאלא\b|\bmas\b|\bلكن\b)")
_ASKS = ("?", "\u061f")  # a negation in a question asks, it does not deny ("Didn't all your hair fall out?")
SCOPE_WORDS = 4  # the content words after a negation that it governs, at most
_WINDOW = 12  # words after a negation read for its scope, a limit or a date ("did not return to the town until")


# Verbs that deny what they govern ("refused to attend", "failed to qualify", "סירב לחתום", "recusou-se a
# assinar"): a denial when "to" (ל־, "a") follows, and no negation comes before them ("did not fail to").
_DENYING_VERBS = frozenset(
    "refuse refuses refused refusing decline declines declined declining fail fails failed failing unable "
    "סירב סירבה סירבו מסרב מסרבת מסרבים recusou recusaram recusa recusam recusar".split()
)
DENIES, WITHHOLDS = "denies", "withholds"  # a denial of what follows; of saying or knowing it ("did not confirm")


def is_negation(word: str) -> bool:
    """``word`` (lower-cased, normalised) negates: in the list, a contraction in n't, or a Hebrew negation
    with ו or ש joined to it."""
    return word in NEGATIONS or word.endswith("n't") or _HEBREW_JOINED.sub("", word) in NEGATIONS


def _governs_from(ws: list[str], i: int) -> int | None:
    """Where the words governed by a denial opening at ``ws[i]`` begin, or None when none opens there."""
    w, nxt = ws[i], ws[i + 1] if i + 1 < len(ws) else ""
    if w in ("no", "nº") and nxt[:1].isdigit():
        return None  # "the No. 10 shirt", "no 5": a number's abbreviation
    if is_negation(w) or w == "טרם":
        return i + 1
    if any(is_negation(x) for x in ws[max(0, i - 2) : i]):
        return None  # "did not fail to", "not yet to": the negation before it is the denial
    if w == "yet" and nxt == "to":
        return i + 2  # "has yet to be signed"
    if w in _DENYING_VERBS:
        if nxt in ("to", "a"):
            return i + 2
        if nxt == "se" and ws[i + 2 : i + 3] == ["a"]:
            return i + 3
        if "\u05d0" <= w[:1] <= "\u05ea" and nxt.startswith("\u05dc"):
            return i + 1
    return None


def negated(text: str, loosely: bool = False) -> bool:
    """``text`` holds a negation or a denial in other words; ``loosely``: or a word that negates in some of
    its uses only."""
    ws = words(normalized(text).text)
    return any(_governs_from(ws, i) is not None or (loosely and w in NEGATES_IN_SOME_USES) for i, w in enumerate(ws))


@text_memo()
def denials(text: str) -> tuple[tuple[int, tuple[int, ...], str], ...]:
    """Each denial of ``text``: (the index of its word among ``word_spans(normalize(text).text)``, the indices
    of the content words it governs in its clause, at most :data:`SCOPE_WORDS`, and DENIES or WITHHOLDS).
    A negation that limits ("not only"), dates ("not until"), affirms ("no doubt that") or asks governs
    nothing; one of saying or knowing ("did not confirm", "it is not clear") WITHHOLDS."""
    norm = normalized(text).text
    spans = word_spans(norm)
    ws = [w for _, _, w in spans]
    ends = [m.start() for m in _CLAUSE_END.finditer(norm)]
    asks = [m.start() for m in _CLAUSE_END.finditer(norm) if m.group() in _ASKS]
    clause = [bisect_right(ends, s) for s, _, _ in spans]
    out = []
    for i in range(len(ws)):
        first = _governs_from(ws, i)
        if first is None:
            continue
        rest = [k for k in range(first, min(len(ws), first + _WINDOW)) if clause[k] == clause[i]]
        words_ = [ws[k] for k in rest]
        if (words_ and words_[0] in _LIMITS) or _DATES.intersection(words_):
            continue
        if clause[i] < len(ends) and ends[clause[i]] in asks:
            continue  # "Didn't all your hair fall out?" asks
        after = [k for k in rest if _governs_from(ws, k) is None and ws[k] not in STOPWORDS]
        if not after:
            continue
        lead = {ws[k] for k in after[:2]}
        if lead & _AFFIRMS:
            continue
        out.append((i, tuple(after[:SCOPE_WORDS]), WITHHOLDS if lead & _SAYS_NOTHING else DENIES))
    return tuple(out)
