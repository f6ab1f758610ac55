"""Lowering rules of the atomic family."""
from __future__ import annotations

from ..registry import lower  # noqa: F401
