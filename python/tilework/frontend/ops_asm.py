"""Implementation of `tl.inline_asm_elementwise` (Triton 3.6 semantics): `tile.inline_asm`,
lowered per group of `pack` elements to one `llvm.inline_asm` (lowering/rules/asm.py).

Arguments are broadcast to one shape, their dtypes kept (Python ints become int32, floats
fp32, as Triton's `to_tensor`); the results take that shape and the given dtypes.  In the asm,
`$0..` are the outputs then the inputs, one register per element, except that elements
narrower than 32 bits share a register when `pack` > 1: min(32 / bits, pack) of them, first
element in the low bits (Triton's packing).  The constraint list is checked against that count
here, so a mismatch is a compile error naming the line, not an LLVM failure."""
from __future__ import annotations

import functools

from tilework.dialects import builders as B
from tilework.dialects.opdefs.asm import MAX_ASM_ARGS, MAX_ASM_RESULTS

from ..language import core
from ..language.core import tensor
from . import semantic as S
from .ops_core import const, impl
from .semantic import SemanticError
from .types import tensor_ir_type


def registers(dt: core.dtype, pack: int) -> int:
    """The asm operands one value of `dt` takes per group of `pack` elements."""
    per = min(max(32 // max(dt.primitive_bitwidth, 1), 1), pack)
    return pack // per


def _check_constraints(constraints: str, results, args, pack: int):
    entries = [c.strip() for c in constraints.split(",") if c.strip()]
    outs = sum(1 for c in entries if c.startswith("="))
    ins = sum(1 for c in entries if not c.startswith(("=", "~")))
    want_outs = sum(registers(dt, pack) for dt in results)
    want_ins = sum(registers(t.dtype, pack) for t in args)
    if (outs, ins) != (want_outs, want_ins):
        raise SemanticError(
            f"tl.inline_asm_elementwise: the constraints {constraints!r} name {outs} outputs "
            f"and {ins} inputs, but with pack={pack} the results "
            f"({', '.join(str(d) for d in results)}) take {want_outs} registers and the "
            f"arguments ({', '.join(str(t.dtype) for t in args)}) {want_ins}")


@impl
def inline_asm_elementwise(b, asm, constraints, args, dtype, is_pure, pack):
    asm, constraints = const(asm, "asm"), const(constraints, "constraints")
    is_pure, pack = const(is_pure, "is_pure"), const(pack, "pack")
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise SemanticError("tl.inline_asm_elementwise: asm and constraints must be strings")
    if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1:
        raise SemanticError(f"tl.inline_asm_elementwise: pack must be a positive int, got "
                            f"{pack!r}")
    many = isinstance(dtype, (tuple, list))
    dtypes = [const(d, "dtype") for d in (dtype if many else [dtype])]
    if not dtypes or not all(isinstance(d, core.dtype) and not d.is_ptr() for d in dtypes):
        raise SemanticError(f"tl.inline_asm_elementwise: dtype must be a scalar dtype or a "
                            f"tuple of them, got {dtype!r}")
    args = [S.to_tensor(b, a) for a in (const(args, "args") or [])]
    if not 1 <= len(args) <= MAX_ASM_ARGS or len(dtypes) > MAX_ASM_RESULTS:
        raise SemanticError(f"tl.inline_asm_elementwise takes 1 to {MAX_ASM_ARGS} arguments "
                            f"and at most {MAX_ASM_RESULTS} result dtypes, got {len(args)} "
                            f"and {len(dtypes)}")
    shape = functools.reduce(
        lambda a, c: S.broadcast_shapes(a, c, "inline_asm_elementwise arguments"),
        [t.shape for t in args])
    args = [S.broadcast_to(b, t, shape) for t in args]
    _check_constraints(constraints, dtypes, args, pack)
    hs = B.build_inline_asm(b, [t.handle for t in args],
                            result_types=[tensor_ir_type(d, shape) for d in dtypes], asm=asm,
                            constraints=constraints, pure=int(bool(is_pure)), pack=pack)
    outs = [tensor(h, d, shape) for h, d in zip(hs, dtypes)]
    return tuple(outs) if many else outs[0]
