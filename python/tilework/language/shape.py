"""tl builtins of the shape family (stubs documented here; implementations in
tilework.frontend.ops_shape)."""
from .core import builtin  # noqa: F401

__all__ = []
