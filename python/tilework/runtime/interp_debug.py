"""Interpreter rows of the debug family: numpy evaluations of its ops, added to
interpreter._OPS (one row per op name)."""
from __future__ import annotations

ROWS = {}
