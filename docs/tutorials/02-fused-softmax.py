"""02 - Fused softmax.

`torch.softmax(x, -1)` done naively reads x three times (max, sum of exponentials, divide) and
writes intermediate results.  A fused kernel holds a row in registers: one read, one write.
examples/softmax.py gives three kernels:

* `softmax_kernel`: each program owns ROWS rows as one [ROWS, BLOCK_N] tile (BLOCK_N, a power
  of two, covers the row; masked lanes load -inf so they add exp(-inf) = 0);
  `tl.max(x, axis=1)`, `tl.exp`, `tl.sum(..., axis=1)`, all in fp32, stored in x's dtype;
* `softmax_prefetch_kernel`: for long 16-bit rows, one program per multiprocessor walks rows
  with a stride and loads its next row before reducing the current one;
* `softmax_online_kernel`: rows too long for registers stream in chunks with a running max and
  a rescaled running sum (the "online softmax" FlashAttention builds on).

`softmax(x)` picks one by the row length.  The benchmark moves 2 * rows * cols * 2 bytes (fp16
in and out) and reports GB/s against Triton running the same source and torch.softmax.

    python docs/tutorials/02-fused-softmax.py
"""
import sys

import common
import softmax  # examples/softmax.py
import torch


def check_cpu():
    common.interpret(softmax)
    for rows, cols in ((5, 37), (3, 128)):
        x = torch.randn(rows, cols)
        out = torch.empty_like(x)
        block_n, r, warps = softmax.config(cols, 4)
        softmax.softmax_kernel[(common_cdiv(rows, r),)](out, x, x.stride(0), out.stride(0), rows,
                                                        cols, BLOCK_N=block_n, ROWS=r)
        torch.testing.assert_close(out, torch.softmax(x, -1))
    x = torch.randn(2, 300)
    out = torch.empty_like(x)
    softmax.softmax_online_kernel[(2,)](out, x, x.stride(0), out.stride(0), 300, BLOCK_N=64)
    torch.testing.assert_close(out, torch.softmax(x, -1))


def common_cdiv(a, b):
    return (a + b - 1) // b


def check_gpu():
    for cols in (781, 4096, 20000, 40000):
        x = torch.randn(1823, cols, device="cuda", dtype=torch.float16)
        torch.testing.assert_close(softmax.softmax(x).float(), torch.softmax(x.float(), -1),
                                   atol=2e-3, rtol=1e-2)


def benchmark():
    tri = common.triton_module("softmax")
    cols = [256 * 2 ** i for i in range(0, 8)]
    rows = 4096
    xs = {}

    def x_of(n):
        if n not in xs:
            xs[n] = torch.randn(rows, n, device="cuda", dtype=torch.float16)
        return xs[n]

    providers = {
        "tilework": lambda n: (lambda x=x_of(n): softmax.softmax(x)),
        "Triton": (lambda n: (lambda x=x_of(n): tri.softmax(x))) if tri else None,
        "torch": lambda n: (lambda x=x_of(n): torch.softmax(x, -1)),
    }
    series = common.sweep(cols, providers, lambda ms, n: 2 * rows * n * 2 / ms / 1e6)
    common.plot("02-fused-softmax", f"Softmax ({rows} rows, fp16)", cols, series, "columns",
                "GB/s")


if __name__ == "__main__":
    common.main(sys.modules[__name__])
