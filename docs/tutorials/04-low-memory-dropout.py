"""04 - Low-memory dropout with a seeded Philox generator.

Classic dropout stores a mask (one byte per element) for the backward pass.  Here the mask is
*recomputed* from a seed: `tl.rand(seed, offsets)` runs the Philox 4x32-10 counter-based
generator with the element's offset as counter, so the same (seed, offset) always gives the same
uniform number in [0, 1).  Forward and backward both call the kernel with the same seed; nothing
but one integer is kept.

    @tilework.jit
    def seeded_dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        keep = tl.rand(seed, offsets) > p
        tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)

The generator is `tilework.language.random`, written in the language itself with Triton's
constants, so the bits match Triton's `tl.rand` for the same seed and offsets.  The check
verifies determinism, the kept fraction and the scaling; the benchmark compares GB/s with
Triton (the same source) and torch's dropout (which also writes its mask).

    python docs/tutorials/04-low-memory-dropout.py
"""
import sys

import common
import torch

import tilework
import tilework.language as tl


def dropout_metadata(grid, kernel, args):
    n = args["n"]
    return {"name": f"seeded_dropout n={n}", "bytes": 2 * 4 * n}


@tilework.jit(launch_metadata=dropout_metadata)
def seeded_dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    keep = tl.rand(seed, offsets) > p
    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)


def seeded_dropout(x, p, seed, kernel=None):
    out = torch.empty_like(x)
    n = x.numel()
    (kernel or seeded_dropout_kernel)[((n + 1023) // 1024,)](x, out, n, p, seed, BLOCK=1024)
    return out


def check(dev, n):
    x = torch.randn(n, device=dev) + 3.0  # never 0, so a 0 out means dropped
    p = 0.3
    a, b = seeded_dropout(x, p, 1234), seeded_dropout(x, p, 1234)
    torch.testing.assert_close(a, b, rtol=0, atol=0)  # same seed, same mask
    c = seeded_dropout(x, p, 4321)
    assert not torch.equal(a, c), "another seed must give another mask"
    kept = a != 0
    torch.testing.assert_close(a[kept], x[kept] / (1 - p))
    frac = kept.float().mean().item()
    assert abs(frac - (1 - p)) < 4 * ((p * (1 - p) / n) ** 0.5) + 1e-3, frac


def check_cpu():
    common.interpret(seeded_dropout_kernel)
    check("cpu", 4000)


def check_gpu():
    check("cuda", 1 << 20)


def benchmark():
    tri = common.triton_module(__file__)
    sizes = [2 ** i for i in range(14, 28, 2)]
    xs = {}

    def x_of(n):
        if n not in xs:
            xs[n] = torch.randn(n, device="cuda")
        return xs[n]

    providers = {
        "tilework": lambda n: (lambda x=x_of(n): seeded_dropout(x, 0.5, 7)),
        "Triton": (lambda n: (lambda x=x_of(n): seeded_dropout(
            x, 0.5, 7, tri.seeded_dropout_kernel))) if tri else None,
        "torch": lambda n: (lambda x=x_of(n): torch.nn.functional.dropout(x, 0.5, True)),
    }
    series = common.sweep(sizes, providers, lambda ms, n: 8 * n / ms / 1e6)
    common.plot("04-low-memory-dropout", "Seeded dropout (fp32, p = 0.5)", sizes, series,
                "elements", "GB/s")


if __name__ == "__main__":
    common.main(sys.modules[__name__])
