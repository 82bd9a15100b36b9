"""The one matcher of a claim against text (DESIGN, "Alignment first"): the claim's tokens paired with the tokens
of the SINGLE span it is judged against, once per (claim, span), and read by every check and judge.

A word meets another form of itself (stem, plural, Hebrew prefixes, accents, a shared start), a number the same
value however written ("5"/"five", "1,100"/"1100", "1st"/"first"); of several places, the one nearest its
neighbours' partners. From the pairs: ``unaligned`` content words, ``slots`` the span fills otherwise (a number
of the same kind, unit and slot words, :func:`aligned_mismatches`; a name where the claim's slot words stand),
``displaced`` names and numbers held only away from their slot, and ``negation`` (:mod:`judge.text.negation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judge.stages.alignment_numbers import aligned_mismatches
from judge.stages.names import related_names
from judge.stages.numbers import mentions
from judge.stages.words import Token, forms_of, sentence_bounds, tokens
from judge.text.memo import SPAN_CACHE_CHARS, text_memo
from judge.text.negation import WITHHOLDS, denials
from judge.text.normalize import normalized
from judge.text.tokens import CONNECTIVES, SHARED_START, share_start

Negation = Literal["none", "same", "dropped", "withheld", "added"]
NEAR = 8  # tokens of the span around an anchor's partner that count as the claim's slot
SLOT_REACH = 4  # tokens after (or before) an anchor's partner where the span fills the slot
FEATURES = (
    "words",  # content words of the claim
    "aligned_share",  # share of the claim's distinct content words with a partner in the span
    "unaligned",  # distinct content words of the claim with no partner
    "longest_unaligned_run",  # longest run of unaligned content words in a row (an added clause)
    "tail_unaligned_run",  # unaligned content words closing the claim (an appended detail)
    "names",  # name tokens of the claim
    "names_unaligned",  # of them, with no partner in the span
    "numbers",  # numbers of the claim (digits and number words)
    "numbers_unaligned",  # of them, with no equal value in the span
    "displaced",  # names and numbers the span holds only away from their slot
    "slots_name",  # aligned slots the span fills with another name
    "slots_number",  # ... with another count or amount
    "slots_date",  # ... with another year, day, time or decade
    "slots_percent",  # ... with another percentage
    "negation_same",  # 1: a denial kept (in the same or other words)
    "negation_dropped",  # 1: the span denies what the claim states
    "negation_withheld",  # 1: the span says it was not confirmed / said / known, the claim states it
    "negation_added",  # 1: the claim denies what the span does not
    "span_share",  # share of the span's content words that partner the claim (low: the claim picks a detail)
    "span_sentences",  # sentences of the span its partners spread over (2+: recombined)
    "order",  # share of consecutive partner pairs in the claim's order
    "verbatim",  # 1: the claim is the span's text or a stretch of it, after normalisation
    "connectives_unaligned",  # connectives of the claim ("mainly", "because") the span lacks
)


@dataclass(frozen=True)
class SlotDiff:
    """An aligned slot the span fills otherwise: ``kind`` is name, number, date or percent."""

    kind: str
    claim: str
    span: str


@dataclass(frozen=True)
class Alignment:
    """The claim against one span (see the module docstring)."""

    claim: tuple[Token, ...]
    span: tuple[Token, ...]
    pairs: tuple[tuple[int, int], ...]  # claim token index -> span token index
    unaligned: tuple[str, ...]  # content words of the claim with no partner, distinct, in order
    slots: tuple[SlotDiff, ...]
    negation: Negation
    displaced: tuple[str, ...] = ()
    verbatim: bool = False

    @property
    def content(self) -> list[int]:
        return [i for i, t in enumerate(self.claim) if t.content]

    def aligned_share(self) -> float:
        distinct = {self.claim[i].text for i in self.content}
        return 1.0 - len(set(self.unaligned)) / len(distinct) if distinct else 1.0

    def runs(self) -> tuple[int, int]:
        """(the longest run of unaligned content words, the run closing the claim)."""
        paired = {i for i, _ in self.pairs}
        run = best = 0
        for i in self.content:
            run = 0 if i in paired else run + 1
            best = max(best, run)
        return best, run

    def features(self) -> dict[str, float]:
        """The numbers of :data:`FEATURES`, in that order."""
        paired = dict(self.pairs)
        names = [i for i in self.content if self.claim[i].name]
        numbers = [i for i in self.content if self.claim[i].number is not None]
        partners = [paired[i] for i in self.content if i in paired]
        span_content = [j for j, t in enumerate(self.span) if t.content]
        linked = [(i, paired[i]) for i in self.content if i in paired]
        in_order = sum(j2 > j1 and not _agent_swapped(self.claim[i1 + 1:i2], self.span[j1 + 1:j2])
                       for (i1, j1), (i2, j2) in zip(linked, linked[1:]))
        longest, tail = self.runs()
        kinds = [s.kind for s in self.slots]
        return {
            "words": float(len(self.content)),
            "aligned_share": round(self.aligned_share(), 6),
            "unaligned": float(len(set(self.unaligned))),
            "longest_unaligned_run": float(longest),
            "tail_unaligned_run": float(tail),
            "names": float(len(names)),
            "names_unaligned": float(sum(i not in paired for i in names)),
            "numbers": float(len(numbers)),
            "numbers_unaligned": float(sum(i not in paired for i in numbers)),
            "displaced": float(len(self.displaced)),
            "slots_name": float(kinds.count("name")),
            "slots_number": float(kinds.count("number")),
            "slots_date": float(kinds.count("date")),
            "slots_percent": float(kinds.count("percent")),
            "negation_same": float(self.negation == "same"),
            "negation_dropped": float(self.negation == "dropped"),
            "negation_withheld": float(self.negation == "withheld"),
            "negation_added": float(self.negation == "added"),
            "span_share": round(len(set(partners) & set(span_content)) / len(span_content), 6) if span_content else 0.0,
            "span_sentences": float(len({self.span[j].sentence for j in partners})),
            "order": 1.0 if len(partners) < 2 or passive_of(partners, self.span) else round(in_order / (len(partners) - 1), 6),
            "verbatim": float(self.verbatim),
            "connectives_unaligned": float(sum(
                1 for i in self.content if i not in paired and any(f in CONNECTIVES for f in self.claim[i].forms)
            )),
        }


# The words that mark a passive's agent ("written by Shakespeare", "escrito por Machado", "נכתב על ידי").
AGENT_MARKERS = frozenset(("by", "por", "pelo", "pela", "pelos", "pelas", "par", "von", "ידי", "ע\"י", "بواسطة"))


def _agent_swapped(claim_gap: tuple[Token, ...], span_gap: tuple[Token, ...]) -> bool:
    """Two words in order whose gap in the span holds an agent word the claim's gap lacks: the claim's object is
    the span's agent ("Hamlet wrote Shakespeare." of "Hamlet is a tragedy written by Shakespeare.")."""
    return any(t.text in AGENT_MARKERS for t in span_gap) and not any(t.text in AGENT_MARKERS for t in claim_gap)


