"""Implementations of the debug builtins (registered in ops.IMPLS by name): `device_print`
(`tile.print`) and `device_assert` (`tile.assert`, emitted only when the kernel is compiled
with `debug=True`, as in Triton).  `static_print`/`static_assert` live in `ops`."""
from __future__ import annotations

import os
import string

from tilework.dialects import builders as B

from ..language import core
from ..language.core import constexpr
from . import semantic as S
from .ops_core import impl
from .semantic import SemanticError


def _unwrap(x):
    return x.value if isinstance(x, constexpr) else x


def debug_enabled(b) -> bool:
    """Whether `device_assert` is active: `CompileOptions.debug` of this compilation (the
    driver puts the options on the MLIR context), or the interpreter's launch option `debug`
    (default: TILEWORK_DEBUG)."""
    if getattr(b, "is_interpreter", False):
        d = (getattr(b, "launch_options", None) or {}).get("debug")
        if d is None:
            d = os.environ.get("TILEWORK_DEBUG", "") not in ("", "0")
        return bool(d)
    return bool(getattr(b.options, "debug", False))


def _text(x, what) -> str:
    x = _unwrap(x)
    if not isinstance(x, str):
        raise SemanticError(f"{what} must be a constexpr string, got {x!r}")
    bad = [c for c in x if c not in string.printable]
    if bad:
        raise SemanticError(f"{what} {x!r} is not printable ASCII")
    return x


@impl
def device_print(b, prefix, *args, hex=False):
    prefix = _text(prefix, "device_print prefix")
    hex_ = _unwrap(hex)
    if not isinstance(hex_, bool):
        raise SemanticError(f"device_print hex must be a constexpr bool, got {hex_!r}")
    vals = []
    for a in args:
        a = _unwrap(a)
        if isinstance(a, str):
            raise SemanticError("device_print takes one string (the prefix) and then values; "
                                "put the text in the prefix")
        vals.append(S.to_tensor(b, a))
    # as Triton: a non-empty prefix starts with " " and, when values follow, ends with ": "
    if vals and not prefix.endswith(" "):
        prefix += " "
    if vals and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    for n, v in enumerate(vals or [None]):  # one op per value, as Triton prints them
        B.build_print(b, v.handle if v is not None else None, prefix=prefix, hex=int(hex_),
                      is_signed=int(v is not None and v.dtype.is_int_signed()
                                    and not v.dtype.is_bool()),
                      operand=n if len(vals) > 1 else -1)


@impl
def device_assert(b, cond, msg="", mask=None):
    msg = _text(msg, "device_assert message")
    if not debug_enabled(b):
        return None
    c = S.to_tensor(b, _unwrap(cond))
    if not c.dtype.is_bool():
        c = S.cast(b, c, core.int1)
    m = _unwrap(mask)
    if m is not None:
        m = S.to_tensor(b, m)
        c = S.binary(b, "or", c, S.logical_not(b, m))
    B.build_assert(b, c.handle, msg=msg)
    return None
