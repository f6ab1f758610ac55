"""Lowering rules of the shared-memory ops (`tilegpu.local_*`, `memdesc_index`,
`memdesc_trans`, `async_*`, `barrier`).

A memdesc lowers to a `!llvm.ptr<3>`: the kernel's shared memory plus the offset
tilegpu-allocate-shared gave its local_alloc (plus i * the 16-byte-aligned buffer size for
`memdesc_index`).  Element `coords` of a buffer is at `shared_offset(layout, shape, coords)`
elements from there; each thread stores/loads the elements its register layout gives it (copies
of replicated tiles store the same value).

`async_copy` on NVIDIA sm_80 and later is one `cp.async` per access group of the pointer tile
(`tilegpu.vector_width` elements contiguous in global memory, and in shared memory when the
pointers' fastest dimension is the buffer's last), of 4, 8 or 16 bytes (`.cg` for 16 bytes,
bypassing L1, else `.ca`), with src-size 0 where the mask is false: the bytes are zero-filled.
`async_commit_group` / `async_wait` are `cp.async.commit_group` / `cp.async.wait_group num`.
Narrower groups, an `other` that is not a zero constant, AMD and older NVIDIA GPUs load
synchronously and store (commit and wait are then nothing).
"""
from __future__ import annotations

import itertools
import math
import re

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import Blocked, fastest_dim, layout_of, parse_layout
from tilework.dialects.verify import named_operands

from ..axis_info import elem_bytes
from ..registry import lower
from ..shared_memory import (align, buffer_bytes, from_smem, shared_contiguity, shared_map,
                             shared_offset, smem_gep, smem_type, to_smem)
from .layout import (by_ldmatrix, by_stmatrix, ldmatrix_plan, linear_vec, read_linear,
                     stmatrix_plan, write_linear)
from .memory import load_tile, vector_groups
from ..regs import Regs


def _coords(ctx, regs_layout, shape, coord) -> list:
    """The logical indices (i32) of the thread's element at per-thread `coord`."""
    return [ctx.logical_index(regs_layout, shape, d, k) if shape[d] > 1 else ctx.const(0)
            for d, k in enumerate(coord)]


def _address(ctx, base, md: T.MemDesc, layout, coord):
    st = smem_type(md.elem)
    idx = shared_offset(md.layout, md.shape, _coords(ctx, layout, md.shape, coord), ctx)
    return smem_gep(ctx, base, idx, st)


