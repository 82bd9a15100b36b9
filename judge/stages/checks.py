"""Deterministic checks of a claim against its candidate spans: numbers and names that the evidence lacks.

Numbers, dates and percentages in the claim that appear in no candidate; of those, the ones a candidate
states *differently in the same slot of the same entity*. A mismatch is called only when all of these hold:

- the claim states a slot of its own: three content words besides the numbers, or two that a number does
  not open. A short answer ("13 חברי כנסת", "15 horas") has its slot in its question, and any other
  figure of the same unit in the source would look like a contradiction;
- the candidate's number is of the same kind (percentage, year, decade, day, time, other), in the same
  month for a day, and, for a plain number, counts the same unit (``78 קילומטרים`` meets ``87 ק"מ``;
  ``Route 495`` never meets a ``3.45-mile`` length; "1500 pieces" is a count, no year); neither stands in a
  list or a range ("1958, 1962 and 1970", "6-7 March"), which the missing-number check compares as a set;
- it has, within six tokens of its own sentence, one of the claim number's slot words written in lower
  case: the nearest such word on either side of the claim's number, or one of its three neighbours (names,
  months and the unit aside), so "Sir John *sold* it in 1929" never meets "Sir John *gave* it in 1943",
  nor the "2019 Selman A. Waksman *Award*" the year it was "first *awarded*";
- the entity is the same: the text holds what the claim says before the number (its lead: all of it up to
  three words, all but 40% of the rest beyond two; for a candidate, whose words reword the claim's, one
  word of it anywhere in the candidates), and, when the claim has names, one of them;
- its text holds at least two of the claim's words, and more than any mention of the claim's own value in
  the same slot does; a text that states both values is the claim's benefit of the doubt.

Values are compared canonically: ``12%``/``12 %``/``12 אחוזים``, ``1,450``/``1450``, ``08``/``8``, ``2:00
PM``/``14:00``; a decade ("the 1990s", "2000's") is no year.

Names (capitalised Latin terms, quoted terms, Hebrew acronyms in gershayim) that appear in no candidate. A
capitalised word that opens a sentence is no name by itself ("Essentially", "Introduced", "Enquanto"): it
is one when the text also writes it capitalised inside a sentence, or when it is none of the words and
shapes sentences open with (an adverb, a participle, a conjunction...). A name is found in its fuller or
shorter forms: "Roy Orbison" in "Roy Kelton Orbison", "J. Smith" in "John Smith" (every token of it matches
a token of a name there, or is its initial). Compared on normalised text, on word boundaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from judge.models import Candidate
from judge.results import ClaimChecks, NumberMismatch
from judge.text import normalize, word_forms, words
from judge.text.bounds import contains_word
from judge.text.tokens import STOPWORDS, word_spans

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/]\d+)*(?:\s?%)?")
# In a text's numbers a Hebrew or Arabic prefix letter may be joined to a number ("و2002", "ב1892").
_NUMBER_IN_TEXT = re.compile(r"(?:(?<![\w.])|(?<=[\u05d0-\u05ea\u0621-\u064a]))\d+(?:[.,:/]\d+)*(?:\s?%)?")
_LATIN_NAME = re.compile(r"\b[A-Z][\w'&-]*(?:\s+(?:of|de|da|do|von|van|the|al|bin)?\s*[A-Z][\w'&-]*)*")
_QUOTED = re.compile(r"[\"“„«]([^\"“”„«»\n]{2,60})[\"”“»]")
_GERSHAYIM = re.compile(r"[\u05d0-\u05ea]+[\"\u05f4][\u05d0-\u05ea]+")
_CAPITALISED_STOPWORDS = frozenset(
    "The A An In On At By For From With And But Or Of To It Its This That These Those He She They We I "
    "His Her Their Our As If When While After Before According Also However Then There Here "
    "O A Os As Um Uma Em No Na De Da Do Para Com Por Segundo Ele Ela".split()
)
# Words that open sentences and name nothing (besides the stopwords above): a capitalised one of them at a
# sentence's start is no name.
SENTENCE_OPENERS = frozenset(
    """
    because although though since until unless whether during despite following later today currently many
    some most several each every all both other another such only even still yet thus therefore meanwhile
    moreover furthermore instead nevertheless nonetheless otherwise besides what who which where why how
    born once soon now earlier recently afterwards members people following according including being having
    using regarding concerning considering given introduced located based founded named
    enquanto cada esta este estes estas essa esse esses essas isso isto aquele aquela quando onde como porque
    pois também além assim então mas porém contudo entretanto todavia portanto logo ainda já sempre nunca
    apenas somente após antes depois durante desde entre sobre sob sem até contra conforme caso se nos nas
    dos das aos pelo pela pelos pelas nesse nessa neste nesta todo toda todos todas outro outra outros outras
    muitos muitas alguns algumas vários várias cerca hoje atualmente membros
    """.split()
)
_OPENER_SHAPE = re.compile(r"(?:ally|tly|ously|ively|dly|gly|bly|arly|ately|ently|mente|[^e]ed|ing)$")  # a lone opening word
_NOT_SHAPE = frozenset("ahmed mohamed mohammed muhammad alfred mildred winifred jared sally beijing wyoming reading sterling".split())
# Words that make no name's identity: a name shared by two names through one of these is no shared name.
GENERIC_NAME_WORDS = frozenset(
    """
    university college school hospital center centre council district county city state province river lake
    mount street road company group party church park national international united new north south east west
    saint st fort port club team award prize festival museum library institute department ministry bank
    universidade escola instituto faculdade curso cidade estado rio ministério ministerio departamento
    programa centro conselho comissão comissao secretaria
    """.split()
)
_PARTICLES = frozenset("of de da do das dos von van the al bin e and".split())
MONTHS = frozenset(
    """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro
    ינואר פברואר מרץ מרס אפריל מאי יוני יולי אוגוסט ספטמבר אוקטובר נובמבר דצמבר
    يناير فبراير مارس أبريل ابريل مايو يونيو يوليو أغسطس اغسطس سبتمبر أكتوبر اكتوبر نوفمبر ديسمبر
    """.split()
)
_MONTH_LISTS = (
    "january february march april may june july august september october november december",
    "jan feb mar apr may jun jul aug sep oct nov dec",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "ינואר פברואר מרץ אפריל מאי יוני יולי אוגוסט ספטמבר אוקטובר נובמבר דצמבר",
    "يناير فبراير مارس أبريل مايو يونيو يوليو أغسطس سبتمبر أكتوبر نوفمبر ديسمبر",
)
MONTH_NUMBER = {m: i for line in _MONTH_LISTS for i, m in enumerate(line.split(), start=1)} | {
    "sept": 9, "מרס": 3, "ابريل": 4, "اغسطس": 8, "اكتوبر": 10, "marco": 3,
}
PERCENT_WORDS = frozenset("percent pct אחוז אחוזים אחוזי por cento porcento بالمئة بالمائة المئة".split())
# A multiplier is no unit: the unit of "25 מיליון ש"ח" is ש"ח.
MULTIPLIERS = frozenset("thousand million billion trillion מיליון מיליארד אלף אלפי mil milhão milhões milhao milhoes bilhão bilhões مليون مليار ألف آلاف".split())
# Spellings of one unit (as word forms: quotes dropped, so ק"מ is קמ).
_UNITS = {
    "km": "km kilometre kilometres kilometer kilometers קמ קילומטר קילומטרים quilômetro quilômetros quilometro quilometros quilómetro quilómetros كم كيلومتر كيلومترا كيلومترات",
    "m": "metre metres meter meters מטר מטרים metro metros متر مترا أمتار",
    "kg": "kg kilogram kilograms kilo kilos קג קילוגרם קילו quilo quilos quilograma quilogramas كغ كيلوغرام",
    "mile": "mi mile miles",
    "ils": "שח שקל שקלים nis shekel shekels",
    "usd": "usd dollar dollars דולר דולרים dólar dólares dolar dolares دولار دولارا",
    "hour": "hour hours hr hrs שעה שעות hora horas ساعة ساعات",
    "minute": "minute minutes min mins דקה דקות minuto minutos دقيقة دقائق",
    "year": "year years שנה שנים ano anos سنة سنوات عام أعوام",
}
_UNIT_OF = {w: unit for unit, spellings in _UNITS.items() for w in spellings.split()}
CONTEXT_WORDS = 3  # content words either side of a number that make its context
SLOT_MIN_WORDS = 3  # content words (numbers aside) a claim needs to state a number's slot by itself


@dataclass(frozen=True)
class NumberMention:
    """One number in a text, with what it measures: its kind, its unit and the words around it."""

    value: str  # canonical: no spaces, no thousands separators, no leading zeros, 24-hour times
    kind: str  # percent, year, decade, day, time, number
    context: tuple[frozenset[str], ...]  # the content words around it (units and months included), each as its forms
    common: tuple[frozenset[str], ...] = ()  # of those, the words written in lower case (names and months aside)
    unit: str | None = None  # what a plain number counts: the word right after it (a multiplier skipped)
    bag: frozenset[str] = field(default=frozenset(), compare=False)  # forms of every content word within six tokens
    common_bag: frozenset[str] = field(default=frozenset(), compare=False)  # of those, the words in lower case
    month: int | None = None  # a day's month (1-12), when written beside it
    listed: bool = False  # one of a list or range of numbers of its kind ("1958, 1962 and 1970", "6-7 March")
    start: int = field(default=0, compare=False)  # where it is in the normalised text
    end: int = field(default=0, compare=False)

    def shared(self, other: NumberMention) -> int:
        """How many of this mention's context words the other's context holds (in any form)."""
        theirs = other.bag or (frozenset().union(*other.context) if other.context else frozenset())
        return sum(bool(forms & theirs) for forms in self.context)


_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}\b)")
_YEAR = re.compile(r"(1[0-9]|20|21)\d\d")
_ENDS_SENTENCE = re.compile(r"[.!?\u061f\u2026][\"'\u201d\u2019)\]]*$")
_DECADE_AFTER = re.compile(r"'?s(?![^\W\d_])")


def _canon_number(text: str) -> str:
    text = text.replace(" ", "")
    return _THOUSANDS_COMMA.sub("", text)


def number_kind(number: str) -> str:
    """percent, year, time or number (day and decade are told by context, in :func:`mentions`)."""
    if number.endswith("%"):
        return "percent"
    if _YEAR.fullmatch(number):
        return "year"
    if ":" in number:
        return "time"
    return "number"


_kind = number_kind  # the name judge.controls imports


def _is_month(word: str) -> bool:
    return any(f in MONTHS for f in word_forms(word))


def _month_of(word: str) -> int | None:
    return next((MONTH_NUMBER[f] for f in word_forms(word) if f in MONTH_NUMBER), None)


def _forms(word: str) -> frozenset[str]:
    """The word's forms, and the unit it spells, if any (קילומטרים and ק"מ meet as "unit:km")."""
    forms = word_forms(word)
    unit = next((_UNIT_OF[f] for f in forms if f in _UNIT_OF), None)
    return frozenset(forms + ((f"unit:{unit}",) if unit else ()))


