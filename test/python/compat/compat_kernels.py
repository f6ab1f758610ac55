"""Triton kernels, unchanged but for their imports (see test_compat_gpu.py: the Triton twin of
this module is this text with `tilework` replaced by `triton` in the imports and decorators,
so every kernel body is literally the same).  Only `triton.language` API is used here."""
import tilework
import tilework.language as tl


@tilework.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@tilework.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


@tilework.jit
def softmax_builtin_kernel(output_ptr, input_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(input_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float('inf'))
    tl.store(output_ptr + row * n_cols + cols, tl.softmax(x), mask=cols < n_cols)


@tilework.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@tilework.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@tilework.jit
def _argmax_combine(value1, index1, value2, index2):
    gt = (value1 > value2) | ((value1 == value2) & (index1 < index2))
    return tl.where(gt, value1, value2), tl.where(gt, index1, index2)


@tilework.jit
def _absmax_combine(a, b):
    return tl.where(tl.abs(a) >= tl.abs(b), a, b)


@tilework.jit
def reduce_custom_kernel(x_ptr, val_ptr, idx_ptr, absmax_ptr, n_cols,
                         BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float('inf'))
    v, i = tl.reduce((x, cols), 0, _argmax_combine)
    tl.store(val_ptr + row, v)
    tl.store(idx_ptr + row, i)
    y = tl.where(cols < n_cols, x, 0.0)
    tl.store(absmax_ptr + row, tl.reduce(y, 0, _absmax_combine))


@tilework.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0)
    tl.store(out_ptr + row * n_cols + cols, tl.cumsum(x, axis=0), mask=cols < n_cols)


@tilework.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0)
    tl.atomic_add(hist_ptr + x, 1, mask=mask)


@tilework.jit
def block_ptr_rowsum_kernel(a_ptr, out_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    a_block = tl.make_block_ptr(base=a_ptr, shape=(M, N), strides=(stride_m, stride_n),
                                offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_N),
                                order=(1, 0))
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for _ in range(0, tl.cdiv(N, BLOCK_N)):
        x = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.sum(x, axis=1)
        a_block = tl.advance(a_block, (0, BLOCK_N))
    out_block = tl.make_block_ptr(base=out_ptr, shape=(M,), strides=(1,), offsets=(pid * BLOCK_M,),
                                  block_shape=(BLOCK_M,), order=(0,))
    tl.store(out_block, acc, boundary_check=(0,))


@tilework.jit
def rand_kernel(out_ptr, n, seed, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    r = tl.rand(seed, offsets)
    tl.store(out_ptr + offsets, r, mask=offsets < n)


@tilework.jit
def join_split_kernel(a_ptr, b_ptr, inter_ptr, sum_ptr, BLOCK_SIZE: tl.constexpr):
    offs = tl.arange(0, BLOCK_SIZE)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(inter_ptr + tl.arange(0, 2 * BLOCK_SIZE), tl.interleave(a, b))
    lo, hi = tl.split(tl.join(a, b))
    tl.store(sum_ptr + offs, lo + 2 * hi)
