"""The backward kernels the examples lack: softmax's, and the fused linear layer's activation
gradient (the GEMM recomputed with dy * act'(z) as its epilogue).

The forward kernels (and LayerNorm's backward) are the examples' own (`examples/softmax.py`,
`layernorm.py`, `linear_activation.py`), loaded by `tilework.torch.examples`.
"""
import tilework
import tilework.language as tl


@tilework.jit
def softmax_bwd_kernel(dx_ptr, dy_ptr, y_ptr, stride, n_rows, n_cols, BLOCK_N: tl.constexpr,
                       ROWS: tl.constexpr):
    """dx = y * (dy - sum(dy * y)) over each row; ROWS rows a program, BLOCK_N >= n_cols
    (one read of y and dy, one write of dx); all three share `stride`."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None] * stride + cols[None, :]
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(y * dy, axis=1)
    dx = y * (dy - dot[:, None])
    tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@tilework.jit
def softmax_bwd_online_kernel(dx_ptr, dy_ptr, y_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    """The same for rows longer than one tile: one sweep sums dy * y, a second writes dx."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        m = start + cols < n_cols
        offs = row * stride + start + cols
        acc += tl.load(y_ptr + offs, mask=m, other=0.0).to(tl.float32) * \
            tl.load(dy_ptr + offs, mask=m, other=0.0).to(tl.float32)
    dot = tl.sum(acc, axis=0)
    for start in range(0, n_cols, BLOCK_N):
        m = start + cols < n_cols
        offs = row * stride + start + cols
        y = tl.load(y_ptr + offs, mask=m, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=m, other=0.0).to(tl.float32)
        tl.store(dx_ptr + offs, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=m)


@tilework.jit
def activation_grad(z, ACTIVATION: tl.constexpr):
    """d act(z) / dz for the activations of examples/linear_activation.py."""
    if ACTIVATION == "gelu":  # Phi(z) + z phi(z)
        g = 0.5 * (1.0 + tl.erf(z * 0.7071067811865476)) + \
            z * 0.3989422804014327 * tl.exp(-0.5 * z * z)
    elif ACTIVATION == "gelu_tanh":  # act = z s, s = sigmoid(2u), u = c (z + 0.044715 z^3)
        s = tl.sigmoid(1.5957691216057308 * (z + 0.044715 * z * z * z))
        g = s + z * s * (1.0 - s) * 1.5957691216057308 * (1.0 + 0.134145 * z * z)
    elif ACTIVATION == "silu":
        s = tl.sigmoid(z)
        g = s + z * s * (1.0 - s)
    else:
        g = tl.full(z.shape, 1.0, tl.float32)
    return g


BWD_CONFIGS = [
    tilework.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8},
                    num_warps=8, num_stages=3),
    tilework.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8},
                    num_warps=4, num_stages=4),
    tilework.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8},
                    num_warps=4, num_stages=4),
]
# what the CPU interpreter runs (any size is correct; small tiles are fast in numpy)
INTERPRETER_CONFIG = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}


@tilework.autotune(configs=BWD_CONFIGS, key=["M", "N", "K"])
@tilework.jit
def linear_act_grad_kernel(x_ptr, w_ptr, bias_ptr, dy_ptr, dz_ptr, M, N, K, stride_xm,
                           stride_xk, stride_wk, stride_wn, stride_ym, stride_yn,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr, HAS_BIAS: tl.constexpr,
                           ACTIVATION: tl.constexpr):
    """dz = dy * act'(x @ w + bias): the forward GEMM again, with the activation's gradient
    as its epilogue (z is never stored).  dy and dz share strides (stride_ym, stride_yn)."""
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
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    offs = offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dz = dy * activation_grad(acc, ACTIVATION)
    tl.store(dz_ptr + offs, dz.to(dz_ptr.dtype.element_ty), mask=mask)
