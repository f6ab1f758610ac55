"""The SIMT emulator's TMA store (a mixin of `simt_emulator.Emulator`): the inline PTX of
`tilegpu.tma_store` (`cp.async.bulk.tensor.<r>d.global.shared::cta.bulk_group`, issued by the
thread whose first operand is 0, then `cp.async.bulk.commit_group` and
`cp.async.bulk.wait_group.read 0`), from the PTX ISA's and the CUDA driver's definitions, not
from the compiler's layouts:

* a tensor map is a `TensorMap` passed for the kernel's tensor-map parameter: the tensor
  (numpy array, shape and strides in elements, numpy order), the box and the swizzle (bytes);
* the box is read from shared memory row-major (its inner dimension `box[-1]` elements, for a
  swizzled map exactly the swizzle's bytes), and a swizzle S xors the byte address's bits
  [4, 4 + log2(S / 16)) with bits [7, ...) (CUDA's CU_TENSOR_MAP_SWIZZLE_32B/64B/128B: 16-byte
  chunks permuted within each 256/512/1024 bytes, which the buffer must be aligned to);
* elements whose coordinates fall outside the tensor are not written (the hardware clips the
  box), except past the inner bound: a row is written in whole 16-byte chunks, so the box's
  elements in the chunk holding a row's last element land past its end too (measured on an
  H200, issue 9: a 70-wide fp16 tensor gets columns 70 and 71; cf. Triton #11583);
* checks: the buffer's alignment (128 bytes, or the swizzle's period), an inner coordinate a
  multiple of 16 bytes and no coordinate negative (the GPU faults on either with an illegal
  instruction; a TMA load clips negative ones, a store does not), every byte read fenced for
  the async proxy
  by the thread that wrote it (`fence.proxy.async` after its write) and written before a
  barrier (a race otherwise), the commit and the read-wait after the copies, one issuing
  thread.  The copy happens at once (the wait is part of the same asm).
* a store without its read wait (`tilegpu.wait_later`) leaves the bytes it read busy: a write
  of them raises until the issuing thread's separate `wait_group.read` and a barrier after it
  (`tilegpu.tma_store_wait`), as the copy engine may still be reading them.
"""
from __future__ import annotations

import re

import numpy as np

import mlir.ir as ir

_TMAP_BASE = 1 << 58  # fake generic addresses of tensor maps (below the shared window)
_COPY = re.compile(r"@%p cp\.async\.bulk\.tensor\.(\d)d\.global\.shared::cta\.bulk_group "
                   r"\[\$(\d+), \{([^}]*)\}\], \[\$(\d+)\];")
_HEAD = "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; "
_TAIL = " @%p cp.async.bulk.commit_group; @%p cp.async.bulk.wait_group.read 0; }"
_TAIL_LATER = " @%p cp.async.bulk.commit_group; }"  # (tilegpu.wait_later: a tma_store_wait's)
_WAIT = _HEAD + "@%p cp.async.bulk.wait_group.read 0; }"


class TmaError(Exception):
    pass


class TensorMap:
    """What `cuTensorMapEncodeTiled` would encode: `array` (C-contiguous, written in place)
    holds the tensor of `shape` with element `strides` (numpy order), copied in boxes of
    `box` elements with `swizzle` bytes (0, 32, 64, 128)."""

    def __init__(self, array: np.ndarray, shape, strides, box, swizzle: int):
        if not array.flags.c_contiguous:
            raise TmaError("the tensor map's array must be contiguous")
        self.array, self.shape, self.strides = array, list(shape), list(strides)
        self.box, self.swizzle = list(box), swizzle
        esize = array.dtype.itemsize
        if swizzle and box[-1] * esize != swizzle:
            raise TmaError(f"a {swizzle}-byte swizzle needs boxes {swizzle} bytes wide here, "
                           f"got {box[-1]} x {esize}")

    @classmethod
    def for_plan(cls, array, shape, strides, plan: dict):
        """From a compiled kernel's `metadata["tma"]` entry ({box, swizzle})."""
        return cls(array, shape, strides, plan["box"], plan["swizzle"])


