"""Whether a claim states a full proposition on its own: what a free verdict may be given to.

A free ``supported`` says "the source states this". That is only right for a statement that means the same
wherever it is read. Not for:

- a question ("How many maths teachers are missing?") or a heading ("Anne Rice:");
- a short answer, whose meaning is its question's: "Delhi", "yes", "Arthur's Magazine", "300 participants
  in the programme" (the words are in the source whatever they answer);
- a claim that opens with a pronoun or a demonstrative ("He was born in 1942.", "זו עלייה של 12 אחוזים"):
  in the source the pronoun may stand for someone else than in the answer;
- in Latin script, a claim with no finite verb ("largest city in the Midwest", "Born in New Orleans in
  1941"): a noun phrase or a fragment. Verbs are told by closed lists (auxiliaries, copulas, modals,
  irregular pasts) and by endings in context (English ``-ed`` after no determiner, ``-s`` after a subject;
  Portuguese ``-ou``, ``-aram``, ``-am`` ...). A verb these miss costs a model call, never a wrong verdict.

Whether a short answer is read with its question (:func:`own_clause`) asks the opposite question, with the
opposite bias: "Photosynthesis releases oxygen as a by-product." must never be glued to its question, so
there any word that may be a finite verb in its place counts (English forms from a lexicon, lemminflect).

Hebrew and Arabic verbs cannot be told from nouns by their letters alone (``נפתח``, ``مدرسة``/``درس``) and
their nominal sentences have no verb at all (``ירושלים היא בירת ישראל``): for them the shape of the
sentence stands in, which triage checks against the source (the claim is a whole sentence there, ending
with a full stop; see :mod:`judge.judges.triage`).
"""

from __future__ import annotations

import functools
import re

from judge.text.language import ENGLISH, PORTUGUESE, ROMANCE, SPANISH, VERB_RULES, detect_language
from judge.text.letters import LETTER_RUN
from judge.text.sentences import FULL_STOPS
from judge.text.synonyms import IRREGULAR_VERBS

_WORD = re.compile(rf"{LETTER_RUN}(?:['\u2019]{LETTER_RUN})*|\d+")
_QUESTION_END = re.compile(r"[?\u061f][\"'\u201d\u2019\u05f4\u00bb)\]\s]*$")
MIN_CONTENT_WORDS = 3  # fewer say too little to stand alone (triage reads it too: judge.stages.evidence)
# Reasons that mean "read it with its question" (judge.stages.claims), not "no claim at all".
QUESTION = "a question"
SHORT_ANSWER = "a short answer: its meaning is its question's"
NO_VERB = "no verb: a noun phrase or a fragment"

INTERROGATIVES = frozenset(
    """
    who whom whose what which why how
    האם מדוע למה היכן איפה מתי כיצד איך מיהו מיהי מהו מהי מהם מהן אילו איזה איזו
    quem qual quais
    هل لماذا متى أين اين كيف ماذا
    """.split()
)
ANAPHORA = frozenset(
    """
    he she it they him her his its their them this these those
    הוא היא הם הן זה זו זאת אלה אלו
    ele ela eles elas isso isto este esta estes estas esse essa esses essas
    هو هي هم هن هذا هذه ذلك تلك هؤلاء
    """.split()
)
_EN_AUX = frozenset(
    """
    is are was were be been am has have had do does did will would can could may might must shall should
    isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't can't cannot
    couldn't mustn't shouldn't
    """.split()
)
_EN_IRREGULAR = frozenset(past for past, _ in IRREGULAR_VERBS.values()) | frozenset(
    "remains remain lies stands holds contains includes consists belongs means seems appears becomes".split()
)
# Words an -ed or -s word after them is no verb of: "the talented player", "a well known", "many players".
_EN_NOMINAL_BEFORE = frozenset(
    """
    the a an this that these those his her its their our my your some many several few no each every any
    all both most more less well very highly newly so of in on at by for from with to into over under
    about after before between among during without within than as and or
    """.split()
)
_EN_SUBJECT = frozenset("he she it this that which who there".split())
# What follows a verb and seldom a plural noun: "makes the", "runs every", "sells more", "grows up".
_EN_AFTER_VERB = frozenset(
    "the a an his her its their our this these those some many several two three every each all no more about up out into onto".split()
)

