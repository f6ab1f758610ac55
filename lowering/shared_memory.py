"""Shared memory: how values are kept there, how big each op's scratch is, where elements go.

Everything the lowering keeps in shared memory lives in the kernel's one dynamic buffer
(`SMEM_SYMBOL`).  `tilegpu-allocate-shared` (`smem_alloc.py`) gives every user a byte offset
in it (`tilegpu.smem_offset`): explicit buffers (`tilegpu.local_alloc`) and the scratch of ops
that move data between threads through shared memory.  Such an op's scratch size is a function
registered here next to its rule (`@scratch("tile.reduce")`), which the rule's own layout of
its scratch also uses, so the pass and the rule cannot disagree; `ctx.smem(nbytes)` in a rule
is the buffer's base plus the op's offset (and checks `nbytes` against the registered size).
"""
from __future__ import annotations

import functools
import math

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import parse_layout

from .axis_info import elem_bytes

SMEM_SYMBOL = "tilework_smem"
SMEM_PTR = "!llvm.ptr<3>"
OFFSET_ATTR = "tilegpu.smem_offset"  # on local_alloc and on every op with scratch
SHARED_ATTR = "tilegpu.shared"       # on the module: the dynamic shared memory to launch with
ALIGN = 16                           # every buffer starts 16-byte aligned (vector accesses)


