"""Kernels written the way Triton's tutorials write them (not tuned for tilework), run by
tilework and by Triton from one source, timed with CUDA events (median), in one run:

* LayerNorm forward with a loop over column blocks (mean, variance, then normalize), its
  warp count from the block size, one program per row.

    python benchmarks/tutorial_style.py [--ncu]      (--ncu: one launch of each, for ncu)
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from quick_matmul import load_source  # noqa: E402  (one source under either compiler)

SRC = '''
@jit
def ln_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
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
'''


def build(which):
    return load_source(SRC, which, "tutorial_style")


def bench(fn, reps=100):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def layer_norm(mod, x, w, b, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(M, device=x.device, dtype=torch.float32)
    rstd = torch.empty(M, device=x.device, dtype=torch.float32)
    block = min(65536 // x.element_size(), 1 << (N - 1).bit_length())
    warps = min(max(block // 256, 1), 8)  # the tutorial's heuristic
    return lambda: mod.ln_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, eps,
                                    BLOCK_SIZE=block, num_warps=warps), y


def main():
    ncu = "--ncu" in sys.argv
    mods = {w: build(w) for w in ("tilework", "triton")}
    print(f"{torch.cuda.get_device_name()}  (GB/s: bytes of x read once, y written, over time)")
    print(f"{'kernel':<22}{'shape':>12}{'tilework':>10}{'triton':>10}{'tw/triton':>11}")
    for M, N in ((4096, 1024), (4096, 4096), (4096, 8192), (1823, 781)):
        x = torch.randn(M, N, device="cuda", dtype=torch.float16)
        w = torch.rand(N, device="cuda", dtype=torch.float16)
        b = torch.randn(N, device="cuda", dtype=torch.float16)
        ref = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float()).half()
        gbs = {}
        for which, mod in mods.items():
            run, y = layer_norm(mod, x, w, b)
            run()
            torch.cuda.synchronize()
            err = (y.float() - ref.float()).abs().max().item()
            if err > 1e-2:
                print(f"  {which} ln_fwd {M}x{N}: WRONG (max err {err})")
            if ncu:
                continue
            gbs[which] = 2 * x.numel() * x.element_size() / bench(run) / 1e6
        if not ncu:
            print(f"{'layernorm fwd (loop)':<22}{f'{M}x{N}':>12}{gbs['tilework']:>10.0f}"
                  f"{gbs['triton']:>10.0f}{gbs['tilework'] / gbs['triton']:>11.2f}")


if __name__ == "__main__":
    main()
