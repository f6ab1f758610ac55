"""Lowering rules of the debug family."""
from __future__ import annotations

from ..registry import lower  # noqa: F401
