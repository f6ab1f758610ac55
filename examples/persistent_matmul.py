"""Persistent matmul through tensor descriptors: C[M, N] = A[M, K] @ B[K, N], fp16 inputs,
fp32 accumulation, fp16 output.

One program per multiprocessor (NUM_SMS programs) walks the output tiles with
`tl.range(start, num_tiles, NUM_SMS)`, in groups of GROUP_M tile rows so that programs running
at the same time share A's rows and B's columns in L2.  Operands are read and the result
written through tensor descriptors: `matmul_persistent` takes host `TensorDescriptor`s,
`matmul_persistent_device` builds them in the kernel with `tl.make_tensor_descriptor` (on
sm_90a their TMA maps live in global scratch from `tilework.set_allocator`).  Tails
need no masks: a descriptor reads zeros outside the tensor and writes only inside it.

`matmul_tma_persistent` is Triton's tutorial 09 kernel in the same form, the tiles' loop
marked `tl.range(..., warp_specialize=WARP_SPECIALIZE)` (on sm_90a a producer warp group
issues the TMA copies and runs on into the next tile while the kernel's warps store this one),
with B given either [K, N] or, `B_NK`, [N, K] (read as `b.T`: a K-major B in shared memory,
which fp8 wgmma needs).  `matmul_tma` runs it autotuned over TMA_CONFIGS (16-bit) or
TMA_FP8_CONFIGS, which hold tile shapes with WARP_SPECIALIZE both ways, and whose pre_hook
sets the host descriptors' block shapes to the config's blocks; the benchmark
(benchmarks/matmul.py) runs the same source and configs under Triton.
"""
import tilework
import tilework.language as tl
from tilework.runtime.allocation import get_allocator
from tilework.tools.tensor_descriptor import TensorDescriptor


@tilework.jit
def tile_position(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of output tile `tile_id`, grouped GROUP_M tile rows at a time."""
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@tilework.jit
def matmul_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                 NUM_SMS: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_SMS):
        pid_m, pid_n = tile_position(tile_id, num_pid_m, num_pid_n, GROUP_M)
        offs_m = pid_m * BLOCK_M
        offs_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([offs_m, ki * BLOCK_K])
            b = b_desc.load([ki * BLOCK_K, offs_n])
            acc = tl.dot(a, b, acc)
        c_desc.store([offs_m, offs_n], acc.to(c_desc.dtype))


@tilework.jit
def matmul_persistent(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                      NUM_SMS: tl.constexpr):
    """Host descriptors: a_desc [BLOCK_M, BLOCK_K], b_desc [BLOCK_K, BLOCK_N], c_desc
    [BLOCK_M, BLOCK_N] blocks."""
    matmul_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_SMS)


@tilework.jit
def matmul_persistent_device(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                             NUM_SMS: tl.constexpr):
    """Device descriptors over row-major A, B and C (unit last strides)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [stride_am, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [stride_bk, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [stride_cm, 1], [BLOCK_M, BLOCK_N])
    matmul_tiles(a_desc, b_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_SMS)


@tilework.jit
def matmul_tma_persistent(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr,
                          WARP_SPECIALIZE: tl.constexpr, B_NK: tl.constexpr):
    """C = A @ B, NUM_SMS programs looping over the tiles (grouped GROUP_M tile rows at a
    time); the tiles' loop warp-specialized when WARP_SPECIALIZE.  Descriptors: a [BM, BK],
    b [BK, BN] (B_NK: [BN, BK] over B stored [N, K]), c [BM, BN] blocks."""
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    num_tiles = num_pid_m * num_pid_n
    in_group = GROUP_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True,
                           warp_specialize=WARP_SPECIALIZE):
        group = tile_id // in_group
        first_m = group * GROUP_M
        size_m = min(num_pid_m - first_m, GROUP_M)
        pm = first_m + (tile_id % in_group) % size_m
        pn = (tile_id % in_group) // size_m
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pm * BM, ki * BK])
            if B_NK:
                b = b_desc.load([pn * BN, ki * BK]).T
            else:
                b = b_desc.load([ki * BK, pn * BN])
            acc = tl.dot(a, b, acc)
        c_desc.store([pm * BM, pn * BN], acc.to(c_desc.dtype))


def tma_block_shapes(nargs):
    """A config's pre_hook: the host descriptors' blocks are the config's."""
    bm, bn, bk = nargs["BM"], nargs["BN"], nargs["BK"]
    nargs["a_desc"].block_shape = [bm, bk]
    nargs["b_desc"].block_shape = [bn, bk] if nargs["B_NK"] else [bk, bn]
    nargs["c_desc"].block_shape = [bm, bn]


def tma_config(bm, bn, bk, warps, stages, ws):
    return tilework.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8, "WARP_SPECIALIZE": ws},
                           num_warps=warps, num_stages=stages, pre_hook=tma_block_shapes)


def _both_ways(*tiles):
    """Each (bm, bn, bk, warps, stages) warp-specialized and not: which is faster depends on
    the shape (the producer warp group overlaps the next tile's loads with this tile's
    epilogue, but takes registers and issue slots from the consumers)."""
    return [tma_config(*t, ws) for t in tiles for ws in (True, False)]


