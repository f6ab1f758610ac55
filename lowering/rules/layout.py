"""Lowering rules of the layout family."""
from __future__ import annotations

from ..registry import lower  # noqa: F401
