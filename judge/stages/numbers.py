"""Numbers in a text, with what they measure: kind (percent, year, decade, day, time, number), unit, month,
the words around them, and whether they stand in a list or a range.

Values are compared canonically: ``12%``/``12 %``/``12 אחוזים``, ``1,450``/``1450``, ``08``/``8``, ``2:00
PM``/``14:00``; a decade ("the 1990s", "2000's") is no year. The alignment, the Evidence and the controls
read numbers through this one module.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from functools import lru_cache

from judge.text import word_forms
from judge.text.normalize import normalized
from judge.text.letters import LETTER
from judge.text.memo import text_memo
from judge.text.tokens import STOPWORDS, word_spans

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/]\d+)*(?:\s?%)?")
# In a text's numbers a Hebrew or Arabic prefix letter may be joined to a number ("و2002", "ב1892").
_NUMBER_IN_TEXT = re.compile(r"(?:(?<![\w.])|(?<=[\u05d0-\u05ea\u0621-\u064a]))\d+(?:[.,:/]\d+)*(?:\s?%)?")
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
MONTHS = frozenset(MONTH_NUMBER) - {"marco"}  # "marco" is read as a month only beside a day (Marco is a name)
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
# Numbers written as words ("five golds", "number one", "חמישה", "cinco"), in the languages the project reads.
# One is read ("number one" is number 1) but never stated otherwise (:attr:`NumberMention.word`: "one of the
# founders" is no count to contradict). Ordinal words are :data:`ORDINALS` (for alignment, never mentions).
_WORD_VALUES = {
    "en": "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty",
    "pt": "zero um dois três quatro cinco seis sete oito nove dez onze doze treze catorze quinze dezesseis dezessete "
    "dezoito dezenove vinte",
    "he": "אפס אחד שניים שלושה ארבעה חמישה שישה שבעה שמונה תשעה עשרה",
    "he_f": "אפס אחת שתיים שלוש ארבע חמש שש שבע שמונה תשע עשר",
    "he_c": "- - שני שלושת ארבעת חמשת ששת שבעת שמונת תשעת עשרת",
}
NUMBER_WORDS = {w: str(i) for line in _WORD_VALUES.values() for i, w in enumerate(line.split()) if w != "-"} | {
    "duas": "2", "tres": "3", "quatorze": "14", "dezasseis": "16", "dezassete": "17", "dezanove": "19",
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "trinta": "30", "quarenta": "40", "cinquenta": "50", "sessenta": "60", "setenta": "70",
    "oitenta": "80", "noventa": "90", "cem": "100", "עשרים": "20", "שלושים": "30", "ארבעים": "40", "חמישים": "50",
    "שישים": "60", "שבעים": "70", "שמונים": "80", "תשעים": "90", "מאה": "100",
} 
NUMBER_WORDS.pop("um", None)  # Portuguese "um" is the article as often as the number
ORDINALS = {w: str(i) for i, w in enumerate(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())} | {
    w: str(i) for i, w in enumerate("- primeiro segundo terceiro quarto quinto sexto sétimo oitavo nono décimo".split()) if w != "-"
} | {w: str(i) for i, w in enumerate("- ראשון שני שלישי רביעי חמישי שישי שביעי שמיני תשיעי עשירי".split()) if w != "-"}
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


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
    word: bool = False  # written as a word ("five"): "one" is read, never stated otherwise


_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}\b)")
_YEAR = re.compile(r"(1[0-9]|20|21)\d\d")
GROUPED = re.compile(r"\d[,.\u066c]\d{3}(?!\d)")  # "1,000", "1.500": a count, never a year
_ENDS_SENTENCE = re.compile(r"[.!?\u061f\u2026][\"'\u201d\u2019)\]]*$")
_DECADE_AFTER = re.compile(rf"'?s(?!{LETTER})")


def canon_number(text: str) -> str:
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



@lru_cache(maxsize=65536)
def is_month(word: str) -> bool:
    return any(f in MONTHS for f in word_forms(word))


def _month_of(word: str) -> int | None:
    return next((MONTH_NUMBER[f] for f in word_forms(word) if f in MONTH_NUMBER), None)


@lru_cache(maxsize=65536)  # each number's context words are read through it, a few dozen a number
def unit_forms(word: str) -> frozenset[str]:
    """The word's forms, and the unit it spells, if any (קילומטרים and ק"מ meet as "unit:km")."""
    forms = word_forms(word)
    unit = next((_UNIT_OF[f] for f in forms if f in _UNIT_OF), None)
    return frozenset(forms + ((f"unit:{unit}",) if unit else ()))


