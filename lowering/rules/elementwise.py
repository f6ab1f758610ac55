"""Elementwise arith/math ops: one table row per op, one rule for all of them.

On a tile the op is applied to each element the thread holds; on scalars it is rebuilt with
per-thread types (pointers become `!llvm.ptr<1>`)."""
from __future__ import annotations


import math

import mlir.ir as ir

from tilework.dialects.layout import fastest_dim

from ..axis_info import defining_op
from ..registry import lower
from . import fp8
from ..regs import Regs

# op name -> (kind); every listed op keeps its attributes (predicates, fastmath flags)
ELEMENTWISE = {
    # integer arithmetic
    "arith.addi": "int", "arith.subi": "int", "arith.muli": "int", "arith.divsi": "int",
    "arith.divui": "int", "arith.remsi": "int", "arith.remui": "int", "arith.andi": "int",
    "arith.ori": "int", "arith.xori": "int", "arith.shli": "int", "arith.shrsi": "int",
    "arith.shrui": "int", "arith.maxsi": "int", "arith.maxui": "int", "arith.minsi": "int",
    "arith.minui": "int", "arith.ceildivsi": "int", "arith.floordivsi": "int",
    "arith.mulhiui": "int",
    # float arithmetic
    "arith.addf": "float", "arith.subf": "float", "arith.mulf": "float", "arith.divf": "float",
    "arith.remf": "float", "arith.negf": "float", "arith.maximumf": "float",
    "arith.minimumf": "float", "arith.maxnumf": "float", "arith.minnumf": "float",
    # comparisons and selection
    "arith.cmpi": "cmp", "arith.cmpf": "cmp", "arith.select": "select",
    # casts
    "arith.extsi": "cast", "arith.extui": "cast", "arith.trunci": "cast", "arith.extf": "cast",
    "arith.truncf": "cast", "arith.sitofp": "cast", "arith.uitofp": "cast",
    "arith.fptosi": "cast", "arith.fptoui": "cast", "arith.bitcast": "cast",
    "arith.index_cast": "cast",
    # math
    "math.floor": "float", "math.ceil": "float", "math.absf": "float", "math.absi": "int",
    "math.exp": "float", "math.exp2": "float", "math.log": "float", "math.log2": "float",
    "math.sqrt": "float", "math.rsqrt": "float", "math.sin": "float", "math.cos": "float",
    "math.erf": "float", "math.fma": "float", "math.tanh": "float",
}


# float conversions have their own rule (fp8 operands are expanded)
FLOAT_CONVERSIONS = ("arith.extf", "arith.truncf")


@lower(*(n for n in ELEMENTWISE if n not in FLOAT_CONVERSIONS))
def _elementwise(ctx, op, args):
    attrs = {n: op.attributes[n] for n in op.attributes}
    rtypes = [ctx.scalar_type(r.type) for r in op.results]
    regs = next((a for a in args if isinstance(a, Regs)), None)
    if regs is None:
        return list(ctx.create(op.name, args, rtypes, attrs).results)
    runs = attrs.pop("tilegpu.runs", None)
    if op.name == "arith.addi" and runs is None:
        shifted = _offset_range(ctx, op, args)
        if shifted is not None:
            return [regs.like(shifted)]
    lead = _run_leads(regs, runs) if runs is not None else None
    out = []
    for i in range(len(regs.values)):
        if lead is not None and lead[i] != i:  # equal to the first of its run
            out.append(out[lead[i]])
            continue
        operands = [a.values[i] if isinstance(a, Regs) else a for a in args]
        out.append(ctx.create(op.name, operands, rtypes, attrs).results[0])
    return [regs.like(out)]


def _offset_range(ctx, op, args):
    """`splat(b) + make_range(start, ...)` as (b + the thread part) + a constant per element,
    where each constant's bits are disjoint from the thread part's (else None).  Element by
    element (b + (thread part + c_k)), the thread-only sums are loop-invariant: LLVM hoists
    them all to the kernel's entry, one register each for the whole kernel (the 64 row
    offsets of a 128-row epilogue store); this way only the thread part is."""
    ops = [defining_op(v) for v in op.operands]
    names = [o.name if o is not None else None for o in ops]
    if sorted(map(str, names)) != ["tile.make_range", "tile.splat"]:
        return None
    ri = names.index("tile.make_range")
    rng, base = args[ri], args[1 - ri]
    if not isinstance(rng, Regs) or not isinstance(base, Regs) or len(rng.shape) != 1:
        return None
    start = ir.IntegerAttr(ops[ri].attributes["start"]).value
    parts = [ctx.logical_index_parts(rng.layout, rng.shape, 0, k)
             for k in range(len(rng.values))]
    if not all(disjoint for _, _, disjoint in parts):
        return None
    b = base.values[0]
    if any(v is not b for v in base.values):
        return None
    rtype = ctx.scalar_type(op.results[0].type)
    shifted = ctx.op1("arith.addi", [b, parts[0][0]], rtype)
    return [ctx.op1("arith.addi", [shifted, ctx.const(c + start)], rtype) if c + start
            else shifted for _, c, _ in parts]


@lower(*FLOAT_CONVERSIONS)
def _float_conversion(ctx, op, args):
    if fp8.is_f8(ctx.scalar_type(op.operands[0].type)) or \
            fp8.is_f8(ctx.scalar_type(op.results[0].type)):
        return fp8.convert(ctx, op, args)
    return _elementwise(ctx, op, args)


def _run_leads(regs, runs):
    """For each element the thread holds, the index of the first element of its run of equal
    results (`tilegpu.runs` = [dim, run]: aligned runs along the thread's contiguous chunks)."""
    dim, run = list(ir.DenseI32ArrayAttr(runs))
    _, spt = fastest_dim(regs.layout)
    chunk = min(spt, regs.shape[dim])
    g = math.gcd(run, chunk)
    leads = []
    for coord in regs.coords():
        k = coord[dim]
        c = list(coord)
        c[dim] = k - (k % chunk) % g
        leads.append(regs.flat(c))
    return leads
