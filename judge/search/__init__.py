"""Deterministic support-span search: ``search(claim, source, k)`` or ``Index(source).search(claim, k)``."""

from judge.search.index import Index, search

__all__ = ["Index", "search"]
