"""Persistent programs that prefetch their next rows while reducing the current ones: a sweep
against the one-program-per-row examples (softmax over long rows, LayerNorm forward).

    python benchmarks/sweep_prefetch.py
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, HERE)
from memory_bound import bench, n_sets  # noqa: E402

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402


@tilework.jit
def softmax_prefetch(out_ptr, in_ptr, stride, n_rows, n_cols, BLOCK_N: tl.constexpr,
                     HOLD16: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    nxt = tl.load(in_ptr + pid * stride + cols, mask=cmask & (pid < n_rows),
                  other=-float("inf"))
    for row in range(pid, n_rows, step):
        x = nxt
        r2 = row + step
        nxt = tl.load(in_ptr + r2 * stride + cols, mask=cmask & (r2 < n_rows),
                      other=-float("inf"))
        if HOLD16:
            m = tl.max(x, axis=0).to(tl.float32)
            s = tl.sum(tl.exp(x.to(tl.float32) - m), axis=0)
            y = tl.exp(x.to(tl.float32) - m) * (1.0 / s)
        else:
            xf = x.to(tl.float32)
            m = tl.max(xf, axis=0)
            e = tl.exp(xf - m)
            y = e * (1.0 / tl.sum(e, axis=0))
        tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=cmask)


@tilework.jit
def softmax_prefetch2(out_ptr, in_ptr, stride, n_rows, n_cols, BLOCK_N: tl.constexpr):
    """Two rows in flight while one is reduced."""
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    n1 = tl.load(in_ptr + pid * stride + cols, mask=cmask & (pid < n_rows), other=-float("inf"))
    r1 = pid + step
    n2 = tl.load(in_ptr + r1 * stride + cols, mask=cmask & (r1 < n_rows), other=-float("inf"))
    for row in range(pid, n_rows, step):
        x = n1
        n1 = n2
        r2 = row + 2 * step
        n2 = tl.load(in_ptr + r2 * stride + cols, mask=cmask & (r2 < n_rows),
                     other=-float("inf"))
        m = tl.max(x, axis=0).to(tl.float32)
        s = tl.sum(tl.exp(x.to(tl.float32) - m), axis=0)
        y = tl.exp(x.to(tl.float32) - m) * (1.0 / s)
        tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=cmask)


@tilework.jit
def _softmax_row(out_ptr, x, row, stride, n_rows, cols, cmask):
    m = tl.max(x, axis=0).to(tl.float32)
    s = tl.sum(tl.exp(x.to(tl.float32) - m), axis=0)
    y = tl.exp(x.to(tl.float32) - m) * (1.0 / s)
    tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty),
             mask=cmask & (row < n_rows))


@tilework.jit
def _row_load(in_ptr, row, stride, n_rows, cols, cmask):
    return tl.load(in_ptr + row * stride + cols, mask=cmask & (row < n_rows), other=-float("inf"))


@tilework.jit
def softmax_ring3(out_ptr, in_ptr, stride, n_rows, n_cols, BLOCK_N: tl.constexpr):
    """Three row buffers in a ring, unrolled so that no buffer is copied: two rows are in
    flight while the third is reduced."""
    pid = tl.program_id(0)
    g = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cm = cols < n_cols
    a = _row_load(in_ptr, pid, stride, n_rows, cols, cm)
    b = _row_load(in_ptr, pid + g, stride, n_rows, cols, cm)
    c = _row_load(in_ptr, pid + 2 * g, stride, n_rows, cols, cm)
    for base in range(pid, n_rows, 3 * g):
        _softmax_row(out_ptr, a, base, stride, n_rows, cols, cm)
        a = _row_load(in_ptr, base + 3 * g, stride, n_rows, cols, cm)
        _softmax_row(out_ptr, b, base + g, stride, n_rows, cols, cm)
        b = _row_load(in_ptr, base + 4 * g, stride, n_rows, cols, cm)
        _softmax_row(out_ptr, c, base + 2 * g, stride, n_rows, cols, cm)
        c = _row_load(in_ptr, base + 5 * g, stride, n_rows, cols, cm)


@tilework.jit
def softmax_ring2(out_ptr, in_ptr, stride, n_rows, n_cols, BLOCK_N: tl.constexpr):
    """Two row buffers, unrolled: one row in flight while the other is reduced."""
    pid = tl.program_id(0)
    g = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cm = cols < n_cols
    a = _row_load(in_ptr, pid, stride, n_rows, cols, cm)
    b = _row_load(in_ptr, pid + g, stride, n_rows, cols, cm)
    for base in range(pid, n_rows, 2 * g):
        _softmax_row(out_ptr, a, base, stride, n_rows, cols, cm)
        a = _row_load(in_ptr, base + 2 * g, stride, n_rows, cols, cm)
        _softmax_row(out_ptr, b, base + g, stride, n_rows, cols, cm)
        b = _row_load(in_ptr, base + 3 * g, stride, n_rows, cols, cm)


@tilework.jit
def softmax_persist(out_ptr, in_ptr, stride, n_rows, n_cols, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    for row in range(pid, n_rows, step):
        x = tl.load(in_ptr + row * stride + cols, mask=cmask, other=-float("inf"))
        m = tl.max(x, axis=0).to(tl.float32)
        s = tl.sum(tl.exp(x.to(tl.float32) - m), axis=0)
        y = tl.exp(x.to(tl.float32) - m) * (1.0 / s)
        tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=cmask)


@tilework.jit
def layernorm_prefetch(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_rows, n_cols,
                       eps, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * ROWS
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    r = tl.arange(0, ROWS)
    rows0 = pid * ROWS + r
    nxt = tl.load(x_ptr + rows0[:, None] * stride + cols[None, :],
                  mask=(rows0[:, None] < n_rows) & col_ok[None, :], other=0.0)
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    for start in range(pid * ROWS, n_rows, step):
        rows = start + r
        row_ok = rows < n_rows
        mask = row_ok[:, None] & col_ok[None, :]
        x = nxt.to(tl.float32)
        rn = rows + step
        nxt = tl.load(x_ptr + rn[:, None] * stride + cols[None, :],
                      mask=(rn[:, None] < n_rows) & col_ok[None, :], other=0.0)
        mean = tl.sum(x, axis=1) / n_cols
        xc = tl.where(mask, x - mean[:, None], 0.0)
        rstd = tl.rsqrt(tl.sum(xc * xc, axis=1) / n_cols + eps)
        tl.store(mean_ptr + rows, mean, mask=row_ok)
        tl.store(rstd_ptr + rows, rstd, mask=row_ok)
        y = xc * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(y_ptr + rows[:, None] * stride + cols[None, :], y.to(y_ptr.dtype.element_ty),
                 mask=mask)


def main(which=("softmax", "layernorm")):
    import triton_kernels as tk
    from layernorm import layer_norm
    from softmax import softmax
    name = torch.cuda.get_device_name()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = []
    for m, n in [(1024, 32768), (4096, 8192)] if "softmax" in which else []:
        x = torch.randn(m, n, device="cuda", dtype=torch.float16)
        ref = torch.softmax(x.float(), -1)
        sets = [(torch.randn(m, n, device="cuda", dtype=torch.float16),
                 torch.empty(m, n, device="cuda", dtype=torch.float16))
                for _ in range(n_sets(4 * m * n))]
        cands = [("example", lambda a, o: softmax(a, o)),
                 ("triton", lambda a, o: tk.softmax(a, o))]
        for warps in (16, 32):
            for g in sorted({min(m, sms), min(m, 128), min(m, 2 * sms)}):
                for kern, nm in ((softmax_ring2, "ring2"), (softmax_ring3, "ring3")):
                    cands.append((f"{nm} w={warps} g={g}",
                                  lambda a, o, g=g, warps=warps, kern=kern:
                                  kern[(g,)](o, a, n, m, n, BLOCK_N=n, num_warps=warps)))
                for hold in (True, False):
                    cands.append((f"prefetch w={warps} g={g} hold16={hold}",
                                  lambda a, o, g=g, warps=warps, hold=hold:
                                  softmax_prefetch[(g,)](o, a, n, m, n, BLOCK_N=n, HOLD16=hold,
                                                         num_warps=warps)))
                for reg in (None, 64, 80):
                    cands.append((f"prefetch2 w={warps} g={g} maxnreg={reg}",
                                  lambda a, o, g=g, warps=warps, reg=reg:
                                  softmax_prefetch2[(g,)](o, a, n, m, n, BLOCK_N=n,
                                                          num_warps=warps, maxnreg=reg)))
        for label, f in cands:
            o = torch.full_like(x, float("nan"))
            try:
                f(x, o)
                torch.testing.assert_close(o.float(), ref, atol=2e-3, rtol=2e-3)
                out.append((f"softmax {m}x{n} {label}", 4 * m * n / bench(f, sets) / 1e9))
            except Exception as e:  # noqa: BLE001
                out.append((f"softmax {m}x{n} {label} FAILED {str(e)[:60]}", 0.0))
    if "layernorm" not in which:
        return report(name, out)
    m, n = 8192, 4096
    x = torch.randn(m, n, device="cuda", dtype=torch.float16)
    w = torch.randn(n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, device="cuda", dtype=torch.float16)
    ref = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
    mean = torch.empty(m, device="cuda")
    rstd = torch.empty(m, device="cuda")
    sets = [(torch.randn(m, n, device="cuda", dtype=torch.float16),
             torch.empty(m, n, device="cuda", dtype=torch.float16))
            for _ in range(n_sets(4 * m * n))]
    cands = [("example", lambda a, o: layer_norm(a, w, b)),
             ("triton", lambda a, o: tk.layer_norm(a, w, b))]
    from layernorm import layernorm_fwd
    for rows, warps in ((1, 4), (1, 8), (2, 8)):
        for reg in (None, 32, 40, 48, 56):
            cands.append((f"one-shot rows={rows} w={warps} maxnreg={reg}",
                          lambda a, o, rows=rows, warps=warps, reg=reg:
                          layernorm_fwd[(m // rows,)](a, o, w, b, mean, rstd, n, m, n, 1e-5,
                                                      BLOCK_N=n, ROWS=rows, RMS=False,
                                                      num_warps=warps, maxnreg=reg)))
    for rows in (1, 2):
        for warps in (4, 8):
            for k in (4, 6, 8):
                for reg in (None, 40, 56):
                    g = min(m // rows, k * sms)
                    cands.append((f"prefetch rows={rows} w={warps} g={k}x maxnreg={reg}",
                                  lambda a, o, g=g, rows=rows, warps=warps, reg=reg:
                                  layernorm_prefetch[(g,)](a, o, w, b, mean, rstd, n, m, n, 1e-5,
                                                           BLOCK_N=n, ROWS=rows, num_warps=warps,
                                                           maxnreg=reg)))
    for label, f in cands:
        o = torch.full_like(x, float("nan"))
        try:
            r = f(x, o)
            got = r[0] if isinstance(r, tuple) else (r if isinstance(r, torch.Tensor) else o)
            torch.testing.assert_close(got.float(), ref, atol=1e-2, rtol=1e-2)
            out.append((f"layernorm {m}x{n} {label}", 4 * m * n / bench(f, sets) / 1e9))
        except Exception as e:  # noqa: BLE001
            out.append((f"layernorm {m}x{n} {label} FAILED {str(e)[:60]}", 0.0))
    report(name, out)


def report(name, out):
    print(f"\n== prefetching persistent programs on {name} (TB/s) ==")
    for k, v in out:
        print(f"{k:60s} {v:6.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ("softmax", "layernorm"))
