"""The CPU interpreter (`TILEWORK_INTERPRET=1` or `@jit(interpret=True)`): runs a kernel with
numpy, program by program over the grid.

It executes the kernel's Python function itself, so breakpoints and `print` work inside
kernels.  Semantics are the compiler's, not a copy: `tl.*` builtins and tensor operators call
`frontend.ops` / `frontend.semantic` (through `language.core.active_builder`), which emit ops
through `InterpreterBuilder.create`; that evaluates each op at once with numpy (one table row
per op name, `_OPS`) and returns numpy "handles".

A handle is a `Value`: a numpy array (0-d for scalars) tagged with its MLIR type.  Integers
are stored signed (MLIR integers are signless); ops whose name says unsigned (divui, shrui,
cmpi ult, uitofp, ...) reinterpret their operands.  bf16 is stored as float32 rounded to
bf16 after every op.  Pointers are uint64 addresses: the real addresses of the arrays passed,
so pointer arithmetic is the GPU's; loads and stores translate them through `_Memory`.
"""
from __future__ import annotations

import builtins
import functools
import ctypes
import sys
import types

import mlir.ir as ir
import numpy as np

from tilework.dialects import new_context
from tilework.dialects import tile as T

from ..compiler.options import CompileOptions
from ..errors import IntegerOverflowError, InterpreterError, interpreter_error, located
from ..frontend import semantic as S
from ..frontend.ops import IMPLS
from ..frontend.ops_shape import subscript
from ..frontend.codegen import TILELESS_BUILTINS
from ..frontend.static_check import check as static_check
from ..frontend.static_check import guarded_builtin, guarded_call, types_check
from .interp_rewrite import code_to_run
from ..frontend.types import tensor_ir_type
from ..language import core
from ..language.core import tensor
from ..language.descriptor import TensorDescriptor, tensor_descriptor
from ..language.function import JITFunction
from ..language.tuples import arg_fields, argument_tuple, member_label, tuple_type
from .interp_args import NUMPY_DTYPES as _NUMPY_DTYPES
from .interp_args import pointer as _pointer
from .interp_args import REACHABLE, reachable  # noqa: F401  (reachable: its home)
from .interp_common import UNSIGNED as _UNSIGNED
from .interp_common import builtin_min_max, emulated_target, kernel_location, recursion_error
from .interp_common import operand_segments as _segments
from .interp_common import unsigned as _u
from .launch_args import is_constant_member, list_message
from .launch_args import normalize_grid

__all__ = ["interpret", "InterpreterBuilder"]


# --------------------------------------------------------------------------------------------
# values and types

class Value(np.ndarray):
    """An op result: a numpy array (0-d for a scalar) with its MLIR type as `.type`."""
    type = None

    @property
    def owner(self):
        # ops.multiple_of / max_contiguous set attributes on the defining op; hints mean
        # nothing on the CPU, so they land in a throwaway dict
        return types.SimpleNamespace(attributes={})


def _wrap(a, ty) -> Value:
    v = np.asarray(a).view(Value)
    v.type = ty
    return v


# element type -> (register dtype, memory dtype); bf16 lives as float32, i1 as a byte in memory
_ELEM = {
    "i1": (np.bool_, np.uint8), "i8": (np.int8, np.int8), "i16": (np.int16, np.int16),
    "i32": (np.int32, np.int32), "i64": (np.int64, np.int64),
    "f16": (np.float16, np.float16), "bf16": (np.float32, np.uint16),
    "f32": (np.float32, np.float32), "f64": (np.float64, np.float64),
    # float8: registers hold the (exact) value as float32, memory the byte
    "f8E4M3FN": (np.float32, np.uint8), "f8E5M2": (np.float32, np.uint8),
    "f8E4M3FNUZ": (np.float32, np.uint8), "f8E5M2FNUZ": (np.float32, np.uint8),
}
_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4,
          "f64": 8, "f8E4M3FN": 1, "f8E5M2": 1,
          "f8E4M3FNUZ": 1, "f8E5M2FNUZ": 1}


class _Info:
    """What the interpreter needs of an MLIR type: numpy dtypes, shape, pointee."""
    __slots__ = ("elem", "np", "mem", "shape", "bf16", "f8", "pointee", "size", "_pointee")

    def __init__(self, ty: ir.Type):
        self.shape = T.shape_of(ty)
        self.elem = str(T.element_type(ty))
        self.bf16 = self.elem == "bf16"
        self.f8 = self.elem if self.elem in _F8 else None
        self.pointee = self._pointee = None
        if self.elem.startswith("!tile.ptr<"):
            self.np = self.mem = np.dtype(np.uint64)
            self.pointee = self.elem[len("!tile.ptr<"):-1]
            self.size = _BYTES.get(self.pointee, 8)  # pointers to pointers: 8 bytes
            return
        if self.elem not in _ELEM:
            raise NotImplementedError(f"the interpreter does not support {self.elem} values yet")
        self.np, self.mem = (np.dtype(d) for d in _ELEM[self.elem])
        self.size = _BYTES[self.elem]

    def pointee_info(self) -> "_Info":
        if self._pointee is None:
            self._pointee = _info(ir.Type.parse(self.pointee))
        return self._pointee


