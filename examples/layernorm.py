"""LayerNorm and RMSNorm, forward and backward.

Forward: each program normalizes ROWS rows held in registers as one [ROWS, BLOCK_N] tile
(BLOCK_N >= n_cols): one read of x (and of the weights), one write of y, plus the per-row
mean and 1/std (or 1/rms) that the backward pass reuses.

Backward: each program walks a contiguous band of rows ROWS at a time, writes dx, and keeps
running column sums of dy * xhat (for dW) and dy (for dB) in registers; it stores them once as
its partial row.  A second kernel sums the partial rows (a few hundred) into dW and dB.
"""
import tilework
import tilework.language as tl


@tilework.jit
def layernorm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_rows, n_cols, eps,
                  BLOCK_N: tl.constexpr, ROWS: tl.constexpr, RMS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < n_rows
    col_ok = cols < n_cols
    mask = row_ok[:, None] & col_ok[None, :]
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if RMS:
        xc = x
    else:
        mean = tl.sum(x, axis=1) / n_cols
        xc = tl.where(mask, x - mean[:, None], 0.0)
        tl.store(mean_ptr + rows, mean, mask=row_ok)
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=1) / n_cols + eps)
    tl.store(rstd_ptr + rows, rstd, mask=row_ok)
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :]
    if not RMS:
        y = y + tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@tilework.jit
def layernorm_bwd(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr,
                  stride, n_rows, n_cols, rows_per_prog,
                  BLOCK_N: tl.constexpr, ROWS: tl.constexpr, RMS: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_N,), tl.float32)
    db = tl.zeros((BLOCK_N,), tl.float32)
    first = pid * rows_per_prog
    for start in range(first, first + rows_per_prog, ROWS):
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < n_rows
        mask = row_ok[:, None] & col_ok[None, :]
        offs = rows[:, None] * stride + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + rows, mask=row_ok, other=0.0)
        if RMS:
            xhat = x * rstd[:, None]
        else:
            mean = tl.load(mean_ptr + rows, mask=row_ok, other=0.0)
            xhat = tl.where(mask, (x - mean[:, None]) * rstd[:, None], 0.0)
        wdy = dy * w[None, :]
        c1 = tl.sum(xhat * wdy, axis=1) / n_cols
        if RMS:
            dx = (wdy - xhat * c1[:, None]) * rstd[:, None]
        else:
            c2 = tl.sum(wdy, axis=1) / n_cols
            dx = (wdy - (xhat * c1[:, None] + c2[:, None])) * rstd[:, None]
        tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        dw += tl.sum(dy * xhat, axis=0)
        db += tl.sum(dy, axis=0)
    tl.store(dw_part_ptr + pid * n_cols + cols, dw, mask=col_ok)
    if not RMS:
        tl.store(db_part_ptr + pid * n_cols + cols, db, mask=col_ok)


@tilework.jit
def column_sum(part_ptr, out_ptr, n_parts, n_cols, BLOCK_P: tl.constexpr,
               BLOCK_N: tl.constexpr):
    """out[c] = sum over p of part[p, c], for the BLOCK_N columns of this program."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_P, BLOCK_N), tl.float32)
    for p in range(0, n_parts, BLOCK_P):
        parts = p + tl.arange(0, BLOCK_P)
        mask = (parts[:, None] < n_parts) & (cols[None, :] < n_cols)
        acc += tl.load(part_ptr + parts[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty),
             mask=cols < n_cols)


def next_pow2(n):
    return 1 << (max(1, n) - 1).bit_length()


def fwd_config(n_cols, elem_bytes):
    """(BLOCK_N, ROWS, num_warps): one 4096-wide row per 8-warp program (16 values a thread,
    40 registers, 6 programs per multiprocessor) measured best for 8192x4096 fp16 on an H200
    (benchmarks/sweep_prefetch.py)."""
    block_n = next_pow2(n_cols)
    rows = max(1, min(8, 4096 // block_n))
    warps = max(4, min(16, block_n * rows // 512))
    return block_n, rows, warps


def layer_norm(x, weight, bias, eps=1e-5, rms=False):
    """y, mean, rstd for a 2-D CUDA tensor x (normalizing the last dimension)."""
    import torch
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    rstd = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    block_n, rows, warps = fwd_config(n_cols, x.element_size())
    layernorm_fwd[((n_rows + rows - 1) // rows,)](
        x, y, weight, bias if bias is not None else weight, mean, rstd, x.stride(0), n_rows,
        n_cols, eps, BLOCK_N=block_n, ROWS=rows, RMS=rms, num_warps=warps)
    return y, mean, rstd


def layer_norm_bwd(dy, x, weight, mean, rstd, rms=False, n_progs=None):
    """dx, dw, db (db is None for RMSNorm)."""
    import torch
    n_rows, n_cols = x.shape
    block_n = next_pow2(n_cols)
    rows = max(1, min(8, 4096 // block_n))
    warps = max(4, min(16, block_n * rows // 512))
    if n_progs is None:
        n_progs = min(n_rows, 4 * torch.cuda.get_device_properties(x.device).multi_processor_count)
    rows_per_prog = (n_rows + n_progs - 1) // n_progs
    rows_per_prog = (rows_per_prog + rows - 1) // rows * rows
    n_progs = (n_rows + rows_per_prog - 1) // rows_per_prog
    dx = torch.empty_like(x)
    dw_part = torch.empty(n_progs, n_cols, device=x.device, dtype=torch.float32)
    db_part = torch.empty(n_progs, n_cols, device=x.device, dtype=torch.float32)
    layernorm_bwd[(n_progs,)](dy, x, weight, mean, rstd, dx, dw_part, db_part, x.stride(0),
                              n_rows, n_cols, rows_per_prog, BLOCK_N=block_n, ROWS=rows,
                              RMS=rms, num_warps=warps)
    # narrow column blocks: enough programs to read the partial rows in parallel
    dw = torch.empty(n_cols, device=x.device, dtype=weight.dtype)
    grid = ((n_cols + 31) // 32,)
    column_sum[grid](dw_part, dw, n_progs, n_cols, BLOCK_P=64, BLOCK_N=32)
    db = None
    if not rms:
        db = torch.empty(n_cols, device=x.device, dtype=weight.dtype)
        column_sum[grid](db_part, db, n_progs, n_cols, BLOCK_P=64, BLOCK_N=32)
    return dx, dw, db
