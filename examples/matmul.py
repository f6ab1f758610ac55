"""C = A @ B with grouped program ordering (Triton's tutorial design), autotuned.

Programs walk C's tiles in groups of GROUP_M tile rows, so consecutive programs share A's row
panels and B's column panels in L2.  K need not be a multiple of BLOCK_K: the last slice is
masked (the EVEN_K heuristic drops the masks when it is).  The accumulator is fp32.

    c = matmul(a, b)        # torch tensors on the GPU (fp16, bf16, fp32)
"""
import tilework
import tilework.language as tl

# Triton's tutorial/Hopper list; the autotuner times them on the real arguments
CONFIGS = [
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8},
                    num_warps=8, num_stages=3),
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8},
                    num_warps=8, num_stages=3),
    tilework.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8},
                    num_warps=4, num_stages=4),
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8},
                    num_warps=4, num_stages=4),
    tilework.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8},
                    num_warps=4, num_stages=4),
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8},
                    num_warps=4, num_stages=4),
]


def even_k(args):
    return args["K"] % args["BLOCK_K"] == 0


@tilework.autotune(configs=CONFIGS, key=["M", "N", "K"])
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


def grid(meta):
    # host code: tilework.cdiv, not tl.cdiv (a kernel builtin under Triton, whose tutorial
    # loader swaps the imports: calling it here fails "outside of the scope of a kernel")
    return (tilework.cdiv(meta["M"], meta["BLOCK_M"]) *
            tilework.cdiv(meta["N"], meta["BLOCK_N"]),)


def matmul(a, b, c=None):
    """a [M, K] @ b [K, N] -> c [M, N] (a's dtype); any strides."""
    import torch
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"matmul: inner sizes differ ({K} and {K2})")
    if c is None:
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1))
    return c
