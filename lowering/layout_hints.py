"""Per-load layouts (Triton's per-access coalescing) for `tilegpu-assign-layouts`.

The assigner gives every rank one default layout, made for the largest tile of that rank.  A
smaller tile in it can hold each element in several threads: the 128x64 A operand of a
128x128 GEMM tile, in the accumulator's 8-per-thread layout, is loaded twice by every thread
pair (16 cp.async per thread where 8 do).  Such a load asks for a layout made for its own
shape, and the values its pointers and mask are computed from (address arithmetic, ranges,
splats, loop-carried pointers) are asked for it too, so the assigner builds the whole chain in
it instead of converting (a pointer carried by a loop could not be converted for free).

A store of a dot's result whose pointers allow only one-element accesses (a base pointer
loaded from memory, an unknown stride) while the default layout gives a thread a longer run
asks for one element a thread along the row: the default's 8 contiguous fp16 a thread, stored
one by one, spread each warp store over 16 sectors; a thread per element puts a warp's 32
stores in 2 (Triton's coalescing does the same).
"""
from __future__ import annotations

import math

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import Blocked, Slice, default_blocked

from .axis_info import AxisAnalysis, defining_op, elem_bytes, vector_width

CONFLICT = "conflict"  # a value asked for two different layouts: the assigner's own choice

# ops that compute each result element from the same element of every operand (one layout)
_ELEMENTWISE = ("tile.addptr", "tile.load", "tile.select")
_ELEMENTWISE_PREFIXES = ("arith.", "math.")


def _elementwise(op) -> bool:
    return (not op.regions and len(op.results) == 1
            and (op.name in _ELEMENTWISE or op.name.startswith(_ELEMENTWISE_PREFIXES)))


def _copies(layout: Blocked, shape, threads: int) -> bool:
    """Whether `layout` puts some element of a `shape` tile in more than one thread."""
    return math.prod(layout.elems_per_thread(shape)) * threads > math.prod(shape)


def _for_iter_arg(v):
    """(the scf.for, its iter_args index) when `v` is a loop-carried block argument."""
    owner = v.owner
    if not isinstance(owner, ir.Block):
        return None
    parent = owner.owner
    parent = parent.operation if hasattr(parent, "operation") else parent
    if parent is None or parent.name != "scf.for":
        return None
    args = list(owner.arguments)
    idx = args.index(v) if v in args else -1
    return (parent, idx - 1) if idx >= 1 else None


def _from_dot(v, depth: int = 8) -> bool:
    """Whether `v` is a tile.dot's result, through elementwise ops (casts, bias adds) and
    the loops that carry it (the accumulator)."""
    op = defining_op(v)
    if op is None or depth == 0:
        return False
    if op.name == "tile.dot":
        return True
    if op.name == "scf.for":
        body = op.regions[0].blocks[0]
        yld = [o.operation for o in body.operations][-1]
        return _from_dot(yld.operands[list(op.results).index(v)], depth - 1)
    return _elementwise(op) and any(T.is_tensor(o.type) and _from_dot(o, depth - 1)
                                    for o in op.operands)


