"""Implementations of the shape builtins (registered in ops.IMPLS by name)."""
from __future__ import annotations

from .ops import impl  # noqa: F401
