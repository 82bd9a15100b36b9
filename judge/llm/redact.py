"""Secrets out of every error text: the one place that decides what a key looks like.

Providers echo the request's key in their errors ("Incorrect API key provided: sk-..."), and error texts are
stored (results, calls), logged, printed and rendered. ``redact`` removes (a) the values of the environment
variables that configs name in ``api_key_env`` (the port registers them with ``watch_env``), plus those whose
name says they hold a key, and (b) any string shaped like a key of a known provider, or a Bearer token.

Data (sources, answers, excerpts) is never passed through the shape rules: a source may quote "sk-..." and
offsets are sacred. The stores apply only ``redact_secrets`` (exact configured values) as defence in depth.
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


def redact_secrets(text: str) -> str:
    """``text`` with every configured secret value masked (exact values only: safe on data)."""
    for value in secrets():
        if value in text:
            text = text.replace(value, MASK)
    return text


def redact(text: str | None) -> str | None:
    """An error text with configured secrets and key-shaped strings masked."""
    if not text:
        return text
    return _SHAPES.sub(MASK, redact_secrets(text))
