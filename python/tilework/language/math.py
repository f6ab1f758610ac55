"""tl builtins of the math family (stubs documented here; implementations in
tilework.frontend.ops_math)."""
from .core import builtin  # noqa: F401

__all__ = []
