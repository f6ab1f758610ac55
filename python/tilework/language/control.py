"""tl builtins of the control family (stubs documented here; implementations in
tilework.frontend.ops_control)."""
from .core import builtin  # noqa: F401

__all__ = []
