"""Checks of tile/tilegpu ops that IRDL constraints cannot express (shape and type relations).

`verify(op)` runs MLIR's own verifier, then these checks on every tile op under `op`, and
raises `VerificationError` with the op's location and a message.
"""
from __future__ import annotations

import mlir.ir as ir

from . import tile as T
from .layout import layout_of, parse_layout


class VerificationError(Exception):
    def __init__(self, message: str, location: ir.Location | None = None):
        self.location = location
        self.message = message
        loc = f"{location}: " if location is not None else ""
        super().__init__(f"{loc}{message}")


_CHECKS = {}


def _check(name):
    def deco(fn):
        _CHECKS[name] = fn
        return fn
    return deco


def _segments(op: ir.Operation) -> dict[str, ir.Value | None]:
    """Named operands of an op with optional operands (operandSegmentSizes)."""
    names = T.OPERAND_SEGMENTS[op.name]
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    out, i = {}, 0
    for name, n in zip(names, sizes):
        out[name] = op.operands[i] if n else None
        i += n
    return out


def named_operands(op: ir.Operation) -> dict[str, ir.Value | None]:
    return _segments(op)


def _same_shape(a: ir.Type, b: ir.Type) -> bool:
    return T.shape_of(a) == T.shape_of(b)


@_check("tile.make_range")
def _make_range(op):
    start = ir.IntegerAttr(op.attributes["start"]).value
    end = ir.IntegerAttr(op.attributes["end"]).value
    rt = T.as_tensor(op.results[0].type)
    if end <= start:
        return f"make_range needs start < end, got [{start}, {end})"
    if list(rt.shape) != [end - start]:
        return f"make_range [{start}, {end}) must produce {end - start} elements, not shape {list(rt.shape)}"
    if str(rt.element_type) != "i32":
        return "make_range produces i32 elements"
    n = end - start
    if n & (n - 1):
        return f"make_range length {n} is not a power of two"


@_check("tile.splat")
def _splat(op):
    src, res = op.operands[0].type, op.results[0].type
    if T.is_tensor(src):
        return "splat takes a scalar"
    if T.element_type(res) != src:
        return f"splat of {src} cannot produce elements of {T.element_type(res)}"


@_check("tile.broadcast")
def _broadcast(op):
    src, res = T.as_tensor(op.operands[0].type), T.as_tensor(op.results[0].type)
    if src.element_type != res.element_type:
        return "broadcast must keep the element type"
    if src.rank != res.rank:
        return f"broadcast must keep the rank ({src.rank} vs {res.rank})"
    for a, b in zip(src.shape, res.shape):
        if a != b and a != 1:
            return f"broadcast of shape {list(src.shape)} to {list(res.shape)}: only size-1 dimensions grow"


@_check("tile.addptr")
def _addptr(op):
    p, o = op.operands[0].type, op.operands[1].type
    if not T.is_ptr(T.element_type(p)):
        return f"addptr takes pointers, got {p}"
    if not T.isa(T.element_type(o), ir.IntegerType):
        return f"addptr offsets must be integers, got {o}"
    if T.is_tensor(p) != T.is_tensor(o) or not _same_shape(p, o):
        return f"addptr pointer {p} and offset {o} must have the same shape"


def _check_ptr_value(ptr_t, val_t, what):
    pe = T.element_type(ptr_t)
    if not T.is_ptr(pe):
        return f"{what} takes pointers, got {ptr_t}"
    if T.pointee(pe) != T.element_type(val_t):
        return f"{what} of {pe} must have elements of {T.pointee(pe)}, got {T.element_type(val_t)}"
    if not _same_shape(ptr_t, val_t):
        return f"{what} pointer shape {list(T.shape_of(ptr_t))} differs from value shape {list(T.shape_of(val_t))}"


def _check_mask(mask, ptr_t, what):
    if mask is None:
        return None
    mt = mask.type
    if str(T.element_type(mt)) != "i1":
        return f"{what} mask must be i1, got {T.element_type(mt)}"
    if not _same_shape(mt, ptr_t):
        return f"{what} mask shape {list(T.shape_of(mt))} differs from pointer shape {list(T.shape_of(ptr_t))}"


@_check("tile.load")
def _load(op):
    args = _segments(op)
    ptr_t = args["ptr"].type
    res_t = op.results[0].type
    err = _check_ptr_value(ptr_t, res_t, "load") or _check_mask(args["mask"], ptr_t, "load")
    if err:
        return err
    if args["other"] is not None:
        if args["mask"] is None:
            return "load with `other` needs a mask"
        if args["other"].type != res_t:
            return f"load `other` must have the result type {res_t}, got {args['other'].type}"


