"""Derivative rules (temporary init; replaced by the full table)."""

from . import operators  # noqa: F401
from .registry import REGISTRY

__all__ = ["REGISTRY"]
