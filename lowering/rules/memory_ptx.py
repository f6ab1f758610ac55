"""Predicated global loads and stores on NVIDIA: one inline PTX `@p ld.global` / `@p st.global`
per access instead of a branch around an `llvm.load`/`llvm.store`.

A branch per masked access gives LLVM and ptxas one basic block per access: thousands in a
large tile, and their compile time grows much faster than the tile (see `benchmarks/
compile_time.py --sweep`).  A predicated instruction keeps the kernel one block.  The access
moves `n` words of `w` bits (v4.b32 for 16 bytes of fp32 or fp16, v2.b64 for fp64, one u8 for
a byte); a load's outputs are tied to the `other` words, so where the predicate is false they
keep them.  Both are `sideeffect`: LLVM must not move or merge them across stores.

A mask bit computed before a loop and used by an access inside it would be one predicate
register live across the whole loop per access of a thread (LLVM hoists the compares): with
more than the 7 predicate registers ptxas spills them to general registers and to local
memory (softmax_prefetch: 8 masks, a 28-byte spill at 128 registers).  `pinned_compare`
computes such a bit again next to the access, `x + k <op> y + k'` in one `sideeffect` asm
that LLVM cannot hoist: only `x` and `y` (typically the thread part of the offsets and the
bound, shared by all accesses) stay live; `rules/memory.py` does it where those are fewer
values than the bits.
"""
from __future__ import annotations

import mlir.ir as ir

from ..axis_info import elem_bytes


def _words(mem, vec):
    """(word bits w, words n, PTX type) of `vec` elements of `mem`."""
    bits = elem_bytes(mem) * 8
    total = bits * vec
    if total == 8:
        return 16, 1, "u8"  # a byte travels in a 16-bit register (PTX has no 8-bit ones)
    w = 64 if bits == 64 else min(32, total)
    return w, total // w, f"b{w}"


_CONS = {16: "h", 32: "r", 64: "l"}


