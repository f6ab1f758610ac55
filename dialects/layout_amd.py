"""AMD encodings: MFMA (CDNA, wave64) and WMMA (RDNA3/RDNA4, wave32) accumulators and their dot
operands.

MFMA (CDNA3 ISA, "matrix fused multiply-add" register layouts): for 32x32 output blocks a
lane holds 16 values: column lane % 32, row 8·(i / 4) + 4·(lane / 32) + i % 4; for 16x16 it
holds 4: column lane % 16, row 4·(lane / 16) + i.  `transposed` swaps rows and columns (each
thread then holds consecutive columns).  Operand A (M x K): row lane % 32 (% 16), k_width
consecutive K elements from k_width·(lane / 32) (lane / 16); B is A transposed.
WMMA (RDNA3, 16x16x16): accumulator value i of lane l at row 2i + l / 16, column l % 16;
operands hold a whole K row (16 elements) per lane, lanes 16-31 copying lanes 0-15.  RDNA4
(version 2): row i + 8·(l / 16); operands split K: lanes 16-31 hold K 8-15.
"""
from __future__ import annotations

from dataclasses import dataclass

from .layout_base import Layout, arr_text, build_linear, ilog2, check_pow2


def _swap(bases):
    return [(1 - d, v) for d, v in bases]


class _AmdMma(Layout):
    rank = 2

    def _warps(self, m_unit, n_unit):
        """Warp bits along N then M (0 unit: copies)."""
        wm, wn = self.warps_per_cta
        return ([(1, n_unit << j if n_unit else 0) for j in range(ilog2(wn))]
                + [(0, m_unit << j if m_unit else 0) for j in range(ilog2(wm))])

    def to_linear(self, shape):
        self.check()
        regs, lanes = self.acc_bases()
        m, n = self.instr()
        return build_linear(shape, regs, lanes, self._warps(m, n))

    def tile_shape(self):
        m, n = self.instr()
        return (m * self.warps_per_cta[0], n * self.warps_per_cta[1])

    def verify(self, shape, warp_size=None, num_warps=None):
        self.check()
        super().verify(shape, warp_size, num_warps)


@dataclass(frozen=True)
class AmdMfma(_AmdMma):
    """`#tilegpu.mfma<warps_per_cta, instr_shape, transposed>`, instr [32, 32] or [16, 16]."""
    warps_per_cta: tuple
    instr_shape: tuple
    transposed: bool

    def text(self):
        return (f"#tilegpu.mfma<{arr_text(self.warps_per_cta)}, {arr_text(self.instr_shape)}, "
                f"{'true' if self.transposed else 'false'}>")

    def instr(self):
        return tuple(self.instr_shape)

    def check(self):
        if tuple(self.instr_shape) not in ((32, 32), (16, 16)):
            raise ValueError(f"mfma instr_shape {list(self.instr_shape)} must be [32, 32] "
                             f"or [16, 16]")
        check_pow2("warps_per_cta", self.warps_per_cta)

    def acc_bases(self):
        if self.instr_shape[0] == 32:
            regs = [(0, 1), (0, 2), (0, 8), (0, 16)]
            lanes = [(1, 1 << j) for j in range(5)] + [(0, 4)]
        else:
            regs = [(0, 1), (0, 2)]
            lanes = [(1, 1 << j) for j in range(4)] + [(0, 4), (0, 8)]
        return (_swap(regs), _swap(lanes)) if self.transposed else (regs, lanes)

    def operand_bases(self, op_idx, k_width):
        m = self.instr_shape[0]
        kregs = [(1, 1 << j) for j in range(ilog2(k_width))]
        lanes = [(0, 1 << j) for j in range(ilog2(m))]
        lanes += [(1, k_width << j) for j in range(6 - ilog2(m))]
        if op_idx == 0:
            return kregs, lanes, self._warps(m, 0)
        return _swap(kregs), _swap(lanes), self._warps(0, m)


@dataclass(frozen=True)
class AmdWmma(_AmdMma):
    """`#tilegpu.wmma<version, warps_per_cta>`: version 1 (RDNA3) or 2 (RDNA4), 16x16 tiles."""
    version: int
    warps_per_cta: tuple

    def text(self):
        return f"#tilegpu.wmma<{self.version} : i32, {arr_text(self.warps_per_cta)}>"

    def instr(self):
        return (16, 16)

    def check(self):
        if self.version not in (1, 2):
            raise ValueError(f"wmma version {self.version} must be 1 (RDNA3) or 2 (RDNA4)")
        check_pow2("warps_per_cta", self.warps_per_cta)

    def acc_bases(self):
        lanes = [(1, 1 << j) for j in range(4)]
        if self.version == 1:
            return [(0, 2), (0, 4), (0, 8)], lanes + [(0, 1)]
        return [(0, 1), (0, 2), (0, 4)], lanes + [(0, 8)]

    def operand_bases(self, op_idx, k_width):
        want = 16 if self.version == 1 else 8
        if k_width != want:
            raise ValueError(f"wmma v{self.version} operands hold {want} K elements per lane "
                             f"(k_width), not {k_width}")
        kregs = [(1, 1 << j) for j in range(ilog2(want))]
        lanes = [(0, 1 << j) for j in range(4)] + [(1, 0 if self.version == 1 else 8)]
        if op_idx == 0:
            return kregs, lanes, self._warps(16, 0)
        return _swap(kregs), _swap(lanes), self._warps(0, 16)
