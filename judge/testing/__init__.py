"""Helpers for testing code that calls LLMs: a scripted OpenAI-compatible server."""
