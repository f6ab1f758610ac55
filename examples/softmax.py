"""Row-wise softmax.

`softmax_kernel`: one pass.  Each program owns ROWS rows, holds them in registers as one
[ROWS, BLOCK_N] tile (BLOCK_N >= n_cols), and reads and writes each element once.
`softmax_prefetch_kernel`: for long rows (16384 to 32768 columns), where one row fills a
multiprocessor's registers and a program per row would stop loading while it reduces: one
program per multiprocessor walks rows with a stride, loading its next row before reducing the
current one (kept in its 16-bit type, exp computed twice) so that a load is always in flight.
`softmax_online_kernel`: for rows longer than one tile, streams each row in BLOCK_N chunks
keeping a running maximum and a running sum rescaled as the maximum grows (online softmax),
then a second sweep writes the outputs: 2 reads + 1 write per element.
"""
import tilework
import tilework.language as tl


@tilework.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                   BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(in_ptr + rows[:, None] * in_stride + cols[None, :], mask=mask,
                other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(x)
    inv = 1.0 / tl.sum(num, axis=1)
    y = num * inv[:, None]
    tl.store(out_ptr + rows[:, None] * out_stride + cols[None, :],
             y.to(out_ptr.dtype.element_ty), mask=mask)


@tilework.jit
def softmax_prefetch_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                            BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    # the row after the last is read again as the last (never stored): fewer predicates
    nxt = tl.load(in_ptr + tl.minimum(pid, n_rows - 1) * in_stride + cols, mask=cmask,
                  other=-float("inf"))
    for row in range(pid, n_rows, step):
        x = nxt
        ahead = tl.minimum(row + step, n_rows - 1)
        nxt = tl.load(in_ptr + ahead * in_stride + cols, mask=cmask, other=-float("inf"))
        m = tl.max(x, axis=0).to(tl.float32)
        s = tl.sum(tl.exp(x.to(tl.float32) - m), axis=0)
        y = tl.exp(x.to(tl.float32) - m) * (1.0 / s)
        tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=cmask)


@tilework.jit
def softmax_online_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols,
                          BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    in_row = in_ptr + row * in_stride
    out_row = out_ptr + row * out_stride
    cols = tl.arange(0, BLOCK_N)
    m = tl.full((BLOCK_N,), -float("inf"), tl.float32)   # running max, per lane
    s = tl.zeros((BLOCK_N,), tl.float32)                 # running sum of exp(x - m)
    for start in range(0, n_cols, BLOCK_N):
        x = tl.load(in_row + start + cols, mask=start + cols < n_cols,
                    other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes still at -inf contribute nothing (and must not produce inf - inf)
        scale = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.where(m == -float("inf"), 0.0, tl.exp(m - row_max)), axis=0)
    inv = 1.0 / total
    for start in range(0, n_cols, BLOCK_N):
        mask = start + cols < n_cols
        x = tl.load(in_row + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) * inv
        tl.store(out_row + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def next_pow2(n):
    return 1 << (max(1, n) - 1).bit_length()


def config(n_cols, elem_bytes):
    """(BLOCK_N, ROWS, num_warps) for the one-pass kernel: 16 to 64 fp32 values per thread,
    8 warps up to 8192 columns, 16 beyond (benchmarks/sweep.py on an H200)."""
    block_n = next_pow2(n_cols)
    warps = 8 if block_n <= 8192 else 16
    rows = max(1, min(32, 4096 // block_n))
    return block_n, rows, warps


def softmax(x, out=None, online_above=32768):
    """Softmax over the last dimension of a 2-D CUDA tensor."""
    import torch
    n_rows, n_cols = x.shape
    out = torch.empty_like(x) if out is None else out
    if n_cols > online_above:
        softmax_online_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols,
                                         BLOCK_N=4096, num_warps=8)
        return out
    if n_cols > 8192 and x.element_size() == 2:
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        softmax_prefetch_kernel[(min(n_rows, sms),)](
            out, x, x.stride(0), out.stride(0), n_rows, n_cols, BLOCK_N=next_pow2(n_cols),
            num_warps=16)
        return out
    block_n, rows, warps = config(n_cols, x.element_size())
    softmax_kernel[((n_rows + rows - 1) // rows,)](out, x, x.stride(0), out.stride(0), n_rows,
                                                   n_cols, BLOCK_N=block_n, ROWS=rows,
                                                   num_warps=warps)
    return out
