"""Elementwise arith/math ops: one table row per op, one rule for all of them.

On a tile the op is applied to each element the thread holds; on scalars it is rebuilt with
per-thread types (pointers become `!llvm.ptr<1>`)."""
from __future__ import annotations


from ..registry import lower

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


@lower(*ELEMENTWISE)
def _elementwise(ctx, op, args):
    from ..to_llvm import Regs
    attrs = {n: op.attributes[n] for n in op.attributes}
    rtypes = [ctx.scalar_type(r.type) for r in op.results]
    regs = next((a for a in args if isinstance(a, Regs)), None)
    if regs is None:
        return list(ctx.create(op.name, args, rtypes, attrs).results)
    out = []
    for i in range(len(regs.values)):
        operands = [a.values[i] if isinstance(a, Regs) else a for a in args]
        out.append(ctx.create(op.name, operands, rtypes, attrs).results[0])
    return [regs.like(out)]