_PT_VERBS = frozenset(
    """
    é são era eram foi foram será serão seria seriam sou somos está estão estava estavam esteve estiveram
    estará tem têm tinha tinham teve tiveram terá há havia houve haverá pode podem podia podiam pôde
    deve devem devia possui possuem fica ficam existe existem vai vão ia faz fazem fez fizeram diz dizem
    disse disseram dá dão deu deram vem vêm veio vieram quer querem sabe sabem trata permite permitem
    inclui incluem representa representam apresenta apresentam oferece oferecem significa
    es son fue fueron está están tiene tienen hay ha han
    """.split()
)
_PT_NOT_VERBS = frozenset(
    """
    museu europeu europeus céu chapéu troféu judeu pneu ateu hebreu liceu coliseu apogeu jubileu mausoléu
    seu meu teu adeus secretaria livraria padaria maioria história
    """.split()
)
_PT_ENDINGS = re.compile(r"(?:ou|aram|eram|iram|ava|avam|iam|eu|iu|ará|erá|irá|arão|erão|irão|am|[czturs]em|aron|ieron|ó)$")


def _in_name(i: int, capitalised: list[bool]) -> bool:
    """Word ``i`` is capitalised inside the sentence, or opens it followed by a capitalised word."""
    return capitalised[i] and (i > 0 or (len(capitalised) > 1 and capitalised[1]))


def _english_verb(words: list[str], capitalised: list[bool]) -> bool:
    """Whether an English claim has a word that is, by the lists and endings above, a finite verb."""
    for i, w in enumerate(words):
        if _in_name(i, capitalised):
            continue  # "May", "Will Smith", "Bob Said"
        if w in _EN_AUX or w in _EN_IRREGULAR or w.endswith("n't"):
            return True
        before = words[i - 1] if i else ""
        after = words[i + 1] if i + 1 < len(words) else ""
        if len(w) >= 5 and w.endswith("ed") and before and before not in _EN_NOMINAL_BEFORE:
            return True  # "The bridge opened", not "the talented player", nor a sentence's first word
        if len(w) >= 4 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ous")) and before:
            if before in _EN_SUBJECT:
                return True  # "it hosts", "which contains"
            if before not in _EN_NOMINAL_BEFORE and (after in _EN_AFTER_VERB or after[:1].isdigit()):
                return True  # "Chicago hosts the ...", "The new line runs every ..."; not "gyms in Breda"
    return False


def _portuguese_verb(words: list[str], capitalised: list[bool], main_clause: bool = False) -> bool:
    """Whether a Portuguese (or Spanish) claim has a word that is, by the list and endings above, a finite verb
    (with ``main_clause``, not one of a relative clause: "atividades que não constam")."""
    for i, w in enumerate(words):
        if _in_name(i, capitalised):
            continue  # "São Paulo"
        if main_clause and _after_relative(words, i):
            continue
        if w in _PT_VERBS:
            return True
        if not i:
            continue  # the first word: a capitalised noun as often as a verb
        if len(w) >= 4 and w not in _PT_NOT_VERBS and _PT_ENDINGS.search(w) and words[i - 1] not in _PT_ARTICLES:
            return True  # "a empresa criou", "os alunos estudam"; not "o museu", "da Europa"
    return False


_PT_ARTICLES = frozenset("o a os as um uma uns umas de do da dos das no na nos nas ao aos pelo pela seu sua meu minha el la los las".split())


def latin_script(text: str) -> bool:
    """Whether most letters of ``text`` are Latin: the scripts whose verbs :func:`own_clause` can tell."""
    return _is_latin(_WORD.findall(text.lower()))


def _is_latin(words: list[str]) -> bool:
    letters = "".join(w for w in words if not w.isdigit())
    return bool(letters) and sum("a" <= c <= "z" or "\u00c0" <= c <= "\u024f" for c in letters) > len(letters) / 2


