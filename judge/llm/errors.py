"""The typed errors of the LLM port; callers turn LLMCallError into a ``judge_error`` record."""

from __future__ import annotations


class LLMError(Exception):
    """Base of every error the LLM port raises."""


class LLMCallError(LLMError):
    """A model call that still failed after its retries (or could not be retried)."""

    def __init__(self, model: str, cause: str, attempts: int, record=None):
        from judge.redact import redact

        self.model = model
        self.cause = redact(cause)  # providers echo keys in their errors: none goes further than here
        self.attempts = attempts
        self.record = record  # the CallRecord, with the tokens every attempt spent
        super().__init__(f"{model}: {self.cause} (after {attempts} attempt{'s' if attempts != 1 else ''})")


class BudgetExceeded(LLMError):
    """The run's max_cost_usd is spent: no new call is started."""


class LocalModelUnavailable(LLMError):
    """The embedded model's extra is not installed, or its weights are missing or corrupt."""


class LocalModelCrashed(LLMError):
    """The embedded model's child process died (SIGILL from a build that does not fit the CPU, SIGSEGV):
    an error for that call; the next call starts a fresh child."""


class LocalModelTimeout(LLMError):
    """The embedded model took longer than its timeout: its child process is stopped (not retried: the same
    call would take as long again)."""