def _unit_key(word: str) -> str:
    forms = word_forms(word)
    return next((_UNIT_OF[f] for f in forms if f in _UNIT_OF), forms[-1])


def capitalised_at(original: str, at: int) -> bool:
    """The original character at ``at`` is a capital inside a sentence (a name's, not a sentence's opening)."""
    if not original[at : at + 1].isupper():
        return False
    before = original[max(0, at - 40) : at].rstrip(" \t\"'“‘«(")
    return bool(before) and before[-1] not in ".!?:\n\u2026"


def _mentions(text: str) -> list[NumberMention]:
    """Every number of ``text`` with its kind, unit and context, in order."""
    nt = normalized(text)
    norm = nt.text
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", norm)]
    starts = [s for s, _, _ in tokens]  # the token holding a number found by bisection: a whole source has thousands
    out = []
    for m_start, m_end, raw, spelled in number_spans(norm):
        value = canon_number(raw) if spelled is None else spelled
        i = bisect_right(starts, m_start) - 1
        at = i if i >= 0 and m_start < tokens[i][1] else 0
        around = []  # (word, capitalised in the original, side): -1 before, 0 its own token, 1 after
        first, last = at, at  # six tokens either side, within the number's sentence
        while first > max(0, at - 6) and not _ENDS_SENTENCE.search(tokens[first - 1][2]):
            first -= 1
        while last < min(len(tokens) - 1, at + 6) and not _ENDS_SENTENCE.search(tokens[last][2]):
            last += 1
        for i in range(first, last + 1):
            s, _, t = tokens[i]
            for ws, _, w in word_spans(t):
                if (i == at and s + ws >= m_start and w[0].isdigit()) or m_start <= s + ws < m_end:
                    continue
                around.append((w, capitalised_at(text, int(nt.starts[s + ws])), (i > at) - (i < at)))
        before = [w for w, _, side in around if side < 0]
        after = [w for w, _, side in around if side > 0]
        own = [w for w, _, side in around if side == 0 and not w[0].isdigit()]  # כ-78 -> כ; 5km -> km
        if not value.endswith("%") and after and any(f in PERCENT_WORDS for f in word_forms(after[0])):
            value += "%"  # "12 אחוזים", "12 percent": the unit written out
        kind = number_kind(value)
        if kind == "year" and GROUPED.search(raw):
            kind = "number"  # "כ־1,000 דונם", "1.500 casos": no year is written with a thousands separator
        rest = norm[m_end:]
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
        if kind == "number" and len(before) >= 2 and is_month(before[-1]) and before[-2][:1].isdigit():
            kind = "year"  # "15 Jul 19"
        elif kind == "number":
            # "21 July", "July 21", "15 de janeiro", "26 בספטמבר", "the 4th of July"
            beside = near + own + ([after[1]] if len(after) > 1 and after[0] in ("de", "of", "del") else [])
            month = next((m_ for w in beside if (m_ := _month_of(w)) is not None), None)
            if month is not None:
                kind = "day"
        ctx_before = [(w, c) for w, c, side in around if side < 0 and is_context_word(w)][-CONTEXT_WORDS:]
        ctx_after = [(w, c) for w, c, side in around if side > 0 and is_context_word(w)][:CONTEXT_WORDS]
        ctx_own = [(w, c) for w, c, side in around if side == 0 and is_context_word(w)]
        ctx = list(dict.fromkeys(ctx_before + ctx_after + ctx_own))
        words_ = list(dict.fromkeys(w for w, _ in ctx))
        context = tuple(unit_forms(w) for w in words_)
        capital = {w for w, c in ctx if c}
        common = tuple(unit_forms(w) for w in words_ if w not in capital and not is_month(w) and w not in PERCENT_WORDS)
        unit = _unit(rest, own, after) if kind == "number" else None
        wide = [(w, c) for w, c, _ in around if is_context_word(w)]  # every content word within six tokens
        bag = frozenset(f for w, _ in wide for f in unit_forms(w))
        common_bag = frozenset(f for w, c in wide if not c and not is_month(w) and w not in PERCENT_WORDS for f in unit_forms(w))
        out.append(NumberMention(value, kind, context, common, unit, bag, common_bag, month, False, m_start, m_end, spelled is not None))
    return _mark_lists(norm, out)



