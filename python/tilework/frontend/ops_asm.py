"""Implementations of `tl.inline_asm_elementwise` and `tl.map_elementwise` (Triton 3.6
semantics): `tile.inline_asm`, lowered per group of `pack` elements to one `llvm.inline_asm`,
and `tile.map_elementwise`, whose scalar function (a private func.func emitted here from the
@jit function) is inlined per group of `pack` elements (lowering/rules/asm.py).

inline_asm_elementwise:
Arguments are broadcast to one shape, their dtypes kept (Python ints become int32, floats
fp32, as Triton's `to_tensor`); the results take that shape and the given dtypes.  In the asm,
`$0..` are the outputs then the inputs, one register per element, except that elements
narrower than 32 bits share a register when `pack` > 1: min(32 / bits, pack) of them, first
element in the low bits (Triton's packing).  The constraint list is checked against that count
here, so a mismatch is a compile error naming the line, not an LLVM failure."""
from __future__ import annotations

import functools

import mlir.ir as ir
import numpy as np

from tilework.dialects import builders as B
from tilework.dialects.opdefs.asm import MAX_ASM_ARGS, MAX_ASM_RESULTS

from ..language import core
from ..language.core import tensor
from . import semantic as S
from .ops_core import const, impl
from .semantic import SemanticError
from .types import tensor_ir_type, to_ir


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
    if len(args) > MAX_ASM_ARGS or len(dtypes) > MAX_ASM_RESULTS:
        raise SemanticError(f"tl.inline_asm_elementwise takes at most {MAX_ASM_ARGS} "
                            f"arguments and {MAX_ASM_RESULTS} result dtypes, got {len(args)} "
                            f"and {len(dtypes)}")
    # (no arguments: scalar results, as Triton's: `%globaltimer`, `%smid`)
    shape = functools.reduce(
        lambda a, c: S.broadcast_shapes(a, c, "inline_asm_elementwise arguments"),
        [t.shape for t in args], ())
    args = [S.broadcast_to(b, t, shape) for t in args]
    _check_constraints(constraints, dtypes, args, pack)
    hs = B.build_inline_asm(b, [t.handle for t in args],
                            result_types=[tensor_ir_type(d, shape) for d in dtypes], asm=asm,
                            constraints=constraints, pure=int(bool(is_pure)), pack=pack)
    outs = [tensor(h, d, shape) for h, d in zip(hs, dtypes)]
    return tuple(outs) if many else outs[0]


def _broadcast_args(b, what, args):
    args = [S.to_tensor(b, a) for a in args]
    if not 1 <= len(args) <= MAX_ASM_ARGS:
        raise SemanticError(f"tl.{what} takes 1 to {MAX_ASM_ARGS} tiles, got {len(args)}")
    shape = functools.reduce(lambda a, c: S.broadcast_shapes(a, c, f"{what} arguments"),
                             [t.shape for t in args])
    return [S.broadcast_to(b, t, shape) for t in args], shape


def _results(b, out):
    """The scalar function's results as scalar tensors (Python numbers typed as constants)."""
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    if not out or any(o is None for o in out):
        raise SemanticError("tl.map_elementwise: the function must return a value (or a tuple "
                            "of values)")
    res = [S.to_tensor(b, o) for o in out]
    if any(r.shape for r in res):
        raise SemanticError("tl.map_elementwise: the function must return scalars")
    return res


def _result_dtypes(outs, pack):
    """The dtype of each result: the function returns `pack` values of each in turn."""
    if len(outs) % pack:
        raise SemanticError(f"tl.map_elementwise: with pack={pack} the function returns pack "
                            f"values per result, got {len(outs)}")
    dts = [o.dtype for o in outs[::pack]]
    for k in range(1, pack):
        if [o.dtype for o in outs[k::pack]] != dts:
            raise SemanticError(f"tl.map_elementwise: the function's results disagree in "
                                f"type across the {pack} packed elements")
    return dts


@impl
def map_elementwise(b, scalar_fn, *args, pack=1):
    """Result order with pack > 1: each result's pack elements in turn (r0 e0, r0 e1, ..., r1
    e0, ...), as Triton's type check of the unpacked results reads them."""
    pack = const(pack, "pack")
    if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1:
        raise SemanticError(f"tl.map_elementwise: pack must be a positive int, got {pack!r}")
    interpreted = getattr(b, "is_interpreter", False)  # (which runs @jit callees as Python)
    if not (callable(scalar_fn) if interpreted else hasattr(scalar_fn, "parse")):
        raise SemanticError(f"tl.map_elementwise needs a @jit function, got "
                            f"{getattr(scalar_fn, '__name__', scalar_fn)!r}")
    args, shape = _broadcast_args(b, "map_elementwise", args)
    if interpreted:
        return _interpret(b, getattr(scalar_fn, "fn", scalar_fn), args, shape, pack)
    from mlir.dialects import func as func_d
    inline = b.inline_jit
    elems = [to_ir(t.dtype) for t in args for _ in range(pack)]
    b.map_count = getattr(b, "map_count", 0) + 1
    name = f"{b.kernel_name}__map{b.map_count}"
    with ir.InsertionPoint(b.module.body), b.loc:
        f = func_d.FuncOp(name, ir.FunctionType.get(elems, []))
        f.sym_visibility = ir.StringAttr.get("private")
        block = f.add_entry_block()
    with ir.InsertionPoint(block):
        scalars = [tensor(v, t.dtype) for v, t in zip(
            block.arguments, [t for t in args for _ in range(pack)])]
        outs = _results(b, inline(scalar_fn, scalars))
        with b.loc:
            func_d.ReturnOp([o.handle for o in outs])
    dts = _result_dtypes(outs, pack)
    f.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(elems, [to_ir(o.dtype) for o in outs]))
    if len(dts) > MAX_ASM_RESULTS:
        raise SemanticError(f"tl.map_elementwise returns at most {MAX_ASM_RESULTS} values per "
                            f"element, got {len(dts)}")
    hs = B.build_map_elementwise(b, [t.handle for t in args],
                                 result_types=[tensor_ir_type(d, shape) for d in dts],
                                 fn=name, pack=pack)
    res = [tensor(h, d, shape) for h, d in zip(hs, dts)]
    return res[0] if len(res) == 1 else tuple(res)


def _interpret(b, scalar_fn, args, shape, pack):
    """The function on each group of `pack` elements (row-major order, the last group padded
    with zeros), one call at a time: its control flow is Python's."""
    flat = [np.asarray(t.handle).reshape(-1) for t in args]
    n = flat[0].size if shape else 1
    groups = -(-n // pack)
    cols = [np.concatenate([f, np.zeros(groups * pack - n, f.dtype)]) if shape else
            np.repeat(f, pack) for f in flat]
    outs, dts = None, None
    for g in range(groups):
        scalars = [b.wrap(c[g * pack + k], t.dtype) for c, t in zip(cols, args)
                   for k in range(pack)]
        res = _results(b, scalar_fn(*scalars))
        if outs is None:
            dts = _result_dtypes(res, pack)
            outs = [np.zeros(groups * pack, np.asarray(r.handle).dtype) for r in res[::pack]]
        for i in range(len(dts)):
            for k in range(pack):
                outs[i][g * pack + k] = np.asarray(res[i * pack + k].handle)
    res = [b.wrap(o[:n].reshape(shape), d) for o, d in zip(outs, dts)]
    return res[0] if len(res) == 1 else tuple(res)
