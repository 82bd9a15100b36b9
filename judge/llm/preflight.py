"""Pre-flight: can every model a run needs be called at all? Checked before the first record, so a judge with
no key, an embedded model without its extra or a server that is down is one line, not a run of ``judge_error``
claims; nothing here calls a model or reads a key beyond "is it set".
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from urllib.parse import urlparse

from pydantic import BaseModel

from judge.llm.config import EMBEDDED_PREFIX, ModelConfig
from judge.llm.errors import LLMError


class ModelStatus(BaseModel):
    """One model's readiness: ``problem`` is None when it can be called."""

    name: str
    model: str
    problem: str | None = None

    @property
    def usable(self) -> bool:
        return self.problem is None


def _embedded_problem(cfg: ModelConfig) -> str | None:
    from judge.llm.weights import EMBEDDED, INSTALL_HINT, install_hint

    name = cfg.embedded_name
    if name not in EMBEDDED:
        return f"unknown embedded model {cfg.model}; known: {', '.join(EMBEDDED_PREFIX + n for n in EMBEDDED)}"
    from judge.llm.local_worker import runtime

    if runtime() is None:
        return INSTALL_HINT
    from importlib import metadata

    for dist, _ in EMBEDDED[name].chunks:
        try:
            metadata.distribution(dist)
        except metadata.PackageNotFoundError:
            return f"weights package {dist} is not installed; {install_hint(EMBEDDED[name].extra)}"
    return None


def shown_base(url) -> str:
    """An api_base as it may be printed: scheme, host, port and path; never a user:password or a query."""
    from judge.redact import redact

    netloc = url.netloc.rpartition("@")[2]
    return redact(f"{url.scheme}://{netloc}{url.path}")


def server_problem(api_base: str, timeout: float) -> str | None:
    """A TCP connect to the server: cheap, and catches the usual 'server not started'."""
    url = urlparse(api_base if "://" in api_base else f"http://{api_base}")
    shown = shown_base(url)
    host = url.hostname
    if not host:
        return f"api_base {shown!r} has no host"
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError as e:
        return f"api_base {shown!r}: {e}"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as e:
        reason = e.strerror or type(e).__name__
        return f"server {shown} is not reachable ({reason})"


def _key_problem(cfg: ModelConfig) -> str | None:
    if cfg.api_key_env:
        if not os.environ.get(cfg.api_key_env):
            return f"environment variable {cfg.api_key_env} (its api_key_env) is not set"
        return None
    if cfg.is_local or cfg.api_base:
        return None
    from judge.llm.litellm_setup import litellm

    try:
        env = litellm().validate_environment(cfg.model)
    except Exception:  # an id litellm cannot place: the call itself will say more
        return None
    missing = env.get("missing_keys") or []
    if env.get("keys_in_environment") or not missing:
        return None
    return f"no API key: set {' or '.join(missing)}, or name the variable with api_key_env"


def check_model(cfg: ModelConfig, *, timeout: float = 2.0) -> ModelStatus:
    """Whether ``cfg`` can be called: extra and weights (embedded), key (hosted), reachable (api_base)."""
    if cfg.embedded_name:
        problem = _embedded_problem(cfg)
    else:
        problem = _key_problem(cfg)
        if problem is None and cfg.api_base:
            problem = server_problem(cfg.api_base, timeout)
    return ModelStatus(name=cfg.label, model=cfg.model, problem=problem)


def preflight(models: Iterable[ModelConfig], *, timeout: float = 2.0) -> list[str]:
    """One line per model that cannot be called (empty when all can), each model checked once."""
    seen: set[tuple[str, str | None, str | None]] = set()
    lines = []
    for cfg in models:
        key = (cfg.model, cfg.api_base, cfg.api_key_env)
        if key in seen:
            continue
        seen.add(key)
        status = check_model(cfg, timeout=timeout)
        if status.problem:
            lines.append(f"model {status.name} ({status.model}): {status.problem}")
    return lines


class ModelsUnavailable(LLMError):
    """Models a run needs that cannot be called: refused before the first record (exit 2), one line each."""


def require(models: Iterable[ModelConfig], *, timeout: float = 2.0) -> None:
    """Raise :class:`ModelsUnavailable` unless every model can be called."""
    lines = preflight(models, timeout=timeout)
    if lines:
        raise ModelsUnavailable("\n".join(lines + ["nothing was run; `judge doctor` shows which models can be called and why not"]))


class Installed(BaseModel):
    """What ``judge doctor`` reports about the environment: package versions, None where absent."""

    python: str
    packages: dict[str, str | None]


DOCTOR_PACKAGES = ("judge", "litellm", "instructor", "pydantic", "xllamacpp", "llama_cpp_python", "ray", "pyarrow", "selenium")


def installed() -> Installed:
    import platform
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for dist in DOCTOR_PACKAGES:
        try:
            versions[dist] = metadata.version(dist.replace("_", "-"))
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return Installed(python=platform.python_version(), packages=versions)


def check_models(models: dict[str, ModelConfig], *, timeout: float = 2.0) -> list[ModelStatus]:
    """Every named model's status, for ``judge doctor``."""
    return [check_model(cfg, timeout=timeout).model_copy(update={"name": name}) for name, cfg in models.items()]