def not_a_proposition(text: str) -> str | None:
    """Why ``text`` states no full proposition that stands without its question or its context, or None
    when it does."""
    stripped = text.strip()
    if not stripped:
        return "empty"
    if _QUESTION_END.search(stripped):
        return QUESTION
    if stripped.rstrip("\"'\u201d\u2019)").endswith(":"):
        return "a heading"
    found = [(m.group(), m.group()[:1].isupper()) for m in _WORD.finditer(stripped)]
    words = [w.lower().replace("\u2019", "'") for w, _ in found]
    capitalised = [c for _, c in found]
    if not words:
        return "no words"
    if words[0] in INTERROGATIVES:
        return QUESTION
    from judge.text.tokens import STOPWORDS  # a light module; imported here to keep this one's import free

    content = [w for w in words if w.isdigit() or (len(w) > 1 and w not in STOPWORDS)]
    if len(content) < MIN_CONTENT_WORDS:
        return SHORT_ANSWER
    if words[0] in ANAPHORA:
        return f"opens with {found[0][0]!r}: what it stands for is in the question or the context"
    if _is_latin(words):
        language = detect_language(stripped)
        if language not in VERB_RULES:  # verbs it cannot tell: the shape of a closed sentence stands in
            if len(words) < FULL_SENTENCE_WORDS or stripped.rstrip(CLOSING)[-1:] not in FULL_STOPS:
                return NO_VERB
        elif not (_portuguese_verb if language in ROMANCE else _english_verb)(words, capitalised):
            return NO_VERB
    return None


# -- has a clause of its own: what is never read with its question ---------------------------------------------
# An answer that opens with one of these is a dependent clause, whatever its verb: "because the river floods".
SUBORDINATORS = frozenset("because cause porque pois que כי מפני משום כיוון لأن بسبب".split())
_ROMANCE_MARKS = frozenset("o os da do das dos um uma não em é na pelo pela el los del".split())  # no English words
_PURPOSE = frozenset("para pra por".split())
_FOCUS = frozenset("just only simply mainly partly justamente apenas somente só principalmente simplesmente".split())
_RELATIVES = frozenset("who whom which that whose where".split())  # a verb after them is a relative clause's
CLOSING = "\"'\u201d\u2019\u05f4)]"
# A sentence this long with a finite verb stands alone, however few its content words; where verbs cannot be
# told (no rules for the language), a sentence this long closed by its full stop does. Measured on the
# English and Portuguese claims of the labelled sets (bench/full_sentence_words.py): of the sentences closed
# by a full stop, 46% of 4 words and 74% of 5 have a verb of their own, 92-98% from 6 words on.
FULL_SENTENCE_WORDS = 6
# English tokenised as the Penn Treebank does ("that 's", "did n't", "idea ."): joined before reading
_TOKENISED = re.compile(r"(?<=\w) (?=(?:n't|'s|'re|'ve|'ll|'d|'m)(?!\w))|(?<=\w) +(?=[.!?,;:]+[\"')\]]*$)", re.IGNORECASE)
# Subjects that are the speaker's, never the question's ("I", "that" of a reply): "I didn't know that."
_SPEAKER_SUBJECTS = frozenset("i we you that there".split())
_EN_PLURAL_SUBJECT = frozenset("i we you they".split())
_DEMONSTRATIVES = frozenset("this that these those".split())
_PLURAL = re.compile(r"^[a-z]{3,}[^s]s$")  # a plural the lexicon lacks: "temps fall"
# English auxiliaries that are no Portuguese or Spanish word ("do" is de + o, "a" and "am" are words there)
_EN_AUX_ONLY = _EN_AUX - frozenset("do am".split())
_CONTRACTED = re.compile(r"^(?:it|that|there|here|he|she|what|who|where|this|they|we|you|i)'(?:s|re|ve|ll|d|m)$")


def _speaker_clause(words: list[str]) -> bool:
    """The words open with a speaker's subject and its verb: "that's", "I didn't", "we are"."""
    first, second = words[0], words[1] if len(words) > 1 else ""
    contracted = _CONTRACTED.match(first)
    return (bool(contracted) and first.split("'")[0] in _SPEAKER_SUBJECTS) or (first in _SPEAKER_SUBJECTS and second in _EN_AUX)


def _lexicon():
    """lemminflect's English lexicon (lemmas and inflections by part of speech, shipped in the package)."""
    try:
        import lemminflect
    except ImportError:  # pragma: no cover - a declared dependency; without it the closed lists above decide
        return None
    return lemminflect