_INFO: dict = {}


def _info(ty: ir.Type) -> _Info:
    i = _INFO.get(ty)
    if i is None:
        i = _INFO[ty] = _Info(ty)
    return i


def _s(a):
    """The signed view of an integer value: an i1 `true` is -1, as in MLIR."""
    a = np.asarray(a)
    return -a.astype(np.int8) if a.dtype == np.bool_ else a


def _round_bf16(x):
    """float32 values rounded to the nearest bf16 (ties to even), kept as float32."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    r = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    r = np.where(np.isnan(x), (bits | np.uint32(0x00400000)) & np.uint32(0xFFFF0000), r)
    return r.astype(np.uint32).view(np.float32)


# float8 kind -> (mantissa bits, exponent bias, largest finite magnitude's bits); the
# conversions are bit for bit those of lowering/rules/fp8.py
_F8 = {"f8E4M3FN": (3, 7, 0x7E), "f8E5M2": (2, 15, 0x7B),
       "f8E4M3FNUZ": (3, 8, 0x7F), "f8E5M2FNUZ": (2, 16, 0x7F)}
_FNUZ = ("f8E4M3FNUZ", "f8E5M2FNUZ")


def _f8_decode(bits, kind):
    """fp8 bit patterns (uint8) -> float32 values (exact)."""
    if kind in _FNUZ:  # exact: mantissa and exponent to f32 (0x80: NaN)
        man, bias, _ = _F8[kind]
        w = np.asarray(bits).astype(np.uint32)
        mag = w & np.uint32(0x7F)
        normal = ((mag << np.uint32(23 - man)) + np.uint32((127 - bias) << 23)).view(np.float32)
        tiny = mag.astype(np.float32) * np.float32(2.0 ** (1 - bias - man))
        f = np.where(mag < (1 << man), tiny, normal)
        f = np.where(w & np.uint32(0x80), -f, f)
        return np.where(w == 0x80, np.float32(np.nan), f).astype(np.float32)
    w = np.asarray(bits).astype(np.uint16)
    if kind == "f8E5M2":
        return (w << np.uint16(8)).view(np.float16).astype(np.float32)
    mag, sign = w & np.uint16(0x7F), w & np.uint16(0x80)
    h = (mag << np.uint16(7)) | (sign << np.uint16(8))
    f = h.view(np.float16).astype(np.float32) * np.float32(256)
    nan = ((sign.astype(np.uint32) << np.uint32(24)) | np.uint32(0x7FC00000)).view(np.float32)
    return np.where(mag == 0x7F, nan, f).astype(np.float32)


def _f8_encode(x, kind):
    """float32 values -> fp8 bit patterns (uint8): nearest even, finite overflow saturated to
    the largest finite value, inf kept where the format has it (e5m2; e4m3fn saturates),
    NaN -> 0x7f (sign kept)."""
    man, bias, maxbits = _F8[kind]
    shift = np.uint32(23 - man)
    u = np.asarray(x, np.float32).view(np.uint32)
    sign = (u & np.uint32(0x80000000)) >> np.uint32(24)
    a = u & np.uint32(0x7FFFFFFF)
    with np.errstate(all="ignore"):
        ar = a - np.uint32((127 - bias) << 23)
        r = (ar + np.uint32((1 << (23 - man - 1)) - 1) + ((ar >> shift) & np.uint32(1))) >> shift
        t = a.view(np.float32) * np.float32(2.0 ** (bias - 1 + man)) + np.float32(2.0 ** 23)
    r = np.where(r > maxbits, np.uint32(maxbits), r)
    sub = t.view(np.uint32) - np.uint32(0x4B000000)
    res = np.where(a < np.uint32((128 - bias) << 23), sub, r)
    if kind == "f8E5M2":
        res = np.where(a == np.uint32(0x7F800000), np.uint32(0x7C), res)
    if kind in _FNUZ:  # a zero result drops the sign (0x80 is NaN)
        res = res | np.where(res == 0, np.uint32(0), sign)
        return np.where(a > np.uint32(0x7F800000), np.uint32(0x80), res).astype(np.uint8)
    res = np.where(a > np.uint32(0x7F800000), np.uint32(0x7F), res)
    return (res | sign).astype(np.uint8)


def _to_memory(vals, info: _Info):
    if info.f8:
        return _f8_encode(vals, info.f8)
    if info.bf16:
        return (_round_bf16(vals).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return np.asarray(vals).astype(info.mem, copy=False)


def _from_memory(raw, info: _Info):
    if info.f8:
        return _f8_decode(raw, info.f8)
    if info.bf16:
        return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if info.np == np.bool_:
        return raw != 0
    return raw


# --------------------------------------------------------------------------------------------
# the op table: name -> fn(builder, operands (Values), result _Info or None, attributes)

def _ew(f, view=np.asarray):
    """An elementwise op on operands seen through `view` (`_u` for unsigned ops)."""
    return lambda b, ops, rt, at: f(*[view(o) for o in ops])


def _div(a, c):
    """Integer division truncating toward zero (C, arith.divsi/divui); x / 0 gives all ones."""
    zero = c == 0
    c = np.where(zero, np.ones_like(c), c)
    q = a // c
    q = q + (((a - q * c) != 0) & ((a < 0) != (c < 0))).astype(q.dtype)  # floor -> trunc
    return np.where(zero, ~np.zeros_like(q), q)


def _fptoint(x, dt, unsigned):
    """Float -> int conversion as the GPU does it: truncate, saturate, NaN gives 0."""
    ut = np.dtype(dt) if not unsigned else _UNSIGNED[np.dtype(dt)]
    lim = np.iinfo(ut)
    x = np.asarray(x, np.float64)
    lo, hi = x <= float(lim.min), x >= float(lim.max)
    r = np.where(np.isnan(x) | lo | hi, 0.0, x).astype(ut)
    r = np.where(hi, np.array(lim.max, ut), np.where(lo, np.array(lim.min, ut), r))
    return r


def _maximumf(x, y):
    """NaN propagates (as numpy's) and +0 > -0 (numpy returns either zero)."""
    return np.where(x == y, np.where(np.signbit(x), y, x), np.maximum(x, y))


def _minimumf(x, y):
    return np.where(x == y, np.where(np.signbit(x), x, y), np.minimum(x, y))


def _attr_int(at, name):
    return ir.IntegerAttr(at[name]).value


_CMPI = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
         np.less, np.less_equal, np.greater, np.greater_equal]  # eq ne slt sle sgt sge ult..


