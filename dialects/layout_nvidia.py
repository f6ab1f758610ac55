"""NVIDIA encodings: mma (v2: mma.sync m16n8; v3: wgmma m64nNk16) accumulators and their dot
operands, and the shared-memory layouts (xor-swizzled; NVMMA, the 32/64/128-byte swizzles that
wgmma descriptors and TMA use).

Fragments (PTX ISA, "Matrix fragments for mma.m16n8k16" and "wgmma .m64nNk16 register
fragments"): with group = lane / 4 and t = lane % 4, the accumulator element c_i of a warp's
16x8 tile sits at row group + 8 * (i >= 2), column 2t + i % 2; wgmma's D repeats that pattern
every 8 columns, warp w of a warpgroup holding rows 16w..16w+15.  Operand A (16 x 8·k_width)
holds row group (+8), columns t·k_width + j (+4·k_width); B (8·k_width x 8) holds rows
t·k_width + j (+4·k_width), column group.
"""
from __future__ import annotations

from dataclasses import dataclass

from .layout_base import Layout, arr_text, build_linear, check_pow2, ilog2
from .linear_layout import LinearLayout, SharedSwizzle, out_names

_LANES_ACC = [(1, 2), (1, 4), (0, 1), (0, 2), (0, 4)]   # lanes 0-1: t, lanes 2-4: group