# the first four are the quick set (benchmarks/matmul.py --quick); 128x256 tiles stop at 3
# stages (4 rings and the epilogue's 64 KB do not fit in shared memory); the 4-warp tiles give
# small problems (1000^3, M=16) a tile per multiprocessor.  No 128x64 tile with 4 warps
# warp-specialized: its one consumer warp group's two m64 wgmmas make ptxas inject
# warpgroup waits (C7519), which serialize them.
TMA_CONFIGS = _both_ways((128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (64, 128, 64, 4, 4)) + \
    [tma_config(128, 64, 64, 4, 4, False)]
TMA_FP8_CONFIGS = _both_ways((128, 256, 128, 8, 3), (128, 128, 128, 8, 4)) + \
    [tma_config(64, 128, 128, 4, 4, True), tma_config(128, 64, 128, 4, 4, False)]


def tma_grid(meta):
    """One program per multiprocessor, at most one per tile."""
    tiles = cdiv(meta["M"], meta["BM"]) * cdiv(meta["N"], meta["BN"])
    return (min(meta["NUM_SMS"], tiles),)


def tuned_tma(configs):
    """A fresh autotuned `matmul_tma_persistent` (nothing tuned yet) over `configs`."""
    return tilework.autotune(configs=configs, key=["M", "N", "K"])(matmul_tma_persistent)


_TUNED = {}


def tuned_matmul_tma(fp8, ws=None):
    """The autotuned kernel `matmul_tma` runs (one per (fp8, ws), made at its first use):
    over TMA_FP8_CONFIGS or TMA_CONFIGS, those whose WARP_SPECIALIZE is `ws` (None: all)."""
    if (fp8, ws) not in _TUNED:
        configs = TMA_FP8_CONFIGS if fp8 else TMA_CONFIGS
        _TUNED[fp8, ws] = tuned_tma([c for c in configs
                                     if ws is None or c.kwargs["WARP_SPECIALIZE"] == ws])
    return _TUNED[fp8, ws]


def matmul_tma(a, b, b_nk=False, ws=None, out_dtype=None):
    """a [M, K] @ B -> [M, N] in `out_dtype` (default a's dtype; bfloat16 for fp8), B given as
    `b` [K, N], or [N, K] with `b_nk` (fp8 needs it); torch CUDA tensors, rows 16-byte aligned.
    Autotuned over TMA_CONFIGS (TMA_FP8_CONFIGS for 1-byte elements); `ws` True or False keeps
    the configs of that WARP_SPECIALIZE only (None: the autotuner chooses)."""
    import torch
    M, K = a.shape
    N, K2 = b.shape if b_nk else b.shape[::-1]
    assert K == K2, f"inner dimensions differ: {a.shape} @ {b.shape} (b_nk={b_nk})"
    fp8 = a.element_size() == 1
    c = torch.empty((M, N), device=a.device,
                    dtype=out_dtype or (torch.bfloat16 if fp8 else a.dtype))
    kernel = tuned_matmul_tma(fp8, ws)
    # (placeholder blocks: the config's pre_hook sets them)
    kernel[tma_grid](TensorDescriptor.from_tensor(a, [64, 64]),
                     TensorDescriptor.from_tensor(b, [64, 64]),
                     TensorDescriptor.from_tensor(c, [64, 64]), M, N, K, NUM_SMS=num_sms(),
                     B_NK=b_nk)
    return c


CONFIG = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8)


def num_sms() -> int:
    import torch
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def matmul(a, b, device_descriptors=False, **config):
    """a [M, K] @ b [K, N] (fp16 torch CUDA tensors, rows 16-byte aligned) -> fp16 [M, N]."""
    import torch
    cfg = {**CONFIG, **config}
    (M, K), (K2, N) = a.shape, b.shape
    assert K == K2, f"inner dimensions differ: {a.shape} @ {b.shape}"
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    sms = num_sms()
    tiles = cdiv(M, cfg["BLOCK_M"]) * cdiv(N, cfg["BLOCK_N"])
    grid = (min(sms, tiles),)
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    if device_descriptors:
        if get_allocator() is None:  # (sm_90a writes the descriptors' TMA maps in scratch)
            tilework.set_allocator(lambda size, align, stream:
                                   torch.empty(size, device=a.device, dtype=torch.int8))
        matmul_persistent_device[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                                       NUM_SMS=sms, **cfg)
    else:
        matmul_persistent[grid](TensorDescriptor.from_tensor(a, [bm, bk]),
                                TensorDescriptor.from_tensor(b, [bk, bn]),
                                TensorDescriptor.from_tensor(c, [bm, bn]), M, N, K,
                                NUM_SMS=sms, **cfg)
    return c


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


if __name__ == "__main__":
    import torch
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(matmul(a, b), (a.float() @ b.float()).half(), rtol=1e-2,
                               atol=1e-1)
    torch.testing.assert_close(matmul_tma(a, b), (a.float() @ b.float()).half(), rtol=1e-2,
                               atol=1e-1)
    print("ok")