@_check("tile.umulhi")
def _umulhi(op):
    t = T.element_type(op.results[0].type)
    if not isinstance(t, ir.IntegerType) or ir.IntegerType(t).width not in (32, 64):
        return f"umulhi takes 32- or 64-bit integers, got {t}"


@_check("tile.store")
def _store(op):
    args = _segments(op)
    ptr_t = args["ptr"].type
    return _check_ptr_value(ptr_t, args["value"].type, "store") or _check_mask(args["mask"], ptr_t, "store")


# ---- atomics and debug ops (memory/debug families) -----------------------------------------
ATOMIC_KINDS = ("add", "fadd", "max", "umax", "min", "umin", "and", "or", "xor", "xchg")
ATOMIC_SEMS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("cta", "gpu", "sys")


def _check_atomic_attrs(op, what):
    for name, allowed in (("sem", ATOMIC_SEMS), ("scope", ATOMIC_SCOPES)):
        v = ir.StringAttr(op.attributes[name]).value
        if v not in allowed:
            return f"{what} {name} must be one of {', '.join(allowed)}; got '{v}'"


@_check("tile.atomic_rmw")
def _atomic_rmw(op):
    args = _segments(op)
    ptr_t, val_t = args["ptr"].type, args["value"].type
    kind = ir.StringAttr(op.attributes["kind"]).value
    if kind not in ATOMIC_KINDS:
        return f"atomic_rmw kind must be one of {', '.join(ATOMIC_KINDS)}; got '{kind}'"
    err = _check_atomic_attrs(op, "atomic_rmw") or _check_mask(args["mask"], ptr_t, "atomic_rmw")
    if err:
        return err
    pe, ve = T.element_type(ptr_t), T.element_type(val_t)
    is_int = T.isa(ve, ir.IntegerType)
    if kind == "fadd" and is_int or kind != "fadd" and kind != "xchg" and not is_int:
        return f"atomic_rmw {kind} does not apply to {ve}"
    if is_int and T.is_ptr(pe) and T.pointee(pe) != ve:
        # integer views of float memory (float max/min): the widths must agree
        if _width(T.pointee(pe)) != _width(ve) or not _same_shape(ptr_t, val_t):
            return f"atomic_rmw of {pe} cannot operate on {ve}"
        return None
    return _check_ptr_value(ptr_t, val_t, "atomic_rmw")


def _width(t: ir.Type) -> int:
    s = str(t)
    return 16 if s == "bf16" else int("".join(c for c in s if c.isdigit()) or 0)


@_check("tile.atomic_cas")
def _atomic_cas(op):
    return _check_atomic_attrs(op, "atomic_cas") or _check_ptr_value(
        op.operands[0].type, op.operands[2].type, "atomic_cas")


@_check("tile.assert")
def _assert(op):
    if str(T.element_type(op.operands[0].type)) != "i1":
        return f"assert condition must be i1, got {op.operands[0].type}"


@_check("tile.assume")
def _assume(op):
    if str(T.element_type(op.operands[0].type)) != "i1":
        return f"assume condition must be i1, got {op.operands[0].type}"


@_check("tile.scan")
def _scan(op):
    ins, outs = list(op.operands), list(op.results)
    if len(ins) != len(outs):
        return f"scan of {len(ins)} tiles must have {len(ins)} results, not {len(outs)}"
    shape = T.shape_of(ins[0].type)
    for a, r in zip(ins, outs):
        if T.shape_of(a.type) != shape:
            return "scan operands must have the same shape"
        if T.shape_of(r.type) != shape or T.element_type(r.type) != T.element_type(a.type):
            return f"scan of {a.type} cannot produce {r.type}"
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    if not 0 <= axis < len(shape):
        return f"scan axis {axis} is out of range for a tile of rank {len(shape)}"
    if ir.IntegerAttr(op.attributes["reverse"]).value not in (0, 1):
        return "scan reverse must be 0 or 1"


# ---- join/split/cat and dot (frontend/ops_join.py, ops_dot.py) ------------------------------
@_check("tile.join")
def _join(op):
    a, r = op.operands[0].type, op.results[0].type
    if op.operands[1].type != a:
        return f"join operands must have the same type, got {a} and {op.operands[1].type}"
    if T.element_type(r) != T.element_type(a) or T.shape_of(r) != T.shape_of(a) + (2,):
        return f"join of {list(T.shape_of(a))} must produce {list(T.shape_of(a) + (2,))} " \
               f"elements of {T.element_type(a)}, not {r}"


