"""Kernels written the way Triton's tutorials write them (not tuned for tilework), run by
tilework and by Triton from one source, against torch, timed with CUDA events (median), in one
run:

* LayerNorm forward with a loop over column blocks (mean, variance, then normalize), its
  warp count from the block size, one program per row (4096 x {1024, 4096, 8192}, 1823 x 781);
* LayerNorm backward: dx per row with the partial dw/db of GROUP_SIZE_M row groups summed
  under a spin lock (`atomic_cas`/`atomic_xchg`), then a column-sum kernel (4096 x {1024,
  4096, 8192}; timed together, as torch's autograd backward);
* fused softmax, one row per loop step of `tl.range(pid, n_rows, num_programs)` with the grid
  sized from the occupancy of the compiled kernel (`warmup(...)`'s `n_regs`, `n_spills`,
  `metadata.shared` and `driver.active.utils.get_device_properties`) (fp32, 4096 x
  {1024 .. 16384}; fp16, 4096 x {1024 .. 32768});
* seeded dropout, `tl.rand(seed, offsets)` (Philox), fp32, 2^20 .. 2^26 elements; tilework's
  and Triton's outputs must match bit for bit;
* grouped GEMM over arrays of pointers (int64 addresses loaded in the kernel and cast with
  `.to(tl.pointer_type(tl.float16))`), one program per SM walking 4 groups of mixed sizes.

Each kernel is checked against torch (and dropout against Triton) before it is timed; a wrong
result is reported as WRONG and exits 1 at the end.

    python benchmarks/tutorial_style.py [--only ln_fwd,ln_bwd,softmax,dropout,grouped_gemm]
                                        [--json PATH] [--ncu]
    (--ncu: one launch of each, no timing, for `ncu --target-processes all`)
"""
import json
import os
import sys

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


