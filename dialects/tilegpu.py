"""The `tilegpu` namespace: layout encodings (`#tilegpu.blocked`) and `tilegpu.convert_layout`.
Both dialects are defined in `tile.py`; this module is what MLIR's Python bindings import for
the namespace, and gathers its helpers."""
from .layout import Blocked, Layout, default_blocked, layout_of, with_layout  # noqa: F401
