"""CDNA's MFMA in the SIMT emulator (a mixin of `simt_emulator.Emulator`): `rocdl.mfma.*` ops run
per wave of 64 from the instructions' register layouts (CDNA3 ISA, "Dependency and register
layout of MFMA"; the same as AMD's matrix instruction calculator prints), written here from the
ISA, not from the lowering's layout code:

    A (M x K): lane l, element e of its operand -> row l % M, K (l // M) * k_width + e
    B (K x N): lane l, element e -> K (l // N) * k_width + e, column l % N
    D 32x32:   lane l, value i -> row 8 (i // 4) + 4 (l // 32) + i % 4, column l % 32
    D 16x16:   lane l, value i -> row 4 (l // 16) + i, column l % 16

Operands are decoded by the instruction's name: f16, bf16 (the `.1k` forms take i16 bits), i8
(packed 4 or 8 to a lane), xf32 (fp32 bits, the low 13 mantissa bits ignored, as tf32), fp8
(OCP e4m3fn) and bf8 (OCP e5m2) on gfx950, their fnuz forms on gfx942.  The cbsz/abid/blgp
broadcast controls must be 0.
"""
from __future__ import annotations

import re

import numpy as np
import mlir.ir as ir

_NAME = re.compile(r"^rocdl\.mfma\.(f32|i32)\.(\d+)x(\d+)x(\d+)\.?(\w+(?:\.\w+)?)$")


class MfmaError(Exception):
    pass


def fp8_values(raw, fmt: str, fnuz: bool = False):
    """OCP fp8 bytes -> float64: "fp8" e4m3fn (bias 7, no inf, S.1111.111 NaN), "bf8" e5m2
    (bias 15, IEEE-like).  `fnuz` (gfx942's MFMA, CDNA3 ISA "FP8/BF8"): biases 8 and 16, no
    inf, 0x80 the only NaN (no negative zero)."""
    b = raw.astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    if fnuz:
        man, bias = (3, 8) if fmt == "fp8" else (2, 16)
        e, m = (b & 0x7F) >> man, b & ((1 << man) - 1)
        val = np.where(e == 0, m / 2.0**man * 2.0**(1 - bias),
                       (1 + m / 2.0**man) * 2.0**(e - bias))
        return np.where(b == 0x80, np.nan, sign * val)
    if fmt == "fp8":
        e, m = (b >> 3) & 0xF, b & 7
        val = np.where(e == 0, m / 8.0 * 2.0**-6, (1 + m / 8.0) * 2.0**(e - 7))
        val = np.where((e == 15) & (m == 7), np.nan, val)
    else:
        e, m = (b >> 2) & 0x1F, b & 3
        val = np.where(e == 0, m / 4.0 * 2.0**-14, (1 + m / 4.0) * 2.0**(e - 15))
        val = np.where(e == 31, np.where(m == 0, np.inf, np.nan), val)
    return sign * val


