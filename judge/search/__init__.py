"""Deterministic support-span search: ``search(claim, source, k)`` or ``Index(source).search(claim, k)``;
within a token budget: ``offer(indexes, claim, budget_tokens)``."""

from judge.search.index import Index, offer, search

__all__ = ["Index", "offer", "search"]
