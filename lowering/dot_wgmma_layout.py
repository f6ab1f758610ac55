"""Which `tile.dot`s run on Hopper's warpgroup MMA (wgmma), and their accumulator layout.

`wgmma_layout(target, op, num_warps)` -> `NvidiaMma(3, [wm, wn], [64, N, K])` or None.  A leaf
module (no MLIR pass machinery): `choose_dot_layouts` (lowering/dot_layouts.py) asks it first
on targets with `wgmma`.

Eligible: sm_90a (`target.has("wgmma")`), a 2-D dot, num_warps a multiple of 4, operands fp16,
bf16, fp32 (as tf32: input_precision "tf32"), fp8 e4m3/e5m2 or int8, M a multiple of 64 rows
per warpgroup along M, and each operand wide enough for a 32-byte swizzled shared layout (the
lowering never uses the unswizzled layout: its rows would not be 16 bytes apart).

Warps, as Triton chooses them: warpgroups go along M while M has 64 more rows for each, then
along N; the instruction's N is the warpgroup's share of N, at most 256; K is 32 bytes of the
operand type (k16 for 16-bit types, k8 for tf32, k32 for 8-bit ones).
"""
from __future__ import annotations

from tilework.dialects import tile as T
from tilework.dialects.layout_nvidia import NvidiaMma

# operand element type -> bits (what wgmma reads)
WGMMA_TYPES = {"f16": 16, "bf16": 16, "f32": 32, "f8E4M3FN": 8, "f8E5M2": 8, "i8": 8}
MAX_N = 256
MIN_SWIZZLE_BYTES = 32


def _pow2(n: int) -> bool:
    return n > 0 and not n & (n - 1)


def wgmma_k(elem_bits: int) -> int:
    """K of one instruction: 32 bytes of operand."""
    return 256 // elem_bits


def wgmma_eligible(target, a_type, b_type, acc_type, precision: str, num_warps: int):
    """None if the dot can use wgmma, else why not (a short reason, for tests and dumps)."""
    if not target.has("wgmma"):
        return f"{target} has no wgmma"
    if num_warps % 4 or num_warps < 4:
        return f"num_warps {num_warps} is not whole warpgroups"
    sa, sb, sc = (T.shape_of(t) for t in (a_type, b_type, acc_type))
    if len(sc) != 2:
        return "only 2-D dots"
    ea, eb, ec = (str(T.element_type(t)) for t in (a_type, b_type, acc_type))
    if ea not in WGMMA_TYPES or eb not in WGMMA_TYPES:
        return f"operand type {ea} has no wgmma"
    if WGMMA_TYPES[ea] != WGMMA_TYPES[eb] or (ea != eb and WGMMA_TYPES[ea] != 8) or \
            (ea == "i8") != (eb == "i8"):
        return f"operand types {ea} and {eb} do not pair"
    if ea == "f32" and precision != "tf32":
        return f"fp32 operands with input_precision {precision!r} (wgmma computes in tf32)"
    if ea == "i8" and ec != "i32" or ea != "i8" and ec not in ("f32", "f16"):
        return f"accumulator {ec} for operands {ea}"
    if ec == "f16" and ea in ("bf16", "f32"):
        return f"accumulator f16 for operands {ea}"
    M, N = sc
    K = sa[1]
    if not all(_pow2(n) for n in (M, N, K)):
        return "tile dims must be powers of two"
    eb_bytes = WGMMA_TYPES[ea] // 8
    if M < 64:
        return f"M {M} is less than the 64 rows of one warpgroup"
    if K * eb_bytes < MIN_SWIZZLE_BYTES:
        return f"K {K} is narrower than one instruction ({wgmma_k(WGMMA_TYPES[ea])})"
    # B is stored N-contiguous (16-bit types) or K-contiguous (others): N needs 32 bytes
    if WGMMA_TYPES[ea] == 16 and N * eb_bytes < MIN_SWIZZLE_BYTES or N < 8:
        return f"N {N} is narrower than a 32-byte swizzled row"
    return None


def warps_for(M: int, N: int, num_warps: int) -> tuple[int, int]:
    """[wm, wn]: warps along M (whole warpgroups, 16 rows each) while M has rows for them,
    the rest along N."""
    wm, wn = 4, 1
    while wm * wn < num_warps:
        if 32 * wm <= M:
            wm *= 2
        else:
            wn *= 2
    return wm, wn


def wgmma_layout(target, op, num_warps: int):
    """The mma v3 accumulator layout for the `tile.dot` `op`, or None (not eligible)."""
    a, b, c = (op.operands[i].type for i in range(3))
    prec = str(op.attributes["input_precision"]).strip('"')
    if wgmma_eligible(target, a, b, c, prec, num_warps) is not None:
        return None
    M, N = T.shape_of(c)
    wm, wn = warps_for(M, N, num_warps)
    n = min(MAX_N, N // wn)
    if n < 8:
        return None
    bits = WGMMA_TYPES[str(T.element_type(a))]
    return NvidiaMma(3, (wm, wn), (64, n, wgmma_k(bits)))
