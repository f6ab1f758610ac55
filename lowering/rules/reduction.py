"""Lowering rules of the reduction family."""
from __future__ import annotations

from ..registry import lower  # noqa: F401
