"""Model configs: what the LLM port needs to call one model, loaded from YAML in configs/.

A config names the environment variable that holds the API key, never the key itself, so a config (and
every run directory that snapshots it) is safe to share.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from judge.boundary import ConfigFileError  # noqa: F401 (re-exported: the error a config file is refused with)

Mode = Literal["tools", "json", "json_schema", "md_json"]
EMBEDDED_PREFIX = "local/"  # the models judge runs itself (judge.llm.local): local/NAME
LOCAL_PREFIXES = (EMBEDDED_PREFIX, "ollama/", "ollama_chat/", "hosted_vllm/", "lm_studio/", "llamafile/")
# The variables litellm reads a provider's key from when a hosted model's config names none (api_key_env
# unset, no api_base): those keys are used, so they are secrets too (judge.redact), and no other variable is.
PROVIDER_KEY_ENV = {
    "openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY",), "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",), "groq": ("GROQ_API_KEY",), "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "deepseek": ("DEEPSEEK_API_KEY",), "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"), "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "xai": ("XAI_API_KEY",), "fireworks_ai": ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY"), "perplexity": ("PERPLEXITYAI_API_KEY",),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"), "huggingface": ("HUGGINGFACE_API_KEY", "HF_TOKEN"),
    "replicate": ("REPLICATE_API_KEY",), "nvidia_nim": ("NVIDIA_NIM_API_KEY",), "bedrock": ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
}
_UNPREFIXED = (("gpt", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"), ("chatgpt", "openai"), ("claude", "anthropic"),
               ("gemini", "gemini"), ("mistral", "mistral"), ("codestral", "mistral"), ("command", "cohere"))


def provider_key_env(model: str) -> tuple[str, ...]:
    """The variables litellm would read ``model``'s key from, when its config names none."""
    provider, _, rest = model.partition("/")
    if rest:
        return PROVIDER_KEY_ENV.get(provider.lower(), ())
    return next((PROVIDER_KEY_ENV[p] for start, p in _UNPREFIXED if model.lower().startswith(start)), ())


class Price(BaseModel):
    """USD per million tokens; overrides litellm's price map for this model."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # "1e999" (a string to YAML) would be an infinite price
    input_per_million: float = Field(ge=0)
    output_per_million: float = Field(ge=0)


class ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # timeouts and retry limits are finite

    model: str = Field(min_length=1, description="litellm model id, e.g. openai/gpt-4o-mini or local/qwen2.5-0.5b")
    name: str | None = Field(None, description="label in reports; defaults to the model id")
    api_base: str | None = None
    api_key_env: str | None = Field(None, description="NAME of the environment variable holding the key")
    mode: Mode | None = Field(None, description="instructor mode; default: tools for hosted APIs, json_schema for local")
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = Field(1024, ge=1)
    timeout: float = Field(60.0, gt=0)
    max_concurrency: int = Field(4, ge=1)
    rpm: int | None = Field(None, ge=1, description="requests per minute")
    tpm: int | None = Field(None, ge=1, description="tokens per minute")
    price: Price | None = None
    family: str | None = Field(None, description="overrides the family registry")
    max_attempts: int = Field(6, ge=1, description="transport attempts (429, 5xx, timeouts, connection errors)")
    max_retry_seconds: float = Field(120.0, gt=0, description="give up retrying after this long")
    validation_retries: int = Field(2, ge=0, description="instructor re-asks after an invalid answer")

    @model_validator(mode="before")
    @classmethod
    def _no_inline_keys(cls, data):
        if isinstance(data, dict) and "api_key" in data:
            raise ValueError("api_key must not be written in a config; set api_key_env to the NAME of an environment variable")
        return data

    @model_validator(mode="after")
    def _secrets_known(self):
        self.watch_secrets()
        return self

    def watch_secrets(self) -> None:
        """This model's key and its api_base's credentials are secrets from the moment the config is read
        (judge.redact); the port calls this again before each call, for a config unpickled in a Ray worker."""
        from judge.redact import watch_env, watch_url

        watch_env(self.api_key_env)
        if self.api_key_env is None and self.api_base is None and not self.is_local:
            for name in provider_key_env(self.model):
                watch_env(name)
        watch_url(self.api_base)

    @model_validator(mode="after")
    def _family_fits_the_model(self):
        """A `family:` override never relabels a model the registry knows, nor spells a known family in a way
        the alias table does not read (judge.llm.families.override_problem)."""
        if self.family is not None:
            from judge.llm.families import override_problem

            problem = override_problem(self.model, self.api_base, self.family)
            if problem:
                raise ValueError(problem)
        return self

    @field_validator("api_key_env")
    @classmethod
    def _key_env_is_a_name(cls, value: str | None) -> str | None:
        """The NAME of an environment variable; a key pasted here by mistake is refused without being echoed
        (it would otherwise be printed in every 'is not set' line)."""
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", value):
            raise ValueError("expected the NAME of an environment variable (letters, digits and _), such as OPENAI_API_KEY, "
                             "never the key itself (the value is not shown)")
        return value

    @field_validator("api_base")
    @classmethod
    def _api_base_is_a_url(cls, value: str | None) -> str | None:
        """A URL that splits into host and port, refused at load in one line otherwise; its text is never
        echoed (it may hold user:password)."""
        if value is None:
            return None
        from urllib.parse import urlsplit

        if not value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError("expected a URL such as http://127.0.0.1:8000/v1 (it is empty or holds a control character)")
        try:
            url = urlsplit(value if "://" in value else f"http://{value}")
            url.port  # noqa: B018 (raises on a port out of range)
        except ValueError as e:
            raise ValueError(f"not a usable URL ({e}); expected e.g. http://127.0.0.1:8000/v1 or http://[::1]:8000/v1") from None
        if not url.hostname:
            raise ValueError("the URL has no host; expected e.g. http://127.0.0.1:8000/v1")
        return value

    @property
    def label(self) -> str:
        return self.name or self.model

    @property
    def embedded_name(self) -> str | None:
        """NAME of an embedded model (``local/NAME``, run by judge itself); None for every other model, a local
        server's (ollama, vLLM) included."""
        return self.model[len(EMBEDDED_PREFIX):] if self.model.startswith(EMBEDDED_PREFIX) else None

    @property
    def is_local(self) -> bool:
        """Embedded or served by a local server (ollama, vLLM, ...): free, and JSON modes by default."""
        return self.model.startswith(LOCAL_PREFIXES)

    def resolved_mode(self) -> Mode:
        if self.mode:
            return self.mode
        return "json_schema" if self.model.startswith(LOCAL_PREFIXES) else "tools"

    def api_key(self) -> str | None:
        """The key, read from the environment at call time (never stored; masked in every error text)."""
        from judge.redact import watch_env

        watch_env(self.api_key_env)
        return os.environ.get(self.api_key_env) if self.api_key_env else None


