"""tl builtins of the debug family (stubs documented here; implementations in
tilework.frontend.ops_debug)."""
from .core import builtin  # noqa: F401

__all__ = []