def _cmpi(b, ops, rt, at):
    p = _attr_int(at, "predicate")
    view = _u if p >= 6 or p <= 1 else _s
    return _CMPI[p](*[view(o) for o in ops])


def _false(x, y):
    return np.zeros(np.broadcast(x, y).shape, np.bool_)


def _true(x, y):
    return np.ones(np.broadcast(x, y).shape, np.bool_)


# arith.cmpf predicates 0..7 are ordered (false, oeq, ogt, oge, olt, ole, one, ord) and 8..15
# unordered (ueq, ugt, uge, ult, ule, une, uno, true): ordered ones are false on NaN,
# unordered ones true.
_CMPF_ORD = [_false, np.equal, np.greater, np.greater_equal, np.less, np.less_equal,
             np.not_equal, _true]
_CMPF_UNO = [np.equal, np.greater, np.greater_equal, np.less, np.less_equal, np.not_equal,
             _false, _true]


def _cmpf(b, ops, rt, at):
    p = _attr_int(at, "predicate")
    x, y = np.asarray(ops[0]), np.asarray(ops[1])
    nan = np.isnan(x) | np.isnan(y)
    if p < 8:
        return _CMPF_ORD[p](x, y) & ~nan
    return _CMPF_UNO[p - 8](x, y) | nan


def _constant(b, ops, rt, at):
    a = at["value"]
    if isinstance(a, ir.DenseElementsAttr) or not hasattr(a, "value"):
        a = ir.DenseElementsAttr(a).get_splat_value()
    return np.full(rt.shape, a.value, rt.np)  # signless attrs hold the signed view, as we do


def _bitcast(b, ops, rt, at):
    src = _info(ops[0].type)
    x = np.asarray(ops[0])
    bits = (_round_bf16(x).view(np.uint32) >> np.uint32(16)).astype(np.uint16) if src.bf16 else x
    if src.f8:
        bits = _f8_encode(x, src.f8)
    if rt.f8:
        return _f8_decode(np.asarray(bits).view(np.uint8), rt.f8)
    if rt.bf16:
        wide = np.asarray(bits).view(np.uint16).astype(np.uint32)
        return (wide << np.uint32(16)).view(np.float32)
    return np.asarray(bits).view(rt.np)


