"""Metrics: pure functions over typed models."""
