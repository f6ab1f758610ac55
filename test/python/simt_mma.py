"""mma.sync (m16n8k8/k16/k32) and ldmatrix for the SIMT emulator (`simt_emulator.Emulator`
mixes `MmaOps` in; `gpu_sim.py` uses `mma_sync`): each warp's fragments gathered into matrices
as the PTX ISA lays them out, multiplied exactly, and scattered back."""
from __future__ import annotations

import numpy as np

import mlir.ir as ir


class MmaError(Exception):
    pass


class MmaOps:
    """The emulator's ldmatrix and mma.sync ops (it provides `Error`, `SMEM_BASE`, `np_type`,
    `_bytes`, `_check_read`, `T` and `ws`)."""

    def op_nvvm_ldmatrix(self, op, a, env, act):
        """ldmatrix.sync.aligned.m8n8.x<num>[.trans].b16 (PTX ISA): lanes 8q..8q+7 give the
        addresses of the 8 rows (16 bytes each) of matrix q; lane l receives row l / 4,
        elements 2(l % 4) and 2(l % 4) + 1 of each matrix (.trans: of its transpose)."""
        if not act.all():
            raise self.Error("ldmatrix reached by only some threads")
        num = ir.IntegerAttr(op.attributes["num"]).value
        trans = "col" in str(op.attributes["layout"])
        addrs = a[0]
        if (addrs < self.SMEM_BASE).any() or ((addrs - self.SMEM_BASE) % 16).any():
            raise self.Error("ldmatrix row addresses must be 16-byte aligned shared memory")
        lanes_used = np.arange(self.T) % self.ws < 8 * num
        shared, buf, idx = self._bytes(addrs, 16, lanes_used)
        self._check_read(idx, np.nonzero(lanes_used)[0])
        rows = np.zeros((self.T, 8), np.uint16)
        rows[lanes_used] = buf[idx].copy().view(np.uint16)
        out = []
        for q in range(num):
            r = np.zeros((self.T, 2), np.uint16)
            for t in range(self.T):
                w, lane = divmod(t, self.ws)
                m = rows[w * self.ws + 8 * q: w * self.ws + 8 * q + 8]  # [row, col]
                if trans:
                    r[t] = m[2 * (lane % 4): 2 * (lane % 4) + 2, lane // 4]
                else:
                    r[t] = m[lane // 4, 2 * (lane % 4): 2 * (lane % 4) + 2]
            out.append(r.view(np.int32)[:, 0].copy())
        return [tuple(out)]

    def op_nvvm_stmatrix(self, op, a, env, act):
        """stmatrix.sync.aligned.m8n8.x<n>.b16 (PTX ISA, sm_90): lanes 8q..8q+7 give the
        addresses of the 8 rows of matrix q; lane l's word q is row l / 4, elements 2(l % 4)
        and 2(l % 4) + 1 of it (race-checked as that lane's write)."""
        if not act.all():
            raise self.Error("stmatrix reached by only some threads")
        if "col" in str(op.attributes["layout"]):
            raise self.Error("stmatrix .trans is not emulated")
        addrs, words = a[0], a[1:]
        num = len(words)
        if (addrs < self.SMEM_BASE).any() or ((addrs - self.SMEM_BASE) % 16).any():
            raise self.Error("stmatrix row addresses must be 16-byte aligned shared memory")
        for q, word in enumerate(words):
            w = np.asarray(word).astype(np.int32)
            for warp in range(self.T // self.ws):
                t0 = warp * self.ws
                rows = addrs[t0 + 8 * q: t0 + 8 * q + 8]  # row i's address, from lane 8q + i
                holders = t0 + np.arange(32)  # lane 4i + c: row i, bytes 4c .. 4c + 3
                ptrs = rows[np.arange(32) // 4] + 4 * (np.arange(32) % 4)
                sel = np.zeros(self.T, bool)
                sel[holders] = True
                full = np.zeros(self.T, addrs.dtype)
                full[holders] = ptrs
                _, buf, idx = self._bytes(full, 4, sel)
                raw = np.ascontiguousarray(w[holders]).view(np.uint8).reshape(len(idx), 4)
                self._check_write(idx, raw, holders)
                buf[idx] = raw

    # ---- tensor cores: mma.sync, each warp's fragments gathered into matrices -----------
    def op_nvvm_mma_sync(self, op, a, env, act):
        if not act.all():
            raise self.Error("mma.sync reached by only some threads")
        na, nb, nc = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        shape = str(op.attributes["shape"])
        k = int(shape.split("k = ")[1].rstrip(">"))
        ptx = str(op.attributes["multiplicandAPtxType"]).split("<")[1].rstrip(">")
        if str(op.attributes["multiplicandBPtxType"]) != str(op.attributes["multiplicandAPtxType"]):
            raise self.Error("mma.sync with different A and B types")
        field = str(op.results[0].type)[len("!llvm.struct<("):-2].split(", ")[0]
        d_dt, d_n = self.np_type(ir.Type.parse(field))
        return [mma_sync(ptx, k, a[:na], a[na:na + nb], a[na + nb:], d_dt, d_n, self.ws)]


# ---- mma.sync fragments (PTX ISA, "Matrix fragments for mma.m16n8k8 / m16n8k16 / m16n8k32"):
# group = lane >> 2, t = lane % 4; element i of a thread's A, B, C fragments -> (row, col)

def _frag_a(k, i, g, t):
    if k == 8:  # .tf32: a0..a3
        return g + 8 * (i % 2), t + 4 * (i // 2)
    if k == 16:  # .f16/.bf16: a0..a7
        return g + 8 * ((i // 2) % 2), 2 * t + (i % 2) + 8 * (i // 4)
    return g + 8 * ((i // 4) % 2), 4 * t + (i % 4) + 16 * (i // 8)  # k32 .s8: a0..a15


def _frag_b(k, i, g, t):
    if k == 8:
        return t + 4 * i, g
    if k == 16:
        return 2 * t + (i % 2) + 8 * (i // 2), g
    return 4 * t + (i % 4) + 16 * (i // 4), g


def _frag_c(i, g, t):
    return g + 8 * (i // 2), 2 * t + (i % 2)


def _decode(ptx, regs):
    """[T, n 32-bit registers] -> [T, elements] as float64/int64, the low bits first."""
    raw = np.stack([np.ascontiguousarray(r).view(np.uint8).reshape(r.shape[0], 4)
                    for r in regs], 1).reshape(regs[0].shape[0], -1)
    if ptx == "f16":
        return raw.view(np.float16).astype(np.float64)
    if ptx == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if ptx == "tf32":  # the instruction reads the top 19 bits
        return (raw.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if ptx == "s8":
        return raw.view(np.int8).astype(np.int64)
    raise MmaError(f"mma.sync operand type {ptx} is not emulated")


def mma_sync(ptx, k, a_regs, b_regs, c_regs, d_dt, d_vec, warp_size=32):
    """D = A B + C per warp for m16n8k<k>; returns the per-register D values."""
    T = a_regs[0].shape[0]
    av, bv = _decode(ptx, a_regs), _decode(ptx, b_regs)
    cv = np.stack([c.reshape(T, -1) for c in c_regs], 1).reshape(T, -1)  # c0..c3
    intish = ptx == "s8"
    cv = cv.astype(np.int64 if intish else np.float64)
    out = np.zeros((T, 4), np.int64 if intish else np.float64)
    for w in range(T // warp_size):
        A = np.zeros((16, k), av.dtype)
        B = np.zeros((k, 8), bv.dtype)
        C = np.zeros((16, 8), cv.dtype)
        for lane in range(warp_size):
            t_, g, t = w * warp_size + lane, lane >> 2, lane % 4
            for i in range(av.shape[1]):
                A[_frag_a(k, i, g, t)] = av[t_, i]
            for i in range(bv.shape[1]):
                B[_frag_b(k, i, g, t)] = bv[t_, i]
            for i in range(4):
                C[_frag_c(i, g, t)] = cv[t_, i]
        D = A @ B + C
        for lane in range(warp_size):
            for i in range(4):
                out[w * warp_size + lane, i] = D[_frag_c(i, lane >> 2, lane % 4)]
    if intish:
        out = ((out + 2**31) % 2**32 - 2**31).astype(np.int32)
    else:
        out = out.astype(d_dt)
    if d_vec:
        return (out[:, :2].copy(), out[:, 2:].copy())
    return tuple(out[:, i].copy() for i in range(4))
