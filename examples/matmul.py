"""C = A @ B with grouped program ordering (Triton's tutorial design), autotuned.

Programs walk C's tiles in groups of GROUP_M tile rows, so consecutive programs share A's row
panels and B's column panels in L2.  K need not be a multiple of BLOCK_K: the last slice is
masked (the EVEN_K heuristic drops the masks when it is).  The accumulator is fp32.  The
autotuner times the configs of the shape's group (`prune_configs`: small-M tiles for M <= 32,
the short-K ones for K <= 1024); `matmul()` splits K (`matmul_splitk_kernel`) where C's tiles
would leave most SMs idle (`use_split_k`).

    c = matmul(a, b)        # torch tensors on the GPU (fp16, bf16, fp32)
"""
import tilework
import tilework.language as tl


def config(block_m, block_n, block_k, num_warps, num_stages, **more):
    """A config of C's tiles BLOCK_M x BLOCK_N, K slices BLOCK_K, in groups of 8 tile rows
    (`more`: other constexprs, SPLIT_K)."""
    return tilework.Config({"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k,
                            "GROUP_M": 8, **more}, num_warps=num_warps, num_stages=num_stages)


# Triton's tutorial/Hopper list (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages); the autotuner times
# them on the real arguments
CONFIGS = [
    config(128, 256, 64, 8, 3),
    config(128, 128, 64, 8, 3),
    config(64, 128, 32, 4, 4),
    config(128, 128, 32, 4, 4),
    config(64, 64, 32, 4, 4),
    config(128, 64, 64, 4, 4),
]

# skinny shapes (issue 9).  M <= 32 (a decode step's GEMV-like GEMM): the time is reading B,
# so the tile is 16 or 32 rows (mma.sync; wgmma needs 64) and narrow in N (N / BLOCK_N programs
# to fill the SMs), deep in K with 3-4 stages (tens of KiB of B in flight per SM).
SMALL_M_CONFIGS = [
    config(16, 64, 128, 4, 4),
    config(16, 64, 256, 4, 3),
    config(16, 32, 256, 4, 3),
    config(32, 64, 128, 4, 4),
]
# short K (<= 1024: a handful of K slices a tile, so the prologue and the epilogue weigh):
# a deeper ring for the wide tile, and the tall one
SHORT_K_CONFIGS = [
    config(128, 256, 64, 8, 4),
    config(256, 128, 64, 8, 3),
]
ALL_CONFIGS = CONFIGS + SMALL_M_CONFIGS + SHORT_K_CONFIGS


def prune_configs(configs, named_args, **kwargs):
    """The configs worth timing for this shape (Triton's early_config_prune signature):
    M <= 32 takes the small-M tiles only (16-bit inputs: fp32's dot on 16 rows would run on
    CUDA cores, not tf32 wgmma), larger M the others; the short-K ones only where K <= 1024.
    A list without the shape's group (a caller's own) is returned whole."""
    M, K = named_args["M"], named_args["K"]
    small = [c for c in configs if c.kwargs["BLOCK_M"] <= 32]
    if M <= 32 and _elem_bytes(named_args.get("a_ptr")) == 2:
        return small or list(configs)
    short = {_shape_of(c) for c in SHORT_K_CONFIGS}
    keep = [c for c in configs if c.kwargs["BLOCK_M"] > 32
            and (K <= 1024 or _shape_of(c) not in short)]
    return keep or list(configs)


def _elem_bytes(x):
    """Bytes of an element of a torch tensor or numpy array (2 for anything else)."""
    if hasattr(x, "element_size"):
        return x.element_size()
    return getattr(x, "itemsize", 2)


