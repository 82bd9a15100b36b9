"""judge: a grounding evaluator for LLM answers."""

__version__ = "0.1.0"
