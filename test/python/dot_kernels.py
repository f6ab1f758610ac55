"""Kernels shared by the tl.dot tests (interpreted, compiled, and on the GPU)."""
import tilework
import tilework.language as tl


@tilework.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, ACC: tl.constexpr, PLUS_EQ: tl.constexpr):
    """C = A @ B, tiled: one BLOCK_M x BLOCK_N block of C per program, a K loop over BLOCK_K
    slices with masks (sizes need not be multiples of the blocks).  `ACC` is the accumulator
    dtype (the dot's out_dtype); PLUS_EQ accumulates with `acc += tl.dot(a, b)` instead of
    `acc = tl.dot(a, b, acc)`."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0)
        if PLUS_EQ:
            acc += tl.dot(a, b, out_dtype=ACC)
        else:
            acc = tl.dot(a, b, acc, out_dtype=ACC)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tilework.jit
def dot_tile(a_ptr, b_ptr, c_ptr, d_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
             MODE: tl.constexpr, OUT: tl.constexpr, PRECISION: tl.constexpr):
    """One dot of whole (contiguous) tiles: d = a @ b (MODE "plain"), a @ b + c ("acc"),
    a @ b.T with b given as [N, K] ("trans_b"), or with a transposed view of a ("trans_a")."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    if MODE == "trans_a":
        a = tl.trans(tl.load(a_ptr + rk[:, None] * M + rm[None, :]))
    else:
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    if MODE == "trans_b":
        b = tl.load(b_ptr + rn[:, None] * K + rk[None, :]).T
    else:
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    if MODE == "acc":
        c = tl.load(c_ptr + rm[:, None] * N + rn[None, :])
        d = tl.dot(a, b, c, input_precision=PRECISION, out_dtype=OUT)
    else:
        d = tl.dot(a, b, input_precision=PRECISION, out_dtype=OUT)
    tl.store(d_ptr + rm[:, None] * N + rn[None, :], d)


@tilework.jit
def batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                K: tl.constexpr):
    """c[b] = a[b] @ b[b] for 3-D tiles (tl.dot's batched form)."""
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rn = tl.arange(0, N)[None, None, :]
    rk_col = tl.arange(0, K)[None, None, :]
    rk_row = tl.arange(0, K)[None, :, None]
    a = tl.load(a_ptr + rb * (M * K) + rm * K + rk_col)
    b = tl.load(b_ptr + rb * (K * N) + rk_row * N + rn)
    tl.store(c_ptr + rb * (M * N) + rm * N + rn, tl.dot(a, b))


@tilework.jit
def softmax_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr, IEEE: tl.constexpr):
    """One row per program: y = tl.softmax(row) (a 1-D tile: its only axis)."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf"))
    y = tl.softmax(x, ieee_rounding=IEEE)
    tl.store(y_ptr + row * stride + offs, y, mask=offs < n_cols)


@tilework.jit
def softmax_2d(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr,
               KEEP: tl.constexpr):
    """y = tl.softmax(x, DIM, keep_dims=KEEP) of a whole [M, N] tile (Triton's default dim 0:
    down the columns)."""
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    if DIM == "default":
        y = tl.softmax(x)
    else:
        y = tl.softmax(x, DIM, keep_dims=KEEP)
    tl.store(y_ptr + rm * N + rn, y)


@tilework.jit
def dot_slices(a_ptr, b_ptr, c_ptr, d_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """d = sum(a3, 2) @ sum(b3, 2) + sum(c3, 2): every operand, the accumulator included, in a
    slice layout (the result takes the accumulator's)."""
    r2 = tl.arange(0, 2)[None, None, :]
    rm = tl.arange(0, M)[:, None, None]
    rk = tl.arange(0, K)[None, :, None]
    rn = tl.arange(0, N)[None, :, None]
    a = tl.sum(tl.load(a_ptr + rm * (K * 2) + rk * 2 + r2), axis=2)
    b = tl.sum(tl.load(b_ptr + tl.arange(0, K)[:, None, None] * (N * 2) + rn * 2 + r2), axis=2)
    c = tl.sum(tl.load(c_ptr + rm * (N * 2) + rn * 2 + r2), axis=2)
    d = tl.dot(a, b, c)
    tl.store(d_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], d)
