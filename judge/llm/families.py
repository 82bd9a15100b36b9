"""Model families, so a judge never grades its own family's homework unless the config says so."""

from __future__ import annotations

import re

from typing import Protocol

from judge.errors import InputError


class Model(Protocol):
    """What the family rules read of a model: judge.llm.config.ModelConfig is one. A protocol, not an import,
    so that config.py (which checks a ``family:`` override here) and this module make no circle."""

    model: str
    family: str | None

    @property
    def label(self) -> str: ...


# (pattern on a model name, family); first match wins. Matched against every part of the id after the
# provider, so "together_ai/meta-llama/Llama-3-70b" is meta and "openai/qwen2.5-7b" on a local server is qwen.
REGISTRY: list[tuple[str, str]] = [
    (r"^(gpt-|o[1-9]|chatgpt|text-davinci|davinci)", "openai"),
    (r"^claude", "anthropic"),
    (r"^(gemini|gemma|palm|bison|learnlm)", "google"),
    (r"^(llama|meta-llama|codellama)", "meta"),
    (r"^(mistral|mixtral|codestral|ministral|magistral|pixtral|devstral|mistralai)", "mistral"),
    (r"^(qwen|qwq)", "qwen"),
    (r"^deepseek", "deepseek"),
    (r"^(command|c4ai|aya|cohere)", "cohere"),
    (r"^(phi-?[0-9]|orca|microsoft)", "microsoft"),
    (r"^grok", "xai"),
    (r"^(yi-|01-ai)", "01-ai"),
    (r"^(falcon|tiiuae)", "tii"),
    (r"^(granite|ibm)", "ibm"),
    (r"^(nemotron|nvidia)", "nvidia"),
]
# Providers whose own models are one family, used when no part of the name says otherwise.
PROVIDER_FAMILIES = {
    "openai": "openai", "azure": "openai", "anthropic": "anthropic", "gemini": "google", "vertex_ai": "google",
    "mistral": "mistral", "cohere": "cohere", "cohere_chat": "cohere", "xai": "xai", "deepseek": "deepseek",
    "dashscope": "qwen",
}
_COMPILED = [(re.compile(p, re.IGNORECASE), f) for p, f in REGISTRY]
KNOWN_FAMILIES = {f for _, f in REGISTRY} | set(PROVIDER_FAMILIES.values())


class SameFamilyError(InputError, ValueError):
    """A judge from the same family as a model whose output it judges, without allow_same_family."""


class UnknownFamilyError(InputError, ValueError):
    """A model whose family the registry cannot tell: the cross-family rule could not be enforced for it."""


def require_known_family(model: Model) -> str:
    family = family_of(model)
    if family == "unknown":
        raise UnknownFamilyError(
            f"cannot tell the model family of {model.label} ({model.model}): the cross-family rule cannot be checked. "
            f"Set family: in its config (see judge families for the known ones)."
        )
    return family


# Spellings of each family, as canonical keys (see canonical_key): a config's `family:` and a recorded
# answer's `family` are read through this table, so "Open AI", "open_ai", "OpenAI Inc", "ＯｐｅｎＡＩ" and
# "Оpenai" (a Cyrillic О) are all openai, and "gpt" or "claude" name their makers' families.
ALIASES: dict[str, str] = {
    **{k: "openai" for k in ("openai", "gpt", "chatgpt", "oai", "azureopenai", "azure", "openaigpt")},
    **{k: "anthropic" for k in ("anthropic", "claude", "anthropicclaude")},
    **{k: "google" for k in ("google", "gemini", "gemma", "deepmind", "googledeepmind", "palm", "bard", "vertex", "vertexai", "googleai", "googlegemini")},
    **{k: "meta" for k in ("meta", "metaai", "llama", "metallama", "facebook", "fair", "metaplatforms")},
    **{k: "mistral" for k in ("mistral", "mistralai", "mixtral")},
    **{k: "qwen" for k in ("qwen", "alibaba", "alibabacloud", "dashscope", "tongyi", "qwenlm")},
    **{k: "deepseek" for k in ("deepseek", "deepseekai")},
    **{k: "cohere" for k in ("cohere", "cohereforai", "cohereai")},
    **{k: "microsoft" for k in ("microsoft", "phi", "msft")},
    **{k: "xai" for k in ("xai", "grok")},
    **{k: "01-ai" for k in ("01ai", "yi", "zeroone", "zerooneai")},
    **{k: "tii" for k in ("tii", "falcon", "tiiuae")},
    **{k: "ibm" for k in ("ibm", "granite")},
    **{k: "nvidia" for k in ("nvidia", "nemotron")},
}
# a custom family containing one of these (as a canonical key) is a spelling of a known family, never a family
# of its own: "my-openai", "gpt4", "claude-ish" (short aliases such as "yi" or "phi" would match ordinary words)
_TELLING = sorted((k for k in ALIASES if len(k) >= 4 or k == "gpt"), key=len, reverse=True)
_SUFFIXES = ("incorporated", "corporation", "company", "limited", "inc", "llc", "ltd", "corp", "co", "gmbh", "plc", "labs", "lab", "ai")
# letters that look like Latin ones (Cyrillic, Greek, a few IPA): NFKC leaves them apart, a reader cannot
_CONFUSABLES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x",
    "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g", "ɑ": "a", "ο": "o", "α": "a",
    "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ϲ": "c", "ϳ": "j",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X", "І": "I",
    "Ј": "J", "Ѕ": "S", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ℓ": "l",
})