def passive_of(partners: list[int], span: tuple[Token, ...]) -> bool:
    """The claim's partners read in order once a passive is turned around: "X wrote Y" against "Y is ... written
    by X" pairs in two or three runs, each in order, that the span holds in the reverse order, with an agent
    word right before the partner of the claim's first run. A claim that swaps roles without one ("Y wrote X")
    stays out of order."""
    runs: list[list[int]] = [[partners[0]]]
    for a, b in zip(partners, partners[1:]):
        if b > a:
            runs[-1].append(b)
        else:
            runs.append([b])
    if not 2 <= len(runs) <= 3 or any(later[-1] >= earlier[0] for earlier, later in zip(runs, runs[1:])):
        return False
    first = runs[0][0]
    return any(span[j].text in AGENT_MARKERS for j in range(max(0, first - 2), first))


# -- pairing -------------------------------------------------------------------------------------------------------
def _pair(claim: tuple[Token, ...], span: tuple[Token, ...]) -> dict[int, int]:
    """Each content token of the claim with its partner in the span (see the module docstring)."""
    by_form: dict[str, list[int]] = {}
    by_value: dict[str, list[int]] = {}
    by_start: dict[str, list[tuple[str, int]]] = {}  # forms by their first letters, for a shared start
    for j, t in enumerate(span):
        for f in t.forms:
            by_form.setdefault(f, []).append(j)
            if t.content and t.number is None and len(f) >= SHARED_START:
                by_start.setdefault(f[:SHARED_START], []).append((f, j))
        if t.number is not None:
            by_value.setdefault(t.number.rstrip("%"), []).append(j)
    options: dict[int, list[int]] = {}
    for i, t in enumerate(claim):
        if not t.content:
            continue
        if t.number is not None:
            found = by_value.get(t.number.rstrip("%")) or by_form.get(t.number, [])
        else:
            found = sorted({j for f in t.forms for j in by_form.get(f, ())})
            if not found and not t.text[:1].isdigit():
                found = sorted({j for f in t.forms for g, j in by_start.get(f[:SHARED_START], ()) if share_start(f, g)})
        if found:
            options[i] = found
    if not options:
        return {}
    # the sentence of the span holding the most of the claim's words anchors the first choice
    votes: dict[int, int] = {}
    for found in options.values():
        for s in {span[j].sentence for j in found}:
            votes[s] = votes.get(s, 0) + 1
    home = max(votes, key=lambda s: (votes[s], -s))
    pairs: dict[int, int] = {}
    expected = next((j for j, t in enumerate(span) if t.sentence == home), 0)
    for i in sorted(options):
        found = options[i]
        j = min(found, key=lambda j: (abs(j - expected), j))
        pairs[i] = j
        expected = j + 1
    return pairs


