"""TMA (the Tensor Memory Accelerator, NVIDIA sm_90): block copies from global memory described
by a host tensor map (`cp.async.bulk.tensor`) into shared memory, completed on an mbarrier.

`tile.descriptor_load` is what the frontend emits for `desc.load(offsets)` of a host
`TensorDescriptor` on sm_90 when its block has a TMA plan (`language.descriptor.tma_plan`),
with the block-pointer load it falls back to (`ptr`, `mask`, `other`: tile-tma-guard,
lowering/tma_guard.py, keeps the TMA load where the inner coordinate is 16-byte aligned):
`desc` is the kernel parameter holding the tensor map (`!tile.ptr<i8>`, passed by value as
128 bytes), the coordinates are the block's element offsets (i32, outermost first) and
`swizzle` the plan's swizzle (0, or the bytes of the `#tilegpu.nvmma_shared` layout the block
lands in).  `tilegpu-tma-loads` (lowering/tma.py) rewrites it into the tilegpu ops below.

The tilegpu ops: `mbarrier_init` (one thread initializes a one-buffer `[1] x i64` barrier for
`count` arrivals), `tma_load` (one thread, where the optional `pred` holds, arrives on
`barrier` expecting the copy's bytes and
issues the copy of the box at the coordinates into `dst`: an nvmma_shared buffer, as several
boxes one swizzle wide, or an unswizzled row-major one), `mbarrier_wait` (every thread waits
for the barrier's phase `phase` (0/1) to complete: the copies' bytes have landed and are
visible to it), `mbarrier_inval` (one thread invalidates the barrier before its bytes are
used otherwise), `mbarrier_arrive` (lane 0 of every warp arrives: warp specialization's
consumers release a ring slot, lowering/warp_specialize.py).

The store side: `tile.descriptor_store` is `desc.store(offsets, value)` of such a descriptor
when `CompileOptions.tma_store` is on, with the block-pointer store it falls back to (`ptr`,
`mask`) and the tensor's row length (`width`): `tile-tma-guard` keeps the TMA store
where the hardware stores exactly (lowering/tma_guard.py); `tilegpu-tma-stores` (lowering/tma_store.py) writes the
value into a buffer in the box layout (`local_alloc`) and `tilegpu.tma_store` copies the buffer
to the box at the coordinates (one thread; the hardware clips what lies outside the tensor),
reading it through the async proxy until its bulk group's reads are done.

A descriptor made in the kernel (`tl.make_tensor_descriptor`) gets its tensor map written in
global scratch: `tile.make_tensormap` (one thread fills the 128 bytes at `scratch` + this
program's slice (`program_bytes` per program, the linear program id) + `offset`, then fences
them for the tensor-map proxy) returns the map's global address, which descriptor_load and
tma_load take as `desc` as they take a host map's parameter."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from ..layout import parse_layout
from .base import DENSE_I32, INT, READS, WRITES, Arg, Attr, any_type, group, is_type, \
    named_operands, operand, optional, result, tensor
from .core import TILE
from .shared import checked, memdesc
from .tilegpu import TILEGPU

MAX_RANK = 5
MAX_BOX = 256
SWIZZLES = (0, 32, 64, 128)


def _bits(t) -> int:
    return ir.IntegerType(t).width if T.isa(t, ir.IntegerType) else ir.FloatType(t).width


def _desc(v, what):
    t = v.type
    if T.shape_of(t) or not T.is_ptr(t) or str(T.pointee(t)) != "i8":
        return f"{what} desc must be a scalar !tile.ptr<i8> (the tensor map parameter), got {t}"


def _coords(op, rank, what):
    n = len([k for k, v in named_operands(op).items() if k.startswith("coord") and v is not None])
    if n != rank:
        return f"{what} needs one coordinate per dimension ({rank}), got {n}"


def _box(shape, elem, swizzle, what):
    """What a TMA box of a block of `shape` x `elem` with `swizzle` needs."""
    if not 1 <= len(shape) <= MAX_RANK:
        return f"{what} rank must be 1..{MAX_RANK}, got {len(shape)}"
    if not (T.isa(elem, ir.IntegerType) or T.isa(elem, ir.FloatType)) or _bits(elem) < 8:
        return f"{what} elements must be integers or floats of 8 bits or more, got {elem}"
    if any(d > MAX_BOX for d in shape):
        return f"{what} block {list(shape)} exceeds TMA's box of {MAX_BOX} per dimension"
    inner = shape[-1] * _bits(elem) // 8
    if inner < 16:
        return f"{what} rows must have at least 16 bytes, got {inner}"
    if swizzle not in SWIZZLES:
        return f"{what} swizzle must be one of {', '.join(map(str, SWIZZLES))}; got {swizzle}"
    if swizzle and (len(shape) != 2 or inner < swizzle or _bits(elem) > 32):
        return f"{what} swizzle {swizzle} needs a 2-D block of 8/16/32-bit elements with rows " \
               f"of at least {swizzle} bytes"


MAP_BYTES = 128  # a CUtensorMap


def _scalar_ptr(v, what, name):
    if T.shape_of(v.type) or not T.is_ptr(v.type):
        return f"{what} {name} must be a scalar pointer, got {v.type}"


def _make_tensormap(op):
    args = named_operands(op)
    err = _scalar_ptr(args["scratch"], "make_tensormap", "scratch") or \
        _scalar_ptr(args["base"], "make_tensormap", "base") or \
        _desc(op.results[0], "make_tensormap result")
    if err:
        return err
    box = list(ir.DenseI32ArrayAttr(op.attributes["box"]))
    rank = len(box)
    ndims = sum(1 for k, v in args.items() if k.startswith("dim") and v is not None)
    nstrides = sum(1 for k, v in args.items() if k.startswith("stride") and v is not None)
    if ndims != rank or nstrides != rank - 1:
        return f"make_tensormap needs one dimension per box dimension ({rank}) and one " \
               f"stride fewer, got {ndims} and {nstrides}"
    err = _box(box, T.pointee(args["base"].type), ir.IntegerAttr(op.attributes["swizzle"]).value,
               "make_tensormap")
    if err:
        return err
    off = ir.IntegerAttr(op.attributes["offset"]).value
    size = ir.IntegerAttr(op.attributes["program_bytes"]).value
    if off < 0 or off % MAP_BYTES or off + MAP_BYTES > size or size % MAP_BYTES:
        return f"make_tensormap offset {off} must be a multiple of {MAP_BYTES} with the map " \
               f"within the program's {size} bytes (a multiple of {MAP_BYTES})"


def _descriptor_load(op):
    args = named_operands(op)
    rt = op.results[0].type
    shape = T.shape_of(rt)
    return _desc(args["desc"], "descriptor_load") or \
        _box(shape, T.element_type(rt), ir.IntegerAttr(op.attributes["swizzle"]).value,
             "descriptor_load") or \
        _coords(op, len(shape), "descriptor_load") or \
        _fallback(args, shape, T.element_type(rt), "descriptor_load", ("ptr", "mask", "other"))


def _descriptor_store(op):
    args = named_operands(op)
    vt = args["src"].type
    shape = T.shape_of(vt)
    return _desc(args["desc"], "descriptor_store") or \
        _box(shape, T.element_type(vt), ir.IntegerAttr(op.attributes["swizzle"]).value,
             "descriptor_store") or \
        _coords(op, len(shape), "descriptor_store") or \
        _fallback(args, shape, T.element_type(vt), "descriptor_store", ("ptr", "mask", "width"))


def _fallback(args, shape, elem, what, names):
    """The block-pointer access a descriptor access may fall back to: its tile of pointers to
    the block's elements and its mask, both of the block's shape, and a load's `other` (the
    padding: a tile of the block's type) or a store's `width` (the tensor's row length, i32);
    all or none."""
    given = [args[k] is not None for k in names]
    if not any(given):
        return None
    if not all(given):
        return f"{what} fallback needs {', '.join(names[:-1])} and {names[-1]} together"
    pt, mt = args["ptr"].type, args["mask"].type
    if T.shape_of(pt) != shape or not T.is_ptr(T.element_type(pt)) or \
            T.pointee(T.element_type(pt)) != elem:
        return f"{what} fallback ptr must be a tile of pointers to the block's elements, of " \
               f"its shape {list(shape)}; got {pt}"
    if T.shape_of(mt) != shape or str(T.element_type(mt)) != "i1":
        return f"{what} fallback mask must be an i1 tile of the block's shape " \
               f"{list(shape)}; got {mt}"
    if "other" in names and (T.shape_of(args["other"].type) != shape
                             or T.element_type(args["other"].type) != elem):
        return f"{what} fallback other must be a tile of the block's shape {list(shape)} and " \
               f"type {elem}; got {args['other'].type}"


def _barrier(v, what):
    md = T.memdesc_of(v.type)
    if md.buffers != 1 or md.shape != (1,) or str(md.elem) != "i64":
        return f"{what} barrier must be one [1] x i64 buffer, got {v.type}"


def dst_swizzle(md) -> int | None:
    """The TMA swizzle a buffer is written with: an nvmma_shared layout's (not transposed,
    swizzled), 0 for a row-major one; None for a layout TMA cannot write."""
    if md.layout.startswith("#tilegpu.nvmma_shared<"):
        lay = parse_layout(md.layout)
        return lay.swizzle_bytes if lay.swizzle_bytes and not lay.transposed else None
    if md.layout.startswith("#tilegpu.swizzled_shared<"):
        return None
    return 0


def _tma_buffer(op, md, what: str, prep: str, verb: str):
    """The checks of a TMA copy's shared buffer: one buffer, a layout TMA boxes address, the
    box within the limits, the coordinates."""
    if md.buffers != 1:
        return f"{what} {prep} a memdesc of {md.buffers} buffers: select one with memdesc_index"
    sw = dst_swizzle(md)
    if sw is None:
        return f"{what} {verb} a row-major or a swizzled, untransposed " \
               f"#tilegpu.nvmma_shared buffer, got {md.layout}"
    return _box(md.shape if not sw else (md.shape[0], sw * 8 // _bits(md.elem)), md.elem, sw,
                what) or _coords(op, len(md.shape), what)


@checked
def _tma_load(op):
    args = named_operands(op)
    md = T.memdesc_of(args["dst"].type)
    err = _desc(args["desc"], "tma_load") or _barrier(args["barrier"], "tma_load")
    if err:
        return err
    return _tma_buffer(op, md, "tma_load", "to", "writes")


@checked
def _tma_store(op):
    args = named_operands(op)
    md = T.memdesc_of(args["src"].type)
    err = _desc(args["desc"], "tma_store")
    if err:
        return err
    return _tma_buffer(op, md, "tma_store", "from", "reads")


@checked
def _one_barrier(op):
    return _barrier(op.operands[0], op.name.split(".")[1])


@checked
def _mbarrier_init(op):
    return _barrier(op.operands[0], "mbarrier_init") or \
        (None if ir.IntegerAttr(op.attributes["count"]).value >= 1
         else "mbarrier_init count must be >= 1")


_i32 = lambda: is_type("i32")  # noqa: E731  (one constraint variable per coordinate)

TILE.op("descriptor_load", "the block of the tensor map `desc` at the coordinates (TMA; "
                           "out-of-bounds elements are zero); with `ptr`, `mask` and `other`, "
                           "tile-tma-guard may make it the masked load through `ptr` instead",
        operands=[operand("desc", any_type())] + group("coord", _i32, MAX_RANK)
        + [optional("ptr", tensor()), optional("mask", tensor()), optional("other", tensor())],
        results=[result("result", tensor())], attrs=[Attr("swizzle", INT)],
        traits={READS}, verify=_descriptor_load, interp="builtin",
        unsupported={"amd": "TMA tensor maps are NVIDIA's (sm_90+); AMD loads descriptors "
                            "as block pointers"})
TILE.op("descriptor_store", "stores the tile `src` to the block of the tensor map `desc` at "
                            "the coordinates (TMA; out-of-bounds elements are not written); "
                            "with `ptr`, `mask` and `width` (the tensor's row length), "
                            "tile-tma-guard may make it the masked store of `src` "
                            "through `ptr` instead",
        operands=[operand("desc", any_type()), operand("src", tensor())]
        + group("coord", _i32, MAX_RANK)
        + [optional("ptr", tensor()), optional("mask", tensor()),
           optional("width", is_type("i32"))],
        attrs=[Attr("swizzle", INT)], traits={WRITES}, verify=_descriptor_store,
        interp="builtin",
        unsupported={"amd": "TMA tensor maps are NVIDIA's (sm_90+); AMD stores descriptors "
                            "as block pointers"})
TILE.op("make_tensormap", "one thread writes the tensor map of the tensor at `base` (dims and "
                         "strides in elements, outermost first; the last stride 1) for boxes "
                         "`box` at `offset` in this program's `program_bytes` of the global "
                         "scratch, fenced for TMA; its address",
        operands=[operand("scratch", any_type()), operand("base", any_type())]
        + group("dim", _i32, MAX_RANK)
        + [Arg(f"stride{i}", is_type("i64"), optional=True, group="stride")
           for i in range(MAX_RANK - 1)],
        results=[result("result", any_type())],
        attrs=[Attr("box", DENSE_I32), Attr("swizzle", INT), Attr("offset", INT),
               Attr("program_bytes", INT)],
        traits={WRITES}, verify=_make_tensormap, interp="builtin",
        unsupported={"amd": "TMA tensor maps are NVIDIA's (sm_90+); AMD loads descriptors "
                            "as block pointers"})
TILEGPU.op("mbarrier_init", "one thread initializes the mbarrier `barrier` for `count` arrivals",
           operands=[operand("barrier", memdesc())], attrs=[Attr("count", INT)],
           traits={WRITES}, verify=_mbarrier_init, interp=None,
           unsupported={"amd": "mbarriers are NVIDIA's (sm_90+)"})
TILEGPU.op("tma_load", "one thread arrives on `barrier` expecting the bytes of the box at the "
                       "coordinates of the tensor map `desc`, and copies it into `dst` (only "
                       "where `pred`, if given, is true)",
           operands=[operand("desc", any_type()), operand("dst", memdesc()),
                     operand("barrier", memdesc())] + group("coord", _i32, MAX_RANK)
           + [optional("pred", is_type("i1"))],
           traits={READS, WRITES}, verify=_tma_load, interp=None,
           unsupported={"amd": "TMA is NVIDIA's (sm_90+)"})
TILEGPU.op("tma_store", "every thread fences its writes of `src` for the async proxy; after a "
                        "barrier one thread copies `src` to the box at the coordinates of the "
                        "tensor map `desc` and waits until the copy has read `src`",
           operands=[operand("desc", any_type()), operand("src", memdesc())]
           + group("coord", _i32, MAX_RANK),
           traits={READS, WRITES}, verify=_tma_store, interp=None,
           unsupported={"amd": "TMA is NVIDIA's (sm_90+)"})
WAIT_LATER = "tilegpu.wait_later"  # on a tma_store: its read wait is a later tma_store_wait's
TILEGPU.op("tma_store_wait", "the thread that issued the TMA stores marked `tilegpu.wait_later` "
                             "waits until they have read their buffers, then every thread "
                             "synchronizes: the buffers may be written again",
           traits={READS, WRITES}, interp=None,
           unsupported={"amd": "TMA is NVIDIA's (sm_90+)"})
TILEGPU.op("mbarrier_wait", "every thread waits until phase `phase` (0 or 1) of `barrier` "
                            "completes",
           operands=[operand("barrier", memdesc()), operand("phase", is_type("i32"))],
           traits={READS}, verify=_one_barrier, interp=None,
           unsupported={"amd": "mbarriers are NVIDIA's (sm_90+)"})
TILEGPU.op("mbarrier_arrive", "lane 0 of every warp arrives once on `barrier` (only where "
                             "`pred`, if given, is true): a warp is done with what it guards",
           operands=[operand("barrier", memdesc()), optional("pred", is_type("i1"))],
           traits={WRITES}, verify=_one_barrier, interp=None,
           unsupported={"amd": "mbarriers are NVIDIA's (sm_90+)"})
TILEGPU.op("mbarrier_inval", "one thread invalidates the mbarrier `barrier`",
           operands=[operand("barrier", memdesc())],
           traits={WRITES}, verify=_one_barrier, interp=None,
           unsupported={"amd": "mbarriers are NVIDIA's (sm_90+)"})
