"""Secrets out of every text judge writes, prints, caches or sends: the one place that decides what a secret
is (a value the configuration makes one: an ``api_key_env`` variable's, an ``api_base``'s credentials; never a
value merely because its variable's name looks secret) and what it looks like when it comes back (providers
echo keys whole, in part, encoded or reversed). Data the user gave is never masked, so every span keeps
``source[start:end] == excerpt``.
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote

MASK = "[redacted]"
URL_MASK = "redacted"  # in a URL written to a file: its user:password and credential parameters (still a URL)
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
# query parameters whose value is a credential (api-key=, key=, token=, access_token=, sig=, password=, ...)
CREDENTIAL_PARAM = re.compile(r"(?i)^(?:[a-z0-9_.-]*(?:key|token|secret|passw|pwd|auth|sig|credential|session)[a-z0-9_.-]*|code)$")
_URL_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^\s/?#@\[\]]+@")
_URL_PARAM = re.compile(r"([?&;#])([^=&#\s]+)=([^&#\s\"'<>]*)")
_watched: set[str] = set()  # names of environment variables that hold keys (api_key_env, a provider's default)
_values: set[str] = set()  # secrets known by value (the credentials of an api_base)


def watch_env(name: str | None) -> None:
    """Treat the value of environment variable ``name`` as a secret (a config's ``api_key_env``)."""
    if name:
        _watched.add(name)


def watch_value(value: str | None) -> None:
    """Treat ``value`` itself as a secret (a password or token written into an api_base)."""
    if value and len(value) >= MIN_SECRET:
        _values.add(value)


def _authority(url: str) -> tuple[str, str, str]:
    """``url`` cut into (scheme and ``://``, authority, the rest), with or without a scheme."""
    head, sep, rest = url.partition("://") if "://" in url else ("", "", url)
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    return head + sep, rest[:cut], rest[cut:]


def _is_credential(name: str) -> bool:
    from urllib.parse import unquote

    return bool(CREDENTIAL_PARAM.match(unquote(name)))


def url_credentials(url: str | None) -> list[str]:
    """A URL's userinfo, its two parts and its credential parameters' values, as written and percent-decoded."""
    from urllib.parse import unquote

    if not url:
        return []
    _, authority, rest = _authority(url)
    found = []
    if "@" in authority:
        userinfo = authority.rpartition("@")[0]
        found += [userinfo, *userinfo.split(":", 1)]
    found += [m.group(3) for m in _URL_PARAM.finditer(rest) if _is_credential(m.group(2))]
    return sorted({v for f in found for v in (f, unquote(f)) if len(v) >= MIN_SECRET})


def watch_url(url: str | None) -> None:
    """Every credential of ``url`` (an api_base) a secret from now on."""
    for value in url_credentials(url):
        watch_value(value)


def scrub_url(url: str | None) -> str | None:
    """``url`` with its userinfo and credential parameters' values replaced by ``redacted``: still a URL,
    still naming the server called."""
    if not url:
        return url
    head, authority, rest = _authority(url)
    if "@" in authority:
        authority = URL_MASK + "@" + authority.rpartition("@")[2]
    rest = _URL_PARAM.sub(lambda m: f"{m.group(1)}{m.group(2)}={URL_MASK}" if _is_credential(m.group(2)) else m.group(0), rest)
    return head + authority + rest


def secrets() -> list[str]:
    """The secret values known now, longest first (so a key is masked whole, not around a shorter one)."""
    values = {os.environ.get(n) or "" for n in _watched} | _values
    return sorted((v for v in values if len(v) >= MIN_SECRET), key=len, reverse=True)


def forms(value: str) -> list[str]:
    """The forms a key can come back in (any 8+ character fragment of one is masked): base64 at each byte
    alignment, so the encoding of any fragment is found."""
    import base64

    raw = value.encode("utf-8", "surrogatepass")
    percent = quote(value, safe="", errors="surrogatepass")
    out = [value, value[::-1], raw.hex(), raw.hex().upper(), raw.hex(":"), raw.hex(":").upper(),
           percent, re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), percent)]
    for skip in range(3):
        out.append(base64.b64encode(raw[skip:]).decode("ascii").rstrip("="))
        out.append(base64.urlsafe_b64encode(raw[skip:]).decode("ascii").rstrip("="))
    return list(dict.fromkeys(f for f in out if len(f) >= MIN_SECRET))


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


def _scan(index: _Index, text: str) -> list[tuple[int, int]]:
    grams, n = index.grams, MIN_SECRET
    return _merged([(m.start() + i, m.start() + i + n) for m in index.runs.finditer(text)
                    for i in range(len(m.group()) - n + 1) if m.group()[i : i + n] in grams])


