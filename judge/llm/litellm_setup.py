"""The one place litellm is imported, configured to stay offline and quiet.

Imported lazily, so that ``import judge`` and ``judge --help`` never pay for litellm's import.
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache


@lru_cache(maxsize=1)
def litellm():
    # Use the price map shipped with litellm instead of fetching one over the network at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    import litellm as _litellm

    _litellm.telemetry = False
    _litellm.suppress_debug_info = True
    _litellm.cache = None  # our own cache is the only one
    _litellm.drop_params = True  # a provider that lacks e.g. `seed` gets the call without it
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "instructor"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return _litellm


@lru_cache(maxsize=1)
def instructor():
    litellm()
    import instructor as _instructor

    _memoize_async_validator_check()
    return _instructor


def _memoize_async_validator_check() -> None:
    """Instructor walks the response model's MRO several times a call to refuse async validators (about 2 ms
    of CPU): remember the classes that passed."""
    try:
        from instructor.v2.validation import async_validators as mod
    except ImportError:  # another instructor layout: nothing to speed up
        return
    check = mod.reject_async_validators
    if getattr(check, "_judge_memo", False):
        return
    passed: set = set()

    def reject_async_validators(response_model):
        try:
            if response_model in passed:
                return None
        except TypeError:  # unhashable typing construct: check it every time
            return check(response_model)
        check(response_model)
        passed.add(response_model)
        return None

    reject_async_validators._judge_memo = True
    mod.reject_async_validators = reject_async_validators
