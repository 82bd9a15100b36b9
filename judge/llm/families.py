"""Model families, so a judge never grades its own family's homework unless the config says so."""

from __future__ import annotations

import re

from judge.llm.config import ModelConfig
from judge.errors import InputError

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


def require_known_family(model: ModelConfig) -> str:
    family = family_of(model)
    if family == "unknown":
        raise UnknownFamilyError(
            f"cannot tell the model family of {model.label} ({model.model}): the cross-family rule cannot be checked. "
            f"Set family: in its config (see judge families for the known ones)."
        )
    return family


def normalise_family(family: str) -> str:
    """One spelling per family, so a rule on families cannot be bypassed by case, spaces or a provider prefix:
    " Anthropic", "anthropic/", "Meta Llama" and "meta-llama" are anthropic, anthropic, meta and meta. A name
    the registry does not know stays itself (lower case, spaces as '-')."""
    name = re.sub(r"[\s_]+", "-", family.strip().lower()).strip("-/")
    if name in KNOWN_FAMILIES:
        return name
    if name in PROVIDER_FAMILIES:
        return PROVIDER_FAMILIES[name]
    for part in (p.strip("-") for p in name.split("/")):
        for pattern, fam in _COMPILED:
            if pattern.search(part):
                return fam
    return name or "unknown"


def family_of(model: ModelConfig | str) -> str:
    """The family of a model config (its override first) or of a bare model id; 'unknown' if none matches.
    Ids are read case- and space-insensitively (" gpt-4o" and "OpenAI/GPT-4o" are openai)."""
    if isinstance(model, ModelConfig):
        if model.family and model.family.strip():
            return normalise_family(model.family)
        model = model.model
    parts = [p.strip() for p in model.strip().split("/")]
    names = parts[1:] if len(parts) > 1 else parts
    for name in names:
        for pattern, family in _COMPILED:
            if pattern.search(name):
                return family
    return PROVIDER_FAMILIES.get(parts[0].lower(), "unknown") if len(parts) > 1 else "unknown"


def answer_family(model: str, family: str | None = None) -> str:
    """The family of a recorded answer: its own ``family`` field (normalised) or else its model's name."""
    return normalise_family(family) if family and family.strip() else family_of(model)


def unknown_answer_models(answers) -> list[str]:
    """The answer models (recorded ``Answer``s) whose family cannot be told: the cross-family rule cannot be
    checked for them, so they are warned about rather than silently judged."""
    return sorted({a.model for a in answers if answer_family(a.model, a.family) == "unknown"})


def check_cross_family(judge: ModelConfig | str, others: list[ModelConfig | str], allow_same_family: bool = False) -> list[str]:
    """Raise SameFamilyError if the judge shares a family with any of ``others`` (answerers, decomposer).

    With ``allow_same_family`` it returns the clashes instead, for the report to flag."""
    jf = family_of(judge)
    clashes = [
        f"{_label(judge)} ({jf}) judges {_label(o)} ({family_of(o)})"
        for o in others
        if jf != "unknown" and family_of(o) == jf
    ]
    if clashes and not allow_same_family:
        raise SameFamilyError(
            "the judge must come from a different model family: "
            + "; ".join(clashes)
            + ". Pick a judge of another family, or set allow_same_family: true (the report will flag it)."
        )
    return clashes


def _label(m: ModelConfig | str) -> str:
    return m.label if isinstance(m, ModelConfig) else m
