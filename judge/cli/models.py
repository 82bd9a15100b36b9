"""Commands on models: families (the family registry), ping (one call through the LLM port) and doctor (what
is installed and which models can be called)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError

from judge.cli.app import BadInput, command
from judge.report import console, terminal_data


def load_models(path: Path) -> dict:
    from judge.llm.config import ConfigFileError, load_models as load

    try:
        return load(path)
    except ConfigFileError as e:  # already names the file
        raise BadInput(str(e)) from None
    except (FileNotFoundError, ValueError, ValidationError) as e:
        raise BadInput(f"{path}: {e}") from None


@command()
def families(
    models: Optional[Path] = typer.Option(None, "--models", help="A YAML file with models (as judge doctor and rejudge take it): show each one's family."),
    config: Optional[Path] = typer.Option(None, "--config", "-c", hidden=True),  # the old name of --models, kept working
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The model-family registry (model-id patterns -> family), and the families of a models file's models."""
    from judge.llm.families import PROVIDER_FAMILIES, REGISTRY, family_of

    if models is not None and config is not None:
        raise BadInput("give the models file once: --models FILE (--config is its old name)")
    config = models or config

    out: dict = {"patterns": [{"pattern": p, "family": f} for p, f in REGISTRY], "providers": PROVIDER_FAMILIES}
    if config is not None:
        out["models"] = {name: {"model": m.model, "family": family_of(m), "override": m.family} for name, m in load_models(config).items()}
    console.print_json(out) if as_json else terminal_data.families(out, config)


@command()
def ping(
    config: Path = typer.Argument(..., help="YAML file with models: (e.g. configs/models.yaml)."),
    name: str = typer.Argument(..., help="Which model of that file to call."),
    cache_dir: Path = typer.Option(Path(".cache/judge"), "--cache-dir", help="Where model calls are cached."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the cache."),
    refresh: bool = typer.Option(False, "--refresh", help="Call the model again and overwrite the cached answer."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """One small structured call through the LLM port, to check a model config (key, server, mode).
    Exit 2 when the model cannot be reached or answers nothing usable."""
    from judge.llm import LLMError
    from judge.llm.ping import ping as do_ping

    models = load_models(config)
    if name not in models:
        raise BadInput(f"{config}: no model named {name!r}; known: {', '.join(models)}")
    try:
        out = do_ping(models[name], cache_dir, use_cache=not no_cache, refresh=refresh)
    except LLMError as e:
        raise BadInput(f"{name}: {e}") from None
    console.print_json(out) if as_json else terminal_data.ping(name, out)


@command()
def doctor(
    models: Optional[Path] = typer.Option(None, "--models", help="A YAML file with models (default: the packaged configs/models.yaml)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """What is installed, and which models can be called and why not (key, extra, server); no model is called."""
    from judge.llm.preflight import check_models, installed
    from judge.resources import shipped_dir

    path = models or shipped_dir("configs") / "models.yaml"
    out = {"installed": installed().model_dump(), "models_file": str(path),
           "models": [s.model_dump() for s in check_models(load_models(path))]}
    console.print_json(out) if as_json else terminal_data.doctor(out)
