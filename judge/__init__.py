"""judge: a grounding evaluator for LLM answers.

``judge.evaluate(config)`` runs an evaluation and returns the run (see judge.api); the API is imported on
first use, so ``import judge`` (and ``judge --help``) stays light.
"""

from judge.errors import InputError  # the project's own error type for refused input (no imports of its own)

__version__ = "0.1.0"

__all__ = ["InputError", "__version__", "aevaluate", "evaluate", "score"]


def __getattr__(name: str):
    if name in ("evaluate", "aevaluate", "score"):
        from judge import api

        return getattr(api, name)
    raise AttributeError(f"module 'judge' has no attribute {name!r}")
