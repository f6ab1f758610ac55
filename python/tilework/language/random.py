"""tl builtins of the random family (stubs documented here; implementations in
tilework.frontend.ops_random)."""
from .core import builtin  # noqa: F401

__all__ = []