@functools.lru_cache(maxsize=50_000)
def _finite_forms(word: str) -> frozenset[str]:
    """The finite tags an English word form may have: VBZ ("flows"), VBD ("dated"), VBP ("feed")."""
    lex = _lexicon()
    if lex is None:
        return frozenset()
    tags = set()
    for lemma in lex.getAllLemmas(word, upos="VERB").get("VERB", ()):
        inflections = lex.getAllInflections(lemma, upos="VERB")
        tags |= {t for t in ("VBZ", "VBD", "VBP") if word in inflections.get(t, ())}
        if "VBD" in tags and word in (inflections.get("VBN") or lex.getInflection(lemma, "VBN")):  # VBN = VBD: kept once
            tags.add("VBN")
    return frozenset(tags)


def _nominal(word: str) -> bool:
    """The lexicon knows ``word`` as a noun or an adjective too ("talented", "dates")."""
    lex = _lexicon()
    return lex is None or bool(lex.getAllLemmas(word).keys() & {"NOUN", "ADJ", "PROPN"})


def _plural_noun(word: str) -> bool:
    lex = _lexicon()
    return lex is not None and any(lemma != word for lemma in lex.getAllLemmas(word, upos="NOUN").get("NOUN", ()))


def _english_may_be_verb(words: list[str], capitalised: list[bool]) -> bool:
    """Whether some word may be a finite verb of a main clause where it stands (recall first: "releases",
    "dates back", "whales feed", "It's a series"); not after a determiner or a preposition ("the dates of"),
    not a participle before "by" ("novels written by"), not in a relative clause ("the river that flows")."""
    if any(_CONTRACTED.match(w) or (w in _EN_AUX and not _in_name(i, capitalised)) for i, w in enumerate(words)):
        return True  # "is", "was", "has", "it's": no lexicon needed (it takes a second or two to load)
    lex = _lexicon()
    if lex is None:
        return _english_verb(words, capitalised)
    for i, w in enumerate(words):
        if not i or _in_name(i, capitalised):
            continue  # the first word: a capitalised noun or an imperative as often as a verb
        before = words[i - 1]
        tags = _finite_forms(w)
        if before in _DEMONSTRATIVES and tags & {"VBZ", "VBD"} and not _nominal(w):
            return True  # "This resulted in ...": a demonstrative subject, not "this talented player"
        if before in _EN_NOMINAL_BEFORE or before in _RELATIVES or before.isdigit():
            continue
        after = words[i + 1] if i + 1 < len(words) else ""
        if "VBN" in tags and after == "by":
            continue  # "the games hosted by Tokyo": a participle
        if tags & {"VBZ", "VBD"} or w in _EN_IRREGULAR:
            return True
        if "VBP" in tags and (before in _EN_PLURAL_SUBJECT or _plural_noun(before) or _PLURAL.search(before)):
            return True  # "Blue whales feed", "they live"
        if not tags and len(w) >= 5 and w.endswith("ed") and after != "by" and not lex.getAllLemmas(w):
            return True  # a past the lexicon does not know ("googled")
    return False


_ROMANCE_RELATIVES = frozenset("que quem onde cujo cuja cujos cujas qual quais".split())
def _after_relative(words: list[str], i: int) -> bool:
    return any(w in _ROMANCE_RELATIVES for w in words[max(0, i - 3) : i])


_NOT_FINITE = re.compile(r"(?:[aeiô]r|ndo|[aiíó]d[oa]s?|[st]os?|[st]as)$")  # infinitive, gerund, participle ("escrito")
# closed-class words the dictionary also knows as verb forms ("fora" of "ser", "segundo" of "seguir")
_ROMANCE_CLOSED = frozenset("fora dentro sobre entre após contra durante mediante segundo conforme como quando onde mais menos muito pouco bem mal ainda já sempre nunca também só apenas".split())
_INFINITIVE = re.compile(r"(?:[aeiô]r)$")


