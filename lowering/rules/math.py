"""Lowering rules of the math family."""
from __future__ import annotations

from ..registry import lower  # noqa: F401