@dataclass(frozen=True)
class NvidiaMma(Layout):
    """`#tilegpu.mma<version, warps_per_cta, instr_shape>`: version 2 (instr [16, 8]) or 3
    (instr [64, N, K], K = 8 for tf32, 16 for 16-bit types, 32 for 8-bit ones; warps_per_cta[0] a multiple of the warpgroup's 4 warps)."""
    version: int
    warps_per_cta: tuple
    instr_shape: tuple

    rank = 2

    def text(self) -> str:
        return (f"#tilegpu.mma<{self.version} : i32, {arr_text(self.warps_per_cta)}, "
                f"{arr_text(self.instr_shape)}>")

    def check(self):
        wm, wn = self.warps_per_cta
        if self.version == 2:
            if tuple(self.instr_shape) != (16, 8):
                raise ValueError(f"mma v2 instr_shape {list(self.instr_shape)} must be [16, 8]")
        elif self.version == 3:
            m, n, k = self.instr_shape
            if m != 64 or not 8 <= n <= 256 or n % 8 or k not in (8, 16, 32):
                raise ValueError(f"wgmma instr_shape {list(self.instr_shape)} must be "
                                 f"[64, N, 8|16|32] with N a multiple of 8 up to 256 (K: "
                                 f"32 bytes of the operand type)")
            if wm % 4:
                raise ValueError(f"wgmma warps_per_cta {list(self.warps_per_cta)}: warps along "
                                 f"M must be whole warpgroups of 4")
        else:
            raise ValueError(f"mma version {self.version} must be 2 or 3")
        check_pow2("warps_per_cta", self.warps_per_cta)

    def _warps(self, m_unit, n_unit, m_zero=False, n_zero=False):
        """Warp bits: v2 along N then M; v3: the warpgroup's 4 warps along M (16 rows each),
        then more warpgroups along M, then along N."""
        wm, wn = self.warps_per_cta
        if self.version == 2:
            n = [(1, 0 if n_zero else n_unit << j) for j in range(ilog2(wn))]
            m = [(0, 0 if m_zero else m_unit << j) for j in range(ilog2(wm))]
            return n + m
        m = [(0, 0 if m_zero else 16 << j) for j in range(ilog2(wm))]
        n = [(1, 0 if n_zero else n_unit << j) for j in range(ilog2(wn))]
        return m + n

    def to_linear(self, shape) -> LinearLayout:
        self.check()
        if self.version == 2:
            regs = [(1, 1), (0, 8)]
            return build_linear(shape, regs, _LANES_ACC, self._warps(16, 8))
        n = self.instr_shape[1]
        regs = [(1, 1), (0, 8)] + [(1, 8 << j) for j in range(ilog2(n // 8))]
        return build_linear(shape, regs, _LANES_ACC, self._warps(16, n))

    def tile_shape(self):
        wm, wn = self.warps_per_cta
        if self.version == 2:
            return (16 * wm, 8 * wn)
        return (16 * wm, self.instr_shape[1] * wn)

    def verify(self, shape, warp_size=None, num_warps=None):
        self.check()
        super().verify(shape, warp_size, num_warps)

    def operand_bases(self, op_idx: int, k_width: int):
        """(regs, lanes, warps) of dot operand `op_idx` with `k_width` K elements per
        register group (2 for 16-bit types: 32 bits)."""
        kw = k_width
        kbits = [(1 << j) for j in range(ilog2(kw))]
        if op_idx == 0:
            regs = [(1, v) for v in kbits] + [(0, 8), (1, 4 * kw)]
            lanes = [(1, kw), (1, 2 * kw), (0, 1), (0, 2), (0, 4)]
            return regs, lanes, self._warps(16, 0, n_zero=True)
        if self.version == 3:
            raise ValueError("wgmma reads operand B from shared memory "
                             "(#tilegpu.nvmma_shared), not from registers")
        regs = [(0, v) for v in kbits] + [(0, 4 * kw)]
        lanes = [(0, kw), (0, 2 * kw), (1, 1), (1, 2), (1, 4)]
        return regs, lanes, self._warps(0, 8, m_zero=True)


def _shared_linear(offset_of, shape) -> LinearLayout:
    """offset -> element map of a bijective element -> offset function (linear over GF(2))."""
    rank = len(shape)
    bases = {}
    for d, n in enumerate(shape):
        bases[f"dim{d}"] = [(offset_of(tuple(1 << b if i == d else 0 for i in range(rank))),)
                            for b in range(ilog2(n))]
    total = 1
    for n in shape:
        total *= n
    fwd = LinearLayout.make(bases, [("offset", total)])
    inv = fwd.invert()
    return inv.with_outs(list(zip(out_names(rank), shape)))


class SharedLayout(Layout):
    """Shared-memory encodings map a buffer offset (in elements) to an element."""

    @property
    def is_shared(self) -> bool:
        return True

    def elems_per_thread(self, shape):
        raise ValueError(f"{self.text()} is a shared-memory layout: no thread holds elements")

    def verify(self, shape, warp_size=None, num_warps=None):
        if len(shape) != self.rank:
            raise ValueError(f"layout of rank {self.rank} on a tile of rank {len(shape)}")
        self.to_linear(shape)


@dataclass(frozen=True)
class SwizzledShared(SharedLayout):
    """`#tilegpu.swizzled_shared<vec, per_phase, max_phase, order>` (see SharedSwizzle)."""
    vec: int
    per_phase: int
    max_phase: int
    order: tuple

    @property
    def rank(self):
        return len(self.order)

    def text(self) -> str:
        return (f"#tilegpu.swizzled_shared<{self.vec} : i32, {self.per_phase} : i32, "
                f"{self.max_phase} : i32, {arr_text(self.order)}>")

    def swizzle(self) -> SharedSwizzle:
        return SharedSwizzle(self.vec, self.per_phase, self.max_phase, tuple(self.order))

    def to_linear(self, shape) -> LinearLayout:
        if sorted(self.order) != list(range(len(shape))):
            raise ValueError(f"swizzled_shared order {list(self.order)} is not a permutation "
                             f"of the tile's dims")
        if self.vec * self.max_phase > shape[self.order[0]]:
            raise ValueError(f"swizzled_shared vec {self.vec} x max_phase {self.max_phase} is "
                             f"wider than the contiguous dim ({shape[self.order[0]]})")
        offs = self.swizzle().offset_map(shape)
        return offs.invert().with_outs(list(zip(out_names(len(shape)), shape)))


@dataclass(frozen=True)
class NvmmaShared(SharedLayout):
    """`#tilegpu.nvmma_shared<swizzle_bytes, transposed, elem_bits>`: the layout of wgmma
    operand descriptors and TMA boxes.  The contiguous dim (the last; the first if transposed)
    is cut into columns of `swizzle_bytes` (128 bytes when 0: no swizzle), each stored as a
    block of rows; in a block, 16-byte chunks of row r are xor-ed with (r / (128 /
    swizzle_bytes)) % (swizzle_bytes / 16), the pattern repeating every 8 rows of 128 bytes."""
    swizzle_bytes: int
    transposed: bool
    elem_bits: int

    rank = 2

    def text(self) -> str:
        return (f"#tilegpu.nvmma_shared<{self.swizzle_bytes} : i32, "
                f"{'true' if self.transposed else 'false'}, {self.elem_bits} : i32>")

    def to_linear(self, shape) -> LinearLayout:
        if self.swizzle_bytes not in (0, 32, 64, 128):
            raise ValueError(f"nvmma_shared swizzle {self.swizzle_bytes} must be 0, 32, 64 "
                             f"or 128 bytes")
        if self.elem_bits not in (8, 16, 32):
            raise ValueError(f"nvmma_shared elem_bits {self.elem_bits} must be 8, 16 or 32")
        col = 0 if self.transposed else 1
        row = 1 - col
        eb = self.elem_bits // 8
        width = (self.swizzle_bytes or 128) // eb
        if shape[col] < width:
            raise ValueError(f"nvmma_shared: the contiguous dim ({shape[col]}) is narrower "
                             f"than the {self.swizzle_bytes or 128}-byte swizzle")
        rows = shape[row]
        vec = 16 // eb
        per_phase = 128 // (self.swizzle_bytes or 128)
        max_phase = self.swizzle_bytes // 16 if self.swizzle_bytes else 1

        def off(c):
            r, k = c[row], c[col]
            blk, k = divmod(k, width)
            phase = (r // per_phase) % max_phase
            return blk * rows * width + r * width + ((k // vec) ^ phase) * vec + k % vec
        return _shared_linear(off, shape)
