"""C = (A @ B) * scale_a * scale_b with float8 e4m3 inputs and per-tensor scales.

A [M, K] and B [K, N] hold e4m3 bytes (`fp8.view(torch.uint8)`; numpy has no float8 type, so
the interpreter gets the same bytes); the scales are two float32 scalars in device memory (as
a quantizer writes them), applied to the fp32 accumulator in the epilogue.  Grouped program
ordering, masked K tail, autotuned over fp8 configs (BLOCK_K 128).

    c = fp8_matmul(a_fp8, b_fp8, scale_a, scale_b, out_dtype=torch.bfloat16)
"""
import tilework
import tilework.language as tl
from matmul import config, grid

FP8_CONFIGS = [
    config(128, 256, 128, 8, 3),
    config(128, 128, 128, 8, 3),
    config(64, 128, 128, 4, 4),
    config(128, 64, 128, 4, 4),
    config(128, 128, 64, 4, 4),
    config(64, 64, 64, 4, 4),
]


@tilework.autotune(configs=FP8_CONFIGS, key=["M", "N", "K"])
@tilework.jit
def fp8_matmul_kernel(a_ptr, b_ptr, c_ptr, scale_a_ptr, scale_b_ptr, M, N, K, stride_am,
                      stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m % M)[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + (offs_n % N)[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0).to(tl.float8e4nv,
                                                                         bitcast=True)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0).to(tl.float8e4nv,
                                                                         bitcast=True)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = acc * (tl.load(scale_a_ptr) * tl.load(scale_b_ptr))
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def fp8_matmul(a, b, scale_a, scale_b, out_dtype=None):
    """a [M, K], b [K, N] (torch.float8_e4m3fn), scale_a, scale_b (1-element float32
    tensors) -> (a @ b) * scale_a * scale_b in `out_dtype` (default bfloat16)."""
    import torch
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"fp8_matmul: inner sizes differ ({K} and {K2})")
    c = torch.empty((M, N), device=a.device, dtype=out_dtype or torch.bfloat16)
    fp8_matmul_kernel[grid](a.view(torch.uint8), b.view(torch.uint8), c, scale_a, scale_b,
                            M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1))
    return c