def read_yaml(path: str | Path, what: str = "config file"):
    """A YAML file's data, or ConfigFileError with one line naming the file and what is wrong with it; read
    through the input boundary (judge.boundary: size, depth, alias and value limits)."""
    from judge.boundary import read_yaml_file

    return read_yaml_file(Path(path), what)


def model_entries(models, where: str, field: str = "models") -> dict[str, dict]:
    """The ``models:`` mapping as name -> dict of fields, checked before anything is built from it:
    ConfigFileError naming ``where`` and the field, never a TypeError."""
    from judge.problems import shown

    if models is None:
        return {}
    if not isinstance(models, dict):
        raise ConfigFileError(f"{where}: field {field}: expected a mapping of model names to configs (model: ..., api_key_env: ...), found {shown(models)}")
    out = {}
    for name, cfg in models.items():
        if not isinstance(name, str) or not name.strip():
            raise ConfigFileError(f"{where}: field {field}: a model name must be non-empty text, found {shown(name)}")
        if cfg is not None and not isinstance(cfg, dict):
            raise ConfigFileError(
                f"{where}: field {field}.{name}: expected a mapping such as {{model: openai/gpt-4o, api_key_env: OPENAI_API_KEY}}, found {shown(cfg)}"
            )
        out[name] = dict(cfg or {})
    return out


def load_models(path: str | Path) -> dict[str, ModelConfig]:
    """The ``models:`` mapping of a YAML file, name -> ModelConfig (the name becomes the label); ConfigFileError
    with one line per problem, naming the file and the field."""
    from pydantic import ValidationError

    from judge.problems import problems_from_validation

    path = Path(path)
    data = read_yaml(path, "model config file") or {}
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path}: expected a mapping of model names to configs under 'models:'")
    key = "models" if "models" in data else None
    out = {}
    for name, cfg in model_entries(data["models"] if key else data, str(path), key or "(top level)").items():
        cfg.setdefault("name", name)
        try:
            out[name] = ModelConfig.model_validate(cfg)
        except ValidationError as e:
            prefix = (key, name) if key else (name,)
            raise ConfigFileError("\n".join(str(p) for p in problems_from_validation(e, str(path), None, prefix))) from None
    return out
