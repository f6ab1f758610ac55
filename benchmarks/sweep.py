"""Sweeps launch configurations of the memory-bound examples (rows per program, warps, block)
and prints TB/s per configuration: how the defaults in examples/ were chosen.

    python benchmarks/sweep.py softmax|layernorm|rmsnorm|gelu
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
def softmax_recompute(out_ptr, in_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    """A long-row variant keeping x in its 16-bit type and computing exp twice (fewer
    registers per element, more programs per multiprocessor)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0).to(tl.float32)
    s = tl.sum(tl.exp(x.to(tl.float32) - m), axis=0)
    y = tl.exp(x.to(tl.float32) - m) * (1.0 / s)
    tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def main(which):
    name = torch.cuda.get_device_name()
    out = []
    if which == "softmax":
        from softmax import softmax_kernel, softmax_online_kernel
        for m, n in [(16384, 1024), (4096, 8192), (1024, 32768)]:
            sets = [(torch.randn(m, n, device="cuda", dtype=torch.float16),
                     torch.empty(m, n, device="cuda", dtype=torch.float16))
                    for _ in range(n_sets(4 * m * n))]
            for rows in (1, 2, 4, 8):
                for warps in (4, 8, 16, 32):
                    if n * rows // (warps * 32) < 2 or n * rows // (warps * 32) > 64:
                        continue
                    f = lambda a, o: softmax_kernel[((m + rows - 1) // rows,)](  # noqa: E731
                        o, a, n, n, m, n, BLOCK_N=n, ROWS=rows, num_warps=warps)
                    out.append((f"softmax {m}x{n} rows={rows} warps={warps}",
                                4 * m * n / bench(f, sets) / 1e9))
            if n >= 8192:
                for warps in (8, 16, 32):
                    f = lambda a, o: softmax_recompute[(m,)](  # noqa: E731
                        o, a, n, n, BLOCK_N=n, num_warps=warps)
                    out.append((f"softmax-recompute {m}x{n} warps={warps}",
                                4 * m * n / bench(f, sets) / 1e9))
                for bn, warps in ((2048, 4), (4096, 8), (8192, 8), (8192, 16)):
                    f = lambda a, o: softmax_online_kernel[(m,)](  # noqa: E731
                        o, a, n, n, n, BLOCK_N=bn, num_warps=warps)
                    out.append((f"softmax-online {m}x{n} block={bn} warps={warps}",
                                4 * m * n / bench(f, sets) / 1e9))
    elif which == "layernorm_bwd":
        from layernorm import layernorm_bwd
        m, n = 8192, 4096
        w = torch.randn(n, device="cuda", dtype=torch.float16)
        mean = torch.randn(m, device="cuda")
        rstd = torch.rand(m, device="cuda") + 0.5
        sets = [(torch.randn(m, n, device="cuda", dtype=torch.float16),
                 torch.randn(m, n, device="cuda", dtype=torch.float16),
                 torch.empty(m, n, device="cuda", dtype=torch.float16))
                for _ in range(n_sets(6 * m * n))]
        for progs in (528, 1056, 2112, 4096):
            part = torch.empty(progs, n, device="cuda")
            for rows in (1, 2):
                for warps in (4, 8, 16):
                    rpp = (m + progs - 1) // progs
                    rpp = (rpp + rows - 1) // rows * rows
                    f = lambda dy, x, dx: layernorm_bwd[((m + rpp - 1) // rpp,)](  # noqa: E731
                        dy, x, w, mean, rstd, dx, part, part, n, m, n, rpp, BLOCK_N=n,
                        ROWS=rows, RMS=False, num_warps=warps)
                    out.append((f"layernorm_bwd progs={progs} rows={rows} warps={warps}",
                                6 * m * n / bench(f, sets) / 1e9))
    elif which in ("layernorm", "rmsnorm", "gelu"):
        from fused_epilogue import bias_gelu_rowsum
        from layernorm import layernorm_fwd
        m, n = 8192, 4096
        w = torch.randn(n, device="cuda", dtype=torch.float16)
        mean = torch.empty(m, device="cuda")
        rstd = torch.empty(m, device="cuda")
        s = torch.empty(m, device="cuda")
        sets = [(torch.randn(m, n, device="cuda", dtype=torch.float16),
                 torch.empty(m, n, device="cuda", dtype=torch.float16))
                for _ in range(n_sets(4 * m * n))]
        for rows in (1, 2, 4):
            for warps in (4, 8, 16):
                if which == "gelu":
                    f = lambda a, o: bias_gelu_rowsum[(m // rows,)](  # noqa: E731
                        a, w, o, s, n, m, n, BLOCK_N=n, ROWS=rows, num_warps=warps)
                else:
                    f = lambda a, o: layernorm_fwd[(m // rows,)](  # noqa: E731
                        a, o, w, w, mean, rstd, n, m, n, 1e-5, BLOCK_N=n, ROWS=rows,
                        RMS=which == "rmsnorm", num_warps=warps)
                out.append((f"{which} {m}x{n} rows={rows} warps={warps}",
                            4 * m * n / bench(f, sets) / 1e9))
    print(f"\n== {which} configurations on {name} (TB/s) ==")
    for k, v in out:
        print(f"{k:48s} {v:6.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
