"""Scripts for the scripted server that play the pipeline's models: they read the request (its schema and its
delimited data) and answer in kind, so the whole pipeline runs over real HTTP with predictable answers.
"""

from __future__ import annotations

import html
import re
from typing import Callable

from judge.testing.server import Reply, schema_of
from judge.verdicts import SUPPORTED, UNSUPPORTED

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
_SENTENCE = re.compile(r"[^.?!]+[.?!]*")


def user_text(request: dict) -> str:
    return "\n".join(m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user")


def claim_text(request: dict, cid: str) -> str:
    """The text of claim ``cid`` as the judge prompt shows it (unescaped)."""
    m = re.search(rf'<claim id="{re.escape(cid)}">(.*?)</claim>', user_text(request), re.S)
    return html.unescape(m.group(1)) if m else ""


def _enum(schema: dict, *path: str) -> list[str]:
    """The enum of a property, following $refs (the evidence ids, the claim ids)."""
    defs = schema.get("$defs", {})
    node = schema
    for key in path:
        while "$ref" in node:
            node = defs[node["$ref"].split("/")[-1]]
        node = node.get("properties", {}).get(key, {}) if key != "items" else node.get("items", {})
    while "$ref" in node:
        node = defs[node["$ref"].split("/")[-1]]
    for key in ("anyOf", "oneOf"):
        if key in node:
            node = node[key][0]
    return list(node.get("enum", []))


def pipeline_model(label_for: Callable[[str, dict], str] | None = None, answer: str = "The source answers the question.") -> Callable[[dict, int], Reply]:
    """A script answering generation, decomposition (one claim per sentence, quoted exactly) and judging
    (``label_for(claim_id, request)``, default supported, citing the first passage of each claim)."""

    def label(cid: str, request: dict) -> str:
        return label_for(cid, request) if label_for else SUPPORTED

    def script(request: dict, n: int) -> Reply:
        schema = schema_of(request) or {}
        props = schema.get("properties", {})
        if "answer" in props:
            return Reply(body={"answer": answer})
        if "claims" in props:
            m = _ANSWER.search(user_text(request))
            text = html.unescape(m.group(1)) if m else ""
            sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
            return Reply(body={"claims": [{"text": s, "quote": s} for s in sentences]})
        if "verdicts" in props:
            claim_ids = _enum(schema, "verdicts", "items", "claim_id")
            ids = _enum(schema, "verdicts", "items", "evidence", "items")
            verdicts = []
            for cid in claim_ids:
                lbl = label(cid, request)
                cited = [i for i in ids if i.startswith(f"{cid}.")][:1] if lbl != UNSUPPORTED else []
                verdicts.append({"claim_id": cid, "label": lbl, "evidence": cited, "rationale": f"scripted {lbl}"})
            return Reply(body={"verdicts": verdicts})
        if "label" in props:
            ids = _enum(schema, "evidence", "items")
            cid = ids[0].split(".")[0] if ids else "1"
            lbl = label(cid, request)
            return Reply(body={"label": lbl, "evidence": ids[:1] if lbl != UNSUPPORTED else [], "rationale": f"scripted {lbl}"})
        return Reply(status=400)

    return script


def stamped(script: Callable[[dict, int], Reply], stamps: list[float], lock, latency: float) -> Callable[[dict, int], Reply]:
    """``script`` answering after ``latency`` seconds, with each request's arrival (time.monotonic) appended to
    ``stamps`` under ``lock`` (the benchmarks' measure of a run's rate)."""
    import time

    def reply(request: dict, n: int) -> Reply:
        with lock:
            stamps.append(time.monotonic())
        out = script(request, n)
        out.latency = latency
        return out

    return reply


_CLAIM = re.compile(r'<claim id="([^"]+)">(.*?)</claim>', re.S)
_PASSAGE = re.compile(r'<passage id="([^".]+)\.[^"]*">(.*?)</passage>', re.S)
_QUESTION = re.compile(r"<question>(.*?)</question>", re.S)


def shown_claims(request: dict) -> tuple[str, list[tuple[str, str, list[str]]]]:
    """What a judge call shows, as an attacker reads it: the question, and each claim's id, text and passages
    (unescaped, marks dropped), in the call's order."""
    text = user_text(request)
    question = _QUESTION.search(text)
    passages: dict[str, list[str]] = {}
    for cid, body in _PASSAGE.findall(text):
        passages.setdefault(cid, []).append(html.unescape(re.sub(r"</?mark>", "", body)))
    claims = [(cid, html.unescape(body), passages.get(cid, [])) for cid, body in _CLAIM.findall(text)]
    return (html.unescape(question.group(1)).strip() if question else ""), claims