def _unit_key(word: str) -> str:
    forms = word_forms(word)
    return next((_UNIT_OF[f] for f in forms if f in _UNIT_OF), forms[-1])


def _capitalised(original: str, at: int) -> bool:
    """The original character at ``at`` is a capital inside a sentence (a name's, not a sentence's opening)."""
    if not original[at : at + 1].isupper():
        return False
    before = original[max(0, at - 40) : at].rstrip(" \t\"'“‘«(")
    return bool(before) and before[-1] not in ".!?:\n\u2026"


@lru_cache(maxsize=4096)
def mentions(text: str) -> list[NumberMention]:
    """Every number of ``text`` with its kind, unit and context, in order."""
    nt = normalize(text)
    norm = nt.text
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", norm)]
    out = []
    for m in _NUMBER_IN_TEXT.finditer(norm):
        value = _canon_number(m.group())
        at = next((i for i, (s, e, _) in enumerate(tokens) if s <= m.start() < e), 0)
        around = []  # (word, capitalised in the original, side): -1 before, 0 its own token, 1 after
        first, last = at, at  # six tokens either side, within the number's sentence
        while first > max(0, at - 6) and not _ENDS_SENTENCE.search(tokens[first - 1][2]):
            first -= 1
        while last < min(len(tokens) - 1, at + 6) and not _ENDS_SENTENCE.search(tokens[last][2]):
            last += 1
        for i in range(first, last + 1):
            s, _, t = tokens[i]
            for ws, _, w in word_spans(t):
                if i == at and s + ws >= m.start() and w[0].isdigit():
                    continue
                around.append((w, _capitalised(text, int(nt.starts[s + ws])), (i > at) - (i < at)))
        before = [w for w, _, side in around if side < 0]
        after = [w for w, _, side in around if side > 0]
        own = [w for w, _, side in around if side == 0 and not w[0].isdigit()]  # כ-78 -> כ; 5km -> km
        if not value.endswith("%") and after and any(f in PERCENT_WORDS for f in word_forms(after[0])):
            value += "%"  # "12 אחוזים", "12 percent": the unit written out
        kind = number_kind(value)
        rest = norm[m.end() :]
        if kind == "year" and rest.startswith(" ") and after and _counted(after[0]):
            kind = "number"  # "1500 pieces", "2000 people": a count, not a year
        if kind == "year" and value.endswith("0") and _DECADE_AFTER.match(rest):
            kind = "decade"  # "the 1990s", "the 2000's"
        meridiem = after[0] if after[:1] and after[0] in ("pm", "am") else (after[0] + after[1] if after[1:2] == ["m"] and after[0] in ("a", "p") else "")
        if kind == "time" and meridiem and value.count(":") == 1:
            value = _clock(value, meridiem == "pm")  # 2:00 PM is 14:00
        if kind in ("number", "year", "decade") and value.isdigit():
            value = value.lstrip("0") or "0"
        near = (before[-1:] + after[:1]) if before or after else []
        month = None
        if kind == "number" and len(before) >= 2 and _is_month(before[-1]) and before[-2][:1].isdigit():
            kind = "year"  # "15 Jul 19"
        elif kind == "number":
            # "21 July", "July 21", "15 de janeiro", "26 בספטמבר", "the 4th of July"
            beside = near + own + ([after[1]] if len(after) > 1 and after[0] in ("de", "of", "del") else [])
            month = next((m_ for w in beside if (m_ := _month_of(w)) is not None), None)
            if month is not None:
                kind = "day"
        ctx_before = [(w, c) for w, c, side in around if side < 0 and _is_context(w)][-CONTEXT_WORDS:]
        ctx_after = [(w, c) for w, c, side in around if side > 0 and _is_context(w)][:CONTEXT_WORDS]
        ctx_own = [(w, c) for w, c, side in around if side == 0 and _is_context(w)]
        ctx = list(dict.fromkeys(ctx_before + ctx_after + ctx_own))
        words_ = list(dict.fromkeys(w for w, _ in ctx))
        context = tuple(_forms(w) for w in words_)
        capital = {w for w, c in ctx if c}
        common = tuple(_forms(w) for w in words_ if w not in capital and not _is_month(w) and w not in PERCENT_WORDS)
        unit = _unit(rest, own, after) if kind == "number" else None
        wide = [(w, c) for w, c, _ in around if _is_context(w)]  # every content word within six tokens
        bag = frozenset(f for w, _ in wide for f in _forms(w))
        common_bag = frozenset(f for w, c in wide if not c and not _is_month(w) and w not in PERCENT_WORDS for f in _forms(w))
        out.append(NumberMention(value, kind, context, common, unit, bag, common_bag, month, False, m.start(), m.end()))
    return _mark_lists(norm, out)


