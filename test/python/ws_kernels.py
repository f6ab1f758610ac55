"""Kernels of the warp-specialization tests (compile-only: test_warp_specialize.py; on the
GPU: test_warp_specialize_gpu.py) and of benchmarks/tools/ws_matmul.py's shapes: a descriptor
GEMM whose K loop is `tl.range(..., warp_specialize=WS)`, and the persistent form of Triton's
tutorial 09 (the tiles' loop marked, the K loop inside): examples/persistent_matmul.py's
`matmul_tma_persistent`, the kernel benchmarks/matmul.py times."""
import tilework
import tilework.language as tl
from persistent_matmul import matmul_tma_persistent as ws_persistent  # noqa: F401


@tilework.jit
def ws_matmul(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr, WS: tl.constexpr):
    """C = A @ B, one tile per program, the K loop warp-specialized when WS."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), warp_specialize=WS):
        a = a_desc.load([pm * BM, k * BK])
        b = b_desc.load([k * BK, pn * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(c_desc.dtype))


@tilework.jit
def ws_scaled(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    """C = (2 A) @ B: A's slot is read into registers (scaled) and written to a buffer of
    its own, so the wgmma is synchronous and the slot is released at the iteration's end."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), warp_specialize=True):
        a = a_desc.load([pm * BM, k * BK])
        b = b_desc.load([k * BK, pn * BN])
        acc = tl.dot(a * 2, b, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(c_desc.dtype))
