"""Judges the scripted server can play, of known quality (issue 39): ``good`` (rule-based: a number or negation
the passages do not state contradicts; a name or most content words they lack is unsupported), ``mediocre``
(numbers only), ``lenient`` (all supported) and ``noisy(base, rate)`` (``rate`` of labels random, unseeded).
"""

from __future__ import annotations

import html
import random
import re
from typing import Callable

from judge.testing.scripts import claim_text, pipeline_model, user_text
from judge.testing.server import Reply
from judge.verdicts import CONTRADICTED, LABELS, SUPPORTED, UNSUPPORTED

Rule = Callable[[str, str], str]  # (claim, its passages' text) -> label
_WORD = re.compile(r"[^\W\d_]{3,}|\d+", re.UNICODE)
_STOP = frozenset("the and was were are has had have its his her their this that with from for not into onto than then also which who whom "
                  "whose when where what did does been being very many every year years people".split())
_NEGATION = frozenset({"not", "never", "no", "none", "nor"})
_RANDOM = random.SystemRandom()  # unseeded on purpose: noise that no seed reproduces


def passages_of(request: dict, cid: str) -> str:
    """The text of every passage offered for claim ``cid`` (unescaped, marks dropped)."""
    found = re.findall(rf'<passage id="{re.escape(cid)}\.\d+">(.*?)</passage>', user_text(request), re.S)
    return html.unescape(re.sub(r"</?mark>", "", " ".join(found)))


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def good(claim: str, passages: str) -> str:
    said, have = _words(claim), set(_words(passages))
    numbers = [w for w in said if w.isdigit()]
    if any(n not in have for n in numbers):  # a number changed contradicts; one added beside those stated is a detail
        return CONTRADICTED if any(w.isdigit() for w in have) and not any(n in have for n in numbers) else UNSUPPORTED
    if (set(said) & _NEGATION) != (have & _NEGATION) and set(said) & _NEGATION:
        return CONTRADICTED
    names = {w.lower() for w in re.findall(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z]{2,}", claim)}
    if any(n not in have and n not in _STOP for n in names):  # a name swapped in a stated fact contradicts it
        return CONTRADICTED if numbers else UNSUPPORTED
    content = [w for w in said if w not in _STOP and not w.isdigit()]
    missing = [w for w in content if w not in have]
    if content and len(missing) > len(content) / 2:
        return UNSUPPORTED
    wanted = {w for w in said if w not in _STOP} - set(missing)
    sentences = [set(_words(x)) for x in re.split(r"(?<=[.!?])\s+", passages)]
    if not missing and len(sentences) > 1 and not any(wanted <= x for x in sentences):
        return CONTRADICTED  # every word is there, but no one sentence says it: parts of two facts recombined
    return SUPPORTED


def mediocre(claim: str, passages: str) -> str:
    have = set(_words(passages))
    return CONTRADICTED if any(w.isdigit() and w not in have for w in _words(claim)) else SUPPORTED


def lenient(claim: str, passages: str) -> str:
    return SUPPORTED


RULES: dict[str, Rule] = {"good": good, "mediocre": mediocre, "lenient": lenient}


def noisy(rule: Rule, rate: float) -> Rule:
    """``rule`` with ``rate`` of its labels replaced by a label drawn at random (unseeded) from every label."""

    def label(claim: str, passages: str) -> str:
        return _RANDOM.choice(LABELS) if _RANDOM.random() < rate else rule(claim, passages)

    return label


def judge_script(rule: Rule | str, noise: float = 0.0, answer: str = "The source answers the question.") -> Callable[[dict, int], Reply]:
    """A scripted-server script: ``rule`` (or its name in RULES) judging, with ``noise``; generation and
    decomposition as judge.testing.scripts.pipeline_model plays them."""
    base = RULES[rule] if isinstance(rule, str) else rule
    decide = noisy(base, noise) if noise else base
    return pipeline_model(lambda cid, req: decide(claim_text(req, cid), passages_of(req, cid)), answer=answer)


def panel_script(judges: dict[str, Rule | str], writer: Callable[[dict, int], Reply] | None = None, noise: float = 0.0) -> Callable[[dict, int], Reply]:
    """One server playing several judges, told apart by the model id a request names (``openai/NAME`` sends
    ``NAME``): each judge its rule; ``writer`` answers generation (else the first judge's script does)."""
    scripts = {name: judge_script(rule, noise) for name, rule in judges.items()}
    first = next(iter(scripts.values()))

    def reply(request: dict, n: int) -> Reply:
        from judge.testing.server import schema_of

        if writer is not None and "answer" in (schema_of(request) or {}).get("properties", {}):
            return writer(request, n)
        return scripts.get(str(request.get("model", "")).split("/")[-1], first)(request, n)

    return reply
