"""A linear layer with its epilogue fused: y = act(x @ w + bias), act = GELU (exact, erf),
GELU (tanh approximation), SiLU or none, applied to the fp32 accumulator before the one store.

    y = linear(x, w, bias, activation="gelu")     # x [M, K], w [K, N] (w.T of nn.Linear's)

Grouped program ordering and the autotuned configs of `matmul.py`; K need not be a multiple of
BLOCK_K (the last slice is masked).
"""
import tilework
import tilework.language as tl
from matmul import CONFIGS, grid

ACTIVATIONS = ("gelu", "gelu_tanh", "silu", "none")


@tilework.jit
def apply_activation(x, ACTIVATION: tl.constexpr):
    if ACTIVATION == "gelu":
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    elif ACTIVATION == "gelu_tanh":  # 0.5 x (1 + tanh(u)) = x * sigmoid(2u)
        y = x * tl.sigmoid(1.5957691216057308 * (x + 0.044715 * x * x * x))
    elif ACTIVATION == "silu":
        y = x * tl.sigmoid(x)
    else:
        y = x
    return y


@tilework.autotune(configs=CONFIGS, key=["M", "N", "K"])
@tilework.jit
def linear_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K, stride_xm, stride_xk, stride_wk,
                  stride_wn, stride_ym, stride_yn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, HAS_BIAS: tl.constexpr,
                  ACTIVATION: tl.constexpr):
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
    x_ptrs = x_ptr + (offs_m % M)[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + (offs_n % N)[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    if HAS_BIAS:
        acc += tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    y = apply_activation(acc, ACTIVATION)
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear(x, w, bias=None, activation="gelu"):
    """act(x [M, K] @ w [K, N] + bias [N]) -> [M, N] in x's dtype."""
    import torch
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, "
                         f"got {activation!r}")
    M, K = x.shape
    K2, N = w.shape
    if K != K2:
        raise ValueError(f"linear: inner sizes differ ({K} and {K2})")
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    linear_kernel[grid](x, w, bias, y, M, N, K, x.stride(0), x.stride(1), w.stride(0),
                        w.stride(1), y.stride(0), y.stride(1), HAS_BIAS=bias is not None,
                        ACTIVATION=activation)
    return y