def _convf(ops, rt):
    """extf/truncf; to float8 through float32 (f64 rounded to f32 first, as compiled)."""
    x = np.asarray(ops[0])
    if rt.f8:
        return _f8_decode(_f8_encode(x.astype(np.float32), rt.f8), rt.f8)
    if rt.bf16 and x.dtype == np.float64:  # rounded once, as cvt.rn.bf16.f64 (or sm_80's
        # round-to-odd sequence): a float32 rounded to odd, which `create` rounds to bf16
        with np.errstate(all="ignore"):
            r = x.astype(np.float32)
            diff = x - r.astype(np.float64)
        inexact = (diff != 0) & np.isfinite(r) & ((r.view(np.uint32) & np.uint32(1)) == 0)
        toward = np.where(diff > 0, np.float32(np.inf), np.float32(-np.inf))
        return np.where(inexact, np.nextafter(r, toward), r).astype(np.float32)
    return x.astype(rt.np)


def _load(b, ops, rt, at):
    a = _segments("tile.load", ops, at)
    addrs = np.asarray(a["ptr"]).reshape(-1)
    if a["mask"] is None:
        return b.memory.load(addrs, rt, (None, addrs.size)).reshape(rt.shape)
    mask = np.asarray(a["mask"]).reshape(-1)
    out = (np.zeros(addrs.shape, rt.np) if a["other"] is None
           else np.array(np.asarray(a["other"]).reshape(-1), rt.np))
    out[mask] = b.memory.load(addrs[mask], rt, (np.flatnonzero(mask), addrs.size))
    return out.reshape(rt.shape)


def _store(b, ops, rt, at):
    a = _segments("tile.store", ops, at)
    info = _info(a["ptr"].type).pointee_info()
    addrs = np.asarray(a["ptr"]).reshape(-1)
    vals = np.asarray(a["value"]).reshape(-1)
    lanes = (None, addrs.size)
    if a["mask"] is not None:
        mask = np.asarray(a["mask"]).reshape(-1)
        lanes = (np.flatnonzero(mask), addrs.size)
        addrs, vals = addrs[mask], vals[mask]
    b.memory.store(addrs, vals, info, lanes)


def _addptr(b, ops, rt, at):
    off = _s(ops[1]).astype(np.int64).astype(np.uint64)  # offsets sign-extend, as in a GEP
    return np.asarray(ops[0], np.uint64) + off * np.uint64(rt.size)


def _sitofp(b, ops, rt, at):
    return _s(ops[0]).astype(rt.np)


_OPS = {
    "arith.constant": _constant,
    "tile.get_program_id": lambda b, ops, rt, at: np.int32(b.pid[_attr_int(at, "axis")]),
    "tile.get_num_programs": lambda b, ops, rt, at: np.int32(b.grid[_attr_int(at, "axis")]),
    "tile.make_range": lambda b, ops, rt, at: np.arange(
        _attr_int(at, "start"), _attr_int(at, "end"), dtype=np.int32),
    "tile.splat": lambda b, ops, rt, at: np.full(rt.shape, np.asarray(ops[0]), rt.np),
    "tile.broadcast": lambda b, ops, rt, at: np.broadcast_to(np.asarray(ops[0]), rt.shape),
    "tile.addptr": _addptr,
    "tile.load": _load,
    "tile.store": _store,
    "tile.ptr_to_int": lambda b, ops, rt, at: np.asarray(ops[0]).view(np.int64),
    "tile.int_to_ptr": lambda b, ops, rt, at: np.asarray(ops[0]).view(np.uint64),
    # integer arithmetic wraps: computed on the unsigned view (defined overflow in C)
    "arith.addi": _ew(np.add, _u), "arith.subi": _ew(np.subtract, _u),
    "arith.muli": _ew(np.multiply, _u), "arith.shli": _ew(np.left_shift, _u),
    "arith.divsi": _ew(_div, _s), "arith.divui": _ew(_div, _u),
    "arith.remsi": _ew(np.fmod, _s), "arith.remui": _ew(np.fmod, _u),
    "arith.andi": _ew(np.bitwise_and, _u), "arith.ori": _ew(np.bitwise_or, _u),
    "arith.xori": _ew(np.bitwise_xor, _u),
    "arith.shrsi": _ew(np.right_shift, _s), "arith.shrui": _ew(np.right_shift, _u),
    "arith.maxsi": _ew(np.maximum, _s), "arith.maxui": _ew(np.maximum, _u),
    "arith.minsi": _ew(np.minimum, _s), "arith.minui": _ew(np.minimum, _u),
    "arith.cmpi": _cmpi,
    # floats compute in their own type (fp16 in fp16; bf16 rounded after the op)
    "arith.addf": _ew(np.add), "arith.subf": _ew(np.subtract), "arith.mulf": _ew(np.multiply),
    "arith.divf": _ew(np.true_divide), "arith.remf": _ew(np.fmod),
    "arith.negf": _ew(np.negative), "math.floor": _ew(np.floor),
    "arith.maximumf": _ew(_maximumf), "arith.minimumf": _ew(_minimumf),
    "arith.cmpf": _cmpf,
    "arith.select": _ew(np.where),
    # conversions
    "arith.extf": lambda b, ops, rt, at: _convf(ops, rt),
    "arith.truncf": lambda b, ops, rt, at: _convf(ops, rt),
    "arith.extsi": lambda b, ops, rt, at: _s(ops[0]).astype(rt.np),
    "arith.extui": lambda b, ops, rt, at: _u(ops[0]).astype(rt.np),
    "arith.trunci": lambda b, ops, rt, at: _u(ops[0]).astype(_UNSIGNED[rt.np]),
    "arith.sitofp": _sitofp,
    "arith.uitofp": lambda b, ops, rt, at: _u(ops[0]).astype(rt.np),
    "arith.fptosi": lambda b, ops, rt, at: _fptoint(ops[0], rt.np, False),
    "arith.fptoui": lambda b, ops, rt, at: _fptoint(ops[0], rt.np, True),
    "arith.bitcast": _bitcast,
}


