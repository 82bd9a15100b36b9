"""Model configs: what the LLM port needs to call one model, loaded from YAML in configs/.

A config names the environment variable that holds the API key, never the key itself, so a config (and
every run directory that snapshots it) is safe to share.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Mode = Literal["tools", "json", "json_schema", "md_json"]
LOCAL_PREFIXES = ("local/", "ollama/", "ollama_chat/", "hosted_vllm/", "lm_studio/", "llamafile/")


class Price(BaseModel):
    """USD per million tokens; overrides litellm's price map for this model."""

    model_config = ConfigDict(extra="forbid")
    input_per_million: float = Field(ge=0)
    output_per_million: float = Field(ge=0)


class ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

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

    @property
    def label(self) -> str:
        return self.name or self.model

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
        from judge.llm.redact import watch_env

        watch_env(self.api_key_env)
        return os.environ.get(self.api_key_env) if self.api_key_env else None


class ConfigFileError(ValueError):
    """A config file that cannot be read as YAML (missing, a directory, not UTF-8, not YAML); names the file."""


def read_yaml(path: str | Path, what: str = "config file"):
    """A YAML file's data, or ConfigFileError with one line naming the file and what is wrong with it."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigFileError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigFileError(f"{path}: is a directory, expected a {what} (YAML)") from None
    except UnicodeDecodeError as e:
        raise ConfigFileError(f"{path}: not valid UTF-8 (byte {e.start}); save the {what} as UTF-8") from None
    except OSError as e:
        raise ConfigFileError(f"{path}: cannot read the {what}: {e.strerror}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:  # one line: where and what, not the YAML library's multi-line picture
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigFileError(f"{path}: not valid YAML{where}: {getattr(e, 'problem', None) or e}") from None


def load_models(path: str | Path) -> dict[str, ModelConfig]:
    """The ``models:`` mapping of a YAML file, name -> ModelConfig (the name becomes the label)."""
    path = Path(path)
    data = read_yaml(path, "model config file") or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of model names to configs under 'models:'")
    models = data.get("models", data)
    if not isinstance(models, dict):
        raise ValueError(f"{path}: expected a mapping of model names to configs under 'models:'")
    out = {}
    for name, cfg in models.items():
        cfg = dict(cfg or {})
        cfg.setdefault("name", name)
        out[name] = ModelConfig.model_validate(cfg)
    return out
