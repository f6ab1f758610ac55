"""Lowering rules of tilegpu ops, one module per op family.  Importing registers them."""
from . import creation, elementwise, memory, program  # noqa: F401