def swizzled(addr: np.ndarray, swizzle: int) -> np.ndarray:
    if not swizzle:
        return addr
    b = (swizzle // 16).bit_length() - 1
    return addr ^ (((addr >> 7) & ((1 << b) - 1)) << 4)


class TmaOps:
    """Op handlers mixed into the Emulator (state: `self.tmaps`, reset per run)."""

    def tma_register(self, tmap: TensorMap) -> int:
        self.tmaps.append(tmap)
        return _TMAP_BASE + 128 * (len(self.tmaps) - 1)

    def tma_reset(self):
        """Per program: the state of each shared byte for TMA stores whose read wait comes
        later: -2 free, -1 may still be read, e >= 0 waited for in barrier epoch e."""
        self.bulk_reads = np.full(self.smem.size, -2, np.int64)

    def check_bulk_reads(self, idx):
        state = self.bulk_reads[idx.reshape(-1)]
        busy = (state == -1) | (state == self.epoch)
        if busy.any():
            b = int(idx.reshape(-1)[np.nonzero(busy)[0][0]])
            why = "no read wait" if self.bulk_reads[b] == -1 else "no barrier after its wait"
            raise TmaError(f"shared byte {b} written while a TMA store may still read it ({why})")

    def op_llvm_inline_asm(self, op, args, env, act):
        text = ir.StringAttr(op.attributes["asm_string"]).value
        if text == _WAIT:
            if len(np.nonzero(act & (args[0] == 0))[0]) != 1:
                raise TmaError("a TMA store's read wait must be its issuing thread's")
            self.bulk_reads[self.bulk_reads == -1] = self.epoch
            return []
        if ".global.shared::cta.bulk_group" not in text:
            return super().op_llvm_inline_asm(op, args, env, act)
        later = text.endswith(_TAIL_LATER)
        tail = _TAIL_LATER if later else _TAIL
        if not text.startswith(_HEAD) or not text.endswith(tail):
            raise TmaError(f"a TMA store must be issued by thread 0 and end with the commit and "
                           f"the read wait: {text!r}")
        copies = list(_COPY.finditer(text))
        if "".join(m.group(0) + " " for m in copies) != text[len(_HEAD):-len(tail) + 1]:
            raise TmaError(f"TMA store asm not emulated: {text!r}")
        issuers = np.nonzero(act & (args[0] == 0))[0]
        if len(issuers) > 1:
            raise TmaError("several threads issue one TMA store")
        for t in issuers:
            for m in copies:
                rank, mi, cs, si = int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))
                coords = [int(args[int(c.strip()[1:])][t]) for c in cs.split(",")][::-1]
                if len(coords) != rank:
                    raise TmaError(f"{rank}d copy with {len(coords)} coordinates")
                read = self._bulk_store(int(args[mi][t]), coords,
                                        int(args[si][t]) & 0xFFFFFFFF, int(t))
                if later:
                    self.bulk_reads[read] = -1
        return []

    def _bulk_store(self, maddr: int, coords, saddr: int, thread: int):
        i, r = divmod(maddr - _TMAP_BASE, 128)
        if r or not 0 <= i < len(self.tmaps):
            raise TmaError(f"address {maddr:#x} is no tensor map")
        tm = self.tmaps[i]
        if len(coords) != len(tm.shape):
            raise TmaError(f"{len(coords)} coordinates for a rank-{len(tm.shape)} tensor map")
        esize = tm.array.dtype.itemsize
        period = {0: 128, 32: 256, 64: 512, 128: 1024}[tm.swizzle]
        if saddr % period:
            raise TmaError(f"TMA store from shared byte {saddr}: not {period}-byte aligned")
        if coords[-1] * esize % 16:
            raise TmaError(f"inner coordinate {coords[-1]} is not a multiple of 16 bytes "
                           f"(the GPU faults)")
        if min(coords) < 0:
            raise TmaError(f"TMA store at coordinates {coords[::-1]} (innermost first): a "
                           f"negative coordinate (the GPU faults: illegal instruction)")
        idx = np.indices(tm.box).reshape(len(tm.box), -1)         # box element coordinates
        flat = np.ravel_multi_index(idx, tm.box)                   # row-major in the box
        src = swizzled(saddr + flat * esize, tm.swizzle)          # byte address of each
        b = src[:, None] + np.arange(esize)
        if b.min() < 0 or b.max() >= self.smem.size:
            raise TmaError(f"TMA store reads shared bytes {b.min()}..{b.max()} of "
                           f"{self.smem.size}")
        bb = b.reshape(-1)
        written = self.w_seq[bb] >= 0
        bad = written & (self.fence_seq[self.w_thread[bb]] < self.w_seq[bb])
        if bad.any():
            j = int(np.nonzero(bad)[0][0])
            raise TmaError(f"TMA store reads shared byte {bb[j]} that thread "
                           f"{self.w_thread[bb[j]]} wrote with no fence.proxy.async after")
        self._check_read(b, np.full(len(b), thread))
        g = idx + np.array(coords)[:, None]                        # tensor coordinates
        limit = np.array(tm.shape)                                 # written below these:
        limit[-1] = -(-tm.shape[-1] * esize // 16) * 16 // esize   # whole 16-byte chunks
        inside = np.all((g >= 0) & (g < limit[:, None]), axis=0)
        dst = (g[:, inside] * np.array(tm.strides)[:, None]).sum(0) * esize
        out = tm.array.reshape(-1).view(np.uint8)
        out[dst[:, None] + np.arange(esize)] = self.smem[b[inside]]
        return bb
