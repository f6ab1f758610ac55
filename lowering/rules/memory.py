"""Pointers and global memory: addptr, load, store.

A load/store moves `tilegpu.vector_width` contiguous elements per access (set by the
`tilegpu-vector-width` pass), so a thread owning 4 contiguous fp32 issues one 16-byte access.
A masked access is predicated on the first element's mask bit, which the vector width
guarantees is uniform over the group; `other` fills masked-off elements.  On NVIDIA the
instruction itself is predicated (`memory_ptx.py`: no basic block per access, as Triton); other
targets branch around it (`scf.if`), except AMD buffer accesses with `buffer_ops`
(`memory_amd.py`: a masked-off offset past the buffer's end).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects import tile as T
from tilework.dialects.layout import fastest_dim
from tilework.dialects.verify import named_operands

from ..axis_info import elem_bytes
from ..registry import lower
from ..regs import Regs
from .memory_amd import buffer_load, buffer_plan, buffer_store, element_offset, resource
from .memory_ptx import pinned_compare, predicated_load, predicated_store

_DYNAMIC_INDEX = -2147483648  # GEP marker: the index is an SSA operand


def _gep(ctx, base, offset, elem_type):
    return ctx.op1("llvm.getelementptr", [base, offset], ctx.gptr, {
        "rawConstantIndices": ir.DenseI32ArrayAttr.get([_DYNAMIC_INDEX]),
        "elem_type": ir.TypeAttr.get(elem_type),
    })


_BYTE_TYPES = ("i1", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ")


def _mem_type(t: ir.Type) -> ir.Type:
    """How an element type is stored: booleans take a byte; float8 values are moved as bytes
    (`arith.bitcast` i8 <-> f8 at the boundary, so no f8 type reaches an LLVM memory op)."""
    return ir.IntegerType.get_signless(8) if str(t) in _BYTE_TYPES else t


def _is_f8(t: ir.Type) -> bool:
    return str(t) in _BYTE_TYPES[1:]


@lower("tile.addptr")
def _addptr(ctx, op, args):
    elem = _mem_type(T.pointee(T.element_type(op.operands[0].type)))
    p, o = args
    if not isinstance(p, Regs):
        return [_gep(ctx, p, o, elem)]
    gep = _tile_gep if ctx.target in CONSTANT_GEPS else _gep
    return [p.like([gep(ctx, a, b, elem) for a, b in zip(p.values, o.values)])]


# targets whose tiles' addresses are one variable GEP and constant GEPs (not AMD: there it
# made gfx1201's softmax_prefetch spill to scratch; its compile time is not measured yet)
CONSTANT_GEPS = {"nvidia"}


def _int_const(v):
    """The value of `v` if an arith.constant integer defines it, else None."""
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant" or \
            not T.isa(v.type, ir.IntegerType):
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _split_const(ctx, v, depth=0):
    """(x, k) with v = x + k, k an int constant found through nested arith.addi (x None: v is
    k), or None.  A tile's offsets are a thread part plus one constant per element, so the
    elements' addresses become one variable GEP and constant GEPs from it: LLVM's straight-line
    strength reduction is quadratic in variable-index GEPs of one block (the NVPTX pipeline
    runs it: 4.3 s of a 128K-element vector add's 7.6 s)."""
    k = _int_const(v)
    if k is not None:
        return None, k
    owner = v.owner
    if depth > 3 or isinstance(owner, ir.Block) or owner.name != "arith.addi":
        return None
    a, b = owner.operands
    for x, y in ((a, b), (b, a)):
        sy = _split_const(ctx, y, depth + 1)
        if sy is None:
            continue
        base, k = sy
        if base is None:
            return x, k
        return _cached(ctx, ("addi", x, base), lambda: ctx.op1("arith.addi", [x, base], v.type)), k
    return None


def _cached(ctx, key, make):
    """make() once per key in the current block (a value is reused only where it dominates)."""
    block = ir.InsertionPoint.current.block
    hit = ctx._cache.get(key)
    if hit is not None and hit.owner.operation.block == block:
        return hit
    ctx._cache[key] = val = make()
    return val


def _tile_gep(ctx, base, offset, elem):
    """base + offset as a GEP by a shared variable part and a constant element offset (i32
    offsets that overflow in `x + k` wrap either way: their addresses are meaningless)."""
    split = _split_const(ctx, offset)
    if split is None or split[0] is None or split[1] == 0 or not -2**31 < split[1] < 2**31:
        owner = offset.owner
        if not isinstance(owner, ir.Block) and owner.name == "arith.addi":  # (for reuse)
            _cached(ctx, ("addi", *owner.operands), lambda: offset)
        return _cached(ctx, ("gep", base, offset, str(elem)), lambda: _gep(ctx, base, offset, elem))
    x, k = split
    g = _cached(ctx, ("gep", base, x, str(elem)), lambda: _gep(ctx, base, x, elem))
    return ctx.op1("llvm.getelementptr", [g], ctx.gptr, {
        "rawConstantIndices": ir.DenseI32ArrayAttr.get([k]),
        "elem_type": ir.TypeAttr.get(elem)})


def vector_groups(regs, vec, dim=None):
    """Per-thread coordinates of the first element of each access, with the group's flat
    indices; groups run along `dim`, by default the layout's fastest dimension."""
    fast = dim if dim is not None else fastest_dim(regs.layout)[0] if vec > 1 else 0
    for c in regs.coords():
        if c[fast] % vec:
            continue
        idxs = []
        for j in range(vec):
            cc = list(c)
            cc[fast] += j
            idxs.append(regs.flat(tuple(cc)))
        yield idxs


def _vec_type(elem, vec):
    return elem if vec == 1 else ir.VectorType.get([vec], elem)


def _extract(ctx, v, elem, vec):
    if vec == 1:
        return [v]
    return [ctx.op1("llvm.extractelement", [v, ctx.const(j)], elem) for j in range(vec)]


def _pack(ctx, values, elem, vec):
    if vec == 1:
        return values[0]
    vt = ir.VectorType.get([vec], elem)
    acc = ctx.op1("llvm.mlir.poison", [], vt)
    for j, x in enumerate(values):
        acc = ctx.op1("llvm.insertelement", [acc, x, ctx.const(j)], vt)
    return acc


def _to_mem(ctx, v, elem, mem):
    if _is_f8(elem):
        return ctx.op1("arith.bitcast", [v], mem)
    return v if elem == mem else ctx.op1("arith.extui", [v], mem)


def _from_mem(ctx, v, elem, mem):
    if elem == mem:
        return v
    if _is_f8(elem):
        return ctx.op1("arith.bitcast", [v], elem)
    return ctx.op1("arith.cmpi", [v, ctx.const(0, mem)], elem,
                   {"predicate": ir.IntegerAttr.get(ctx.i64, 1)})  # ne


def _width(op) -> int:
    if "tilegpu.vector_width" in op.attributes:
        return ir.IntegerAttr(op.attributes["tilegpu.vector_width"]).value
    return 1


def _load_attrs(nbytes, op):
    attrs = {"alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), nbytes)}
    if "volatile" in op.attributes:
        attrs["volatile_"] = ir.UnitAttr.get()
    return attrs


@lower("tile.load")
def _load(ctx, op, args):
    names = named_operands(op)
    lowered = dict(zip([k for k, v in names.items() if v is not None], args))
    return [load_tile(ctx, op, lowered["ptr"], lowered.get("mask"), lowered.get("other"))]


def load_tile(ctx, op, ptr, mask, other):
    """The lowered tile (or scalar) loaded at `ptr` where `mask`, else `other`; `op` (whose
    first operand is the pointer) gives the access width (`tilegpu.vector_width`)."""
    elem = T.pointee(T.element_type(op.operands[0].type))
    mem = _mem_type(elem)
    if _is_f8(elem):  # moved as bytes (other included); bitcast to f8 after extraction
        if other is not None:
            other = other.like([_to_mem(ctx, o, elem, mem) for o in other.values]) \
                if isinstance(other, Regs) else _to_mem(ctx, other, elem, mem)
        out = _load_elems(ctx, op, mem, (ptr, mask, other))
        return out.like([_from_mem(ctx, x, elem, mem) for x in out.values]) \
            if isinstance(out, Regs) else _from_mem(ctx, out, elem, mem)
    return _load_elems(ctx, op, elem, (ptr, mask, other))


def _load_elems(ctx, op, elem, operands):
    ptr, mask, other = operands
    mem = _mem_type(elem)
    if not isinstance(ptr, Regs):
        return _guarded_load(ctx, op, ptr, mask, other, elem, mem, 1)
    vec = _width(op)
    out = [None] * len(ptr.values)
    groups = list(vector_groups(ptr, vec))
    pin = _pin_plan(ctx, [mask.values[g[0]] for g in groups]) if mask is not None else None
    buf = buffer_plan(ctx, op) if mask is not None else None  # AMD: buffer loads, no branch
    rsrc = resource(ctx, buf[0]) if buf else None
    for idxs in groups:
        m = mask.values[idxs[0]] if mask is not None else None
        o = [other.values[i] for i in idxs] if other is not None else None
        off = element_offset(ctx, ptr.values[idxs[0]], buf) if buf else None
        if off is not None:
            v = _from_mem_vec(ctx, buffer_load(ctx, rsrc, off, m, None if o is None else [
                _to_mem(ctx, x, elem, mem) for x in o], mem, vec), elem, mem, vec)
            for i, x in zip(idxs, _extract(ctx, v, elem, vec)):
                out[i] = x
            continue
        v = _guarded_load(ctx, op, ptr.values[idxs[0]], pin(m) if pin else m, o, elem, mem,
                          vec)
        for i, x in zip(idxs, _extract(ctx, v, elem, vec) if vec > 1 else [v]):
            out[i] = x
    return ptr.like(out)


def _from_mem_vec(ctx, v, elem, mem, vec):
    """`vec` loaded memory values (one value or a vector) as `elem`."""
    if elem == mem:
        return v
    if vec == 1:
        return _from_mem(ctx, v, elem, mem)
    return _pack(ctx, [_from_mem(ctx, x, elem, mem) for x in _extract(ctx, v, mem, vec)],
                 elem, vec)


def _guarded_load(ctx, op, p, m, other, elem, mem, vec):
    """Loads `vec` elements at `p` (one vector access); where `m` is false, `other`."""
    vt_mem = _vec_type(mem, vec)
    vt = _vec_type(elem, vec)
    nbytes = elem_bytes(mem) * vec

    def load():
        v = ctx.op1("llvm.load", [p], vt_mem, _load_attrs(nbytes, op))
        if elem == mem:
            return v
        if vec == 1:
            return _from_mem(ctx, v, elem, mem)
        vals = [_from_mem(ctx, x, elem, mem) for x in _extract(ctx, v, mem, vec)]
        return _pack(ctx, vals, elem, vec)

    if m is None:
        return load()
    if ctx.target in PREDICATED:
        others = None if other is None else \
            [_to_mem(ctx, o, elem, mem) for o in (other if isinstance(other, list) else [other])]
        v = PREDICATED[ctx.target][0](ctx, p, m, others, mem, vec, "volatile" in op.attributes)
        if elem == mem:
            return v
        if vec == 1:
            return _from_mem(ctx, v, elem, mem)
        return _pack(ctx, [_from_mem(ctx, x, elem, mem) for x in _extract(ctx, v, mem, vec)],
                     elem, vec)
    if_op = scf.IfOp(m, [vt], has_else=True)
    with ir.InsertionPoint(if_op.then_block):
        scf.YieldOp([load()])
    with ir.InsertionPoint(if_op.else_block):
        if other is None:
            fill = _zero(ctx, vt)
        else:
            fill = _pack(ctx, other if isinstance(other, list) else [other], elem, vec)
        scf.YieldOp([fill])
    return if_op.results[0]


# backend -> (predicated load, predicated store, compare pinned in place); others branch
# around the access
PREDICATED = {"nvidia": (predicated_load, predicated_store, pinned_compare)}
_LOOPS = ("scf.for", "scf.while")
_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")  # by number


def _pin_plan(ctx, bits):
    """For the mask bits of one tile op's accesses (NVIDIA): a function giving an access its
    bit compared again in place (`pinned_compare`), where every bit is an integer compare
    made outside a loop around the access and their operands are fewer values than the bits
    (softmax_prefetch: the thread part and the bound for 8 bits), so fewer values stay live
    across the loop (`memory_ptx.py` says why); None where that does not hold."""
    if ctx.target not in PREDICATED:
        return None
    plans = {}
    for m in bits:
        if m not in plans:
            plans[m] = _compare_of(ctx, m)
            if plans[m] is None:
                return None
    operands = {x for _, _, sides in plans.values() for x, _ in sides if x is not None}
    if not plans or len(operands) >= len(plans):
        return None
    return lambda m: PREDICATED[ctx.target][2](ctx, plans[m][0], plans[m][1], *plans[m][2])


def _compare_of(ctx, m):
    """(predicate, width, ((x, k), (y, l))) where the i1 `m` is `x + k <predicate> y + l` of
    32- or 64-bit integers compared outside a loop around the insertion point; else None."""
    owner = m.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.cmpi" or \
            not _in_loop_after(owner):
        return None
    a, b = owner.operands
    bits = ir.IntegerType(a.type).width if T.isa(a.type, ir.IntegerType) else 0
    if bits not in (32, 64):
        return None
    sides = []
    for v in (a, b):
        split = _split_const(ctx, v)
        x, k = split if split is not None else (v, 0)
        if not -2**31 <= k < 2**31:
            return None
        sides.append((x, k))
    if sides[0][0] is None and sides[1][0] is None:
        return None
    return _CMPI[ir.IntegerAttr(owner.attributes["predicate"]).value], bits, tuple(sides)


def _in_loop_after(def_op) -> bool:
    """Whether a loop lies between the insertion point and the block defining `def_op`."""
    target = def_op.operation.block
    block, crossed = ir.InsertionPoint.current.block, False
    while block != target:
        parent = block.owner
        if parent is None:
            return False
        parent = parent.operation
        if parent.name not in _LOOPS and parent.name.endswith("func"):
            return False
        crossed |= parent.name in _LOOPS
        block = parent.block
    return crossed


def _zero(ctx, t):
    if isinstance(t, ir.VectorType) or T.isa(t, ir.VectorType):
        e = ir.VectorType(t).element_type
        z = ir.FloatAttr.get(e, 0.0) if not T.isa(e, ir.IntegerType) else ir.IntegerAttr.get(e, 0)
        return ctx.op1("arith.constant", [], t, {"value": ir.DenseElementsAttr.get_splat(t, z)})
    if T.isa(t, ir.IntegerType):
        return ctx.op1("arith.constant", [], t, {"value": ir.IntegerAttr.get(t, 0)})
    return ctx.op1("arith.constant", [], t, {"value": ir.FloatAttr.get(t, 0.0)})


@lower("tile.store")
def _store(ctx, op, args):
    names = named_operands(op)
    lowered = dict(zip([k for k, v in names.items() if v is not None], args))
    ptr, val, mask = lowered["ptr"], lowered["value"], lowered.get("mask")
    elem = T.element_type(op.operands[1].type)
    mem = _mem_type(elem)
    if not isinstance(ptr, Regs):
        # a scalar store: one thread writes it
        first = ctx.op1("arith.cmpi", [ctx.thread_id(), ctx.const(0)], ctx.i1,
                        {"predicate": ir.IntegerAttr.get(ctx.i64, 0)})
        m = first if mask is None else ctx.op1("arith.andi", [first, mask], ctx.i1)
        _guarded_store(ctx, ptr, [_to_mem(ctx, val, elem, mem)], m, mem, 1)
        return []
    vec = _width(op)
    groups = list(vector_groups(ptr, vec))
    pin = None
    if mask is not None and ctx.target in PREDICATED:
        if vec > 1:  # (vector accesses only: runs of contiguous addresses, not a gather)
            groups = _interleaved(groups, [mask.values[g[0]] for g in groups])
        pin = _pin_plan(ctx, [mask.values[g[0]] for g in groups])
    buf = buffer_plan(ctx, op) if mask is not None else None  # AMD: buffer stores, no branch
    rsrc = resource(ctx, buf[0]) if buf else None
    for idxs in groups:
        m = mask.values[idxs[0]] if mask is not None else None
        vals = [_to_mem(ctx, val.values[i], elem, mem) for i in idxs]
        off = element_offset(ctx, ptr.values[idxs[0]], buf) if buf else None
        if off is not None:
            buffer_store(ctx, rsrc, off, m, _pack(ctx, vals, mem, vec), mem, vec)
            continue
        _guarded_store(ctx, ptr.values[idxs[0]], vals, pin(m) if pin else m, mem, vec)
    return []


def _interleaved(groups, bits):
    """`groups` reordered round-robin over their mask bits (first appearance order): ptxas
    turns a run of stores under one predicate into a branch around them (BSSY/BRA/BSYNC),
    and a thread's 8 contiguous fp32 under one mask bit are two v4 stores in a row (LayerNorm
    backward's partial sums: 8 such branches in the lock's critical section, none after)."""
    buckets = {}
    for g, b in zip(groups, bits):
        buckets.setdefault(b, []).append(g)
    if len(buckets) in (1, len(groups)):
        return groups
    rows = list(buckets.values())
    return [r[i] for i in range(max(map(len, rows))) for r in rows if i < len(r)]


def _guarded_store(ctx, p, vals, m, mem, vec):
    attrs = {"alignment": ir.IntegerAttr.get(ctx.i64, elem_bytes(mem) * vec)}

    def store():
        ctx.create("llvm.store", [_pack(ctx, vals, mem, vec), p], [], attrs)

    if m is None:
        store()
        return
    if ctx.target in PREDICATED:
        PREDICATED[ctx.target][1](ctx, p, vals, m, mem, vec)
        return
    if_op = scf.IfOp(m, [], has_else=False)
    with ir.InsertionPoint(if_op.then_block):
        store()
        scf.YieldOp([])


@lower("tile.int_to_ptr")
def _int_to_ptr(ctx, op, args):
    return _each(args[0], lambda v: ctx.op1("llvm.inttoptr", [v], ctx.gptr))


@lower("tile.ptr_to_int")
def _ptr_to_int(ctx, op, args):
    return _each(args[0], lambda v: ctx.op1("llvm.ptrtoint", [v], ctx.i64))


def _each(x, fn):
    """fn on a scalar, or on each element a thread holds of a tile."""
    return [x.like([fn(v) for v in x.values])] if isinstance(x, Regs) else [fn(x)]