# -- slots ---------------------------------------------------------------------------------------------------------
def _groups(claim: tuple[Token, ...]) -> list[list[int]]:
    """The claim's names: runs of name tokens (particles aside)."""
    out, run = [], []
    for i, t in enumerate(claim):
        if t.name:
            run.append(i)
        elif run:
            out.append(run)
            run = []
    return out + ([run] if run else [])


def _anchor(claim: tuple[Token, ...], pairs: dict[int, int], group: list[int], step: int) -> int | None:
    """The claim's slot word beside a name (stopwords between it and the name only), if it has a partner."""
    i = group[0] - 1 if step < 0 else group[-1] + 1
    while 0 <= i < len(claim) and not claim[i].content:
        i += step
    if 0 <= i < len(claim) and not claim[i].name and claim[i].number is None and i in pairs:
        return i
    return None


def _name_in_slot(span: tuple[Token, ...], at: int, step: int) -> list[int]:
    """The span's name right after (``step`` 1) or before (-1) token ``at``, within :data:`SLOT_REACH`
    tokens of its sentence and with no content word between."""
    j, run = at + step, []
    while 0 <= j < len(span) and abs(j - at) <= SLOT_REACH + len(run) and span[j].sentence == span[at].sentence:
        if span[j].name:
            run.append(j)
        elif run or span[j].content:
            break
        j += step
    return sorted(run)


def _name_slots(claim, span, pairs) -> tuple[list[SlotDiff], list[str]]:
    diffs, displaced = [], []
    for group in _groups(claim):
        name = " ".join(claim[i].text for i in group)
        anchors = [(a, s) for s in (-1, 1) if (a := _anchor(claim, pairs, group, s)) is not None]
        held = [pairs[i] for i in group if i in pairs]
        near = any(span[j].sentence == span[pairs[a]].sentence and abs(j - pairs[a]) <= NEAR for j in held for a, _ in anchors)
        if not anchors or near:
            continue
        other = next((r for a, s in anchors if (r := _name_in_slot(span, pairs[a], -s))), [])
        written = " ".join(span[j].text for j in other)
        if other and not related_names(name, written):
            diffs.append(SlotDiff("name", name, written))
        elif held:
            displaced.append(name)
    return diffs, displaced


_DATE_KINDS = {"year": "date", "day": "date", "time": "date", "decade": "date", "percent": "percent"}
HOME_REACH = 4  # claim tokens either side of a number whose partners say which sentence holds its slot


def _home(claim: tuple[Token, ...], span: tuple[Token, ...], pairs: dict[int, int], i: int) -> int | None:
    """The span's sentence holding the slot of the claim's number ``i``: where most partners of the claim's
    words around it stand (the nearest decides a tie); None when none of them has a partner."""
    votes: dict[int, tuple[int, int]] = {}
    near = [k for k in range(max(0, i - HOME_REACH), min(len(claim), i + HOME_REACH + 1)) if k in pairs and claim[k].number is None]
    own = [k for k in near if claim[k].clause == claim[i].clause]  # the number's own clause first
    for k in own or near:
        if claim[k].content:
            sentence = span[pairs[k]].sentence
            n, closest = votes.get(sentence, (0, 99))
            votes[sentence] = (n + 1, min(closest, abs(k - i)))
    return max(votes, key=lambda x: (votes[x][0], -votes[x][1])) if votes else None


def _number_slots(claim_text: str, span_text: str, claim, span, pairs) -> tuple[list[SlotDiff], list[str]]:
    """Each number of the claim read in its slot: the span's sentence where the words around it align
    (:func:`_home`). Its value there is aligned; another value of its kind, unit and slot words there
    (:func:`aligned_mismatches`, on that sentence alone) is a differing slot, whatever
    the rest of the span holds; its value only elsewhere is displaced."""
    by_start = {m.start: m for m in mentions(claim_text)}
    bounds = sentence_bounds(span_text)
    diffs, displaced = [], []
    at_home: dict[int, list] = {}  # the mismatches of a home sentence, found once for every number there (was once per number: quadratic)
    for i, t in enumerate(claim):
        m = by_start.get(t.start)
        home = _home(claim, span, pairs, i) if m is not None else None
        if home is None:
            continue
        same = [j for j, x in enumerate(span) if x.sentence == home and x.number is not None and x.number.rstrip("%") == m.value.rstrip("%")]
        if same:
            pairs[i] = same[0]
            continue
        a, b = bounds[home]
        if home not in at_home:
            at_home[home] = aligned_mismatches(claim_text, [span_text[a:b]], context=span_text)
        found = [x for x in at_home[home] if x.claim == m.value]
        if found:
            diffs.append(SlotDiff(_DATE_KINDS.get(m.kind, "number"), m.value, found[0].candidate))
            pairs.pop(i, None)
        elif i in pairs:
            displaced.append(t.text)
    return diffs, displaced


