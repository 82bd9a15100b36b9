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

    return _instructor
