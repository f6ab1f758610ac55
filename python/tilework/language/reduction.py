"""tl builtins of the reduction family (stubs documented here; implementations in
tilework.frontend.ops_reduction)."""
from .core import builtin  # noqa: F401

__all__ = []