_LIST_GLUE = re.compile(r"\s*(?:[-,;/]|\u2013|\u060c|\s)\s*(?:(?:and|or|to|e|ou|a|y|و|ו|עד|-)\s*)?[\u05d5\u0648]?\s*$")


def _mark_lists(norm: str, found: list[NumberMention]) -> list[NumberMention]:
    """Marks the numbers that stand in a list or a range with a number of their kind next to them."""
    kinds = {"percent": "number", "number": "number"}
    out = list(found)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if kinds.get(a.kind, a.kind) != kinds.get(b.kind, b.kind):
            continue
        if _LIST_GLUE.match(norm[a.end : b.start]):
            out[i] = replace(a, listed=True)
            out[i + 1] = replace(b, listed=True)
    return out


def _counted(word: str) -> bool:
    """A word that counts what a number before it counts: a unit, or a Latin plural ("pieces", "people")."""
    if word in STOPWORDS or not word.isascii() or not word.isalpha():
        return any(f in _UNIT_OF for f in word_forms(word)) if word not in STOPWORDS else False
    return any(f in _UNIT_OF for f in word_forms(word)) or word in ("people", "persons", "men", "women", "children") or (
        len(word) > 3 and word.endswith("s") and not word.endswith("ss") and not _is_month(word)
    )


