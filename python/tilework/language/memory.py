"""tl builtins of the memory family (stubs documented here; implementations in
tilework.frontend.ops_memory)."""
from .core import builtin  # noqa: F401

__all__ = []
