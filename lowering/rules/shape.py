"""Lowering rules of the shape family."""
from __future__ import annotations

from ..registry import lower  # noqa: F401