def _shape_of(c):
    # by value: the benchmark hands Triton's Config copies of these
    return (*(c.kwargs[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")), c.num_warps,
            c.num_stages)


PRUNE = {"early_config_prune": prune_configs}


def even_k(args):
    return args["K"] % args["BLOCK_K"] == 0


@tilework.autotune(configs=ALL_CONFIGS, key=["M", "N", "K"], prune_configs_by=PRUNE)
@tilework.heuristics({"EVEN_K": even_k})
@tilework.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    # rows and columns past the edge wrap (their results are masked at the store)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# split K: for a C whose tiles leave most SMs idle (M = 16 with N <= 4096, say)
SPLITK_CONFIGS = [
    config(16, 64, 128, 4, 4, SPLIT_K=2),
    config(16, 64, 128, 4, 4, SPLIT_K=4),
    config(32, 64, 128, 4, 4, SPLIT_K=4),
    config(64, 64, 64, 4, 4, SPLIT_K=4),
]


def prune_splitk(configs, named_args, **kwargs):
    """Tiles no taller than M needs (16 for M <= 16, 32 for M <= 32, else 64; 64 for fp32
    inputs, as prune_configs)."""
    M = named_args["M"]
    want = 16 if M <= 16 else 32 if M <= 32 else 64
    if _elem_bytes(named_args.get("a_ptr")) != 2:
        want = 64
    return [c for c in configs if c.kwargs["BLOCK_M"] == want] or list(configs)


@tilework.autotune(configs=SPLITK_CONFIGS, key=["M", "N", "K"], reset_to_zero=["c_ptr"],
                   prune_configs_by={"early_config_prune": prune_splitk})
@tilework.heuristics({"EVEN_K": even_k})
@tilework.jit
def matmul_splitk_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                         stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                         SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr):
    """matmul_kernel's tile with K cut into SPLIT_K runs of whole BLOCK_K slices (program id 1
    picks the run): each program adds its partial sum into c, an fp32 tensor zeroed first, by
    relaxed atomic adds (PTX red).  For a C too small to give every SM a tile (M = 16)."""
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    k_tiles = tl.cdiv(K, BLOCK_K)
    per_split = tl.cdiv(k_tiles, SPLIT_K)
    k_first = pid_k * per_split
    k_count = tl.minimum(per_split, k_tiles - k_first)  # <= 0 for a split past the end
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    k0 = k_first * BLOCK_K
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + (k0 + offs_k[None, :]) * stride_ak
    b_ptrs = b_ptr + (k0 + offs_k[:, None]) * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_count):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            k_left = K - (k_first + k) * BLOCK_K
            a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.atomic_add(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N),
                  sem="relaxed")


def grid(meta):
    # host code: tilework.cdiv, not tl.cdiv (a kernel builtin under Triton, whose tutorial
    # loader swaps the imports: calling it here fails "outside of the scope of a kernel")
    return (tilework.cdiv(meta["M"], meta["BLOCK_M"]) *
            tilework.cdiv(meta["N"], meta["BLOCK_N"]),)


def grid_splitk(meta):
    return grid(meta) + (meta["SPLIT_K"],)


def use_split_k(M, N, K, sms):
    """Whether matmul() splits K: the unsplit grid (small-M tiles for M <= 32) would fill
    at most half of the `sms` SMs, and K is long enough to share out."""
    bm, bn = (16, 64) if M <= 16 else (32, 64) if M <= 32 else (128, 128)
    return K >= 2048 and 2 * tilework.cdiv(M, bm) * tilework.cdiv(N, bn) <= sms


_SMS = {}


def _sm_count(torch, device):
    if device not in _SMS:  # (CPU tensors run in the interpreter: one SM's worth, no split)
        _SMS[device] = torch.cuda.get_device_properties(device).multi_processor_count \
            if device.type == "cuda" else 1
    return _SMS[device]


def matmul(a, b, c=None):
    """a [M, K] @ b [K, N] -> c [M, N] (a's dtype); any strides.  Split K (an fp32 sum by
    atomics, then cast into c) where use_split_k says so."""
    import torch
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"matmul: inner sizes differ ({K} and {K2})")
    if c is None:
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if use_split_k(M, N, K, _sm_count(torch, a.device)):
        acc = torch.zeros((M, N), device=a.device, dtype=torch.float32)
        matmul_splitk_kernel[grid_splitk](a, b, acc, M, N, K, a.stride(0), a.stride(1),
                                          b.stride(0), b.stride(1), acc.stride(0),
                                          acc.stride(1))
        c.copy_(acc)
        return c
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1))
    return c