def _clock(value: str, pm: bool) -> str:
    hours, minutes = value.split(":")
    h = int(hours) % 12 + (12 if pm else 0)
    return f"{h}:{minutes}"


def _unit(rest: str, own: list[str], after: list[str]) -> str | None:
    """What a plain number counts: letters joined to it ("5km", "3.45-mile"), or the word right after it
    when only a space lies between (a multiplier skipped); None after punctuation or a stopword."""
    joined = re.match(r"-?([^\W\d_]+)", rest)
    if joined:
        return _unit_key(joined.group(1))
    if not rest.startswith(" "):
        return None
    for w in after[:2]:
        if w in STOPWORDS or w[0].isdigit() or len(w) < 1:
            return None
        if w not in MULTIPLIERS:
            return _unit_key(w)
    return _unit_key(after[0]) if after and after[0] in MULTIPLIERS else None


def _is_context(word: str) -> bool:
    return len(word) > 1 and not word[0].isdigit() and word not in STOPWORDS


def numbers_in(text: str) -> list[str]:
    return list(dict.fromkeys(m.value for m in mentions(text)))


# -- names ---------------------------------------------------------------------------------------------------
def names_in(text: str) -> list[str]:
    """Capitalised Latin terms (a sentence's capitalised first word only when it is a name, see the module
    docstring), quoted terms and Hebrew acronyms of ``text``, in order."""
    found: list[str] = []
    for m in _LATIN_NAME.finditer(text):
        tokens = m.group().split()
        if _opens_sentence(text, m.start()) and _not_a_name(tokens[0], text, alone=len(tokens) == 1):
            tokens = tokens[1:]
        words_ = [w for w in tokens if w not in _CAPITALISED_STOPWORDS]
        while words_ and _calendar_word(words_[0]):
            words_ = words_[1:]  # "May", "Monday": a date's, not a name
        while words_ and _calendar_word(words_[-1]):
            words_ = words_[:-1]
        name = " ".join(words_).strip()
        if len(name) > 1 and name[0].isupper():
            found.append(name)
    found.extend(m.group(1).strip() for m in _QUOTED.finditer(text))
    found.extend(m.group() for m in _GERSHAYIM.finditer(text))
    return list(dict.fromkeys(found))


WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "segunda terça terca quarta quinta sexta sábado sabado domingo".split()
)


def _calendar_word(word: str) -> bool:
    w = word.lower().rstrip(".,")
    return w in MONTHS or w in WEEKDAYS


def _opens_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \t\"'“‘«(*-\u2022")
    return not before or before[-1] in ".!?:\n\u2026"


def _not_a_name(word: str, text: str, alone: bool = True) -> bool:
    """A capitalised word opening a sentence is no name: a stopword, an opener, a word the text also writes
    in lower case, or (``alone``: no capitalised word follows it) an adverb's or a participle's shape;
    unless the text writes it capitalised inside a sentence too."""
    if word in _CAPITALISED_STOPWORDS:
        return True
    bare = word.rstrip("'s\u2019,;")
    if any(_capitalised(text, m.start()) for m in re.finditer(rf"(?<!\w){re.escape(bare)}(?!\w)", text)):
        return False
    low = bare.lower()
    return (
        low in SENTENCE_OPENERS
        or (alone and low not in _NOT_SHAPE and len(low) > 4 and _OPENER_SHAPE.search(low) is not None)
        or re.search(rf"(?<!\w){re.escape(low)}(?!\w)", text) is not None
    )


def name_tokens(name: str) -> list[str]:
    """The tokens that make a name, normalised (case, accents kept apart), particles aside."""
    out = []
    for w in words(normalize(name).text):
        w = w.removesuffix("'s").removesuffix("'")
        if w and w not in _PARTICLES:
            out.append(w)
    return out


