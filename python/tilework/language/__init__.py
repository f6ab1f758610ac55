"""`tilework.language`, imported as `tl`: the tile-level kernel language.

Its names follow `triton.language`, so that a Triton kernel runs after changing its imports.
"""
from .core import (  # noqa: F401
    DTYPES, arange, bfloat16, broadcast_to, builtin, cast, cdiv, const, constexpr, dtype, float8e4b15, float8e4b8,
    float8e5b16, float8e4nv,
    float8e5, float16, float32, float64, full, full_like, zeros_like, int1, int8, int16, int32, int64, load,
    max_contiguous, maximum, minimum, multiple_of, num_programs, pi32_t, pointer_type, program_id,
    static_assert, static_print, store, str_to_ty, tensor, uint8, uint16, uint32, uint64, void,
    where, zeros,
)
from . import math  # noqa: F401,E402  (tl.math namespace, as in Triton)
from . import extra  # noqa: F401,E402  (tl.extra.libdevice, as in Triton)
from . import target_info  # noqa: F401,E402  (tl.target_info.is_cuda(), ..., as in Triton)
from .asm import *  # noqa: F401,F403,E402
from .control import *  # noqa: F401,F403,E402
from .debug import *  # noqa: F401,F403,E402
from .descriptor import *  # noqa: F401,F403,E402
from .dot import *  # noqa: F401,F403,E402
from .dot_scaled import *  # noqa: F401,F403,E402
from .math import *  # noqa: F401,F403,E402
from .memory import *  # noqa: F401,F403,E402
from .random import *  # noqa: F401,F403,E402
from .reduction import *  # noqa: F401,F403,E402
from .shape import *  # noqa: F401,F403,E402
from .standard import *  # noqa: F401,F403,E402
from .compat import *  # noqa: F401,F403,E402
from .tuples import *  # noqa: F401,F403,E402  (tl.tuple, tl.slice: shadow the builtins here)