def _narrow_store(an, op, base: Blocked, num_warps: int, warp_size: int):
    """The layout a store of a dot's result asks for when its pointers allow only
    one-element accesses and `base` gives a thread a longer run along the last dimension,
    else None."""
    ptr, val = op.operands[0], op.operands[1]
    shape = T.shape_of(ptr.type)
    if not _from_dot(val) or len(base.order) != len(shape) or base.order[0] != len(shape) - 1:
        return None
    mask = op.operands[2] if len(op.operands) > 2 else None
    elem = T.pointee(T.element_type(ptr.type))
    run = min(base.size_per_thread[-1], shape[-1])
    width = vector_width(an, ptr, mask, len(shape) - 1, max(1, 16 // elem_bytes(elem)))
    if width > 1 or run == 1:
        # (only single elements: a 4-wide int32 store in an int8 GEMM's 16-wide layout wastes
        # half of each sector, but its narrower layout spilled a word at 255 registers)
        return None
    return default_blocked(shape, num_warps, warp_size, width)


def store_run_cap(an, op):
    """The most elements a thread may hold contiguously along the last dimension for store
    `op` (of 4-byte or wider elements, not a dot's result, 16-byte vectors possible) to stay
    coalesced, else None.  A longer run, chosen for a narrower type's 16-byte accesses in the
    same rank (LayerNorm backward's fp16 rows beside its fp32 partial sums: 8 a thread), splits
    each thread's run into several vectors: each warp store then spans twice its bytes and
    half-fills every sector it writes, and stores have no L1 to merge the halves.  The
    narrower type's accesses in the capped layout are 8 bytes a thread: still whole sectors."""
    ptr = op.operands[0]
    shape = T.shape_of(ptr.type)
    if op.name != "tile.store" or not shape or _from_dot(op.operands[1]):
        return None
    nbytes = elem_bytes(T.pointee(T.element_type(ptr.type)))
    mask = op.operands[2] if len(op.operands) > 2 else None
    width = vector_width(an, ptr, mask, len(shape) - 1, max(1, 16 // nbytes))
    if nbytes < 4 or width * nbytes != 16 or shape[-1] <= width:
        return None  # (a row of one vector or less is never split, whatever the default)
    return width


def fastest_blocked(shape, d: int, num_warps: int, warp_size: int, vec: int) -> Blocked:
    """`default_blocked` with dimension `d` fastest (instead of the last), the others after it
    from the last down."""
    rank = len(shape)
    perm = [i for i in range(rank) if i != d] + [d]  # dims of the permuted tile
    lay = default_blocked([shape[p] for p in perm], num_warps, warp_size, vec)
    spt, tpw, wpc = [0] * rank, [0] * rank, [0] * rank
    for i, p in enumerate(perm):
        spt[p], tpw[p], wpc[p] = (lay.size_per_thread[i], lay.threads_per_warp[i],
                                  lay.warps_per_cta[i])
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(perm[o] for o in lay.order))


def _transposed_access(an, op, base: Blocked, num_warps: int, warp_size: int):
    """The layout a load asks for when its pointers run contiguously along another dimension
    than the default's fastest, and wider there (Triton's per-access order): a transposed
    operand (`q_base + offs_d[:, None] + offs_m[None, :] * stride`) loaded one element at a
    time in the default layout.  None otherwise."""
    ptr = op.operands[0]
    shape = T.shape_of(ptr.type)
    mask = op.operands[1] if len(op.operands) > 1 else None
    fast = base.order[0]
    if len(shape) < 2 or len(base.order) != len(shape):
        return None
    elem = T.pointee(T.element_type(ptr.type))
    most = max(1, 16 // elem_bytes(elem))
    widths = [vector_width(an, ptr, mask, d, min(most, shape[d])) for d in range(len(shape))]
    best = max(range(len(shape)), key=lambda d: (widths[d], d == fast))
    if best == fast or widths[best] <= widths[fast]:
        return None
    return fastest_blocked(shape, best, num_warps, warp_size, widths[best])


def access_hints(f, defaults: dict, num_warps: int, warp_size: int) -> dict:
    """value -> the layout it is asked to take (or CONFLICT), for the loads of `f` whose rank
    default would hold their elements in several threads."""
    an = None
    hints: dict = {}
    work: list = []

    def ask(v, layout):
        if not T.is_tensor(v.type):
            return
        old = hints.get(v)
        if old is None:
            hints[v] = layout
            work.append(v)
        elif old != layout:
            hints[v] = CONFLICT

    threads = num_warps * warp_size
    for op in T.walk_ops(f):
        if op.name == "tile.store" and T.is_tensor(op.operands[0].type):
            base = defaults.get(len(T.shape_of(op.operands[0].type)))
            an = an or AxisAnalysis(f)
            own = base and _narrow_store(an, op, base, num_warps, warp_size)
            if own:
                for i, o in enumerate(op.operands):
                    if i != 1:  # the value is converted by the assigner's store rule
                        ask(o, own)
            continue
        if op.name != "tile.load" or not T.is_tensor(op.operands[0].type):
            continue
        ptr = op.operands[0]
        shape = T.shape_of(ptr.type)
        base = defaults.get(len(shape))
        if base is None:
            continue
        an = an or AxisAnalysis(f)
        own = _transposed_access(an, op, base, num_warps, warp_size)
        if own is not None:
            for o in op.operands:
                ask(o, own)
            continue
        if not _copies(base, shape, threads):
            continue
        elem = T.pointee(T.element_type(ptr.type))
        vec = min(an.get(ptr).contiguity[-1], max(1, 16 // elem_bytes(elem)))
        own = default_blocked(shape, num_warps, warp_size, vec)
        if _copies(own, shape, threads) and math.prod(own.elems_per_thread(shape)) >= \
                math.prod(base.elems_per_thread(shape)):
            continue  # (a tile smaller than the program: copies either way)
        for o in op.operands:
            ask(o, own)

    while work:
        v = work.pop()
        layout = hints[v]
        if layout is CONFLICT:
            continue
        it = _for_iter_arg(v)
        if it is not None:
            loop, i = it
            ask(loop.operands[3 + i], layout)
            body = loop.regions[0].blocks[0]
            yld = [o.operation for o in body.operations][-1]
            ask(yld.operands[i], layout)
            continue
        op = defining_op(v)
        if op is None:
            continue
        if op.name == "tile.broadcast":
            ask(op.operands[0], layout)
        elif op.name == "tile.expand_dims":
            ask(op.operands[0], Slice(ir.IntegerAttr(op.attributes["axis"]).value, layout))
        elif _elementwise(op):
            shape = T.shape_of(v.type)
            for o in op.operands:
                if T.is_tensor(o.type) and T.shape_of(o.type) == shape:
                    ask(o, layout)
    return hints
