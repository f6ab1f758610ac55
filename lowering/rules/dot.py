"""`tile.dot` on the portable path: FMAs on CUDA cores / the AMD vector ALUs.

acc + a @ b for a [B?, M, K], b [B?, K, N] (the tensor-core lowering is `rules/dot_mma.py`,
which calls `dot_fma` for dots whose layouts are not its own):

1. a and b go to the shared scratch buffer (whatever their layouts): a transposed, as
   `A[b][k][m]` at `(b*K + k)*M + m`, and b as `B[b][k][n]` at `(b*K + k)*N + n` (16-byte
   aligned after A), in their own element types.  A barrier.
2. Each thread computes its own accumulator elements, in the accumulator's (= the result's)
   layout, with an `scf.for` over k (not unrolled) carrying them as iter args: per k it reads
   the A values of its distinct rows and the B values of its distinct columns (vector loads
   where its rows/columns come in aligned contiguous runs: threads of a warp read neighbouring
   words of one row of A^T / B, so there are no bank conflicts) and does one fma per element.
3. fp16/bf16 inputs multiply and accumulate in fp32 (fp16 results are rounded once at the
   end), fp64 in fp64, int8 in int32 (wrapping); fp8 operands are decoded from their bytes to
   fp32.  fp32 inputs accumulate in fp32; with `input_precision="tf32"` (Triton's default)
   each operand element is first rounded to tf32 (10 explicit mantissa bits, to nearest,
   ties away from zero, as PTX's `cvt.rna.tf32.f32` that cuBLAS and Triton's tf32x3 split
   use), in integer arith so that both targets do the same, once per element as it is
   written to shared memory (`round_tf32`); "ieee", "tf32x3", "bf16x3" and "bf16x6" keep
   full fp32.

tilegpu-insert-barriers places a barrier before the next op that writes these bytes, so the
reads of step 2 finish before they are overwritten.
"""
from __future__ import annotations

import itertools

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects import tile as T
from tilework.dialects.layout import chunk, layout_of

from ..axis_info import elem_bytes
from ..dot_layouts import mma_operands
from ..registry import LoweringError, lower
from .fp8 import f8_to_f32
from ..shared_memory import align, from_smem, scratch, smem_gep, smem_type, to_smem
from .math_approx import call_intrinsic  # (math.fma would become a libdevice/ocml call)
from ..regs import Regs

_SMEM_PTR = "!llvm.ptr<3>"


def _compute_type(ctx, elem: ir.Type) -> ir.Type:
    s = str(elem)
    if s.startswith("i"):
        return ctx.i32
    if s == "f64":
        return elem
    return ir.F32Type.get()


def _extend(ctx, v: ir.Value, ct: ir.Type) -> ir.Value:
    """An operand element in the compute type (sign-extended ints, extended floats)."""
    if v.type == ct:
        return v
    if T.isa(ct, ir.IntegerType):
        return ctx.op1("arith.extsi", [v], ct)
    if str(v.type).startswith("f8"):  # float8 has no LLVM type: decoded from its bits
        return f8_to_f32(ctx, v)
    return ctx.op1("arith.extf", [v], ct)


TF32_DROPPED_BITS = 13  # fp32 has 23 explicit mantissa bits, tf32 10


def round_tf32(ctx, v: ir.Value) -> ir.Value:
    """An fp32 value rounded to the nearest tf32 value, ties away from zero (PTX's
    `cvt.rna.tf32.f32`), kept as fp32: half a tf32 ulp added to the bits (sign-magnitude, so
    the magnitude rounds; a carry moves into the exponent, up to inf above the largest tf32)
    and the low 13 bits cleared.  Infinities come back unchanged; NaN is kept as it is."""
    i32 = ctx.i32
    half, mask = 1 << (TF32_DROPPED_BITS - 1), -(1 << TF32_DROPPED_BITS)  # 0x1000, 0xffffe000
    u = ctx.op1("arith.bitcast", [v], i32)
    r = ctx.op1("arith.andi", [ctx.op1("arith.addi", [u, ctx.const(half)], i32),
                               ctx.const(mask)], i32)
    mag = ctx.op1("arith.andi", [u, ctx.const(0x7FFFFFFF)], i32)
    nan = ctx.op1("arith.cmpi", [mag, ctx.const(0x7F800000)], ctx.i1,
                  {"predicate": ir.IntegerAttr.get(ctx.i64, 8)})  # ugt: NaN
    r = ctx.op1("arith.select", [nan, u, r], i32)
    return ctx.op1("arith.bitcast", [r], v.type)