# --------------------------------------------------------------------------------------------
# memory: the arrays passed as pointers, addressed by their real addresses

class _Memory:
    """Byte views of the argument arrays, found by address.  Overlapping arguments (the same
    array twice, or views of one array) merge into one region."""

    def __init__(self, kernel: JITFunction, regions):
        self.kernel = kernel
        self.codes = set()  # code objects of the kernel and the @jit functions it calls
        self.pid = (0, 0, 0)
        merged = []  # [lo, hi, writable, names]
        for lo, hi, writable, name in sorted(regions):
            if merged and lo < merged[-1][1]:
                m = merged[-1]
                m[1], m[2] = max(m[1], hi), m[2] and writable
                m[3].append(name)
            else:
                merged.append([lo, hi, writable, [name]])
        self.regions = merged
        self.starts = np.array([m[0] for m in merged], np.uint64)
        self.ends = np.array([m[1] for m in merged], np.uint64)
        self.bufs = [np.ctypeslib.as_array((ctypes.c_ubyte * (m[1] - m[0])).from_address(m[0]))
                     for m in merged]
        self.views = {}  # (region, dtype) -> typed view of the region

    def locate(self, addrs, nbytes, what, lanes):
        """[(region, lanes in it (None: all), byte offsets)] of `addrs`; IndexError if any
        is out of bounds.  `lanes` = (flat tile index of each address, tile size)."""
        idx = np.searchsorted(self.starts, addrs, side="right").astype(np.int64) - 1
        ok = idx >= 0
        if len(self.bufs):
            ok &= addrs + np.uint64(nbytes) <= self.ends[np.maximum(idx, 0)]
        if not ok.all():
            i = int(np.argmin(ok))
            raise IndexError(self._message(what, int(addrs[i]), nbytes, lanes, i))
        bad = addrs % np.uint64(nbytes) != 0
        if bad.any():
            i = int(np.argmax(bad))
            raise IndexError(self._message(what, int(addrs[i]), nbytes, lanes, i,
                                           f"is not aligned to {nbytes} bytes"))
        off = (addrs - self.starts[idx]).astype(np.int64)
        if (idx == idx[0]).all():  # the common case: one array
            return [(int(idx[0]), None, off)]
        return [(int(r), idx == r, off[idx == r]) for r in np.unique(idx)]

    def _view(self, r, dtype, off):
        """Region `r` as an array of `dtype` and the element indices of byte offsets `off`;
        bytes (and byte indices of each element's bytes) where `r` starts misaligned."""
        k = dtype.itemsize
        if self.regions[r][0] % k == 0:
            key = (r, dtype)
            v = self.views.get(key)
            if v is None:
                b = self.bufs[r]
                v = self.views[key] = b[:b.size - b.size % k].view(dtype)
            return v, off // k
        return self.bufs[r], (off[:, None] + np.arange(k)).reshape(-1)

    def load(self, addrs, info: _Info, lanes):
        out = np.empty(addrs.size, info.mem)
        if addrs.size:
            for r, sel, off in self.locate(addrs, info.size, "load", lanes):
                buf, i = self._view(r, info.mem, off)
                vals = buf[i].view(info.mem)
                if sel is None:
                    out = vals
                else:
                    out[sel] = vals
        return _from_memory(out, info)

    def store(self, addrs, vals, info: _Info, lanes):
        if not addrs.size:
            return
        groups = self.locate(addrs, info.size, "store", lanes)
        vals = np.ascontiguousarray(_to_memory(vals, info))
        for r, sel, off in groups:
            if not self.regions[r][2]:
                raise ValueError(f"{self.location()}: kernel `{self.kernel.__name__}` stores "
                                 f"into read-only array `{'`/`'.join(self.regions[r][3])}`")
        for r, sel, off in groups:
            buf, i = self._view(r, info.mem, off)
            v = vals if sel is None else vals[sel]
            buf[i] = v.view(buf.dtype)

    def _message(self, what, addr, nbytes, lanes, i, problem="is outside every array argument"):
        idx, n = lanes
        lane = i if idx is None else int(idx[i])
        near = ""
        if self.regions:  # name the nearest argument, most likely the one meant
            lo, hi, _, names = min(self.regions, key=lambda r: max(r[0] - addr, addr - r[1]))
            names = "`/`".join(names)
            near = (f" (byte {addr - lo} of `{names}`, which has {hi - lo})" if addr >= lo
                    else f" ({lo - addr} bytes before `{names}`)")
        return (f"{self.location()}: out-of-bounds {what} in kernel `{self.kernel.__name__}` at "
                f"program {self.pid}: the {nbytes}-byte access at address {addr:#x} (element "
                f"{lane} of {n}) {problem}{near}; mask it off or fix the offsets")

    def location(self):
        """file:line of the innermost kernel frame executing now."""
        f = sys._getframe()
        while f is not None and f.f_code not in self.codes:
            f = f.f_back
        if f is None:
            return self.kernel.filename
        return f"{f.f_code.co_filename}:{f.f_lineno}"


