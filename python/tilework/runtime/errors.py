"""`triton.runtime.errors`' names: the interpreter's error (`tilework.errors` defines it)."""
from ..errors import InterpreterError, TritonError  # noqa: F401
