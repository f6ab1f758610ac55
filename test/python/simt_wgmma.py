"""The SIMT emulator's Hopper warpgroup MMA: `nvvm.wgmma.*` and `nvvm.fence.proxy` (a mixin of
simt_emulator.Emulator; written from the PTX ISA, not from tilework's lowering).

* Matrix descriptors (PTX ISA "Matrix Descriptor Format"): start address >> 4 in bits 0-13,
  leading byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, swizzle in 62-63
  (0 none, 1: 128 bytes, 2: 64, 3: 32).  Element (mn, k) of an operand is at the canonical
  layouts' byte address (CUTLASS's GMMA canonical forms, in bytes; S the swizzle width):
    K-major, swizzled:   start + (mn / 8) * SBO + (mn % 8) * S + k * size
    K-major, none:       start + (mn / 8) * SBO + (mn % 8) * 16 + (k*size / 16) * LBO + k*size % 16
    MN-major, swizzled:  start + (mn / (S/size)) * LBO + (mn % (S/size)) * size + (k / 8) * SBO
                         + (k % 8) * S
    MN-major, none:      start + (mn*size / 16) * SBO + mn*size % 16 + (k % 8) * 16 + (k / 8) * LBO
  and the swizzle then xors address bits [4, 4+b) with bits [7, 7+b), b = log2(S / 16).
* D fragments ("wgmma .m64nNk16 register fragments"): warp w % 4 of the warpgroup, lane l,
  register i: row 16 (w % 4) + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2.
* A from registers (f16/bf16, "register fragment layout for matrix A" of .m64nNk16), as the
  inline PTX `wgmma.mma_async...m64nNk16.f32.T.T {d..}, {a0..a3}, descB, p, 1, 1, transB`
  (tilework has no NVVM op for it): 32-bit register r holds the two 16-bit elements at row
  16 (w % 4) + l / 4 + 8 (r % 2), columns 2 (l % 4) + 8 (r / 2) + {0 (low half), 1}.
  For e4m3/e5m2 (".m64nNk32" A fragment, no imm-trans-b: B K-major) register r holds the four
  bytes at row 16 (w % 4) + l / 4 + 8 (r % 2), columns 4 (l % 4) + 16 (r / 2) + {0..3} (low
  byte first).
* tf32 operands: the low 13 bits of each fp32 operand are ignored (truncation); fp8 decoded
  from its bits; products summed in float64 (int64 for s8), the sum rounded to fp32.
* Checks: every thread of a warpgroup issues the same descriptors; `wgmma.fence` before the
  first mma_async of a batch; the bytes read were written with a barrier since (the race
  check) and a `fence.proxy.async` by their writer after its write (generic -> async proxy);
  results are used only after a `wgmma.wait_group` that leaves their group done.
* Asynchronous groups: a result (and every register extracted from it or packed with it) is
  pending until a `wait_group` completes its group; any op other than extract/insertvalue,
  mma_async (chaining) and scf.for/yield (carrying it) that reads a pending value is an error.
  The operands are read at issue, and their bytes stay in flight until the wait completes the
  group: a shared-memory write to them before then (a store, or a cp.async landing), or a
  cp.async issued or landing over them, is an error (so reading at issue is reading at the
  wait).  At the completing wait the reads count again, in the current barrier epoch: another
  thread's write after it needs a barrier between (the other warpgroups' wgmmas may still
  read until their own wait).
"""
from __future__ import annotations

import re

import numpy as np

import mlir.ir as ir

_SWIZZLE = {0: 0, 1: 128, 2: 64, 3: 32}
_SIZE = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}


class WgmmaError(Exception):
    pass


def _fp8_table(exp_bits: int, man_bits: int, fn: bool) -> np.ndarray:
    """float64 values of the 256 fp8 bit patterns (fn: e4m3fn, no infinities, S.1111.111 NaN)."""
    bias = (1 << (exp_bits - 1)) - 1
    out = np.zeros(256)
    for v in range(256):
        s = -1.0 if v >> 7 else 1.0
        e = (v >> man_bits) & ((1 << exp_bits) - 1)
        m = v & ((1 << man_bits) - 1)
        if fn and e == (1 << exp_bits) - 1 and m == (1 << man_bits) - 1:
            out[v] = np.nan
        elif not fn and e == (1 << exp_bits) - 1:
            out[v] = s * np.inf if m == 0 else np.nan
        elif e == 0:
            out[v] = s * m / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            out[v] = s * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
    return out