# --------------------------------------------------------------------------------------------
# the builder

class InterpreterBuilder(S.Builder):
    """`semantic.Builder` whose ops are evaluated on the spot with numpy."""

    is_interpreter = True  # builtins with regions (reduce, scan) evaluate directly
    # what language.core's tensor operators and builtins call (it imports no frontend)
    impls = IMPLS
    semantic = S
    subscript = staticmethod(subscript)

    def wrap(self, array, dtype) -> tensor:
        """A tensor of `dtype` holding the numpy `array` (for builtins that compute directly)."""
        shape = tuple(np.shape(array))
        info = _info(tensor_ir_type(dtype, shape))
        return tensor(_wrap(np.asarray(array, info.np), tensor_ir_type(dtype, shape)), dtype,
                      shape)

    def __init__(self, context, memory: _Memory, grid):
        super().__init__(context)
        self.memory = memory
        self.grid = grid
        self.pid = (0, 0, 0)

    def create(self, name, operands, result_types, attributes=None) -> list:
        row = _OPS.get(name)
        if row is None:
            raise NotImplementedError(f"the interpreter does not support `{name}` yet")
        rt = _info(result_types[0]) if result_types else None
        r = row(self, operands, rt, attributes or {})
        if rt is None:
            return []
        r = np.asarray(r)
        if r.dtype != rt.np:
            r = (r & 1).astype(np.bool_) if rt.np == np.bool_ else r.astype(rt.np)  # i1 wraps
        if rt.bf16:
            r = _round_bf16(r)
        if r.shape != rt.shape:  # an interpreter bug, not a user error
            raise AssertionError(f"{name} produced shape {r.shape}, expected {rt.shape}")
        return [_wrap(r, result_types[0])]

    # used by language.core for print() and Python conversions of values
    def numpy(self, t: tensor) -> np.ndarray:
        """The values of `t` as numpy shows them (unsigned ints unsigned, bf16 as float32)."""
        a = np.asarray(t.handle)
        return _u(a) if t.dtype.is_int_unsigned() else a

    def python_value(self, t: tensor):
        return self.numpy(t).item()

    def format(self, t: tensor) -> str:
        a = self.numpy(t)
        fmt = {"int": hex} if t.dtype.is_ptr() else None
        body = np.array2string(a, separator=", ", formatter=fmt) if a.ndim else (
            hex(a.item()) if fmt else repr(a.item()))
        return f"tensor({body}, dtype={t.dtype})"


# --------------------------------------------------------------------------------------------
# arguments

def _bind(fn: JITFunction, values):
    """The kernel's arguments as the interpreter passes them, and the memory regions.
    Constexprs stay Python values; runtime scalars and pointers become scalar tensors typed
    as compiled kernels type them (an int equal to 1 is specialized to a constant there); a
    tuple argument becomes a `tl.tuple` of its members bound so (constexpr members as
    constexprs, as compiled)."""
    args, regions = [], []
    for name, a in zip(fn.arg_names, values):
        if isinstance(a, core.constexpr):
            a = a.value
        if name in fn.constexprs or a is None:
            args.append(a)
            continue
        args.append(_bind_value(fn, name, a, regions, name in fn.do_not_specialize,
                                name in fn.const_params))
    return args, regions