# A mention holds its context words' forms: about 120 times its text's size. Claims and evidence passages
# are cached; a whole source's numbers are read once for its view (source_numbers), never cached here.
mentions = text_memo(max_chars=200_000)(_mentions)


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


def word_number(word: str) -> str | None:
    """The value of a number word ("five", "cinco", "וחמישה"), or None; Latin words only as written ("tens"
    is no ten), Hebrew ones with their prefixes (:func:`judge.text.word_forms`)."""
    if word[:1].isdigit():
        return None
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    if "\u05d0" <= word[:1] <= "\u05ea":
        return next((NUMBER_WORDS[f] for f in word_forms(word) if f in NUMBER_WORDS), None)
    return None


def number_spans(norm: str) -> list[tuple[int, int, str, str | None]]:
    """(start, end, text, value of a number word or None) of each number of a normalised text, in order:
    digits, and number words ("twenty-five" is one)."""
    out: list[tuple[int, int, str, str | None]] = [(m.start(), m.end(), m.group(), None) for m in _NUMBER_IN_TEXT.finditer(norm)]
    spans = word_spans(norm)
    i = 0
    while i < len(spans):
        s, e, w = spans[i]
        # word_number's own tests first: a whole source's words are read here, and few are numbers
        value = word_number(w) if w in NUMBER_WORDS or "\u05d0" <= w[:1] <= "\u05ea" else None
        if value is not None:
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            unit = word_number(nxt[2]) if nxt and w in _TENS and norm[e : nxt[0]] in ("-", " ") else None
            if unit is not None and len(unit) == 1 and unit != "0":
                value, e, i = str(int(value) + int(unit)), nxt[1], i + 1
            out.append((s, e, norm[s:e], value))
        i += 1
    return sorted(out)


def _counted(word: str) -> bool:
    """A word that counts what a number before it counts: a unit, or a Latin plural ("pieces", "people")."""
    if word in STOPWORDS or not word.isascii() or not word.isalpha():
        return any(f in _UNIT_OF for f in word_forms(word)) if word not in STOPWORDS else False
    return any(f in _UNIT_OF for f in word_forms(word)) or word in ("people", "persons", "men", "women", "children") or (
        len(word) > 3 and word.endswith("s") and not word.endswith("ss") and not is_month(word)
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


def is_context_word(word: str) -> bool:
    return len(word) > 1 and not word[0].isdigit() and word not in STOPWORDS


def numbers_in(text: str) -> list[str]:
    """The numbers ``text`` writes in digits: what a claim must find (a number word is matched, never
    required: "כשתיים מכל חמש" is the source's 40%)."""
    return list(dict.fromkeys(m.value for m in mentions(text) if not m.word))


_NEXT_TOKENS = re.compile(r"(\S*)(?:\s+(\S+))?(?:\s+(\S+))?")


def source_numbers(text: str) -> frozenset[str]:
    """The values of a whole source's numbers (:func:`number_values`)."""
    return frozenset(number_values(text).values())


@text_memo()
def number_values(text: str) -> dict[int, str]:
    """Each number of ``text`` by where it starts in the normalised text, with its value as :func:`mentions`
    writes it (percent words, 12-hour clocks, leading zeros), read without its context (a long source's
    mentions cost ~70 ms)."""
    norm = normalized(text).text
    out = {}
    for start, end, raw, spelled in number_spans(norm):
        value = canon_number(raw) if spelled is None else spelled
        own, t1, t2 = _NEXT_TOKENS.match(norm, end).groups()  # the words after it in its sentence, as _mentions reads them
        after = []
        for t in (t1, t2) if not _ENDS_SENTENCE.search(own) else ():
            if t is None:
                break
            after += [w for _, _, w in word_spans(t)]
            if _ENDS_SENTENCE.search(t):
                break
        if not value.endswith("%") and after and any(f in PERCENT_WORDS for f in word_forms(after[0])):
            value += "%"
        meridiem = after[0] if after[:1] and after[0] in ("pm", "am") else (after[0] + after[1] if after[1:2] == ["m"] and after[0] in ("a", "p") else "")
        if number_kind(value) == "time" and meridiem and value.count(":") == 1:
            value = _clock(value, meridiem == "pm")
        if value.isdigit():
            value = value.lstrip("0") or "0"
        out[start] = value
    return out