def _token_matches(short: str, full: str) -> bool:
    if len(short) == 1 or len(full) == 1:
        return full[0] == short[0]  # an initial
    return bool(set(word_forms(short)) & set(word_forms(full)))


def _covers(full: list[str], short: list[str]) -> bool:
    """Every token of ``short`` matches a distinct token of ``full`` (equal in some form, or its initial)."""
    left = list(full)
    for t in short:
        hit = next((i for i, f in enumerate(left) if _token_matches(t, f)), None)
        if hit is None:
            return False
        left.pop(hit)
    return True


def same_name(a: str, b: str) -> bool:
    """``a`` and ``b`` may name the same: one is a fuller form of the other ("Roy Orbison", "Roy Kelton
    Orbison", "Orbison", "R. Orbison")."""
    ta, tb = name_tokens(a), name_tokens(b)
    if not ta or not tb:
        return False
    return _covers(tb, ta) if len(ta) <= len(tb) else _covers(ta, tb)


def related_names(a: str, b: str) -> bool:
    """``a`` and ``b`` may name the same or parts of one thing: the same name, or a token shared that is no
    generic word ("MedStar Health" and "MedStar Washington Hospital Center"; not "Putnam County" and
    "Westchester County")."""
    if same_name(a, b):
        return True
    ta = {f for t in name_tokens(a) if t not in GENERIC_NAME_WORDS for f in word_forms(t)}
    tb = {f for t in name_tokens(b) if t not in GENERIC_NAME_WORDS for f in word_forms(t)}
    return bool(ta & tb)


def name_present(name: str, text: str, text_names: list[str] | None = None) -> bool:
    """``name`` is in ``text``: verbatim on word boundaries (normalised), or as the shorter form of a name
    there ("Roy Orbison" in "Roy Kelton Orbison"). A fuller form of a name there is not present: its extra
    tokens are not in the text."""
    if contains_word(normalize(text).text, normalize(name).text):
        return True
    mine = name_tokens(name)
    if not mine:
        return False
    return any(_covers(name_tokens(n), mine) for n in (text_names if text_names is not None else names_in(text)))


# -- the checks ------------------------------------------------------------------------------------------------
def _present(value: str, values: set[str]) -> bool:
    """``value`` is among ``values``, with or without its percent sign."""
    return value in values or value.rstrip("%") in values or f"{value.rstrip('%')}%" in values


def _claim_words(claim: str) -> list[frozenset[str]]:
    """The claim's content words (numbers, months and percent words aside), each as its forms."""
    found = dict.fromkeys(w for w in words(normalize(claim).text) if _is_context(w) and not _is_month(w) and w not in PERCENT_WORDS)
    return [_forms(w) for w in found]