def _bind_value(fn, name, a, regions, nospec, const=False):
    if isinstance(a, tuple):  # constant members as plain values (as constexpr parameters)
        vals = []
        for i, m in enumerate(a):
            label = member_label(name, i)
            if m is None or is_constant_member(m):
                vals.append(m.value if isinstance(m, core.constexpr) else m)
            else:
                vals.append(_bind_value(fn, label, m, regions, nospec))
        return argument_tuple(name, vals, arg_fields(a))
    if isinstance(a, list):
        raise located(list_message(fn, name), fn.fn, exc=TypeError)
    if isinstance(a, TensorDescriptor):
        return _descriptor(fn, name, a, regions)
    if isinstance(a, np.generic) and \
            not _NUMPY_DTYPES.get(a.dtype.name, "fp8").startswith("fp8"):
        # a numpy scalar (np.float16(1.5), np.uint8(3)) is a parameter of its own type
        dt = core.DTYPES[_NUMPY_DTYPES[a.dtype.name]]
        store = _info(tensor_ir_type(dt, ())).np
        v = np.array(a).view(store) if np.dtype(store).itemsize == a.dtype.itemsize \
            and a.dtype.kind != "b" else np.array(a).astype(store)
    elif isinstance(a, (bool, int, float)):
        if a == 1 and type(a) is int and not nospec:
            return SpecializedOne(1)
        try:
            dt = S.python_scalar_dtype(a)
        except S.SemanticError as e:
            raise located(f"argument `{name}` of {fn.__name__}: {e}", fn.fn,
                          exc=IntegerOverflowError) from None
        v = np.array(a).astype(_info(tensor_ir_type(dt, ())).np) if dt != core.uint64 \
            else np.array(a, np.uint64).view(np.int64)
    else:
        elem, v, region = _pointer(fn, name, a)
        dt = core.pointer_type(elem, const=const)  # (`name: tl.const`)
        v = np.uint64(v)
        if region[1] > region[0]:
            regions.append(region)
    return tensor(_wrap(v, tensor_ir_type(dt, ())), dt)


def _types_check(fn, args, ctx):
    """The compiler's checks of the types loops and `if`s carry, on this specialization
    (static_check.types_check); kernels taking a TensorDescriptor are left out."""
    signature, constants = {}, {}
    for name, a in zip(fn.arg_names, args):
        if _has_descriptor(a):
            return
        if isinstance(a, tensor):
            signature[name] = a.dtype
        elif isinstance(a, tuple) and name not in fn.constexprs:
            signature[name] = _tuple_spec(a)
        else:
            constants[name] = int(a) if isinstance(a, SpecializedOne) else a
    types_check(fn, signature, constants, ctx)


def _has_descriptor(a) -> bool:
    """Whether a bound argument is a host tensor descriptor or a tuple holding one."""
    return isinstance(a, tensor_descriptor) or \
        (isinstance(a, tuple) and any(_has_descriptor(m) for m in a))


def _tuple_spec(t) -> tuple_type:
    """The compiler's `tuple_type` of a bound tuple argument."""
    return tuple_type([_tuple_spec(m) if isinstance(m, tuple) else m.dtype
                       if isinstance(m, tensor) else core.constexpr_type(
                           int(m) if isinstance(m, SpecializedOne) else m) for m in t],
                      t.fields)


class SpecializedOne(int):
    """An int argument equal to 1: a constant to the kernel (as compiled), with the `.dtype`
    of the int32 it stands for."""
    dtype = core.int32


def _scalar(v, dt) -> tensor:
    return tensor(_wrap(np.array(v).astype(_info(tensor_ir_type(dt, ())).np),
                        tensor_ir_type(dt, ())), dt)


def _descriptor(fn, name, a: TensorDescriptor, regions) -> tensor_descriptor:
    """A host TensorDescriptor argument as the kernel sees it (the compiled kernel's
    parameters: base, int32 shape, int64 strides)."""
    elem, v, region = _pointer(fn, name, a.base)
    dt = core.pointer_type(elem)
    if region[1] > region[0]:
        regions.append(region)
    base = tensor(_wrap(np.uint64(v), tensor_ir_type(dt, ())), dt)
    return tensor_descriptor((base, [_scalar(s, core.int32) for s in a.shape],
                              [_scalar(s, core.int64) for s in a.strides], a.block_shape,
                              a.padding))


