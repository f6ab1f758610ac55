"""What each `tl` builtin emits: `IMPLS[name](builder, *args, **kwargs)`, one function per
builtin, registered under the builtin's name by `ops_core` (the registry and the core
builtins) and the family modules imported here.  The code generator and the interpreter call
`IMPLS`; arguments arrive as `tensor`s, `constexpr`s or plain Python values."""
from . import (ops_asm, ops_bits, ops_control, ops_debug, ops_descriptor,  # noqa: F401
               ops_dot, ops_join, ops_math, ops_memory, ops_reduction, ops_scan, ops_shape,
               ops_standard, ops_target)
from .ops_core import IMPLS, impl  # noqa: F401
