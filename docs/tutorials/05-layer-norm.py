"""05 - LayerNorm, forward and backward.

    y = (x - mean(x)) / sqrt(var(x) + eps) * w + b        (over each row)

Forward (`layernorm_fwd` in examples/layernorm.py): each program normalizes ROWS rows held in
registers, storing y and, for the backward pass, each row's mean and 1/std (`rstd`).  With
`RMS=True` the same kernel is RMSNorm (no mean, no bias).

Backward: with xhat = (x - mean) * rstd and g = dy * w,

    dx = rstd * (g - mean(g * xhat) * xhat - mean(g))      dw = sum_rows(dy * xhat)
    db = sum_rows(dy)

dx is per row, but dw and db sum over all rows: `layernorm_bwd` has each program walk a band of
rows, keeping running column sums in registers and storing them once as a partial row; then
`column_sum` adds the few hundred partial rows.  No atomics, deterministic results.

`tilework.torch.layer_norm` wraps both as a `torch.library` custom op with autograd, so
`loss.backward()` runs the tilework kernels (and `torch.compile(fullgraph=True)` keeps them in
the graph).  The benchmark reports GB/s of forward (x read, y written) and of backward (x, dy
read, dx written) for fp16 rows: tilework, Triton (examples/layernorm.py's source) and torch.

    python docs/tutorials/05-layer-norm.py
"""
import sys

import common
import layernorm  # examples/layernorm.py
import torch
import torch.nn.functional as F

import tilework.torch as twt


def check(dev, shape, dtype, tol):
    n = shape[-1]
    x = torch.randn(*shape, device=dev, dtype=dtype, requires_grad=True)
    w = torch.randn(n, device=dev, dtype=dtype, requires_grad=True)
    b = torch.randn(n, device=dev, dtype=dtype, requires_grad=True)
    y = twt.layer_norm(x, w, b)
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    ref = F.layer_norm(x64, (n,), w64, b64)
    torch.testing.assert_close(y.double(), ref, atol=tol, rtol=tol)
    dy = torch.randn_like(y)
    got = torch.autograd.grad(y, (x, w, b), dy)
    want = torch.autograd.grad(ref, (x64, w64, b64), dy.double())
    for g, r in zip(got, want):
        torch.testing.assert_close(g.double(), r, atol=tol * 10, rtol=tol)


def check_cpu():
    check("cpu", (6, 40), torch.float32, 1e-4)


def check_gpu():
    check("cuda", (1823, 781), torch.float16, 2e-2)
    check("cuda", (512, 4096), torch.float32, 1e-4)


def benchmark():
    tri = common.triton_module("layernorm")
    rows = 4096
    cols = [512 * 2 ** i for i in range(0, 6)]
    data = {}

    def inputs(n):
        if n not in data:
            x = torch.randn(rows, n, device="cuda", dtype=torch.float16)
            w = torch.rand(n, device="cuda", dtype=torch.float16)
            b = torch.rand(n, device="cuda", dtype=torch.float16)
            data[n] = (x, w, b, torch.randn_like(x))
        return data[n]

    def fwd(n, f):
        return lambda: f(*inputs(n)[:3])

    def bwd(n, f):
        x, w, b, dy = inputs(n)
        x = x.clone().requires_grad_()
        y = f(x, w, b)
        return lambda: torch.autograd.grad(y, x, dy, retain_graph=True)

    def tri_bwd(n):
        x, w, b, dy = inputs(n)
        _, mean, rstd = tri.layer_norm(x, w, b)
        return lambda: tri.layer_norm_bwd(dy, x, w, mean, rstd)

    torch_ln = lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b)  # noqa: E731
    series = common.sweep(cols, {
        "tilework": lambda n: fwd(n, twt.layer_norm),
        "Triton": (lambda n: fwd(n, tri.layer_norm)) if tri else None,
        "torch": lambda n: fwd(n, torch_ln)}, lambda ms, n: 2 * rows * n * 2 / ms / 1e6)
    common.plot("05-layer-norm-forward", f"LayerNorm forward ({rows} rows, fp16)", cols,
                series, "columns", "GB/s")
    series = common.sweep(cols, {
        "tilework": lambda n: bwd(n, twt.layer_norm),
        "Triton": tri_bwd if tri else None,
        "torch": lambda n: bwd(n, torch_ln)}, lambda ms, n: 3 * rows * n * 2 / ms / 1e6)
    common.plot("05-layer-norm-backward", f"LayerNorm backward ({rows} rows, fp16)", cols,
                series, "columns", "GB/s")


if __name__ == "__main__":
    common.main(sys.modules[__name__])
