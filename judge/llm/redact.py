"""Secrets out of every text judge writes, prints, caches or sends: the one place that decides what a key
looks like.

Providers echo the request's key in their errors ("Incorrect API key provided: sk-...") and sometimes in their
answers, whole or in part (the first 16 and last 4 characters), encoded (base64, hex) or reversed. Error
texts, answers, claims and rationales are stored (results, calls, the cache), logged, printed, rendered and
sent on to other providers (a decomposer's claims go to the judge). ``redact_secrets`` masks, in any text,
every substring of ``MIN_SECRET`` (8) or more characters of a configured key (the values of the environment
variables that configs name in ``api_key_env``, registered by the port with ``watch_env``, plus those whose
name says they hold a key), of its reversed form, of its hex form (either case) and of its base64 forms
(standard and URL-safe, at each of the three byte alignments, so the encoding of any fragment is found).
``redact`` adds the shape rules for error texts: any string shaped like a key of a known provider, or a
Bearer token.

The shape rules are never applied to data (sources, answers, excerpts): a source may quote "sk-..." and
offsets are sacred. ``redact_secrets`` touches data only where it holds 8 characters of a configured key.
It is applied by the run store to every file it writes, by the port to every prompt before it is sent and to
every answer before it is cached or used, and by the command line to everything it prints.
"""

from __future__ import annotations

import os
import re

MASK = "[redacted]"
MIN_SECRET = 8  # shorter values (e.g. "no-key") are not treated as secrets: they would mask ordinary words

# Known key formats (prefix + a run of key characters long enough not to be a word) and bearer tokens.
_SHAPES = re.compile(
    r"""
    \b(?:sk|pk|rk)-(?:ant-|proj-|or-|live-|test-)?[A-Za-z0-9_\-]{16,}   # OpenAI, Anthropic, OpenRouter, Stripe-like
    | \bAIza[0-9A-Za-z_\-]{30,}                                          # Google API keys
    | \b(?:gsk|hf|ghp|gho|ghu|ghs|ghr|xox[abpr]|glpat|pplx|fw|nvapi|r8)[_-][A-Za-z0-9_\-]{16,}  # Groq, HF, GitHub, Slack, GitLab, ...
    | \bxai-[A-Za-z0-9]{20,}                                             # xAI
    | \bAKIA[0-9A-Z]{16}\b                                               # AWS access key ids
    | \beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]+      # JWTs
    | (?i:(?<=bearer\ ))[^\s"',;)]+                                      # Authorization: Bearer <token>
    | (?i:(?<=api[_-]key=)|(?<=api[_-]key:\ )|(?<=x-api-key:\ )|(?<=key=))[A-Za-z0-9_\-.]{12,}
    """,
    re.VERBOSE,
)
_SECRET_NAME = re.compile(r"(API_?KEY|_TOKEN|_SECRET|SECRET_KEY|ACCESS_KEY)$", re.IGNORECASE)
_watched: set[str] = set()


def watch_env(name: str | None) -> None:
    """Treat the value of environment variable ``name`` as a secret (a config's ``api_key_env``)."""
    if name:
        _watched.add(name)


def secrets() -> list[str]:
    """The secret values known now, longest first (so a key is masked whole, not around a shorter one)."""
    names = _watched | {n for n in os.environ if _SECRET_NAME.search(n)}
    values = {os.environ.get(n) or "" for n in names}
    return sorted((v for v in values if len(v) >= MIN_SECRET), key=len, reverse=True)


def forms(value: str) -> list[str]:
    """The forms a key can come back in: itself, reversed, hex (both cases), base64 and URL-safe base64 at each
    byte alignment (padding dropped). Any fragment of 8+ characters of one of these is masked."""
    import base64

    raw = value.encode("utf-8", "surrogatepass")
    out = [value, value[::-1], raw.hex(), raw.hex().upper()]
    for skip in range(3):
        out.append(base64.b64encode(raw[skip:]).decode("ascii").rstrip("="))
        out.append(base64.urlsafe_b64encode(raw[skip:]).decode("ascii").rstrip("="))
    return [f for f in out if len(f) >= MIN_SECRET]