def _as_python(jfn: JITFunction, memo: dict, codes: set):
    """`jfn`'s Python function, with the @jit functions it names (globals and closure
    cells) replaced by theirs, since a JITFunction cannot be called directly."""
    if jfn in memo:
        return memo[jfn]
    f = jfn.fn
    g = dict(f.__globals__)
    for name in TILELESS_BUILTINS:  # (abs(tile), len(tile), ... are compile errors)
        g.setdefault(name, guarded_builtin(name))
    for name, which in (("min", builtins.min), ("max", builtins.max)):  # (the compiler's)
        g.setdefault(name, functools.partial(builtin_min_max, which))
    for name in ("int", "float", "bool"):  # of a runtime scalar: debugging helpers here
        g.setdefault(name, guarded_call(getattr(builtins, name), shaped_only=True))
    for name, v in list(g.items()):  # plain Python functions take no tiles (a compile error)
        if isinstance(v, types.FunctionType) and \
                not (v.__module__ or "").startswith("tilework"):
            g[name] = guarded_call(v)
    code, closure = code_to_run(jfn, g)  # (`and`/`or`/`not`/`c if t else e`: the compiler's)
    new = types.FunctionType(code, g, f.__name__, f.__defaults__, closure)
    memo[jfn] = new
    codes.add(code)
    for k, v in g.items():
        if isinstance(v, JITFunction):
            g[k] = _as_python(v, memo, codes)
    if closure:
        cells = []
        for c in closure:
            try:
                v = c.cell_contents
            except ValueError:  # an empty cell
                v = None
            cells.append(types.CellType(_as_python(v, memo, codes))
                         if isinstance(v, JITFunction) else c)
        new = types.FunctionType(code, g, f.__name__, f.__defaults__, tuple(cells))
        memo[jfn] = new
    new.__kwdefaults__ = f.__kwdefaults__
    return new


def _python_of(memo: dict, codes: set, jfn: JITFunction):
    """What a @jit function reached otherwise than by name (an aggregate's member, a module's
    attribute) runs as: checked on its source first, as one called by name."""
    if jfn not in memo:
        static_check(jfn, called=True)
    return _as_python(jfn, memo, codes)


_CONTEXT = None


def _context() -> ir.Context:
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = new_context()
    return _CONTEXT


def interpret(fn: JITFunction, grid, values, options=None):
    """Runs `fn` over `grid` on the CPU.  `values` are the bound arguments in parameter
    order; launch options (num_warps, ...) change no value here, yet are checked as the
    compiler checks them (num_warps a power of 2, ...)."""
    # (errors from here on are Triton's InterpreterError, the original one its `__cause__`)
    _guarded(_check_options, options)
    _guarded(static_check, fn)  # what the compiler rejects on the source alone, here too
    ctx = _context()
    with ctx, ir.Location.unknown(ctx):
        args, regions = _bind(fn, values)
        _guarded(_types_check, fn, args, ctx)
        memory = _Memory(fn, regions + REACHABLE)
        memo = {}  # (also for a @jit function called as a member or a module attribute)
        pyfn = _as_python(fn, memo, memory.codes)
        g = normalize_grid(fn, grid, values)  # a callable grid gets the bound arguments by name
        b = InterpreterBuilder(ctx, memory, g)
        b.launch_options = options or {}  # device_assert reads `debug`
        b.python_of = functools.partial(_python_of, memo, memory.codes)
        b.target = emulated_target(b.launch_options)  # what tl.target_info answers for
        prev = core.set_active_builder(b)
        try:
            with np.errstate(all="ignore"):  # inf/NaN and wrapping as on the GPU
                for z in range(g[2]):
                    for y in range(g[1]):
                        for x in range(g[0]):
                            b.pid = memory.pid = (x, y, z)
                            try:
                                pyfn(*args)
                            except InterpreterError:
                                raise
                            except Exception as e:
                                if isinstance(e, RecursionError):  # (the compiler's words)
                                    e = recursion_error(e, memory.codes)
                                note = f"while interpreting {fn.__name__} at program id " \
                                    f"{b.pid} of grid {g}"
                                err = interpreter_error(
                                    e, kernel_location(e.__traceback__, memory.codes))
                                for x_ in (e, err):
                                    x_.add_note(note)
                                raise err.with_traceback(e.__traceback__) from e  # (frames kept)
        finally:
            core.set_active_builder(prev)
    return None


def _check_options(options) -> None:
    """Refuses the launch options the compiler refuses, with its messages (the options
    object's own checks; the environment is not read)."""
    CompileOptions(**{k: v for k, v in (options or {}).items() if v is not None})


def _guarded(check, *args):
    try:
        check(*args)
    except Exception as e:
        raise interpreter_error(e) from e


# op families keep their rows in their own modules
from . import interp_debug, interp_math, interp_memory, interp_shape  # noqa: E402

for _family in (interp_debug, interp_math, interp_memory, interp_shape):
    _OPS.update(_family.ROWS)


def supported_ops() -> frozenset:
    """The op names the interpreter has a row for (test_op_coverage checks every declared
    tile op against it)."""
    return frozenset(_OPS)
