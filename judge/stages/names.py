"""Names in a text (capitalised Latin terms, quoted terms, Hebrew acronyms in gershayim), and when two
names may name the same.

A capitalised word that opens a sentence is no name by itself ("Essentially", "Introduced", "Enquanto"): it
is one when the text also writes it capitalised inside a sentence, or when it is none of the words and
shapes sentences open with (an adverb, a participle, a conjunction...). A name is found in its fuller or
shorter forms: "Roy Orbison" in "Roy Kelton Orbison", "J. Smith" in "John Smith" (every token of it matches
a token of a name there, or is its initial). Compared on normalised text, on word boundaries.
"""

from __future__ import annotations

import re
from functools import lru_cache

from judge.stages.numbers import MONTHS, capitalised_at
from judge.text import word_forms, words
from judge.text.memo import text_memo
from judge.text.normalize import normalized
from judge.text.bounds import contains_word
from judge.text.language import CAPITALISED_NOUNS, FUNCTION_WORDS, detect_language
from judge.text.letters import ALNUM_RUN

_LATIN_NAME = re.compile(r"\b[A-Z][\w'&-]*(?:\s+(?:of|de|da|do|von|van|the|al|bin)?\s*[A-Z][\w'&-]*)*")
_QUOTED = re.compile(r"[\"“„«]([^\"“”„«»\n]{2,60})[\"”“»]")
_GERSHAYIM = re.compile(r"[\u05d0-\u05ea]+[\"\u05f4][\u05d0-\u05ea]+")
CAPITALISED_STOPWORDS = frozenset(
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
    además también sin embargo luego después entonces aunque asimismo actualmente hoy
    aussi ensuite cependant pourtant ainsi donc alors aujourd'hui
    außerdem auch dann danach jedoch aber deshalb heute
    """.split()
) | FUNCTION_WORDS
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
@text_memo()
def names_in(text: str) -> list[str]:
    """Capitalised Latin terms (a sentence's capitalised first word only when it is a name, see the module
    docstring), quoted terms and Hebrew acronyms of ``text``, in order."""
    found: list[str] = []
    nouns_capitalised = None  # German: "Der Hauptsitz", "Buch"; told only for a text with a capitalised word
    for m in _LATIN_NAME.finditer(text):
        if nouns_capitalised is None:
            nouns_capitalised = detect_language(text[:2000]) in CAPITALISED_NOUNS
        tokens = m.group().split()
        if _opens_sentence(text, m.start()) and _not_a_name(tokens[0], text, alone=len(tokens) == 1):
            tokens = tokens[1:]
        words_ = [w for w in tokens if w not in CAPITALISED_STOPWORDS]
        if nouns_capitalised:  # a capital says nothing there: only a word no noun is written as ("USA", "McLaren")
            words_ = [w for w in words_ if _marked_name(w)]
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


def _marked_name(word: str) -> bool:
    """A word whose letters mark it as a name whatever the language's capitals: a capital after its first
    letter ("USA", "McLaren", "O'Brien") or a digit ("A380")."""
    return any(c.isupper() or c.isdigit() for c in word[1:])


WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
    "segunda terça terca quarta quinta sexta sábado sabado domingo".split()
)


def _calendar_word(word: str) -> bool:
    w = word.lower().rstrip(".,")
    return w in MONTHS or w in WEEKDAYS


_BEFORE_OPENING = frozenset(" \t\"'“‘«(*-\u2022")  # what may stand between a sentence's end and its first word


def _opens_sentence(text: str, at: int) -> bool:
    """What stands before ``at`` (quotes, brackets, bullets and spaces aside) is the text's start or a sentence's
    end. Read backwards from ``at``: a copy of the text before it, per capitalised word, was quadratic."""
    i = at
    while i > 0 and text[i - 1] in _BEFORE_OPENING:
        i -= 1
    return i == 0 or text[i - 1] in ".!?:\n\u2026"


_POSSESSIVE_OR_COMMA = re.compile(r"(?:['\u2019]s?)?[,;]*$")


def _not_a_name(word: str, text: str, alone: bool = True) -> bool:
    """A capitalised word opening a sentence is no name: a stopword, an opener, a word the text also writes
    in lower case, or (``alone``: no capitalised word follows it) an adverb's or a participle's shape;
    unless the text writes it capitalised inside a sentence too."""
    if word in CAPITALISED_STOPWORDS:
        return True
    bare = _POSSESSIVE_OR_COMMA.sub("", word)  # "Además," "Smith's": not every final "s"
    inside, written = _casing(text)
    if bare in inside:
        return False
    low = bare.lower()
    return (
        low in SENTENCE_OPENERS
        or (alone and low not in _NOT_SHAPE and len(low) > 4 and _OPENER_SHAPE.search(low) is not None)
        or low in written
    )


_JOINED = re.compile(rf"{ALNUM_RUN}(?:['\u2019&-]{ALNUM_RUN})*")
_PIECE = re.compile(ALNUM_RUN)


@text_memo()
def _casing(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the words ``text`` writes capitalised inside a sentence, every word it writes): each whole word and
    each run of its pieces ("O'Brien", "Brien"), read once per text instead of a search of the text per word."""
    inside, written = set(), set()
    for m in _JOINED.finditer(text):
        w = m.group()
        if not ("'" in w or "\u2019" in w or "&" in w or "-" in w):  # one piece, as most words are
            written.add(w)
            if w[0].isupper() and capitalised_at(text, m.start()):
                inside.add(w)
            continue
        pieces = [(m.start() + p.start(), m.start() + p.end()) for p in _PIECE.finditer(w)]
        for i, (a, _) in enumerate(pieces):
            for _, b in pieces[i:]:
                w = text[a:b]
                written.add(w)
                if capitalised_at(text, a):
                    inside.add(w)
    return frozenset(inside), frozenset(written)


@lru_cache(maxsize=65536)
def name_tokens(name: str) -> tuple[str, ...]:
    """The tokens that make a name, normalised (case, accents kept apart), particles aside."""
    out = []
    for w in words(normalized(name).text):
        w = w.removesuffix("'s").removesuffix("'")
        if w and w not in _PARTICLES:
            out.append(w)
    return tuple(out)


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
    if contains_word(normalized(text).text, normalized(name).text):
        return True
    mine = name_tokens(name)
    if not mine:
        return False
    return any(_covers(name_tokens(n), mine) for n in (text_names if text_names is not None else names_in(text)))