def align(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


# ---- how an element is kept in shared memory ---------------------------------------------------

def smem_type(t: ir.Type) -> ir.Type:
    """How an element of type `t` is kept in shared memory: booleans and float8 as bytes,
    pointers (`!llvm.ptr` or `!tile.ptr`) as i64."""
    s = str(t)
    if s == "i1" or s.startswith("f8"):  # float8 has no LLVM type: its byte
        return ir.IntegerType.get_signless(8)
    if s.startswith("!llvm.ptr") or s.startswith("!tile.ptr"):
        return ir.IntegerType.get_signless(64)
    return t


def to_smem(ctx, v, st):
    """`v` as its shared-memory type `st` (see `smem_type`)."""
    t = v.type
    if t == st:
        return v
    if str(t) == "i1":
        return ctx.op1("arith.extui", [v], st)
    if str(t).startswith("f8"):
        return ctx.op1("arith.bitcast", [v], st)
    return ctx.op1("llvm.ptrtoint", [v], st)


def from_smem(ctx, v, t):
    """The inverse of `to_smem`: a value read from shared memory, as type `t`."""
    if v.type == t:
        return v
    if str(t) == "i1":
        return ctx.op1("arith.trunci", [v], t)
    if str(t).startswith("f8"):
        return ctx.op1("arith.bitcast", [v], t)
    return ctx.op1("llvm.inttoptr", [v], t)


def smem_gep(ctx, base, index, elem):
    """&base[index] for elements of type `elem` (`index` an i32 value)."""
    return ctx.op1("llvm.getelementptr", [base, index], ir.Type.parse(SMEM_PTR), {
        "rawConstantIndices": ir.DenseI32ArrayAttr.get([-2147483648]),
        "elem_type": ir.TypeAttr.get(elem)})


def smem_offset_ptr(ctx, base, nbytes: int):
    """base + nbytes (a constant byte offset)."""
    if not nbytes:
        return base
    return ctx.op1("llvm.getelementptr", [base], ir.Type.parse(SMEM_PTR), {
        "rawConstantIndices": ir.DenseI32ArrayAttr.get([int(nbytes)]),
        "elem_type": ir.TypeAttr.get(ir.IntegerType.get_signless(8))})


# ---- sizes -------------------------------------------------------------------------------------

def elems_bytes(n: int, t: ir.Type) -> int:
    """Bytes of `n` elements of type `t` kept in shared memory."""
    return int(n) * elem_bytes(smem_type(t))


def regions(sizes) -> tuple[list[int], int]:
    """Consecutive regions of `sizes` bytes, each starting 16-byte aligned: (offsets, end)."""
    offsets, off = [], 0
    for n in sizes:
        offsets.append(off)
        off = align(off + n)
    return offsets, off


SCRATCH: dict = {}


def scratch(*op_names: str):
    """Registers fn(op) -> bytes of shared scratch the rule of `op_names` uses (0: none)."""
    def deco(fn):
        for name in op_names:
            SCRATCH[name] = fn
        return fn
    return deco


def scratch_bytes(op: ir.Operation) -> int:
    fn = SCRATCH.get(op.name)
    return int(fn(op)) if fn is not None else 0


# ---- explicit buffers (memdesc) ----------------------------------------------------------------

def buffer_bytes(md: T.MemDesc) -> int:
    """Bytes of one buffer of a memdesc."""
    return elems_bytes(math.prod(md.shape), md.elem)


# on a tilegpu.warpgroup_dot, a fact tilegpu-pipeline records: its operands are ring slots
# that only cp.async writes
CP_ASYNC_OPERANDS = "tilegpu.cp_async_operands"
# on a tilegpu.warpgroup_dot, tilegpu-proxy-fences' decision for such a dot with
# CompileOptions.wgmma_cp_async_fence off: no fence.proxy.async for its operands (its rule
# emits none, and its copies' waits are not fenced)
NO_PROXY_FENCE = "tilegpu.no_proxy_fence"

NVMMA_ALIGN = 1024  # nvmma_shared buffers: the 128-byte swizzle repeats every 8 rows (1 KiB)


def buffer_align(md: T.MemDesc) -> int:
    """The alignment a buffer's start needs: the hardware (wgmma descriptors, TMA) swizzles
    nvmma_shared buffers on address bits, so they start where the pattern does."""
    return NVMMA_ALIGN if md.layout.startswith("#tilegpu.nvmma_shared<") else ALIGN


def alloc_bytes(md: T.MemDesc) -> int:
    """Bytes of all buffers of a local_alloc; each buffer starts 16-byte aligned."""
    return align(buffer_bytes(md)) * (md.buffers - 1) + buffer_bytes(md)


def shared_map(memdesc_layout: str, shape):
    """coords -> element offset (a linear map, in dims `dim<i>`, out dim `offset`) of a buffer
    of `shape` in a `#tilegpu.swizzled_shared`/`#tilegpu.nvmma_shared` layout (the inverse
    of the encoding's offset -> element map); None for any other layout (row-major)."""
    if not memdesc_layout.startswith(("#tilegpu.swizzled_shared<", "#tilegpu.nvmma_shared<")):
        return None
    return _offset_maps(memdesc_layout, tuple(shape))


@functools.lru_cache(maxsize=256)
def _offset_maps(memdesc_layout: str, shape):
    return parse_layout(memdesc_layout).linear(shape).invert()


def _offset_bits(lin, dim: int) -> list:
    """[(bit of coordinate `dim`, bit of the offset)] the map sets, one pair per set bit."""
    return [(b, o) for b, (v,) in enumerate(lin.basis(f"dim{dim}"))
            for o in range(v.bit_length()) if v >> o & 1]


def shared_contiguity(memdesc_layout: str, shape, dim: int) -> int:
    """How many elements consecutive along `dim` are consecutive in memory (aligned groups),
    which bounds vector accesses.  Row-major: the last dimension, whole.  Swizzled: the low
    bits of `dim` that are the offset's low bits, which no other bit touches."""
    lin = shared_map(memdesc_layout, shape)
    if lin is None:
        return shape[dim] if all(n == 1 for n in shape[dim + 1:]) else 1
    k = 0
    while k < len(lin.basis(f"dim{dim}")) and lin.basis(f"dim{dim}")[k] == (1 << k,):
        k += 1
    others = [o for d in range(len(shape)) for b, o in _offset_bits(lin, d)
              if d != dim or b >= k]
    while k and any(o < k for o in others):
        k -= 1
    return 1 << k


def shared_offset(memdesc_layout: str, shape, coords, ctx):
    """The element index (i32) of the element at logical `coords` (i32 values, one per
    dimension, in range) in a buffer of `shape` with shared layout `memdesc_layout`
    (attribute text): row-major, or the swizzled layout's linear map (`shared_map`)."""
    lin = shared_map(memdesc_layout, shape)
    if lin is not None:
        return _swizzled_offset(lin, shape, coords, ctx)
    v, stride = None, 1
    for d in reversed(range(len(shape))):
        if shape[d] != 1:
            term = coords[d] if stride == 1 else ctx.op1(
                "arith.muli", [coords[d], ctx.const(stride)], ctx.i32)
            v = term if v is None else ctx.op1("arith.addi", [term, v], ctx.i32)
        stride *= shape[d]
    return v if v is not None else ctx.const(0)


def _swizzled_offset(lin, shape, coords, ctx):
    """XOR over the coordinates' bits of their offset bits: each run of consecutive coordinate
    bits landing on consecutive offset bits is one and/shift; terms join with addi where
    their offset bits are disjoint from those before, else xori (the swizzle)."""
    acc, seen = None, 0
    for d in range(len(shape)):
        runs = []
        for b, o in sorted(_offset_bits(lin, d), key=lambda p: (p[1] - p[0], p[0])):
            if runs and runs[-1][0] + runs[-1][2] == b and runs[-1][1] + runs[-1][2] == o:
                runs[-1][2] += 1
            else:
                runs.append([b, o, 1])
        nbits = len(lin.basis(f"dim{d}"))
        for b, o, n in runs:
            x = coords[d]
            if b or b + n < nbits:  # bits of the coordinate outside the run: clear them
                x = ctx.op1("arith.andi", [x, ctx.const(((1 << n) - 1) << b)], ctx.i32)
            if o > b:
                x = ctx.op1("arith.shli", [x, ctx.const(o - b)], ctx.i32)
            elif o < b:
                x = ctx.op1("arith.shrui", [x, ctx.const(b - o)], ctx.i32)
            mask = ((1 << n) - 1) << o
            acc = x if acc is None else ctx.op1("arith.addi" if not seen & mask else
                                                "arith.xori", [acc, x], ctx.i32)
            seen |= mask
    return acc if acc is not None else ctx.const(0)
