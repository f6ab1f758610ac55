"""The interpreter's active builder: while it runs a kernel on a thread, builtins, tile
operators and `dtype.to_ir` evaluate through it (language/core.py)."""
from __future__ import annotations

import threading

_state = threading.local()


def active_builder():
    """The builder of the interpreter running a kernel on this thread, or None."""
    return getattr(_state, "builder", None)


def set_active_builder(builder):
    """Sets the active builder (None: none); returns the previous one.  Interpreter only."""
    prev = active_builder()
    _state.builder = builder
    return prev


def require_builder(what: str):
    """The active builder, or a TypeError saying `what` is evaluated only by the interpreter."""
    b = active_builder()
    if b is None:
        raise TypeError(f"`{what}` on a tile is only evaluated by the interpreter "
                        f"(TILEWORK_INTERPRET=1); inside a compiled kernel the compiler "
                        f"handles it, and outside a kernel there are no tiles")
    return b
