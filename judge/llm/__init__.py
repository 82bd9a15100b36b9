"""The LLM port: the only caller of litellm. Importing this package does not import litellm."""

from judge.llm.cache import CallCache
from judge.llm.config import ModelConfig, Price, load_models
from judge.llm.errors import BudgetExceeded, LLMCallError, LLMError, LocalModelCrashed, LocalModelUnavailable
from judge.llm.families import SameFamilyError, check_cross_family, family_of
from judge.llm.port import LLM, CallRecord, Usage

__all__ = [
    "LLM",
    "BudgetExceeded",
    "CallCache",
    "CallRecord",
    "LLMCallError",
    "LLMError",
    "LocalModelCrashed",
    "LocalModelUnavailable",
    "ModelConfig",
    "Price",
    "SameFamilyError",
    "Usage",
    "check_cross_family",
    "family_of",
    "load_models",
]