def states_a_slot(claim: str) -> bool:
    """Whether ``claim`` says by itself what its numbers measure (see the module docstring)."""
    n = len(_claim_words(claim))
    if n >= SLOT_MIN_WORDS:
        return True
    first = next(iter(words(normalize(claim).text)), "")
    return n == 2 and not first[:1].isdigit()


def aligned_mismatches(
    claim: str, evidence_texts: list[str], min_shared: int = 2, margin_if_present: int = 1, context: str | None = None
) -> list[NumberMismatch]:
    """Numbers of the claim that the evidence states differently in the same slot of the same entity (the
    rules are the module docstring's).

    Each claim number is aligned with the evidence number of the same kind, month and unit that has one of
    its slot words around it, stands in a text that holds the claim's lead and one of its names, and whose
    text (give a candidate's parts as separate texts) holds the most of the claim's words. It is a mismatch
    when that number has another value and its text holds at least ``min_shared`` of them; when the
    evidence also states the claim's own value in the same slot, the other must hold ``margin_if_present``
    more than any mention of that value does. ``context``: the candidates together, where a reworded lead
    is looked for loosely (None: each text must hold the lead itself, as a sentence of the source must)."""
    claim_mentions = mentions(claim)
    if not claim_mentions or not states_a_slot(claim):
        return []
    claim_words = _claim_words(claim)
    claim_values = {m.value for m in claim_mentions}
    evidence = [(m, t) for t in evidence_texts for m in mentions(t) if not m.listed]
    out: dict[str, NumberMismatch] = {}
    for c in claim_mentions:
        if c.listed:
            continue
        slot = tuple(f for f in _slot_words(claim, c.start, c.end) + c.common if not _is_unit(f, c.unit))
        lead = lead_words(claim, c.start)
        same, other, other_shared = -1, None, -1
        stating = {text for e, text in evidence if _present(e.value, {c.value}) or _present(c.value, {e.value})}
        for e, text in evidence:
            if e.kind != c.kind or e.unit != c.unit or (c.month and e.month and c.month != e.month):
                continue
            in_slot = any(forms & e.common_bag for forms in slot)
            if _present(e.value, {c.value}) or _present(c.value, {e.value}):
                # the claim's own value in the claim's slot: the benefit of the doubt (in another slot it is
                # another fact: "ב־1881 עלה לארץ" does not say he published in 1881)
                if in_slot:
                    same = max(same, sum(bool(forms & (e.bag | _text_forms(text))) for forms in claim_words))
                continue
            if not in_slot or e.value in claim_values or text in stating:
                continue  # another slot ("ב־1881 עלה לארץ" for "פרסם ... ב־1881"), or a text that states both
            shared = sum(bool(forms & (e.bag | _text_forms(text))) for forms in claim_words)
            if (
                shared > other_shared
                and (holds_lead(lead, text) if context is None else holds_lead(lead, context, loosely=True))
                and names_held(claim, text)
            ):
                other, other_shared = e, shared
        margin = margin_if_present if same >= 0 else 1
        if other is not None and other_shared >= min_shared and other_shared >= same + margin and c.value not in out:
            out[c.value] = NumberMismatch(claim=c.value, candidate=other.value)
    return list(out.values())


# Words of discourse, not of what a number is about: "Additionally, the passage states that ... 2019".
META_WORDS = frozenset(
    """
    additionally also first second third finally moreover furthermore however passage text article summary
    document mentions mentioned mention discusses discuss describes describe states stated provides provide
    information details detail according notes note reports reported explains highlights
    """.split()
)
LEAD_SLACK = 0.4  # of a claim's lead words beyond the first two, this share may be missing from the evidence


def lead_words(text: str, start: int) -> list[frozenset[str]]:
    """The content words and numbers of ``text`` (normalised) before offset ``start`` (words of discourse
    aside), as forms: what a number or a name there is about ("רשת זכתה באפיק 13" before 7.77)."""
    norm = normalize(text).text
    return [_forms(w) for w in dict.fromkeys(words(norm[:start])) if (_is_context(w) or w[0].isdigit()) and w not in META_WORDS]