def canonical_key(name: str) -> str:
    """A family name as compared: NFKC, look-alike letters folded to Latin, case folded, letters and digits
    only. "Open AI", "open_ai", "ＯｐｅｎＡＩ" and "Оpenai" (Cyrillic О) are all "openai"."""
    import unicodedata

    text = unicodedata.normalize("NFKC", name).translate(_CONFUSABLES)
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def _known(key: str) -> str | None:
    """The known family a canonical key names (directly, or with a company suffix such as Inc or AI)."""
    if key in ALIASES:
        return ALIASES[key]
    if key in KNOWN_FAMILIES:
        return key
    for suffix in _SUFFIXES:
        if key.endswith(suffix) and key[: -len(suffix)] in ALIASES:
            return ALIASES[key[: -len(suffix)]]
    return None


def resembled(key: str) -> str | None:
    """The known family a custom name contains the spelling of ("myopenai", "gpt4"), or None."""
    for alias in _TELLING:
        if alias in key:
            return ALIASES[alias]
    return None


def normalise_family(family: str) -> str:
    """One spelling per family, so a rule on families cannot be bypassed by case, spaces, punctuation, width,
    look-alike letters, a company suffix or a provider prefix ("ＯｐｅｎＡＩ Inc" is openai); a name holding a
    known family's spelling ("my-openai") is that family; any other stays itself (lower case, '-')."""
    key = canonical_key(family)
    known = _known(key)
    if known is None:
        name = re.sub(r"[\s_]+", "-", family.strip().lower()).strip("-/")
        known = _named_family(p.strip("-") for p in name.split("/")) or resembled(key)
        if known is None:
            return name or "unknown"
    return known


def id_family(model: str, api_base: str | None = None) -> str | None:
    """The family a model id tells by itself (a name prefix, or a provider serving only its own models when no
    api_base sends the call elsewhere), or None."""
    parts = [p.strip() for p in model.strip().split("/")]
    found = _named_family(parts[1:] if len(parts) > 1 else parts)
    if found is None and len(parts) > 1 and not api_base:
        return PROVIDER_FAMILIES.get(parts[0].lower())
    return found


def _named_family(names) -> str | None:
    """The family the first of ``names`` a registry pattern matches belongs to."""
    for name in names:
        for pattern, family in _COMPILED:
            if pattern.search(name):
                return family
    return None


def override_problem(model: str, api_base: str | None, family: str) -> str | None:
    """Why a config's ``family:`` override cannot stand, or None: one contradicting a known model id's family
    is refused (a gpt-4o-mini judge is openai), and so is a known family misspelt ("my-openai")."""
    if model.startswith("answers/") or not family.strip():
        return None
    key = canonical_key(family)
    if not key:
        return f"family {family[:40]!r}: expected a family name with letters or digits (see judge families)"
    known = _known(key)
    told = id_family(model, api_base)
    if told is not None and (known or normalise_family(family)) != told:
        return (f"family {family[:40]!r} contradicts the model id {model[:80]!r}, which is {told}: an override only names the "
                "family of a model the registry cannot place; remove it")
    if known is None and resembled(key) is not None:
        return (f"family {family[:40]!r} reads as a spelling of {resembled(key)}: write {resembled(key)} "
                "(or a name of your own that holds no known family's name)")
    return None


def family_of(model: Model | str) -> str:
    """The family of a model config (its override first) or of a bare model id; 'unknown' if none matches.
    Ids are read case- and space-insensitively (" gpt-4o" and "OpenAI/GPT-4o" are openai)."""
    if not isinstance(model, str):  # a ModelConfig
        if model.family and model.family.strip():
            return normalise_family(model.family)  # it never contradicts the id (refused when the config is read)
        model = model.model
    return id_family(model) or "unknown"


def answer_family(model: str, family: str | None = None) -> str:
    """The family of a recorded answer: its own ``family`` field (normalised) or else its model's name."""
    return normalise_family(family) if family and family.strip() else family_of(model)


# What to do about recorded answers whose family cannot be told, in the fields each format accepts.
UNKNOWN_FAMILY_HINT = (
    "an answers file (answers.path) takes a family field on each line, e.g. {\"record_id\": ..., \"model\": ..., "
    "\"answer\": ..., \"family\": \"openai\"}; the plain format has no family field: name the model by an id the "
    "registry knows (the keys of answers, or dataset.answer_model for answer; judge families lists the patterns)"
)


def unknown_answer_models(answers) -> list[str]:
    """The answer models (recorded ``Answer``s) whose family cannot be told: the cross-family rule cannot be
    checked for them, so they are warned about rather than silently judged."""
    return sorted({a.model for a in answers if answer_family(a.model, a.family) == "unknown"})


def check_cross_family(judge: Model | str, others: list[Model | str], allow_same_family: bool = False) -> list[str]:
    """Raise SameFamilyError if the judge shares a family with any of ``others``; with ``allow_same_family``,
    return the clashes for the report to flag."""
    jf = family_of(judge)
    clashes = [
        f"{_label(judge)} ({jf}) judges {_label(o)} ({family_of(o)})"
        for o in others
        if jf != "unknown" and canonical_key(family_of(o)) == canonical_key(jf)  # "fam-b" and "Fam B" are one
    ]
    if clashes and not allow_same_family:
        raise SameFamilyError(
            "the judge must come from a different model family: "
            + "; ".join(clashes)
            + ". Pick a judge of another family, or set allow_same_family: true (the report will flag it)."
        )
    return clashes


def _label(m: Model | str) -> str:
    return m if isinstance(m, str) else m.label