class _Index:
    """Every MIN_SECRET-character window of every form of every secret, and a pattern for the runs of
    characters those forms are made of: only such runs can hold a fragment, so prose costs one C-level scan."""

    def __init__(self, values: tuple[str, ...]):
        all_forms = [f for v in values for f in forms(v)]
        self.grams = {f[i : i + MIN_SECRET] for f in all_forms for i in range(len(f) - MIN_SECRET + 1)}
        chars = sorted(set("".join(all_forms)))
        self.runs = re.compile("[" + "".join(re.escape(c) for c in chars) + "]{%d,}" % MIN_SECRET) if chars else None


_indexes: dict[tuple[str, ...], _Index] = {}


def _index() -> _Index | None:
    values = tuple(secrets())
    if not values:
        return None
    index = _indexes.get(values)
    if index is None:
        if len(_indexes) > 32:
            _indexes.clear()
        index = _indexes[values] = _Index(values)
    return index


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds 8+ characters of a configured key in any of its forms: merged [start, end) spans."""
    index = _index()
    if index is None or not text or index.runs is None:
        return []
    grams, n, spans = index.grams, MIN_SECRET, []
    for m in index.runs.finditer(text):
        token, base = m.group(), m.start()
        for i in range(len(token) - n + 1):
            if token[i : i + n] in grams:
                start, end = base + i, base + i + n
                if spans and start <= spans[-1][1]:
                    spans[-1] = (spans[-1][0], max(spans[-1][1], end))
                else:
                    spans.append((start, end))
    return spans


def redact_secrets(text: str) -> str:
    """``text`` with every fragment (8+ characters) of a configured key, in any of its forms, masked; text
    holding none is returned as it is (the same object), so data and its offsets are untouched."""
    spans = secret_spans(text) if isinstance(text, str) else []
    if not spans:
        return text
    out, at = [], 0
    for start, end in spans:
        out.append(text[at:start])
        out.append(MASK)
        at = end
    out.append(text[at:])
    return "".join(out)


_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def redact_json_text(text: str) -> str:
    """JSON (or JSON lines) text with every secret fragment masked inside its string values, never in its
    numbers or its structure: a key's run of digits also matches 0.3611111111, and masking there would leave a
    file no reader can parse. A string holding a fragment is decoded, masked and encoded again (so an escape
    is never cut in two). Text holding none is returned as it is."""
    spans = secret_spans(text) if isinstance(text, str) else []
    if not spans:
        return text
    import json

    out, at, k = [], 0, 0
    for m in _JSON_STRING.finditer(text):
        start, end = m.span()
        while k < len(spans) and spans[k][1] <= start:
            k += 1
        if k < len(spans) and spans[k][0] < end:
            try:
                value = json.loads(m.group())
            except ValueError:  # not a JSON string after all: mask the text as it stands
                masked = redact_secrets(m.group())
            else:
                masked = json.dumps(redact_secrets(value), ensure_ascii=False)
            out.append(text[at:start])
            out.append(masked)
            at = end
    out.append(text[at:])
    return "".join(out)


def redact_value(value):
    """Every string in a JSON-like value (a model's answer as a dict) through :func:`redact_secrets`."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, dict):
        return {redact_secrets(k) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


def redact_messages(messages: list[dict]) -> list[dict]:
    """Prompt messages with every secret fragment masked in their text (a key is never sent to a provider in
    a prompt: not the judge's own, not another provider's echoed by an earlier stage). The same list when
    none holds one."""
    if _index() is None:
        return messages
    out, changed = [], False
    for m in messages:
        content = m.get("content")
        masked = redact_value(content) if isinstance(content, (str, list)) else content
        if masked != content:
            changed = True
            m = {**m, "content": masked}
        out.append(m)
    return out if changed else messages


def redact(text: str | None) -> str | None:
    """An error text with configured secrets and key-shaped strings masked."""
    if not text:
        return text
    return _SHAPES.sub(MASK, redact_secrets(text))