def _decode(kind: str, x, T: int, which: int, fnuz: bool = False):
    """A lane's operand (numpy [T] or [T, n]) -> [T, k_width] float64/int64 values."""
    raw = np.ascontiguousarray(x).view(np.uint8).reshape(T, -1)
    if kind == "f16":
        return raw.view(np.float16).astype(np.float64)
    if kind in ("bf16", "bf16.1k"):
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if kind == "i8":
        return raw.view(np.int8).astype(np.int64)
    if kind == "xf32":
        return (raw.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    parts = kind.split(".")
    if len(parts) == 2 and set(parts) <= {"fp8", "bf8"}:
        return fp8_values(raw, parts[which], fnuz)
    raise MfmaError(f"MFMA operand type {kind} is not emulated")


def mfma(name: str, a, b, c, ws: int, fnuz: bool = False):
    """D = A B + C per wave for the rocdl op `name`; c, D: [T, M*N/64].  `fnuz`: fp8/bf8
    operands in gfx942's formats (the same op names read OCP bytes on gfx950)."""
    m_ = _NAME.match(name)
    if m_ is None:
        raise MfmaError(f"op {name} is not an emulated MFMA")
    acc, M, N, K, kind = m_.group(1), int(m_.group(2)), int(m_.group(3)), int(m_.group(4)), \
        m_.group(5)
    if ws != 64 or M != N or M not in (16, 32):
        raise MfmaError(f"{name}: only 32x32 and 16x16 MFMAs on 64-wide waves are emulated")
    T = c.shape[0]
    av, bv = _decode(kind, a, T, 0, fnuz), _decode(kind, b, T, 1, fnuz)
    kw = av.shape[1]
    if kw * (64 // M) != K or bv.shape[1] != kw:
        raise MfmaError(f"{name}: {kw} operand elements per lane do not make K = {K}")
    intish = acc == "i32"
    cv = c.astype(np.int64 if intish else np.float64)
    nd = M * N // 64
    if cv.shape != (T, nd):
        raise MfmaError(f"{name}: accumulator of {cv.shape[1:]} values, expected {nd}")
    out = np.zeros((T, nd), cv.dtype)
    lanes = np.arange(64)
    i = np.arange(nd)
    if M == 32:
        rows = 8 * (i[None, :] // 4) + 4 * (lanes[:, None] // 32) + i[None, :] % 4
    else:
        rows = 4 * (lanes[:, None] // 16) + i[None, :]
    cols = np.broadcast_to((lanes % N)[:, None], rows.shape)
    for w in range(T // 64):
        sl = slice(64 * w, 64 * w + 64)
        A = np.zeros((M, K), av.dtype)
        B = np.zeros((K, N), bv.dtype)
        ks = (lanes[:, None] // M) * kw + np.arange(kw)[None, :]
        A[np.broadcast_to((lanes % M)[:, None], ks.shape), ks] = av[sl]
        B[(lanes[:, None] // N) * kw + np.arange(kw)[None, :],
          np.broadcast_to((lanes % N)[:, None], ks.shape)] = bv[sl]
        C = np.zeros((M, N), cv.dtype)
        C[rows, cols] = cv[sl]
        D = A @ B + C
        out[sl] = D[rows, cols]
    if intish:
        return ((out + 2**31) % 2**32 - 2**31).astype(np.int32)
    return out.astype(np.float32)


_WMMA = re.compile(r"^rocdl\.wmma\.(f32|i32)\.16x16x16\.(f16|bf16|iu8|(?:fp8|bf8)_(?:fp8|bf8))$")


def _wmma_decode(kind: str, x, T: int, which: int):
    """A lane's WMMA operand -> [T, elements] float64/int64: f16, bf16 (i16 bits), iu8 (signed
    bytes packed in i32s), fp8/bf8 (OCP bytes packed in i32s)."""
    raw = np.ascontiguousarray(x).view(np.uint8).reshape(T, -1)
    if kind == "f16":
        return raw.view(np.float16).astype(np.float64)
    if kind == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if kind == "iu8":
        return raw.view(np.int8).astype(np.int64)
    return fp8_values(raw, kind.split("_")[which])


def wmma(name: str, a, b, c, ws: int):
    """RDNA's v_wmma_*_16x16x16_* per wave of 32 (RDNA3 ISA and RDNA4 ISA, "WMMA"), the
    version read off the operand length: 16 elements a lane (gfx11: lane l holds A row l % 16,
    K 0-15; lanes 16-31 must repeat lanes 0-15) or 8 (gfx12: K 8 (l // 16) + e).  B is the
    same with columns.  D value i of lane l: row 2 i + l // 16 (gfx11) or i + 8 (l // 16)
    (gfx12), column l % 16.  i32 results wrap."""
    m_ = _WMMA.match(name)
    if m_ is None:
        raise MfmaError(f"op {name} is not an emulated WMMA")
    if ws != 32:
        raise MfmaError("WMMA runs on 32-wide waves")
    T = c.shape[0]
    av, bv = _wmma_decode(m_.group(2), a, T, 0), _wmma_decode(m_.group(2), b, T, 1)
    kw = av.shape[1]
    if kw not in (8, 16) or bv.shape[1] != kw or c.shape[1:] != (8,):
        raise MfmaError(f"WMMA operands of {kw} halves and {c.shape[1:]} accumulators")
    lanes = np.arange(32)
    i = np.arange(8)
    if kw == 16:
        rows = 2 * i[None, :] + lanes[:, None] // 16
        koff = np.zeros(32, np.int64)
    else:
        rows = i[None, :] + 8 * (lanes[:, None] // 16)
        koff = 8 * (lanes // 16)
    cols = np.broadcast_to((lanes % 16)[:, None], rows.shape)
    out = np.zeros((T, 8), np.float64)
    for w in range(T // 32):
        sl = slice(32 * w, 32 * w + 32)
        aw, bw = av[sl], bv[sl]
        if kw == 16 and not (np.array_equal(aw[:16], aw[16:]) and np.array_equal(bw[:16],
                                                                                  bw[16:])):
            raise MfmaError("gfx11 WMMA: lanes 16-31 must repeat the operands of lanes 0-15")
        A = np.zeros((16, 16))
        B = np.zeros((16, 16))
        ks = koff[:, None] + np.arange(kw)[None, :]
        A[np.broadcast_to((lanes % 16)[:, None], ks.shape), ks] = aw
        B[ks, np.broadcast_to((lanes % 16)[:, None], ks.shape)] = bw
        C = np.zeros((16, 16))
        C[rows, cols] = c[sl]
        out[sl] = (A @ B + C)[rows, cols]
    if m_.group(1) == "i32":
        return ((out + 2**31) % 2**32 - 2**31).astype(np.int32)
    return out.astype(np.float32)


class MfmaOps:
    """Handlers the emulator looks up for `rocdl.mfma.*` and `rocdl.wmma.*` (see
    `matrix_handler`)."""

    def matrix_handler(self, name: str):
        if name.startswith("rocdl.mfma."):
            return self.op_rocdl_mfma
        if name.startswith("rocdl.wmma."):
            return self.op_rocdl_wmma
        return None

    def op_rocdl_wmma(self, op, args, env, act):
        if not act.all():
            raise MfmaError("a WMMA reached by only some threads")
        if op.name.endswith(".iu8") and not all(
                k in op.attributes and ir.BoolAttr(op.attributes[k]).value
                for k in ("signA", "signB")):
            raise MfmaError("iu8 WMMA: only signed operands (signA, signB) are emulated")
        if "clamp" in op.attributes and ir.BoolAttr(op.attributes["clamp"]).value:
            raise MfmaError("WMMA clamp is not emulated")
        return [wmma(op.name, *args, self.ws)]

    def op_rocdl_mfma(self, op, args, env, act):
        if not act.all():
            raise MfmaError("an MFMA reached by only some threads")
        a, b, c, *ctrl = args
        if len(ctrl) != 3 or any(np.any(x != 0) for x in ctrl):
            raise MfmaError(f"{op.name}: cbsz/abid/blgp must be 0")
        return [mfma(op.name, a, b, c, self.ws, getattr(self, "arch", "") == "gfx942")]