def _merged(spans) -> list[tuple[int, int]]:
    """Sorted spans with the overlapping and touching ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


# What can cut a form in two without changing it: a line break (base64 wrapped every 64 or 76 characters, as
# PEM and MIME wrap; real, or escaped as in JSON and repr), a zero-width character, a space or dash between
# hex pairs ("77 4a 61"), and a percent or \\x escape of some of its characters (ASCII only: a key's).
_CUTS = re.compile(r"\r\n|\r|\n|\\r\\n|\\n|\\r|[\u200b-\u200d\u2060\ufeff]|(?<=\b[0-9a-fA-F]{2})[ -](?=[0-9a-fA-F]{2}\b)"
                   r"|%[0-7][0-9A-Fa-f]|\\x[0-7][0-9A-Fa-f]")


def _undone_spans(index: _Index, text: str) -> list[tuple[int, int]]:
    """The fragments found in ``text`` with its cuts (_CUTS) removed and escapes decoded, as spans of ``text``."""
    pieces: list[str] = []
    marks: list[tuple[int, int, int]] = []  # (view start, text start, text length of one view character or 0)
    at = view = 0
    for m in _CUTS.finditer(text):
        if m.start() > at:
            pieces.append(text[at : m.start()])
            marks.append((view, at, 0))
            view += m.start() - at
        if m.group().startswith(("%", "\\x")):  # an escape: its character
            pieces.append(chr(int(m.group()[-2:], 16)))
            marks.append((view, m.start(), len(m.group())))
            view += 1
        at = m.end()
    if not marks:
        return []
    if at < len(text):
        pieces.append(text[at:])
        marks.append((view, at, 0))
    from bisect import bisect_right

    starts = [v for v, _, _ in marks]

    def where(v: int) -> tuple[int, int]:  # the text span of view character v
        vs, ts, width = marks[bisect_right(starts, v) - 1]
        return (ts, ts + width) if width else (ts + v - vs, ts + v - vs + 1)

    return [(where(s)[0], where(e - 1)[1]) for s, e in _scan(index, "".join(pieces))]


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds 8+ characters of a secret in any of its forms: merged, sorted [start, end) spans."""
    index = _index()
    if index is None or not text or index.runs is None:
        return []
    spans = _scan(index, text)
    return _merged(sorted(spans + _undone_spans(index, text))) if _CUTS.search(text) else spans


def redact_secrets(text: str) -> str:
    """``text`` with every secret fragment masked; text holding none is the same object, offsets untouched."""
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
    """JSON (lines) masked in its string values only (a key's digits also match 0.3611111111: masking a number
    leaves a file no reader parses); a string is decoded, masked and encoded again, so no escape is cut."""
    if not isinstance(text, str) or _index() is None:
        return text
    spans = secret_spans(text)
    if not spans and "\\" not in text:
        return text
    import json

    out, at, k = [], 0, 0
    for m in _JSON_STRING.finditer(text):
        start, end = m.span()
        while k < len(spans) and spans[k][1] <= start:
            k += 1
        found = k < len(spans) and spans[k][0] < end
        if not found and "\\" not in m.group():
            continue
        try:
            value = json.loads(m.group())
        except ValueError:  # not a JSON string after all: mask the text as it stands
            masked = redact_secrets(m.group())
        else:
            kept = redact_secrets(value)
            if kept is value and not found:
                continue
            masked = json.dumps(kept, ensure_ascii=False)
        out.append(text[at:start])
        out.append(masked)
        at = end
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)


def redact_yaml_text(text: str) -> str:
    """A YAML file (a run's config.yaml) masked in its strings only: a masked number (max_cost_usd:
    0.1111111111 beside a key of 1s) would read back as text and fail the config."""
    if not secret_spans(text):
        return text
    import yaml

    return yaml.safe_dump(redact_value(yaml.safe_load(text)), allow_unicode=True, sort_keys=False)


def _as_it_is(text: str) -> str:
    return text


def masker(name: str, data: bool = False):
    """How a file named ``name`` is masked as it is written: ``data`` (what the user gave) not at all; JSON and
    YAML in their strings only (a masked number is a corrupt file); other text wherever a fragment stands."""
    if data:
        return _as_it_is
    if name.endswith((".json", ".jsonl")):
        return redact_json_text
    return redact_yaml_text if name.endswith((".yaml", ".yml")) else redact_secrets


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
    """Prompt messages with every secret fragment masked (no key is ever sent in a prompt); the same list when
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
    """An error text with secrets, key-shaped strings and the credentials of any URL in it masked."""
    if not text:
        return text
    text = _SHAPES.sub(MASK, redact_secrets(text))
    text = _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    return _URL_PARAM.sub(lambda m: f"{m.group(1)}{m.group(2)}={MASK}" if m.group(3) and _is_credential(m.group(2)) else m.group(0), text)
