"""Lowering rules of tilegpu ops, one module per op family.  Importing registers them."""
from . import (  # noqa: F401
    atomic, creation, debug, elementwise, layout, math, memory, program, reduction, scan, scf,
    shape,
)
from . import dot, dot_mfma, dot_mma, dot_wgmma, histogram, shape_join, shared  # noqa: F401,E402
from . import asm, tma, warp_spec  # noqa: F401,E402
