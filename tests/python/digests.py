"""Helpers for tests that compare a run's result with a digest taken on an earlier tree."""

from __future__ import annotations

from typing import Any


def without(node: Any, keys: tuple[str, ...]) -> Any:
    """``node`` with every mapping's ``keys`` left out, at any depth (keys the result gained
    after the digest was taken)."""
    if isinstance(node, dict):
        return {k: without(v, keys) for k, v in node.items() if k not in keys}
    if isinstance(node, list):
        return [without(v, keys) for v in node]
    return node