@_check("tile.split")
def _split(op):
    s, r = op.operands[0].type, op.results[0].type
    shape = T.shape_of(s)
    if len(shape) < 2 or shape[-1] != 2:
        return f"split needs a tile of rank >= 2 whose last dimension is 2, got {list(shape)}"
    if op.results[1].type != r:
        return "split results must have the same type"
    if T.element_type(r) != T.element_type(s) or T.shape_of(r) != shape[:-1]:
        return f"split of {list(shape)} must produce {list(shape[:-1])} elements of " \
               f"{T.element_type(s)}, not {r}"


@_check("tile.cat")
def _cat(op):
    a, r = op.operands[0].type, op.results[0].type
    if op.operands[1].type != a:
        return f"cat operands must have the same type, got {a} and {op.operands[1].type}"
    if len(T.shape_of(a)) != 1:
        return f"cat takes 1-D tiles, got {list(T.shape_of(a))}"
    if T.element_type(r) != T.element_type(a) or T.shape_of(r) != (2 * T.shape_of(a)[0],):
        return f"cat of two {list(T.shape_of(a))} tiles must produce [{2 * T.shape_of(a)[0]}] " \
               f"elements of {T.element_type(a)}, not {r}"


DOT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")


@_check("tile.dot")
def _dot(op):
    a, b, c = (T.shape_of(o.type) for o in op.operands)
    ea, eb, ec = (str(T.element_type(o.type)) for o in op.operands)
    if len(a) not in (2, 3) or len(b) != len(a) or len(c) != len(a):
        return f"dot takes 2-D or 3-D tiles of one rank, got {list(a)}, {list(b)}, {list(c)}"
    if a[:-2] != b[:-2] or a[-1] != b[-2] or c != a[:-1] + b[-1:]:
        return f"dot shapes do not agree: {list(a)} x {list(b)} -> {list(c)}"
    if ea != eb and not (ea.startswith("f8") and eb.startswith("f8")):
        return f"dot operands must have the same element type, got {ea} and {eb}"
    if op.results[0].type != op.operands[2].type:
        return "dot result must have the accumulator's type"
    want = "i32" if ea.startswith("i") else None
    if want and ec != want or not want and ec not in ("f16", "f32", "f64"):
        return f"dot of {ea} cannot accumulate in {ec}"
    p = ir.StringAttr(op.attributes["input_precision"]).value
    if p not in DOT_PRECISIONS:
        return f"dot input_precision must be one of {', '.join(DOT_PRECISIONS)}; got '{p}'"


@_check("tilegpu.convert_layout")
def _convert(op):
    src, res = op.operands[0].type, op.results[0].type
    if T.shape_of(src) != T.shape_of(res) or T.element_type(src) != T.element_type(res):
        return "convert_layout changes only the layout"


# ---- shared memory (memdesc ops) -------------------------------------------------------------

