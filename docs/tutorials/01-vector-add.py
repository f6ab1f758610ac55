"""01 - Vector addition.

The smallest kernel: `out = x + y`.  A *program* (one CTA on the GPU) owns BLOCK_SIZE
consecutive elements; `tl.program_id(0)` says which block, `tl.arange(0, BLOCK_SIZE)` gives
the offsets within it, and the mask `offsets < n` switches off the lanes past the end of the
last block.  Loads and stores take tensors of pointers: `x_ptr + offsets`.

    @tilework.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(axis=0)
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)

    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)

BLOCK_SIZE is a `tl.constexpr`: each value compiles its own variant.  The compiler gives each
thread 4 contiguous fp32 values, so every load is one 16-byte `ld.global.v4` (see
docs/architecture.md, "The layout system").  The kernel is memory bound: the benchmark reports
GB/s (12 bytes moved per element) for tilework, Triton (the same source) and torch's `x + y`.

    python docs/tutorials/01-vector-add.py
"""
import sys

import common
import torch
import vector_add  # examples/vector_add.py


def run(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    vector_add.add_kernel[(common_cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out


def common_cdiv(a, b):
    return (a + b - 1) // b


def check(dev, n):
    x, y = torch.rand(n, device=dev), torch.rand(n, device=dev)
    torch.testing.assert_close(run(x, y), x + y, rtol=0, atol=0)


def check_cpu():
    common.interpret(vector_add)
    check("cpu", 3000)


def check_gpu():
    check("cuda", 98_432 + 7)


def benchmark():
    tri = common.triton_module("vector_add")
    sizes = [2 ** i for i in range(12, 28, 2)]
    data = {}

    def inputs(n):
        if n not in data:
            data[n] = (torch.rand(n, device="cuda"), torch.rand(n, device="cuda"),
                       torch.empty(n, device="cuda"))
        return data[n]

    def tilework_(n):
        x, y, o = inputs(n)
        return lambda: vector_add.add_kernel[(common_cdiv(n, 1024),)](x, y, o, n,
                                                                     BLOCK_SIZE=1024)

    def triton_(n):
        x, y, o = inputs(n)
        return lambda: tri.add_kernel[(common_cdiv(n, 1024),)](x, y, o, n, BLOCK_SIZE=1024)

    def torch_(n):
        x, y, o = inputs(n)
        return lambda: torch.add(x, y, out=o)

    series = common.sweep(sizes, {"tilework": tilework_, "Triton": triton_ if tri else None,
                                  "torch": torch_}, lambda ms, n: 12 * n / ms / 1e6)
    common.plot("01-vector-add", "Vector add (fp32)", sizes, series, "elements", "GB/s")


if __name__ == "__main__":
    common.main(sys.modules[__name__])
