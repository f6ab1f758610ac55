"""The `tilegpu` namespace: layout encodings (`#tilegpu.blocked`) and `tilegpu.convert_layout`.
Both dialects are declared in `opdefs/` and loaded by `tile.py`; this module is what MLIR's
Python bindings import for the namespace, and gathers its helpers."""
from .layout import Blocked, Layout, default_blocked, layout_of, with_layout  # noqa: F401