def _romance_may_be_verb(words: list[str], capitalised: list[bool], language: str) -> bool:
    """Whether some word is an inflected form of a verb by simplemma's dictionary ("corre" of "correr",
    "libera" of "liberar"), where it stands: not the first word, not a closed-class word, not after an
    article or a preposition ("o rio" is no form of "rir"), not in a relative clause, not an infinitive, a
    gerund or a participle."""
    try:
        import simplemma
    except ImportError:  # pragma: no cover - a declared dependency; without it the endings above decide
        return False
    from judge.text.tokens import STOPWORDS

    lang = language if language == SPANISH else PORTUGUESE
    for i in range(1, len(words)):
        w, before = words[i], words[i - 1]
        if _in_name(i, capitalised) or w in STOPWORDS or w in _PT_ARTICLES or before in _PT_ARTICLES or before in STOPWORDS:
            continue
        if _after_relative(words, i):
            continue  # "o aluno que não comparece": a relative clause's verb
        if len(w) < 3 or not w.isalpha() or _NOT_FINITE.search(w) or w in _ROMANCE_CLOSED:
            continue
        lemma = simplemma.lemmatize(w, lang=lang)
        if lemma != w and _INFINITIVE.search(lemma):
            return True
    return False


def own_clause(text: str) -> bool:
    """Whether ``text`` has a clause of its own, so that it is read as written and never with its question.

    An answer with no clause of its own means something only with its question: a word or a few ("yes",
    "Delhi", "in 1952", "10 minutes": fewer than MIN_CONTENT_WORDS content words), a dependent clause
    ("because the river floods"), or in Latin script a phrase with no word that may be a finite verb ("a
    series of fantasy novels written by J. K. Rowling"). In Hebrew and Arabic, whose verbs letters do not
    tell, enough content words make a clause (a nominal sentence has no verb), and so does a closed sentence
    of FULL_SENTENCE_WORDS words or more. A Latin-script sentence of FULL_SENTENCE_WORDS words or more with a
    finite verb stands alone whatever its content words ("It was one of the first.")."""
    stripped = _TOKENISED.sub("", text.strip().replace("\u2019", "'"))  # "did n't" is "didn't", "idea ." "idea."
    found = [(m.group(), m.group()[:1].isupper()) for m in _WORD.finditer(stripped)]
    words = [w.lower() for w, _ in found]
    if not words or words[0] in SUBORDINATORS or (len(words) > 1 and words[0] in _FOCUS and words[1] in SUBORDINATORS):
        return False  # "because the river floods", "justamente porque ..."
    if len(words) > 1 and words[0] in _PURPOSE and _INFINITIVE.search(words[1]):
        return False  # "para definir o estudo de ...": a purpose, not a statement
    from judge.text.tokens import STOPWORDS

    enough = sum(w.isdigit() or (len(w) > 1 and w not in STOPWORDS) for w in words) >= MIN_CONTENT_WORDS
    closed = len(words) >= FULL_SENTENCE_WORDS and stripped.rstrip(CLOSING)[-1:] in FULL_STOPS
    if not _is_latin(words):  # a closed sentence this long is one, whatever its content words
        return enough or closed
    language = detect_language(stripped)
    if language == ENGLISH and _speaker_clause(words) and stripped.rstrip(CLOSING)[-1:] in FULL_STOPS:
        return True  # "That's a good idea.", "I didn't know that." (tokenised or not): no subject of the question's
    if not enough and len(words) < FULL_SENTENCE_WORDS:
        return False  # "It is in Paris.": its subject is the question's
    capitalised = [c for _, c in found]
    if language not in VERB_RULES:  # no rules for its verbs (German, French ...): the safe reading, the shape
        return closed
    if language in ROMANCE:  # short lower-case English may be taken for them
        return (_portuguese_verb(words, capitalised, main_clause=True) or _romance_may_be_verb(words, capitalised, language)
                or any(w in _EN_AUX_ONLY or _CONTRACTED.match(w) for w in words))
    if _english_may_be_verb(words, capitalised):
        return True
    # a short Portuguese text the detector took for English ("A universidade representa o estado.")
    return bool(_ROMANCE_MARKS.intersection(words)) and (
        _portuguese_verb(words, capitalised, main_clause=True) or _romance_may_be_verb(words, capitalised, PORTUGUESE))