def _asm(ctx, text, operands, result, constraints):
    attrs = {"asm_string": ir.StringAttr.get(text),
             "constraints": ir.StringAttr.get(",".join(constraints)),
             "has_side_effects": ir.UnitAttr.get(),
             "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)}
    if result is None:
        ctx.create("llvm.inline_asm", operands, [], attrs)
        return None
    return ctx.op1("llvm.inline_asm", operands, result, attrs)


def _to_words(ctx, vals, mem, vec, w, n):
    """The `vec` values of type `mem` as `n` integers of `w` bits."""
    iw = ir.IntegerType.get_signless(w)
    if vec == 1:
        v = vals[0]
        if elem_bytes(mem) * 8 < w:  # a byte
            return [ctx.op1("arith.extui", [v], iw)]
        return [v if v.type == iw else ctx.op1("llvm.bitcast", [v], iw)]
    vt = ir.VectorType.get([vec], mem)
    acc = ctx.op1("llvm.mlir.poison", [], vt)
    for j, x in enumerate(vals):
        acc = ctx.op1("llvm.insertelement", [acc, x, ctx.const(j)], vt)
    if n == 1:
        return [ctx.op1("llvm.bitcast", [acc], iw)]
    wv = ctx.op1("llvm.bitcast", [acc], ir.VectorType.get([n], iw))
    return [ctx.op1("llvm.extractelement", [wv, ctx.const(j)], iw) for j in range(n)]


def _from_words(ctx, words, mem, vec, w, n):
    """The inverse of `_to_words`: one value of `mem` (vec 1) or a vector<vec x mem>."""
    if vec == 1:
        x = words[0]
        if elem_bytes(mem) * 8 < w:
            return ctx.op1("arith.trunci", [x], mem)
        return x if x.type == mem else ctx.op1("llvm.bitcast", [x], mem)
    vt = ir.VectorType.get([vec], mem)
    if n == 1:
        return ctx.op1("llvm.bitcast", [words[0]], vt)
    iw = ir.IntegerType.get_signless(w)
    wt = ir.VectorType.get([n], iw)
    acc = ctx.op1("llvm.mlir.poison", [], wt)
    for j, x in enumerate(words):
        acc = ctx.op1("llvm.insertelement", [acc, x, ctx.const(j)], wt)
    return ctx.op1("llvm.bitcast", [acc], vt)


def _regs(first, n):
    regs = ", ".join(f"${first + j}" for j in range(n))
    return regs if n == 1 else "{" + regs + "}"


def predicated_load(ctx, p, m, others, mem, vec, volatile):
    """`vec` elements of `mem` at `p` where the i1 `m` holds, else `others` (a list of `vec`
    values of `mem`, or None for zeros): one `@p ld.global`."""
    w, n, ty = _words(mem, vec)
    iw = ir.IntegerType.get_signless(w)
    fill = _to_words(ctx, others, mem, vec, w, n) if others is not None else \
        [ctx.const(0, iw)] * n
    vol = ".volatile" if volatile else ""
    v = f".v{n}" if n > 1 else ""
    text = f"@${n} ld{vol}.global{v}.{ty} {_regs(0, n)}, [${n + 1}];"
    cons = [f"={_CONS[w]}"] * n + ["b", "l"] + [str(j) for j in range(n)]
    rt = iw if n == 1 else ir.Type.parse(f"!llvm.struct<({', '.join([str(iw)] * n)})>")
    r = _asm(ctx, text, [m, p] + fill, rt, cons)
    words = [r] if n == 1 else [
        ctx.op1("llvm.extractvalue", [r], iw, {"position": ir.DenseI64ArrayAttr.get([j])})
        for j in range(n)]
    return _from_words(ctx, words, mem, vec, w, n)


def predicated_store(ctx, p, vals, m, mem, vec):
    """Stores the `vec` values of `mem` at `p` where the i1 `m` holds: one `@p st.global`."""
    w, n, ty = _words(mem, vec)
    words = _to_words(ctx, vals, mem, vec, w, n)
    v = f".v{n}" if n > 1 else ""
    text = f"@$0 st.global{v}.{ty} [$1], {_regs(2, n)};"
    _asm(ctx, text, [m, p] + words, None, ["b", "l"] + [_CONS[w]] * n + ["~{memory}"])


# arith.cmpi predicate -> PTX setp comparison (with its operand kind: s signed, u unsigned)
SETP = {"eq": ("eq", "b"), "ne": ("ne", "b"), "slt": ("lt", "s"), "sle": ("le", "s"),
        "sgt": ("gt", "s"), "sge": ("ge", "s"), "ult": ("lt", "u"), "ule": ("le", "u"),
        "ugt": ("gt", "u"), "uge": ("ge", "u")}


def pinned_compare(ctx, pred, bits, lhs, rhs):
    """The i1 `(x + k) <pred> (y + l)` of `bits`-wide integers, computed where it is emitted
    (one `sideeffect` asm: never hoisted out of a loop); `lhs` = (x, k), `rhs` = (y, l), x or y
    None for a constant side."""
    cmp, kind = SETP[pred]
    ty = f"{kind}{bits}"
    cons = "r" if bits == 32 else "l"
    operands, regs, lines = [], [], []
    for side, (x, k) in enumerate((lhs, rhs)):
        if x is None:
            regs.append(str(k))
            continue
        operands.append(x)
        ref = f"${len(operands)}"
        if k:
            lines.append(f"add.s{bits} %t{side}, {ref}, {k};")
            ref = f"%t{side}"
        regs.append(ref)
    decl = "".join(f".reg .b{bits} %t{side}; " for side in (0, 1)
                   if f"%t{side}" in regs)
    text = f"{{ {decl}{' '.join(lines)}{' ' if lines else ''}setp.{cmp}.{ty} $0, {regs[0]}, " \
           f"{regs[1]}; }}"
    return _asm(ctx, text, operands, ctx.i1, ["=b"] + [cons] * len(operands))