_E4M3 = _fp8_table(4, 3, True)
_E5M2 = _fp8_table(5, 2, False)


def decode_desc(desc: int) -> tuple:
    """(start byte address, LBO bytes, SBO bytes, swizzle bytes or 0) of a descriptor."""
    d = int(desc) & (2**64 - 1)
    return ((d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4,
            _SWIZZLE[(d >> 62) & 3])


def operand_addresses(desc: int, mn: int, k: int, size: int, k_major: bool) -> np.ndarray:
    """[mn, k] byte addresses (in the shared window) of an operand's elements."""
    start, lbo, sbo, sw = decode_desc(desc)
    m = np.arange(mn)[:, None]
    kk = np.arange(k)[None, :]
    if k_major and sw:
        if k * size > sw:
            raise WgmmaError(f"K-major: {k * size} bytes of K exceed the {sw}-byte swizzle")
        a = start + (m // 8) * sbo + (m % 8) * sw + kk * size
    elif k_major:
        a = start + (m // 8) * sbo + (m % 8) * 16 + (kk * size // 16) * lbo + kk * size % 16
    elif sw:
        w = sw // size
        a = start + (m // w) * lbo + (m % w) * size + (kk // 8) * sbo + (kk % 8) * sw
    else:
        a = start + (m * size // 16) * sbo + m * size % 16 + (kk % 8) * 16 + (kk // 8) * lbo
    if sw:
        b = (sw // 16).bit_length() - 1
        a = a ^ (((a >> 7) & ((1 << b) - 1)) << 4)
    return a


def decode(raw: np.ndarray, kind: str) -> np.ndarray:
    """Operand values (float64 or int64) from their bytes [..., size]."""
    raw = np.ascontiguousarray(raw)
    if kind == "f16":
        return raw.view(np.float16)[..., 0].astype(np.float64)
    if kind == "bf16":
        return (raw.view(np.uint16)[..., 0].astype(np.uint32) << 16).view(np.float32) \
            .astype(np.float64)
    if kind == "tf32":
        return (raw.view(np.uint32)[..., 0] & np.uint32(0xFFFFE000)).view(np.float32) \
            .astype(np.float64)
    if kind == "e4m3":
        return _E4M3[raw[..., 0]]
    if kind == "e5m2":
        return _E5M2[raw[..., 0]]
    if kind == "s8":
        return raw.view(np.int8)[..., 0].astype(np.int64)
    raise WgmmaError(f"wgmma type {kind} is not emulated")


def _enum(op, name) -> str:
    """The value of an nvvm enum attribute: `#nvvm.mma_layout<row>` -> "row"."""
    s = str(op.attributes[name])
    return s[s.index("<") + 1:s.rindex(">")]


class WgmmaOps:
    """Op handlers (mixed into the Emulator): state in `self.wg_*`, set up by `wg_reset`."""

    def wg_reset(self):
        self.seq = 0
        self.w_seq = np.full(self.smem.size, -1, np.int64)
        self.fence_seq = np.full(self.T, -1, np.int64)
        self.wg_fenced = np.zeros(self.T, np.bool_)
        self.wg_commits = 0     # groups committed so far: the open group's number
        self.wg_done_below = 0  # groups before this one are done
        self.wg_pending = {}    # id(array) -> (array, group) of pending results and registers
        self.wg_reads = []      # (group, byte indices, warpgroup's first thread) in flight
        self.wg_inflight = np.zeros(self.smem.size, np.int32)  # wgmma reads in flight per byte

    def op_nvvm_fence_proxy(self, op, args, env, act):
        if _enum(op, "kind") != "async.shared":
            raise WgmmaError(f"fence.proxy kind {_enum(op, 'kind')} is not emulated")
        self.fence_seq[act] = self.seq
        self.seq += 1

    def op_nvvm_wgmma_fence_aligned(self, op, args, env, act):
        self._whole_warpgroups(act, "wgmma.fence")
        self.wg_fenced |= act

    def op_nvvm_wgmma_commit_group_sync_aligned(self, op, args, env, act):
        self.wg_commits += 1

    def op_nvvm_wgmma_wait_group_sync_aligned(self, op, args, env, act):
        self.wgmma_wait(ir.IntegerAttr(op.attributes["group"]).value)

    def wgmma_wait(self, keep: int):
        below = self.wg_done_below = self.wg_commits - keep  # groups < below are done
        self.wg_pending = {k: v for k, v in self.wg_pending.items() if v[1] >= below}
        done = [r for r in self.wg_reads if r[0] < below]
        self.wg_reads = [r for r in self.wg_reads if r[0] >= below]
        copies = self._copy_targets()
        for _, b, thread in done:
            if copies[b].any():
                j = int(b[np.nonzero(copies[b])[0][0]])
                raise WgmmaError(f"a cp.async into shared byte {j} was issued while a wgmma "
                                 f"that reads it was in flight (before the wgmma.wait_group "
                                 f"that completes it)")
            np.subtract.at(self.wg_inflight, b, 1)
            self.r_epoch[b] = self.epoch  # the reads end here: a write needs a barrier after
            self.r_thread[b] = -2
        self.wg_fenced[:] = False

    def op_llvm_inline_asm(self, op, args, env, act):
        """Only the accumulator-tying wait (`wgmma.wait_group.sync.aligned N;`, its outputs
        tied to its inputs): the wait, then the registers packed as its struct result; and
        wgmma.mma_async with A from registers."""
        text = ir.StringAttr(op.attributes["asm_string"]).value
        if "wgmma.mma_async" in text:
            return self._mma_async_rs(op, text, args, act)
        m = re.fullmatch(r"wgmma\.wait_group\.sync\.aligned (\d+);", text.strip())
        if m is None:
            raise WgmmaError(f"inline asm {text!r} is not emulated")
        n = len(args)
        cons = ir.StringAttr(op.attributes["constraints"]).value.split(",")
        if cons[n:] != [str(i) for i in range(n)]:
            raise WgmmaError("the wgmma wait's inline asm must tie each output to its input")
        groups = [self.wg_pending[id(a)][1] for a in args if id(a) in self.wg_pending]
        self.wgmma_wait(int(m.group(1)))
        out = np.stack(args, axis=1)
        if groups and max(groups) >= self.wg_done_below:  # still in flight (num > 0)
            return [self._wg_mark(out, max(groups))]
        return [out]

    def _copy_targets(self) -> np.ndarray:
        """Bytes of shared memory that cp.async copies in flight (issued, not landed) write."""
        out = np.zeros(self.smem.size, np.bool_)
        for group in list(self.async_groups) + [self.async_open]:
            for dst, data, a, size in group:
                shared, _, idx = self._bytes(dst, size, a)
                if shared and idx.size:
                    out[idx.reshape(-1)] = True
        return out

    def wg_check_write(self, b):
        """A shared-memory write (a store, a landing cp.async) to bytes b: none may be read by
        a wgmma in flight."""
        bad = self.wg_inflight[b] > 0
        if bad.any():
            raise WgmmaError(f"shared byte {int(b[np.nonzero(bad)[0][0]])} is overwritten "
                             f"while a wgmma that reads it is in flight (before the "
                             f"wgmma.wait_group that completes it)")

    def wg_check_args(self, op, args):
        """No op but the carrying ones reads a pending accumulator."""
        for a in args:
            if id(a) in self.wg_pending:
                raise WgmmaError(f"a wgmma result is read before a wgmma.wait_group completes "
                                 f"it (by {op.name})")

    def _wg_mark(self, arr, group):
        self.wg_pending[id(arr)] = (arr, group)
        return arr

    def _whole_warpgroups(self, act, what):
        a = act.reshape(-1, 128) if self.T % 128 == 0 else None
        if a is None or not (a.all(axis=1) | ~a.any(axis=1)).all():
            raise WgmmaError(f"{what} reached by part of a warpgroup")

    def op_nvvm_wgmma_mma_async(self, op, args, env, act):
        d, da, db = args  # (d may be pending: chaining is how a batch of wgmmas is issued)
        self._whole_warpgroups(act, "wgmma.mma_async")
        if not self.wg_fenced[act].all():
            raise WgmmaError("wgmma.mma_async without a wgmma.fence before it")
        shp = str(op.attributes["shape"])
        m, n, k = (int(shp.split(f"{c} = ")[1].split(",")[0].split(">")[0]) for c in "mnk")
        ta, tb, td = (_enum(op, x) for x in ("typeA", "typeB", "typeD"))
        if m != 64:
            raise WgmmaError(f"wgmma m{m}")
        a_kmaj = _enum(op, "layoutA") == "row"
        b_kmaj = _enum(op, "layoutB") == "col"
        for s in ("scaleA", "scaleB"):
            if _enum(op, s) != "one":
                raise WgmmaError(f"wgmma {s} {_enum(op, s)} is not emulated")
        if _enum(op, "scaleD") == "zero":  # D = A B: the input accumulators are not read
            d = np.zeros_like(d)
        if d.shape[1] != n // 2:
            raise WgmmaError(f"wgmma m64n{n} has {n // 2} accumulators per thread, got "
                             f"{d.shape[1]}")
        out = d.copy()
        lane = np.arange(128) % 32
        warp = np.arange(128) // 32
        i = np.arange(n // 2)
        rows = 16 * warp[:, None] + lane[:, None] // 4 + 8 * ((i[None, :] // 2) % 2)
        cols = 8 * (i[None, :] // 4) + 2 * (lane[:, None] % 4) + i[None, :] % 2
        for g in range(self.T // 128):
            sel = np.zeros(self.T, np.bool_)
            sel[128 * g:128 * (g + 1)] = True
            if not act[sel].any():
                continue
            descs = []
            for x, what in ((da, "A"), (db, "B")):
                u = set(x[sel].tolist())
                if len(u) != 1:
                    raise WgmmaError(f"the threads of warpgroup {g} issue different {what} "
                                     f"descriptors")
                descs.append(u.pop())
            av = self._wg_operand(descs[0], 64, k, ta, a_kmaj, 128 * g)
            bv = self._wg_operand(descs[1], n, k, tb, b_kmaj, 128 * g)
            prod = av @ bv.T  # [64, n]
            acc = d[sel]
            if td == "s32":
                new = (acc.astype(np.int64) + prod[rows, cols]).astype(np.int64)
                out[sel] = ((new + 2**31) % 2**32 - 2**31).astype(d.dtype)
            else:
                out[sel] = (acc.astype(np.float64) + prod[rows, cols]).astype(d.dtype)
        return [self._wg_mark(out, self.wg_commits)]

    _RS = re.compile(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k(16|32)\.f32\."
                     r"(f16|bf16|e4m3|e5m2)\.(f16|bf16|e4m3|e5m2)\s*\{([^}]*)\},\s*"
                     r"\{([^}]*)\},\s*\$(\d+),\s*p,\s*1,\s*1(?:,\s*([01]))?;")

    def _mma_async_rs(self, op, text, args, act):
        """wgmma.mma_async with A in four 32-bit registers per thread (inline PTX)."""
        m = self._RS.search(text)
        if m is None:
            raise WgmmaError(f"inline asm {text!r} is not emulated")
        n, k, ta, tb = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        size = _SIZE[ta]
        if _SIZE[tb] != size or k != 32 // size or (size == 1) != (m.group(8) is None):
            raise WgmmaError(f"register-A wgmma k{k} .{ta}.{tb}: the PTX ISA has k16 for "
                             f"16-bit types (with imm-trans-b), k32 for 8-bit (without)")
        num = [lambda x: [int(t.strip().lstrip("$")) for t in x.split(",")]][0]
        dregs, aregs, bdesc, trans_b = num(m.group(5)), num(m.group(6)), int(m.group(7)), \
            m.group(8) == "1"
        cons = ir.StringAttr(op.attributes["constraints"]).value.split(",")
        nf = n // 2
        if dregs != list(range(nf)) or cons[nf:2 * nf] != [str(i) for i in range(nf)]:
            raise WgmmaError("the register-A wgmma's accumulators must be outputs $0.. tied to "
                             "its inputs")
        pm = re.search(r"setp\.ne\.b32 p, \$(\d+), 0;", text)
        scale = None if pm is None else args[int(pm.group(1)) - nf][act]
        if scale is None or not ((scale != 0).all() or (scale == 0).all()):
            raise WgmmaError("register-A wgmma: scale-d must be one predicate for the warpgroup")
        accumulate = bool((scale != 0).all())
        self._whole_warpgroups(act, "wgmma.mma_async")
        if not self.wg_fenced[act].all():
            raise WgmmaError("wgmma.mma_async without a wgmma.fence before it")
        d = np.stack(args[:nf], axis=1)
        if not accumulate:  # scale-d 0: D = A B
            d = np.zeros_like(d)
        a_in = [args[i - nf] for i in aregs]
        db = args[bdesc - nf]
        out = d.copy()
        lane = np.arange(128) % 32
        warp = np.arange(128) // 32
        i = np.arange(nf)
        rows = 16 * warp[:, None] + lane[:, None] // 4 + 8 * ((i[None, :] // 2) % 2)
        cols = 8 * (i[None, :] // 4) + 2 * (lane[:, None] % 4) + i[None, :] % 2
        for g in range(self.T // 128):
            sel = np.zeros(self.T, np.bool_)
            sel[128 * g:128 * (g + 1)] = True
            if not act[sel].any():
                continue
            # register r, element j (its bits 8*size*j..): row 16 w + l/4 + 8 (r % 2), column
            # kw (l % 4) + 4 kw (r / 2) + j, kw = 4 / size elements a register
            kw = 4 // size
            av = np.full((64, k), np.nan)
            for r, reg in enumerate(a_in):
                bits = reg[sel].astype(np.int64) & 0xFFFFFFFF
                for j in range(kw):
                    raw = ((bits >> (8 * size * j)) & (2 ** (8 * size) - 1)).astype(np.uint32)
                    vals = decode(raw.astype(np.uint8 if size == 1 else np.uint16)
                                  .view(np.uint8).reshape(-1, size), ta)
                    av[16 * warp + lane // 4 + 8 * (r % 2),
                       kw * (lane % 4) + 4 * kw * (r // 2) + j] = vals
            u = set(db[sel].tolist())
            if len(u) != 1:
                raise WgmmaError(f"the threads of warpgroup {g} issue different B descriptors")
            bv = self._wg_operand(u.pop(), n, k, tb, not trans_b, 128 * g)
            prod = av @ bv.T
            out[sel] = (d[sel].astype(np.float64) + prod[rows, cols]).astype(d.dtype)
        return [self._wg_mark(out, self.wg_commits)]

    def _wg_operand(self, desc, mn, k, kind, k_major, thread):
        size = _SIZE[kind]
        addrs = operand_addresses(desc, mn, k, size, k_major)
        flat = addrs.reshape(-1)
        if (flat % size).any():
            raise WgmmaError("misaligned wgmma operand element")
        idx = flat[:, None] + np.arange(size)
        if idx.min() < 0 or idx.max() >= self.smem.size:
            raise WgmmaError(f"wgmma operand outside shared memory (bytes {idx.min()}.."
                             f"{idx.max()} of {self.smem.size})")
        b = idx.reshape(-1)
        # generic-proxy writes must be fenced by their writer before the async proxy reads
        written = self.w_seq[b] >= 0
        bad = written & (self.fence_seq[self.w_thread[b]] < self.w_seq[b])
        if bad.any():
            j = int(np.nonzero(bad)[0][0])
            raise WgmmaError(f"wgmma reads shared byte {b[j]} that thread "
                             f"{self.w_thread[b[j]]} wrote with no fence.proxy.async after")
        self._check_read(idx, np.full(len(idx), thread))
        self.r_thread[b] = -2  # read by the whole warpgroup
        ub = np.unique(b)
        copies = self._copy_targets()
        if copies[ub].any():
            j = int(ub[np.nonzero(copies[ub])[0][0]])
            raise WgmmaError(f"wgmma reads shared byte {j} that a cp.async in flight writes")
        # in flight until the wait that completes the group (reading now = reading then)
        self.wg_reads.append((self.wg_commits, ub, thread))
        np.add.at(self.wg_inflight, ub, 1)
        return decode(self.smem[idx], kind).reshape(mn, k)

    # ---- structs of the accumulators (homogeneous: arrays [threads, n]) ----------------------
    def op_llvm_insertvalue(self, op, args, env, act):
        s, x = args
        pos = list(ir.DenseI64ArrayAttr(op.attributes["position"]))
        out = s.copy()
        out[:, pos[0]] = x
        groups = [self.wg_pending[id(v)][1] for v in (s, x) if id(v) in self.wg_pending]
        return [self._wg_mark(out, max(groups)) if groups else out]

    def op_llvm_extractvalue(self, op, args, env, act):
        s = args[0]
        pos = list(ir.DenseI64ArrayAttr(op.attributes["position"]))
        out = s[:, pos[0]].copy()
        if id(s) in self.wg_pending:  # a register of a pending accumulator: pending too
            return [self._wg_mark(out, self.wg_pending[id(s)][1])]
        return [out]