def _check_shared_memory(op) -> str | None:
    """The tilegpu shared-memory ops: memdesc types well formed, tiles matching the buffer they
    move to or from (shape, element type), one buffer where one is addressed."""
    for t in [v.type for v in op.operands] + [r.type for r in op.results]:
        if T.is_memdesc(t):
            md = T.memdesc_of(t)
            if not md.shape or any(n <= 0 for n in md.shape):
                return f"memdesc shape must be non-empty and positive, got {list(md.shape)}"
            if md.buffers < 1:
                return f"memdesc needs at least one buffer, got {md.buffers}"
            if not (T.isa(md.elem, ir.IntegerType) or T.isa(md.elem, ir.FloatType)):
                return f"memdesc elements must be integers or floats, got {md.elem}"
            if md.layout.startswith(("#tilegpu.swizzled_shared<", "#tilegpu.nvmma_shared<")):
                try:  # the buffer is addressed through the layout's map
                    parse_layout(md.layout).verify(md.shape)
                except ValueError as e:
                    return f"memdesc layout: {e}"

    def one_buffer(md, what):
        if md.buffers != 1:
            return f"{what} a memdesc of {md.buffers} buffers: select one with memdesc_index"

    def same_tile(tile_t, md, what):
        if T.shape_of(tile_t) != md.shape or T.element_type(tile_t) != md.elem:
            return (f"{what} {tile_t} does not match the buffer "
                    f"({list(md.shape)} x {md.elem})")

    name = op.name
    if name == "tilegpu.local_alloc":
        md = T.memdesc_of(op.results[0].type)
        if len(op.operands):
            return one_buffer(md, "local_alloc initializes") or \
                same_tile(op.operands[0].type, md, "local_alloc initial value")
    elif name == "tilegpu.local_store":
        md = T.memdesc_of(op.operands[1].type)
        return one_buffer(md, "local_store to") or \
            same_tile(op.operands[0].type, md, "local_store value")
    elif name == "tilegpu.local_load":
        md = T.memdesc_of(op.operands[0].type)
        return one_buffer(md, "local_load from") or \
            same_tile(op.results[0].type, md, "local_load result")
    elif name == "tilegpu.local_dealloc":
        src = op.operands[0]
        if not isinstance(src.owner, ir.Block) and src.owner.name != "tilegpu.local_alloc":
            return "local_dealloc takes the result of a local_alloc"
    elif name == "tilegpu.memdesc_index":
        md, rd = T.memdesc_of(op.operands[0].type), T.memdesc_of(op.results[0].type)
        if rd.buffers != 1 or (rd.shape, rd.elem, rd.layout) != (md.shape, md.elem, md.layout):
            return f"memdesc_index must give one buffer of {op.operands[0].type}"
    elif name == "tilegpu.async_copy":
        ops = _segments(op)
        md = T.memdesc_of(ops["dst"].type)
        pt = ops["ptr"].type
        pe = T.element_type(pt)
        if not T.is_ptr(pe) or T.pointee(pe) != md.elem:
            return f"async_copy needs pointers to {md.elem}, got {pt}"
        err = one_buffer(md, "async_copy to") or \
            (f"async_copy pointer shape {list(T.shape_of(pt))} does not match the buffer "
             f"{list(md.shape)}" if T.shape_of(pt) != md.shape else None) or \
            _check_mask(ops["mask"], pt, "async_copy")
        if err:
            return err
        o = ops["other"]
        if o is not None and (T.element_type(o.type) != md.elem or not _same_shape(o.type, pt)):
            return f"async_copy other must be a tile of {md.elem} of the pointers' shape"
        if o is not None and ops["mask"] is None:
            return "async_copy other needs a mask"
    elif name == "tilegpu.async_wait":
        if ir.IntegerAttr(op.attributes["num"]).value < 0:
            return "async_wait num must be >= 0"
    return None


for _name in ("local_alloc", "local_store", "local_load", "local_dealloc", "memdesc_index",
              "async_copy", "async_wait"):
    _check("tilegpu." + _name)(_check_shared_memory)


def _check_layout(v, config):
    """The layout of `v` (if any) is well formed and fits the module's warp configuration."""
    try:
        lay = layout_of(v.type)
        if lay is not None:
            lay.verify(T.shape_of(v.type), *config)
    except ValueError as e:
        return str(e)


def _check_layouts(op, config):
    for v in list(op.results):
        err = _check_layout(v, config)
        if err:
            return err


def _module_config(op):
    """(warp size, num_warps) set on the enclosing module by tilegpu-assign-layouts."""
    m = op
    while m is not None and m.name != "builtin.module":
        m = m.parent.operation if m.parent is not None else None
    if m is None:
        return (None, None)
    a = m.attributes
    ws = ir.IntegerAttr(a["tilegpu.warp_size"]).value if "tilegpu.warp_size" in a else None
    nw = ir.IntegerAttr(a["tilegpu.num_warps"]).value if "tilegpu.num_warps" in a else None
    return (ws, nw)


@_check("tile.get_program_id")
def _program_id(op):
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    if axis not in (0, 1, 2):
        return f"axis must be 0, 1 or 2, got {axis}"


_check("tile.get_num_programs")(_program_id)


def verify(root: ir.Operation | ir.Module) -> None:
    """Verifies `root` and every tile op in it; raises VerificationError."""
    op = root.operation if hasattr(root, "operation") else root
    try:
        op.verify()
    except ir.MLIRError as e:  # pragma: no cover - message formatting only
        raise VerificationError(str(e)) from None

    config = _module_config(op) if op.name == "builtin.module" else (None, None)
    for o in T.walk_ops(op):
        err = _CHECKS[o.name](o) if o.name in _CHECKS else None
        if err is None:
            err = _check_layouts(o, config)
        if err is None:
            for region in o.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        err = err or _check_layout(a, config)
        if err:
            raise VerificationError(f"'{o.name}' op {err}", o.location)
