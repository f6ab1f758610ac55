"""Which `tile.dot`s run on AMD matrix cores (CDNA's MFMA), with which instruction and layouts.

`amd_dot_layouts(target, op, num_warps, options)` -> (acc, a, b) layouts or None (the FMA path);
`choose_dot_layouts` (dot_layouts.py) calls it on AMD targets.  `mfma_kind` finds the instruction
again from the layouts (the rule, `rules/dot_mfma.py`).  A leaf: it imports only the dialects.

Instructions per operand type (CDNA3/CDNA4 ISA, "MFMA"; K doubled from gfx950), each as
(rocdl op, M = N, K, operand elements per lane `k_width`, how a lane passes them):

| operands | gfx90a | gfx942 | gfx950 |
| --- | --- | --- | --- |
| f16 (f32 or f16 acc) | 32x32x8f16, 16x16x16f16 | same | + 32x32x16.f16, 16x16x32.f16 |
| bf16 | 32x32x8bf16.1k, 16x16x16bf16.1k | same | + 32x32x16.bf16, 16x16x32.bf16 |
| int8 -> i32 | 32x32x8i8, 16x16x16i8 | 32x32x16.i8, 16x16x32.i8 | same as gfx942 |
| f32 "tf32" | FMA | 32x32x4.xf32, 16x16x8.xf32 | FMA (no xf32) |
| fp8 e4m3fn/e5m2 (OCP) | FMA | FMA (its MFMA reads fnuz) | 32x32x16.{fp8,bf8}.{fp8,bf8}, 16x16x32 |
| fp8 e4m3fnuz/e5m2fnuz | FMA | 32x32x16.{fp8,bf8}.{fp8,bf8}, 16x16x32 | FMA (its MFMA reads OCP) |

An f16 accumulator is widened to f32 and rounded once at the end (the FMA path's rounding).
The instruction shape is `options.matrix_instr_nonkdim` when set, else 32 when the dot's M and
N hold a 32x32 tile, else 16; the largest K the dot's K holds.  `kpack` = 2 gives each lane
2 k_width consecutive K elements (wider operand loads); the rule issues two instructions per
K block, on the first and second halves, which A and B agree on.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import DotOperand, layout_of
from tilework.dialects.layout_amd import AmdMfma, AmdWmma


@dataclass(frozen=True)
class MfmaKind:
    op: str        # the rocdl op
    m: int         # M = N
    k: int         # K of one instruction
    k_width: int   # operand elements per lane
    operand: str   # a lane's operand type: a vector of the elements or packed bytes (i32/i64)
    acc: str       # f32 | i32


def _k(op, m, k, kw, operand, acc="f32"):
    return MfmaKind("rocdl.mfma." + op, m, k, kw, operand, acc)


_F16 = [_k("f32.32x32x8f16", 32, 8, 4, "vector<4xf16>"),
        _k("f32.16x16x16f16", 16, 16, 4, "vector<4xf16>")]
_F16_950 = [_k("f32.32x32x16.f16", 32, 16, 8, "vector<8xf16>"),
            _k("f32.16x16x32.f16", 16, 32, 8, "vector<8xf16>")]
_BF16 = [_k("f32.32x32x8bf16.1k", 32, 8, 4, "vector<4xi16>"),
         _k("f32.16x16x16bf16.1k", 16, 16, 4, "vector<4xi16>")]
_BF16_950 = [_k("f32.32x32x16.bf16", 32, 16, 8, "vector<8xbf16>"),
             _k("f32.16x16x32.bf16", 16, 32, 8, "vector<8xbf16>")]
_I8_90A = [_k("i32.32x32x8i8", 32, 8, 4, "i32", "i32"), _k("i32.16x16x16i8", 16, 16, 4, "i32", "i32")]
_I8 = [_k("i32.32x32x16.i8", 32, 16, 8, "i64", "i32"),
       _k("i32.16x16x32.i8", 16, 32, 8, "i64", "i32")]
_XF32 = [_k("f32.32x32x4.xf32", 32, 4, 2, "vector<2xf32>"),
         _k("f32.16x16x8.xf32", 16, 8, 2, "vector<2xf32>")]
_FP8_NAME = {"f8E4M3FN": "fp8", "f8E5M2": "bf8", "f8E4M3FNUZ": "fp8", "f8E5M2FNUZ": "bf8"}
_FNUZ = ("f8E4M3FNUZ", "f8E5M2FNUZ")


def _fp8(a, b):
    n = f"{_FP8_NAME[a]}.{_FP8_NAME[b]}"
    return [_k(f"f32.32x32x16.{n}", 32, 16, 8, "i64"), _k(f"f32.16x16x32.{n}", 16, 32, 8, "i64")]


def _accs(ea):
    return ("i32",) if ea == "i8" else ("f32", "f16") if ea == "f16" else ("f32",)


def mfma_kinds(target, ea: str, eb: str, ec: str, precision: str) -> list:
    """Every MFMA of `target` for a dot of these element types, or [] (with `why_not`)."""
    return [] if why_not(target, ea, eb, ec, precision) else _kinds(target, ea, eb)


def _kinds(target, ea, eb):
    cap = target.capability
    if ea in _FP8_NAME:
        return _fp8(ea, eb)
    if ea == "f16":
        return (_F16_950 if cap >= 0x950 else []) + _F16
    if ea == "bf16":
        return (_BF16_950 if cap >= 0x950 else []) + _BF16
    if ea == "i8":
        return _I8 if cap >= 0x940 else _I8_90A
    return _XF32


def why_not(target, ea, eb, ec, precision):
    """None when `target` has an MFMA for the dot, else the reason (naming the architecture)."""
    arch = target.arch
    if not any(m.startswith("mfma") for m in target.matrix):
        return f"{arch} has no MFMA"
    if ea in _FP8_NAME and eb in _FP8_NAME:
        if not target.fp8:
            return f"{arch} has no fp8 MFMA ({ea} x {eb})"
        fnuz = [e in _FNUZ for e in (ea, eb)]
        if fnuz[0] != fnuz[1]:
            return f"{arch} has no MFMA for {ea} x {eb} (an fnuz and an OCP fp8 format)"
        if fnuz[0] and "fnuz" not in target.fp8:
            return f"{arch}'s fp8 MFMA reads the OCP formats, not fnuz {ea} x {eb}"
        if not fnuz[0] and "ocp" not in target.fp8:
            return f"{arch}'s fp8 MFMA reads the fnuz formats, not OCP {ea} x {eb}"
    elif ea != eb or ea not in ("f16", "bf16", "i8", "f32"):
        return f"{arch} has no MFMA for {ea} x {eb}"
    if ec not in _accs(ea):
        return f"{arch} has no MFMA for {ea} x {eb} -> {ec}"
    if ea == "f32":
        if precision != "tf32":
            return f"fp32 operands with input_precision {precision!r} (MFMA has xf32 only)"
        if target.capability != 0x942:
            return f"{arch} has no xf32 MFMA"
    return None


def _warps(shape, num_warps, mi):
    """Warps along (M, N): double the dimension with more instruction tiles per warp left, M on
    ties, while the tile holds them; the rest along N (copies)."""
    m, n = shape
    wm = wn = 1
    while wm * wn < num_warps:
        if m // mi // wm >= n // mi // wn and wm < m // mi:
            wm *= 2
        elif wn < n // mi:
            wn *= 2
        elif wm < m // mi:
            wm *= 2
        else:
            wn *= 2
    return wm, wn


def _producer(v):
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None  # a block argument (a loop-carried value): the chain is not followed
    return owner.operation if hasattr(owner, "operation") else owner


def _is_dot(op) -> bool:
    return op.name == "tile.dot"


def chained_dot(op, limit: int = 64) -> bool:
    """Whether `tile.dot` `op` is one link of a chain of dots: its result reaches operand a of
    another dot, or its operand a comes from another dot's result (attention's scores -> P ->
    P @ V), through at most `limit` ops.  The two dots then want the same warps: the row
    statistics of the first scale the second's accumulator and P becomes its a operand, which
    warps split differently along M or N move through LDS every iteration (a whole [M, D]
    fp32 accumulator, held in both layouts)."""
    seen, todo = set(), [r for r in op.results]
    while todo and len(seen) < limit:  # forward: the result's users
        v = todo.pop()
        for use in v.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if _is_dot(user) and use.operand_number == 0:
                return True
            if user.name == "scf.yield" or user in seen:
                continue
            seen.add(user)
            todo.extend(user.results)
    seen, todo = set(), [op.operands[0]]
    while todo and len(seen) < limit:  # backward: operand a's producers
        prod = _producer(todo.pop())
        if prod is None or prod in seen:
            continue
        if _is_dot(prod):
            return True
        seen.add(prod)
        todo.extend(prod.operands)
    return False


def _chain_warps(shape, num_warps, mi):
    """A chained dot's warps: along M as far as the instruction tiles go (every wave holds
    whole rows of the scores, so the row statistics need no cross-wave step), the rest along
    N; both dots of a chain agree whatever their N."""
    wm = min(num_warps, max(1, shape[0] // mi))
    return wm, num_warps // wm


def _opt(options, name, default):
    return getattr(options, name, default) if options is not None else default


def amd_dot_layouts(target, op, num_warps: int, options=None):
    """(acc, a, b) layouts of the MFMA path for `tile.dot` `op`, or None (FMA)."""
    a, b, c = (op.operands[i].type for i in range(3))
    shape = tuple(T.shape_of(c))
    if len(shape) != 2:
        return None  # batched dots stay on the FMA path
    ea, eb, ec = (str(T.element_type(t)) for t in (a, b, c))
    if target.warp_size == 32:
        return _wmma_layouts(target, ea, eb, ec, shape, T.shape_of(a)[1], num_warps,
                             chained_dot(op))
    precision = ir.StringAttr(op.attributes["input_precision"]).value
    kinds = mfma_kinds(target, ea, eb, ec, precision)
    M, N = shape
    K = T.shape_of(a)[1]
    want = _opt(options, "matrix_instr_nonkdim", 0) or (32 if M >= 32 and N >= 32 else 16)
    fits = [k for k in kinds if k.m == want and k.m <= M and k.m <= N and k.k <= K]
    if not fits:
        return None
    kind = max(fits, key=lambda k: k.k)
    kw = kind.k_width
    if _opt(options, "kpack", 1) == 2 and 2 * kind.k <= K:
        kw *= 2
    acc = AmdMfma(_warps(shape, num_warps, kind.m), (kind.m, kind.m), False)
    return acc, DotOperand(0, acc, kw), DotOperand(1, acc, kw)


def wmma_version(target) -> int:
    return 1 if target.has("wmma_v1") else 2 if target.has("wmma_v2") else 0


@dataclass(frozen=True)
class WmmaKind:
    op: str        # the rocdl op (16x16x16)
    operand: str   # a lane's operand: the elements, bf16 as i16 bits, bytes packed in i32s
    acc: str       # f32 | i32


def wmma_kind(target, ea: str, eb: str, ec: str):
    """RDNA's WMMA for a dot of these element types (RDNA3/RDNA4 ISA, "WMMA"): f16 -> f32/f16,
    bf16 -> f32, int8 -> i32 (`iu8`, signed), and on gfx12 OCP fp8/bf8 -> f32; else the
    reason, naming the architecture.  A lane passes 16 K elements on gfx11, 8 on gfx12."""
    version, arch = wmma_version(target), target.arch
    if not version:
        return f"{arch} has no WMMA"
    kw = 16 if version == 1 else 8
    if ea in _FP8_NAME or eb in _FP8_NAME:
        if ea not in _FP8_NAME or eb not in _FP8_NAME:
            return f"{arch} has no WMMA for {ea} x {eb}"
        if "ocp" not in target.fp8:
            return f"{arch} has no fp8 WMMA ({ea} x {eb})"
        if ea in _FNUZ or eb in _FNUZ:
            return f"{arch}'s fp8 WMMA reads the OCP formats, not fnuz {ea} x {eb}"
        if ec != "f32":
            return f"{arch} has no WMMA for {ea} x {eb} -> {ec}"
        return WmmaKind(f"rocdl.wmma.f32.16x16x16.{_FP8_NAME[ea]}_{_FP8_NAME[eb]}",
                        f"vector<{kw // 4}xi32>", "f32")
    if ea == eb == "f16" and ec in ("f32", "f16"):
        return WmmaKind("rocdl.wmma.f32.16x16x16.f16", f"vector<{kw}xf16>", "f32")
    if ea == eb == "bf16" and ec == "f32":
        return WmmaKind("rocdl.wmma.f32.16x16x16.bf16", f"vector<{kw}xi16>", "f32")
    if ea == eb == "i8" and ec == "i32":
        return WmmaKind("rocdl.wmma.i32.16x16x16.iu8", f"vector<{kw // 4}xi32>", "i32")
    return f"{arch} has no WMMA for {ea} x {eb} -> {ec}"


def _wmma_layouts(target, ea, eb, ec, shape, K, num_warps, chained=False):
    """RDNA: dots of at least 16x16x16 in a type `wmma_kind` takes, on `v_wmma_*_16x16x16_*`
    (gfx11: a lane holds a whole 16-element K row, lanes 16-31 copying 0-15; gfx12: 8, lanes
    16-31 the upper K half).  Other types stay on FMAs."""
    version = wmma_version(target)
    M, N = shape
    if isinstance(wmma_kind(target, ea, eb, ec), str) or min(M, N, K) < 16:
        return None
    warps = (_chain_warps if chained else _warps)(shape, num_warps, 16)
    acc = AmdWmma(version, warps)
    kw = 16 if version == 1 else 8
    return acc, DotOperand(0, acc, kw), DotOperand(1, acc, kw)


def mfma_kind(target, op, k_width: int):
    """The instruction a dot laid out for MFMA runs (its layouts' instruction M and k_width),
    or the reason there is none (a str naming the architecture)."""
    ea, eb, ec = (str(T.element_type(op.operands[i].type)) for i in range(3))
    precision = ir.StringAttr(op.attributes["input_precision"]).value
    why = why_not(target, ea, eb, ec, precision)
    if why:
        return f"tile.dot: {why}"
    m = layout_of(op.results[0].type).instr_shape[0]
    kinds = [k for k in _kinds(target, ea, eb) if k.m == m and k_width % k.k_width == 0]
    if not kinds:
        return f"tile.dot: {target.arch} has no {m}x{m} MFMA for {ea} with k_width {k_width}"
    return max(kinds, key=lambda k: k.k_width)


def amd_operands(op):
    """(acc, a, b) layouts when `op` is laid out for MFMA, else None."""
    la, lb, lc = (layout_of(op.operands[i].type) for i in range(3))
    lr = layout_of(op.results[0].type)
    if not (isinstance(lr, AmdWmma) or isinstance(lr, AmdMfma) and not lr.transposed) \
            or lc != lr:
        return None
    if not all(isinstance(x, DotOperand) and x.parent == lr and x.op_idx == i
               for i, x in enumerate((la, lb))):
        return None
    if la.k_width != lb.k_width:
        return None
    return lr, la, lb