@jit
def ln_bwd_dx(DX, DY, PDW, PDB, X, W, Mean, Rstd, Lock, stride, N,
              GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # one row per program: dx from the row, dy, mean and rstd; the row's dw and db
    # contributions go into row group (row % GROUP_SIZE_M) of the partial sums, under its lock
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    group = row % GROUP_SIZE_M
    Lock += group
    Count = Lock + GROUP_SIZE_M
    PDW = PDW + group * N + cols
    PDB = PDB + group * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.)
    wdy = tl.where(mask, w * dy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    pdw = dy * xhat
    pdb = dy
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:  # the group's first row writes, the others add
        tl.atomic_xchg(Count, 1)
    else:
        pdw += tl.load(PDW, mask=mask)
        pdb += tl.load(PDB, mask=mask)
    tl.store(PDW, pdw, mask=mask)
    tl.store(PDB, pdb, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@jit
def ln_bwd_dwdb(PDW, PDB, DW, DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # column sums of the [M, N] partial sums, BLOCK_SIZE_N columns per program
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    acc_w = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    acc_b = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        m = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        acc_w += tl.load(PDW + offs, mask=m, other=0.)
        acc_b += tl.load(PDB + offs, mask=m, other=0.)
    tl.store(DW + cols, tl.sum(acc_w, axis=0), mask=cols < N)
    tl.store(DB + cols, tl.sum(acc_b, axis=0), mask=cols < N)


@jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # as many programs as fit on the GPU at once, each striding over the rows
    first = tl.program_id(0)
    step = tl.num_programs(0)
    for r in tl.range(first, n_rows, step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        row = tl.load(in_ptr + r * in_stride + cols, mask=mask, other=-float("inf"))
        num = tl.exp(row - tl.max(row, axis=0))
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + r * out_stride + cols, num / den, mask=mask)


@jit
def seeded_dropout(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@jit
def grouped_matmul(a_ptrs, b_ptrs, c_ptrs, sizes, lds, group_count,
                   NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr,
                   BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    # tiles of all groups in one list; program p takes tiles p, p + NUM_SM, ...
    tile = tl.program_id(0)
    first = 0
    for g in range(group_count):
        gm = tl.load(sizes + 3 * g)
        gn = tl.load(sizes + 3 * g + 1)
        gk = tl.load(sizes + 3 * g + 2)
        tiles_n = tl.cdiv(gn, BLOCK_SIZE_N)
        tiles = tl.cdiv(gm, BLOCK_SIZE_M) * tiles_n
        while tile >= first and tile < first + tiles:
            lda = tl.load(lds + 3 * g)
            ldb = tl.load(lds + 3 * g + 1)
            ldc = tl.load(lds + 3 * g + 2)
            a = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16))
            t = tile - first
            rm = (t // tiles_n) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            rn = (t % tiles_n) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            rk = tl.arange(0, BLOCK_SIZE_K)
            pa = a + rm[:, None] * lda + rk[None, :]
            pb = b + rk[:, None] * ldb + rn[None, :]
            acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_SIZE_K)):
                # the sizes are multiples of the blocks; the pointers came from memory
                tl.multiple_of(pa, [16, 16])
                tl.multiple_of(pb, [16, 16])
                acc += tl.dot(tl.load(pa), tl.load(pb))
                pa += BLOCK_SIZE_K
                pb += BLOCK_SIZE_K * ldb
            pc = c + ldc * rm[:, None] + rn[None, :]
            tl.store(pc, acc.to(tl.float16))
            tile += NUM_SM
        first = first + tiles
'''

ALL = ("ln_fwd", "ln_bwd", "softmax", "dropout", "grouped_gemm")


def build(which):
    """The kernels of SRC as a module compiled by `which` ("tilework" or "triton")."""
    return load_source(SRC, which, "tutorial_style")


def api(which):
    """The package itself (for `.runtime.driver` and `next_power_of_2`)."""
    if which == "triton":
        import triton
        return triton
    import tilework
    return tilework


# ---- host code, as the tutorials write it: `mod` is build(which)'s module, `pkg` api(which)

def ln_fwd(mod, x, w, b, eps=1e-5):
    """-> (launch, y, mean, rstd)."""
    import torch
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(M, device=x.device, dtype=torch.float32)
    rstd = torch.empty(M, device=x.device, dtype=torch.float32)
    block = min(65536 // x.element_size(), 1 << (N - 1).bit_length())
    warps = min(max(block // 256, 1), 8)  # the tutorial's heuristic
    return lambda: mod.ln_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, eps,
                                    BLOCK_SIZE=block, num_warps=warps), y, mean, rstd


def group_size_m(N):
    return 256 if N <= 1024 else 128 if N <= 4096 else 96 if N <= 8192 else 64


def ln_bwd(mod, dy, x, w, mean, rstd):
    """-> (launch, dx, dw, db): the whole backward (fresh locks and partial sums each call)."""
    import torch
    M, N = x.shape
    G = group_size_m(N)
    block = min(65536 // x.element_size(), 1 << (N - 1).bit_length())
    warps = min(max(block // 256, 1), 8)
    dx = torch.empty_like(x)
    dw = torch.empty(N, device=x.device, dtype=w.dtype)
    db = torch.empty(N, device=x.device, dtype=w.dtype)

    def run():
        lock = torch.zeros(2 * G, device=x.device, dtype=torch.int32)
        pdw = torch.empty((G, N), device=x.device, dtype=torch.float32)
        pdb = torch.empty((G, N), device=x.device, dtype=torch.float32)
        mod.ln_bwd_dx[(M,)](dx, dy, pdw, pdb, x, w, mean, rstd, lock, x.stride(0), N,
                            GROUP_SIZE_M=G, BLOCK_SIZE_N=block, num_warps=warps)
        mod.ln_bwd_dwdb[(pkg_cdiv(N, 128),)](pdw, pdb, dw, db, min(G, M), N,
                                             BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    return run, dx, dw, db


def pkg_cdiv(a, b):
    return (a + b - 1) // b


class Softmax:
    """The fused-softmax tutorial's host side: the grid from the kernel's occupancy."""

    def __init__(self, mod, pkg):
        self.mod, self.pkg = mod, pkg
        dev = pkg.runtime.driver.active.get_active_torch_device()
        props = pkg.runtime.driver.active.utils.get_device_properties(dev.index)
        self.sms, self.regs = props["multiprocessor_count"], props["max_num_regs"]
        self.smem, self.warp = props["max_shared_mem"], props["warpSize"]
        self.kernels = {}

    def __call__(self, x):
        import torch
        n_rows, n_cols = x.shape
        block = self.pkg.next_power_of_2(n_cols)
        warps = 8
        stages = 4 if self.smem > 200000 else 2
        y = torch.empty_like(x)
        key = (block, x.dtype)
        if key not in self.kernels:
            k = self.mod.softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                               BLOCK_SIZE=block, num_stages=stages,
                                               num_warps=warps, grid=(1,))
            if hasattr(k, "_init_handles"):  # (Triton loads lazily)
                k._init_handles()
            occupancy = self.regs // (max(k.n_regs, 1) * self.warp * warps)
            if k.metadata.shared:
                occupancy = min(occupancy, self.smem // k.metadata.shared)
            self.kernels[key] = (max(occupancy, 1), k.n_spills)
        occupancy = self.kernels[key][0]
        programs = min(self.sms * occupancy, n_rows)
        return (lambda: self.mod.softmax_kernel[(programs, 1, 1)](
            y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE=block,
            num_stages=stages, num_warps=warps)), y


def dropout(mod, x, p, seed):
    import torch
    out = torch.empty_like(x)
    n = x.numel()
    return lambda: mod.seeded_dropout[(pkg_cdiv(n, 1024),)](x, out, n, p, seed,
                                                            BLOCK_SIZE=1024), out


class Grouped:
    """Grouped GEMM's host side: device arrays of the groups' pointers, sizes, strides."""

    def __init__(self, pairs):
        import torch
        dev = pairs[0][0].device
        self.pairs = pairs
        self.cs = [torch.empty((a.shape[0], b.shape[1]), device=dev, dtype=a.dtype)
                   for a, b in pairs]
        sizes, lds = [], []
        for (a, b), c in zip(pairs, self.cs):
            sizes += [a.shape[0], b.shape[1], a.shape[1]]
            lds += [a.stride(0), b.stride(0), c.stride(0)]
        ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], device=dev,  # noqa: E731
                                       dtype=torch.int64)
        self.a, self.b = ptrs([a for a, _ in pairs]), ptrs([b for _, b in pairs])
        self.c = ptrs(self.cs)
        self.sizes = torch.tensor(sizes, device=dev, dtype=torch.int32)
        self.lds = torch.tensor(lds, device=dev, dtype=torch.int32)

    def launch(self, mod, sms, block=(128, 128, 64), warps=8, stages=3):
        bm, bn, bk = block
        return lambda: mod.grouped_matmul[(sms,)](
            self.a, self.b, self.c, self.sizes, self.lds, len(self.pairs), NUM_SM=sms,
            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, num_warps=warps,
            num_stages=stages)


# ---- the run -----------------------------------------------------------------------------

def bench(fn, reps=100):
    import torch
    fn()
    torch.cuda.synchronize()
    cache = torch.empty(64 << 20, device="cuda", dtype=torch.int8)  # flushes L2 between reps
    ts = []
    for _ in range(reps):
        cache.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


class Report:
    def __init__(self, ncu):
        self.ncu, self.rows, self.wrong = ncu, [], []
        print(f"{'kernel':<24}{'shape':>14}{'tilework':>10}{'triton':>10}{'torch':>10}"
              f"{'tw/triton':>11}  unit")

    def check(self, name, shape, which, got, want, atol, rtol=0.0):
        import torch
        got, want = got.float(), want.float()
        bad = ~torch.isclose(got, want, atol=atol, rtol=rtol)
        if bad.any():
            err = (got - want).abs().max().item()
            msg = f"{which} {name} {shape}: WRONG (max err {err:.3g}, {int(bad.sum())} bad)"
            print("  " + msg)
            self.wrong.append(msg)
            return False
        return True

    def time(self, name, shape, runs, rate, unit):
        """runs: {provider: launch or None}; rate(ms) -> the reported number."""
        if self.ncu:
            for fn in runs.values():
                if fn is not None:
                    fn()
            return
        vals = {k: (rate(bench(fn)) if fn is not None else float("nan"))
                for k, fn in runs.items()}
        ratio = vals["tilework"] / vals["triton"]
        self.rows.append({"kernel": name, "shape": shape, "unit": unit, **vals,
                          "ratio": ratio})
        print(f"{name:<24}{shape:>14}{vals['tilework']:>10.1f}{vals['triton']:>10.1f}"
              f"{vals['torch']:>10.1f}{ratio:>11.2f}  {unit}", flush=True)


def run_ln(rep, mods):
    import torch
    for M, N in ((4096, 1024), (4096, 4096), (4096, 8192), (1823, 781)):
        shape = f"{M}x{N}"
        x = torch.randn(M, N, device="cuda", dtype=torch.float16)
        w = torch.rand(N, device="cuda", dtype=torch.float16)
        b = torch.randn(N, device="cuda", dtype=torch.float16)
        ref = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float())
        runs = {}
        for which, mod in mods.items():
            run, y, _, _ = ln_fwd(mod, x, w, b)
            run()
            torch.cuda.synchronize()
            rep.check("ln_fwd", shape, which, y, ref, 1e-2)
            runs[which] = run
        runs["torch"] = lambda: torch.nn.functional.layer_norm(x, (N,), w, b)
        rep.time("layernorm fwd (loop)", shape, runs,
                 lambda ms: 2 * x.numel() * x.element_size() / ms / 1e6, "GB/s")


def run_ln_bwd(rep, mods):
    import torch
    for M, N in ((4096, 1024), (4096, 4096), (4096, 8192)):
        shape = f"{M}x{N}"
        x = torch.randn(M, N, device="cuda", dtype=torch.float16)
        dy = 0.1 * torch.randn(M, N, device="cuda", dtype=torch.float16)
        w = torch.rand(N, device="cuda", dtype=torch.float16)
        b = torch.randn(N, device="cuda", dtype=torch.float16)
        xr, wr, br = (t.float().requires_grad_() for t in (x, w, b))
        torch.nn.functional.layer_norm(xr, (N,), wr, br).backward(dy.float())
        runs = {}
        for which, mod in mods.items():
            fwd, _, mean, rstd = ln_fwd(mod, x, w, b)
            fwd()
            run, dx, dw, db = ln_bwd(mod, dy, x, w, mean, rstd)
            run()
            torch.cuda.synchronize()
            rep.check("ln_bwd dx", shape, which, dx, xr.grad, 1e-2, 1e-2)
            # dw, db: sums over 4096 rows, stored in fp16
            rep.check("ln_bwd dw", shape, which, dw, wr.grad, 0.5, 1e-2)
            rep.check("ln_bwd db", shape, which, db, br.grad, 0.5, 1e-2)
            runs[which] = run
        xt, wt, bt = (t.clone().requires_grad_() for t in (x, w, b))
        yt = torch.nn.functional.layer_norm(xt, (N,), wt, bt)
        runs["torch"] = lambda: yt.backward(dy, retain_graph=True)
        rep.time("layernorm bwd", shape, runs,
                 lambda ms: 3 * x.numel() * x.element_size() / ms / 1e6, "GB/s")


def run_softmax(rep, mods, pkgs):
    import torch
    sm = {w: Softmax(mods[w], pkgs[w]) for w in mods}
    # fp32 (the tutorial's dtype) to 16384 columns: Triton's pipelined kernel needs 3 row
    # buffers in shared memory, which 32768 fp32 columns (3 x 128 KiB) overflow; fp16 to 32768
    for dt, cols in ((torch.float32, (1024, 2048, 4096, 8192, 16384)),
                     (torch.float16, (1024, 2048, 4096, 8192, 16384, 32768))):
        for N in cols:
            shape = f"4096x{N}"
            x = torch.randn(4096, N, device="cuda", dtype=dt)
            ref = torch.softmax(x.float(), -1)
            runs = {}
            for which in mods:
                run, y = sm[which](x)
                run()
                torch.cuda.synchronize()
                rep.check(f"softmax {dt}", shape, which, y, ref,
                          *((1e-6, 1e-4) if dt == torch.float32 else (1e-3, 1e-2)))
                runs[which] = run
            runs["torch"] = lambda x=x: torch.softmax(x, -1)
            rep.time(f"softmax {str(dt)[6:]}", shape, runs,
                     lambda ms: 2 * x.numel() * x.element_size() / ms / 1e6, "GB/s")


def run_dropout(rep, mods):
    import torch
    p = 0.5
    for e in (20, 22, 24, 26):
        n = 1 << e
        shape = f"2^{e}"
        x = torch.randn(n, device="cuda", dtype=torch.float32)
        runs, outs = {}, {}
        for which, mod in mods.items():
            run, out = dropout(mod, x, p, 1234)
            run()
            torch.cuda.synchronize()
            kept = out != 0
            rep.check("dropout kept", shape, which, out[kept], x[kept] / (1 - p), 1e-6, 1e-6)
            frac = kept.float().mean().item()
            if abs(frac - (1 - p)) > 0.01:
                rep.wrong.append(f"{which} dropout {shape}: kept {frac:.4f}, want {1 - p}")
                print("  " + rep.wrong[-1])
            runs[which], outs[which] = run, out
        if "triton" in outs:  # one Philox stream: the same elements dropped
            rep.check("dropout vs Triton", shape, "tilework", outs["tilework"], outs["triton"],
                      0.0)
        runs["torch"] = lambda: torch.nn.functional.dropout(x, p)
        rep.time("seeded dropout", shape, runs,
                 lambda ms: 2 * x.numel() * x.element_size() / ms / 1e6, "GB/s")


def run_grouped(rep, mods):
    import torch
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for dims in (((1024, 1024, 1024), (512, 512, 512), (256, 256, 256), (128, 128, 128)),
                 ((2048, 1024, 512), (256, 4096, 1024), (1024, 256, 2048), (128, 512, 4096)),
                 ((4096, 4096, 1024), (2048, 2048, 2048), (1024, 4096, 4096), (512, 8192, 1024))):
        pairs = [(torch.randn(m, k, device="cuda", dtype=torch.float16),
                  torch.randn(k, n, device="cuda", dtype=torch.float16)) for m, n, k in dims]
        shape = "/".join(str(m) for m, _, _ in dims)
        flop = sum(2 * m * n * k for m, n, k in dims)
        runs = {}
        for which, mod in mods.items():
            g = Grouped(pairs)
            run = g.launch(mod, sms)
            run()
            torch.cuda.synchronize()
            for (a, b), c in zip(pairs, g.cs):
                rep.check("grouped_gemm", shape, which, c, a.float() @ b.float(), 0.1, 1e-2)
            runs[which] = run
        runs["torch"] = lambda: [torch.matmul(a, b) for a, b in pairs]
        rep.time("grouped gemm (ptr arr)", f"M={shape}", runs,
                 lambda ms: flop / ms / 1e9, "TFLOP/s")


def main(argv):
    import torch
    ncu = "--ncu" in argv
    only = ALL
    if "--only" in argv:
        only = tuple(argv[argv.index("--only") + 1].split(","))
    out = argv[argv.index("--json") + 1] if "--json" in argv else None
    mods = {w: build(w) for w in ("tilework", "triton")}
    pkgs = {w: api(w) for w in mods}
    print(f"{torch.cuda.get_device_name()}  (GB/s: bytes read and written once, over time; "
          "torch: its own kernels)")
    rep = Report(ncu)
    torch.manual_seed(0)
    steps = {"ln_fwd": lambda: run_ln(rep, mods), "ln_bwd": lambda: run_ln_bwd(rep, mods),
             "softmax": lambda: run_softmax(rep, mods, pkgs),
             "dropout": lambda: run_dropout(rep, mods),
             "grouped_gemm": lambda: run_grouped(rep, mods)}
    for name in only:
        steps[name]()
    slower = [r for r in rep.rows if r["ratio"] < 1.0]
    print(f"{len(rep.rows) - len(slower)} of {len(rep.rows)} at or above Triton; "
          f"{len(rep.wrong)} wrong")
    if out:
        with open(out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rep.rows,
                       "wrong": rep.wrong}, f, indent=1)
    return 1 if rep.wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
