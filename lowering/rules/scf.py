"""Lowering rules of the scf family."""
from __future__ import annotations

from ..registry import lower  # noqa: F401