@lru_cache(maxsize=4096)
def _text_forms(text: str) -> frozenset[str]:
    return frozenset(f for w in words(normalize(text).text) for f in _forms(w))


def holds_lead(lead: list[frozenset[str]], text: str, loosely: bool = False) -> bool:
    """``text`` holds the claim's ``lead``: all of it when it is three words or fewer (the subject and its
    verb: "רשת זכתה באפיק" is not "קשת זכתה באפיק"), and all but :data:`LEAD_SLACK` of the words beyond the
    first two when it is longer; ``loosely``: one word of it (candidates reword what they support: "עלות
    הפרויקט מוערכת" for "השקעה בפרויקט נאמדת"). An empty lead is held by any text."""
    if not lead:
        return True
    theirs = _text_forms(text)
    missing = sum(not (forms & theirs) for forms in lead)
    if loosely:
        return missing < len(lead)
    return missing <= max(0, int(LEAD_SLACK * (len(lead) - 2)))


def names_held(claim: str, text: str) -> bool:
    """``text`` names at least one of the claim's names (in a fuller or shorter form), or the claim names
    none: a text that names none of them is about another entity ("Sorenstam received a sponsor's
    exemption into the 2003 ..." is not about Lincicome's)."""
    names = names_in(claim)
    if not names:
        return True
    found = names_in(text)
    return any(name_present(n, text, found) for n in names)


def _is_unit(forms: frozenset[str], unit: str | None) -> bool:
    """The word is the number's unit: compared as the unit already, no slot word ("2 horas", "68 horas")."""
    return unit is not None and (unit in forms or f"unit:{unit}" in forms)


@lru_cache(maxsize=1024)
def _slot_words(text: str, start: int, end: int) -> tuple[frozenset[str], ...]:
    """The nearest content word written in lower case on each side of [start, end) of ``text``'s
    normalised form (names, months, percent words and numbers skipped), as forms."""
    nt = normalize(text)
    spans = word_spans(nt.text)

    def plain(at: int, w: str) -> bool:
        return _is_context(w) and not _is_month(w) and w not in PERCENT_WORDS and not _capitalised(text, int(nt.starts[at]))

    before = next((w for at, e, w in reversed(spans) if e <= start and plain(at, w)), None)
    after = next((w for at, _, w in spans if at >= end and plain(at, w)), None)
    return tuple(_forms(w) for w in (before, after) if w)


def check_claim(claim: str, candidates: list[Candidate], sources: dict[str | None, str] | None = None) -> ClaimChecks:
    """The checks of ``claim`` against its candidates; with ``sources`` (doc_id -> text), also the conflicts
    the whole source holds (see :mod:`judge.stages.conflicts`), the best candidate's own sentences aside."""
    all_numbers = {n for c in candidates for n in numbers_in(c.text)}
    numbers = numbers_in(claim)
    missing = [n for n in numbers if not _present(n, all_numbers)]
    parts = [p.excerpt for c in candidates for p in c.parts]
    mismatched = aligned_mismatches(claim, parts, context=" \n".join(parts)) if numbers else []
    names = names_in(claim)
    texts = [(c.text, names_in(c.text)) for c in candidates] if names else []
    names_missing = [n for n in names if not any(name_present(n, t, found) for t, found in texts)]
    conflicts = []
    if sources:
        from judge.stages.conflicts import (
            find_conflicts,  # conflicts builds on this module's number rules
        )

        own = [(p.doc_id, p.start_char, p.end_char) for p in candidates[0].parts] if candidates else []
        conflicts = find_conflicts(claim, sources, own)
    return ClaimChecks(
        numbers=numbers,
        numbers_missing=missing,
        numbers_mismatched=mismatched,
        names=names,
        names_missing=names_missing,
        conflicts=conflicts,
    )