def _vector(md: T.MemDesc, layout) -> tuple[int, int]:
    """(elements per shared-memory access, their dimension): the thread's longest run along
    one dimension that is contiguous in the buffer too (the layout's fastest dimension on a
    tie), at most 16 bytes (buffers start 16-byte aligned).  A register layout may run along
    another dimension than the buffer (a K-major buffer written from 4x4 blocks)."""
    if not isinstance(layout, Blocked):
        return 1, 0
    best = (1, layout.order[0])
    for fast in layout.order:
        run = min(layout.size_per_thread[fast], md.shape[fast],
                  shared_contiguity(md.layout, md.shape, fast),
                  max(1, 16 // elem_bytes(smem_type(md.elem))))
        vec = 1 << (max(1, run).bit_length() - 1)
        while layout.elems_per_thread(md.shape)[fast] % vec:
            vec //= 2
        if vec > best[0]:
            best = (vec, fast)
    return best


def _access_groups(ctx, layout, md):
    """[(flat indices of one access, its address)] of the thread's elements."""
    vec, dim = _vector(md, layout)
    slots = Regs(layout, md.shape, [None] * math.prod(layout.elems_per_thread(md.shape)))
    coords = list(slots.coords())
    return vec, [(idxs, coords[idxs[0]]) for idxs in vector_groups(slots, vec, dim)]


def _attrs(ctx, st, vec):
    return {"alignment": ir.IntegerAttr.get(ctx.i64, elem_bytes(st) * vec)} if vec > 1 else {}


def store_tile(ctx, regs, base, md: T.MemDesc):
    """Every element the thread holds, to its place in the buffer at `base` (vector stores
    where its elements are contiguous there: found on the linear maps for a layout that is not
    blocked, e.g. a wgmma accumulator's column pairs into a TMA store's nvmma buffer)."""
    st = smem_type(md.elem)
    smap = shared_map(md.layout, md.shape)
    if not isinstance(regs.layout, Blocked) and smap is not None:
        ld = regs.layout.linear(md.shape)
        get = smap.compose(ld)
        vl = linear_vec(get, elem_bytes(st))
        whole = len(regs.values) == 1 << ld.in_bits("register")
        sm = stmatrix_plan(ctx, get, ld, st) if whole else None
        if sm is not None:  # (a wgmma accumulator into a TMA store's buffer: 4x fewer stores)
            by_stmatrix(ctx, base, get, sm, st, [to_smem(ctx, x, st) for x in regs.values])
            return
        if vl > 1 and whole:
            write_linear(ctx, base, get, ld, st, [to_smem(ctx, x, st) for x in regs.values],
                         vl)
            return
    vec, groups = _access_groups(ctx, regs.layout, md)
    vt = ir.VectorType.get([vec], st)
    for idxs, coord in groups:
        vals = [to_smem(ctx, regs.values[i], st) for i in idxs]
        if vec > 1:
            v = ctx.op1("llvm.mlir.poison", [], vt)
            for j, x in enumerate(vals):
                v = ctx.op1("llvm.insertelement", [v, x, ctx.const(j)], vt)
            vals = [v]
        ctx.create("llvm.store", [vals[0], _address(ctx, base, md, regs.layout, coord)], [],
                   _attrs(ctx, st, vec))


def load_buffer(ctx, base, md: T.MemDesc, layout, scalar_type):
    """The tile of `layout` read from the buffer at `base`: by `ldmatrix` where its fragments
    fit the layout (16-bit dot operands from a swizzled buffer, e.g. the pipeliner's), else
    in vector loads of the access groups."""
    st = smem_type(md.elem)
    if ctx.target == "nvidia" and _sm(ctx) >= 75 and str(st) in ("f16", "bf16", "i16") and \
            md.layout.startswith("#tilegpu.swizzled_shared<"):
        sw = parse_layout(md.layout).swizzle()
        ld = layout.linear(md.shape)
        lm = ldmatrix_plan(ld, sw, 2)
        if lm is not None:
            get = sw.offset_map(md.shape).compose(ld)
            return Regs(layout, md.shape, by_ldmatrix(ctx, base, get, ld, lm, st, scalar_type))
    vec, groups = _access_groups(ctx, layout, md)
    out = Regs(layout, md.shape, [None] * math.prod(layout.elems_per_thread(md.shape)))
    for idxs, coord in groups:
        p = _address(ctx, base, md, layout, coord)
        if vec == 1:
            vals = [ctx.op1("llvm.load", [p], st)]
        else:
            v = ctx.create("llvm.load", [p], [ir.VectorType.get([vec], st)],
                           _attrs(ctx, st, vec)).results[0]
            vals = [ctx.op1("llvm.extractelement", [v, ctx.const(j)], st) for j in range(vec)]
        for i, x in zip(idxs, vals):
            out.values[i] = from_smem(ctx, x, scalar_type)
    return out


def proxy_fence_after(ctx, op):
    """`fence.proxy.async.shared::cta` after the op's generic writes, where
    tilegpu-proxy-fences asked for it (a wgmma reads the bytes)."""
    if "tilegpu.proxy_fence" in op.attributes:
        ctx.create("nvvm.fence.proxy", [], [], {
            "kind": ir.Attribute.parse("#nvvm.proxy_kind<async.shared>"),
            "space": ir.Attribute.parse("#nvvm.shared_space<cta>")})


@lower("tilegpu.local_alloc")
def _local_alloc(ctx, op, args):
    base = ctx.smem_at(op)
    if args:
        store_tile(ctx, args[0], base, T.memdesc_of(op.results[0].type))
        proxy_fence_after(ctx, op)
    return [base]


@lower("tilegpu.local_store")
def _local_store(ctx, op, args):
    store_tile(ctx, args[0], args[1], T.memdesc_of(op.operands[1].type))
    proxy_fence_after(ctx, op)
    return []


@lower("tilegpu.local_load")
def _local_load(ctx, op, args):
    rt = op.results[0].type
    return [load_buffer(ctx, args[0], T.memdesc_of(op.operands[0].type), layout_of(rt),
                        ctx.scalar_type(rt))]


@lower("tilegpu.local_load", target="amd")
def _local_load_amd(ctx, op, args):
    """Into a layout given by its linear map (MFMA/WMMA operands, the stream pipeliner's
    reads) from a swizzled buffer: the map's consecutive registers in vector loads
    (`ds_read_b64`/`_b128`), else as the generic rule."""
    rt = op.results[0].type
    md, layout = T.memdesc_of(op.operands[0].type), layout_of(rt)
    if isinstance(layout, Blocked) or not md.layout.startswith("#tilegpu.swizzled_shared<"):
        return _local_load(ctx, op, args)
    st = smem_type(md.elem)
    ld = layout.linear(md.shape)
    get = parse_layout(md.layout).swizzle().offset_map(md.shape).compose(ld)
    vals = read_linear(ctx, args[0], get, ld, st, ctx.scalar_type(rt),
                       linear_vec(get, elem_bytes(st)))
    return [Regs(layout, md.shape, vals)]


@lower("tilegpu.local_dealloc")
def _local_dealloc(ctx, op, args):
    return []  # the allocation pass already ended the buffer's life here


@lower("tilegpu.memdesc_index")
def _memdesc_index(ctx, op, args):
    base, i = args
    stride = align(buffer_bytes(T.memdesc_of(op.operands[0].type)))
    off = ctx.op1("arith.muli", [i, ctx.const(stride)], ctx.i32)
    return [smem_gep(ctx, base, off, ir.IntegerType.get_signless(8))]


@lower("tilegpu.memdesc_trans")
def _memdesc_trans(ctx, op, args):
    return [args[0]]  # the same bytes: the result's layout addresses them transposed


@lower("tilegpu.barrier")
def _barrier(ctx, op, args):
    ctx.barrier_pending = True  # emitted before the next op's first shared-memory access
    return []


# ---- asynchronous copies -----------------------------------------------------------------------

def _sm(ctx) -> int:
    m = re.match(r"sm_(\d+)", ctx.arch or "")
    return int(m.group(1)) if m else 0


def _uses_cp_async(ctx) -> bool:
    return ctx.target == "nvidia" and _sm(ctx) >= 80


def _is_zero(v: ir.Value | None) -> bool:
    """`v` is absent or a constant (splat) zero."""
    if v is None:
        return True
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return False
    attr = owner.attributes["value"]
    try:
        attr = ir.DenseElementsAttr(attr)
        if not attr.is_splat:
            return False
        attr = attr.get_splat_value()
    except (ValueError, TypeError):
        pass
    try:
        return ir.FloatAttr(attr).value == 0.0 and not str(attr).startswith("-")
    except (ValueError, TypeError):
        return ir.IntegerAttr(attr).value == 0


def _groups(ptr_t, md: T.MemDesc, vec: int):
    """The access width in elements (contiguous in global and in shared memory)."""
    fast, _ = fastest_dim(layout_of(ptr_t))
    if fast is None or shared_contiguity(md.layout, md.shape, fast) < vec:
        return 1
    return vec


def register_offsets(layout, md: T.MemDesc):
    """For a blocked layout whose tile fits the buffer's shape (no wrap, no broadcast) and a
    swizzled buffer: a function from the thread's per-dim element coord to the constant
    element offset of that element from its first one, when the register bits of the index
    land on offset bits no thread bit (lane, warp) touches (the swizzle's XOR is then an add);
    else None.  (The copies of one thread then share one address: Triton's [addr + imm].)"""
    if not isinstance(layout, Blocked):
        return None
    lin = shared_map(md.layout, md.shape)
    if lin is None:
        return None
    spt, tpw, wpc = layout.size_per_thread, layout.threads_per_warp, layout.warps_per_cta
    tile = [a * b * c for a, b, c in zip(spt, tpw, wpc)]
    if any(t > n for t, n in zip(tile, md.shape)):
        return None

    def off(d, v):  # the offset map of coordinate value v along dim d (XOR of its bits)
        basis = lin.basis(f"dim{d}")
        o = 0
        for b in range(v.bit_length()):
            if v >> b & 1:
                o ^= basis[b][0]
        return o
    thread = 0
    for d in range(len(tile)):
        for b in range((spt[d]).bit_length() - 1, (tile[d]).bit_length() - 1):
            thread |= off(d, 1 << b)

    def delta(coord):
        o = 0
        for d, k in enumerate(coord):
            o ^= off(d, (k // spt[d]) * tile[d] + k % spt[d])
        if o & thread:
            raise _NotConstant
        return o
    try:  # every coordinate of the thread must qualify
        for coord in itertools.product(*[range(n) for n in layout.elems_per_thread(md.shape)]):
            delta(coord)
    except _NotConstant:
        return None
    return delta


class _NotConstant(Exception):
    pass


@lower("tilegpu.async_copy")
def _async_copy(ctx, op, args):
    names = named_operands(op)
    lowered = dict(zip([k for k, v in names.items() if v is not None], args))
    ptr, dst, mask = lowered["ptr"], lowered["dst"], lowered.get("mask")
    md = T.memdesc_of(names["dst"].type)
    elem = md.elem
    vec = ir.IntegerAttr(op.attributes["tilegpu.vector_width"]).value \
        if "tilegpu.vector_width" in op.attributes else 1
    vec = _groups(names["ptr"].type, md, vec)
    nbytes = vec * elem_bytes(elem)
    if not (_uses_cp_async(ctx) and nbytes in (4, 8, 16) and _is_zero(names["other"])
            and smem_type(elem) == elem):
        # synchronous: a load as tile.load does it, then the stores
        tile = load_tile(ctx, op, ptr, mask, lowered.get("other"))
        store_tile(ctx, tile, dst, md)
        return []
    size = ctx.const(nbytes)
    coords = list(ptr.coords())
    deltas = register_offsets(ptr.layout, md)
    d0 = None
    for idxs in vector_groups(ptr, vec):
        coord = coords[idxs[0]]
        if deltas is None:
            d = _address(ctx, dst, md, ptr.layout, coord)
        else:  # the thread's first element's address plus a constant
            if d0 is None:
                d0 = _address(ctx, dst, md, ptr.layout, (0,) * len(coord))
            delta = deltas(coord)
            d = d0 if not delta else smem_gep(ctx, d0, ctx.const(delta), smem_type(elem))
        attrs = {"size": ir.IntegerAttr.get(ctx.i32, nbytes),
                 "modifier": ir.Attribute.parse(
                     f"#nvvm<load_cache_modifier {'cg' if nbytes == 16 else 'ca'}>")}
        operands = [d, ptr.values[idxs[0]]]
        if mask is not None:  # src-size 0: nothing read, the bytes zero-filled
            operands.append(ctx.op1("arith.select", [mask.values[idxs[0]], size, ctx.const(0)],
                                    ctx.i32))
        ctx.create("nvvm.cp.async.shared.global", operands, [], attrs)
    return []


@lower("tilegpu.async_commit_group")
def _commit(ctx, op, args):
    if _uses_cp_async(ctx):
        ctx.create("nvvm.cp.async.commit.group", [], [])
    return []


@lower("tilegpu.async_wait")
def _wait(ctx, op, args):
    if _uses_cp_async(ctx):
        ctx.create("nvvm.cp.async.wait.group", [], [], {
            "n": ir.IntegerAttr.get(ctx.i32, ir.IntegerAttr(op.attributes["num"]).value)})
    proxy_fence_after(ctx, op)  # (the copies it completed; synchronous ones stored at issue)
    return []