def _run(layout, shape, dim: int) -> int:
    """How many of a thread's consecutive elements along `dim` hold consecutive logical indices,
    the first one a multiple of that count (from the layout's linear map)."""
    return chunk(layout.linear(shape), dim)


def _offset(ctx, v, off: int):
    return ctx.op1("arith.addi", [v, ctx.const(off)], ctx.i32) if off else v


def _mul(ctx, v, c: int):
    return ctx.op1("arith.muli", [v, ctx.const(c)], ctx.i32) if c != 1 else v


class _Operand:
    """The per-k reads of one operand: for each batch index and each run of the thread's
    rows (A) / columns (B), a pointer to the element at k = 0; per k a (vector) load."""

    def __init__(self, ctx, base, elem, layout, shape, dim, stride_k: int, batch_stride: int):
        self.ctx, self.elem, self.stride_k = ctx, elem, stride_k
        per_thread = layout.elems_per_thread(shape)
        nb = per_thread[0] if len(shape) == 3 else 1
        n = per_thread[dim]
        run = _run(layout, shape, dim)
        self.vec = max(1, min(run, 16 // elem_bytes(elem)))
        while n % self.vec:
            self.vec //= 2
        self.groups = {}  # (batch coord, first coord along dim) -> pointer at k = 0
        for bi in range(nb):
            boff = None
            if len(shape) == 3:
                bl = ctx.logical_index(layout, shape, 0, bi) if shape[0] > 1 else ctx.const(0)
                boff = _mul(ctx, bl, batch_stride)
            for j in range(0, n, self.vec):
                idx = ctx.logical_index(layout, shape, dim, j) if shape[dim] > 1 \
                    else ctx.const(0)
                if boff is not None:
                    idx = ctx.op1("arith.addi", [boff, idx], ctx.i32)
                self.groups[(bi, j)] = smem_gep(ctx, base, idx, elem)

    def load(self, k_off) -> dict:
        """{(batch coord, coord along dim): element} at the row k (`k_off` = k * stride_k)."""
        ctx, out = self.ctx, {}
        vt = ir.VectorType.get([self.vec], self.elem) if self.vec > 1 else self.elem
        attrs = {"alignment": ir.IntegerAttr.get(ctx.i64, elem_bytes(self.elem) * self.vec)}
        for (bi, j), p in self.groups.items():
            q = smem_gep(ctx, p, k_off, self.elem)
            v = ctx.create("llvm.load", [q], [vt], attrs).results[0]
            if self.vec == 1:
                out[(bi, j)] = v
                continue
            for e in range(self.vec):
                out[(bi, j + e)] = ctx.op1("llvm.extractelement", [v, ctx.const(e)], self.elem)
        return out


def _store_operand(ctx, regs, base, elem, strides):
    """Writes every element the thread holds at sum(index_d * strides_d)."""
    for coord in regs.coords():
        idx = ctx.linear_index(regs.layout, regs.shape, coord, strides)
        ctx.create("llvm.store", [regs[coord], smem_gep(ctx, base, idx, elem)], [])


def _operand_bytes(ea, eb, nb, M, N, K):
    """(offset of B, bytes) of A^T then B in shared memory (see the module docstring)."""
    b_off = align(nb * K * M * elem_bytes(ea))
    return b_off, b_off + nb * K * N * elem_bytes(eb)


@scratch("tile.dot")
def _dot_scratch(op):
    if mma_operands(op) is not None:  # tensor cores (rules/dot_mma.py): operands in registers
        return 0
    a, b, c = (op.operands[i].type for i in range(3))
    shape = T.shape_of(c)
    nb = shape[0] if len(shape) == 3 else 1
    ea, eb = (smem_type(T.element_type(t)) for t in (a, b))
    return _operand_bytes(ea, eb, nb, shape[-2], shape[-1], T.shape_of(a)[-1])[1]


@lower("tile.dot")
def dot_fma(ctx, op, args):
    a, b, acc = args
    rt = op.results[0].type
    layout, shape = layout_of(rt), T.shape_of(rt)
    if acc.layout != layout:
        raise LoweringError("tile.dot: the result must have the accumulator's layout; run "
                            "tilegpu-assign-layouts")
    ea, eb, ec = (T.element_type(v.type) for v in op.operands)
    ct = _compute_type(ctx, ea if not str(ea).startswith("f8") else ir.F32Type.get())
    if str(ea) == "f32" and str(eb) == "f32" and \
            ir.StringAttr(op.attributes["input_precision"]).value == "tf32":
        a = a.like([round_tf32(ctx, v) for v in a.values])  # tf32 tensor-core operands
        b = b.like([round_tf32(ctx, v) for v in b.values])
    # float8 has no LLVM type: its bytes go through shared memory
    fa, fb = ea, eb
    ea, eb = (smem_type(t) for t in (fa, fb))
    a = a.like([to_smem(ctx, v, ea) for v in a.values])
    b = b.like([to_smem(ctx, v, eb) for v in b.values])
    rank = len(shape)
    batched = rank == 3
    nb = shape[0] if batched else 1
    M, N, K = shape[-2], shape[-1], a.shape[-1]

    # 1. a (transposed) and b to shared memory
    b_off, nbytes = _operand_bytes(ea, eb, nb, M, N, K)
    base = ctx.smem(nbytes)
    i8 = ir.IntegerType.get_signless(8)
    base_b = smem_gep(ctx, base, ctx.const(b_off), i8)
    ctx.smem_begin()
    _store_operand(ctx, a, base, ea, ([K * M] if batched else []) + [1, M])
    _store_operand(ctx, b, base_b, eb, ([K * N] if batched else []) + [N, 1])
    ctx.smem_publish()

    # 2. the thread's accumulators, over k
    dm, dn = rank - 2, rank - 1
    opa = _Operand(ctx, base, ea, layout, shape, dm, M, K * M)
    opb = _Operand(ctx, base_b, eb, layout, shape, dn, N, K * N)
    per_thread = layout.elems_per_thread(shape)
    coords = list(itertools.product(*[range(n) for n in per_thread]))
    inits = [_extend(ctx, v, ct) for v in acc.values]
    loop = scf.ForOp(ctx.const(0), ctx.const(K), ctx.const(1), inits)
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        av = opa.load(_mul(ctx, k, M))
        bv = opb.load(_mul(ctx, k, N))
        av = {key: _extend(ctx, from_smem(ctx, v, fa), ct) for key, v in av.items()}
        bv = {key: _extend(ctx, from_smem(ctx, v, fb), ct) for key, v in bv.items()}
        new = []
        for c, s in zip(coords, loop.inner_iter_args):
            bi = c[0] if batched else 0
            x, y = av[(bi, c[dm])], bv[(bi, c[dn])]
            if T.isa(ct, ir.IntegerType):
                new.append(ctx.op1("arith.addi", [s, ctx.op1("arith.muli", [x, y], ct)], ct))
            else:
                new.append(call_intrinsic("llvm.fma", [x, y, s], ct))
        scf.YieldOp(new)
    out = list(loop.results)
    if ct != ec:  # fp16 results: rounded once, at the end
        out = [ctx.op1("arith.truncf", [v], ec) for v in out]
    return [Regs(layout, shape, out)]