# -- negation --------------------------------------------------------------------------------------------------------
def _negation(claim: str, span: str, pairs: dict[int, int]) -> Negation:
    """The denials of the claim and of the span, read through the pairs: the span's denial is dropped when
    the claim states, undenied, the word it governs first and one more (all, for a one-word scope); a denial
    of saying or knowing ("did not confirm their backing") is withheld when the claim states what it governs;
    the claim's denial is added when the span states, undenied, the word it governs first; kept (same) when a word
    governed by one is governed by the other, in whatever words each denies (see the module docstring)."""
    mine, theirs = denials(claim), denials(span)
    if not mine and not theirs:
        return "none"
    back = {j: i for i, j in pairs.items()}
    denied_by_claim = {i for _, scope, _ in mine for i in scope}
    denied_by_span = {j for _, scope, _ in theirs for j in scope}
    same = any(pairs.get(i) in denied_by_span for i in denied_by_claim)
    dropped = withheld = False
    for _, scope, kind in theirs:
        hit = [back[j] for j in scope if j in back and back[j] not in denied_by_claim]
        if kind == WITHHOLDS:
            withheld |= any(j in back for j in scope[1:]) and len(hit) == sum(j in back for j in scope)
        elif scope[0] in back and len(hit) >= min(2, len(scope)) and back[scope[0]] in hit:
            dropped = True
    added = any(kind != WITHHOLDS and pairs.get(scope[0]) is not None and not same for _, scope, kind in mine)
    if dropped:
        return "dropped"
    if added:
        return "added"
    if withheld:
        return "withheld"
    return "same" if same else "none"


# -- the value -------------------------------------------------------------------------------------------------------
def align(claim: str, span: str, language: str | None = None) -> Alignment:
    """The claim against ``span`` (a candidate's text), kept by text so every reader shares it. ``language``:
    words carry their script's rules already, so it changes nothing yet."""
    return _align(claim, span)


@text_memo(max_chars=SPAN_CACHE_CHARS)
def _align(claim: str, span: str) -> Alignment:
    c, s = tokens(claim), tokens(span)
    pairs = _pair(c, s)
    number_diffs, number_displaced = _number_slots(claim, span, c, s, pairs) if any(t.number for t in c) else ([], [])
    name_diffs, name_displaced = _name_slots(c, s, pairs)
    negation = _negation(claim, span, pairs)
    if negation == "same":  # "refused" is aligned with the span's "chose not": one denial in other words
        pairs.update({at: theirs for (at, _, _), (theirs, _, _) in zip(denials(claim), denials(span)) if c[at].content})
    unaligned = tuple(dict.fromkeys(t.text for i, t in enumerate(c) if t.content and i not in pairs))
    nc, ns = normalized(claim).text.strip(" .!?"), normalized(span).text
    return Alignment(
        claim=c,
        span=s,
        pairs=tuple(sorted(pairs.items())),
        unaligned=unaligned,
        slots=tuple(number_diffs + name_diffs),
        negation=negation,
        displaced=tuple(name_displaced + number_displaced),
        verbatim=bool(nc) and nc in ns,
    )


def _held(claim: tuple[Token, ...], forms: frozenset[str]) -> set[str]:
    """The claim's content words some form of which ``forms`` holds (a quick reading, no alignment)."""
    return {t.text for t in claim if t.content and (t.forms & forms or (t.number is not None and t.number in forms))}


def judged(claim: str, spans: list[str], language: str | None = None) -> tuple[int, Alignment | None]:
    """The span a claim is judged against, of the candidates' texts ``spans`` (best first), with its
    alignment: the one whose words hold the most of the claim's content words (the search's order breaks
    ties); only that one is aligned. Nothing outside it counts for the claim: no word, name or number of
    another span rescues it."""
    if not spans:
        return 0, None
    mine = tokens(claim)
    shares = [len(_held(mine, forms_of(text))) for text in spans]
    at = shares.index(max(shares))
    return at, align(claim, spans[at], language)


def offered_share(claim: str, spans: list[str], language: str | None = None) -> float:
    """The share of the claim's distinct content words that any of ``spans`` holds: what all the offered
    evidence holds of it, which tells a partly supported claim from an unsupported one and supports nothing."""
    mine = tokens(claim)
    distinct = {t.text for t in mine if t.content}
    held = set().union(*(_held(mine, forms_of(text)) for text in spans)) if spans else set()
    return round(len(held) / len(distinct), 6) if distinct else 0.0
