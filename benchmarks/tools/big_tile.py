"""Huge tiles on one GPU: compile time and run time of a masked vector add and a one-row-per-
program softmax at BLOCK = 16K .. 128K (4 warps, fp32, 2^26 elements), under tilework's old
ptxas choice (`opt_level=3`: -O3 everywhere) and the new one (the default: -O1 where the
kernel pins far more data than registers, backends/nvidia/ptxas_level.py), next to Triton on
the same source (up to --triton-max; "skipped" above: its ptxas takes minutes there) and the
bandwidth floor (bytes moved / the card's peak).  Each result is checked against torch first.

    python benchmarks/tools/big_tile.py [--blocks 16384,32768,65536,131072] [--triton-max 32768]

Compile times are cold (a fresh cache directory), one compile each; run times are the median
of CUDA-event timings of single launches.  Prints a table with the card's name.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ["TILEWORK_CACHE_DIR"] = tempfile.mkdtemp(prefix="big_tile_")  # cold compiles
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="big_tile_triton_")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from quick_matmul import load_source  # noqa: E402

SRC = '''
@jit
def big_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


@jit
def big_softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=m)
'''

N = 1 << 26
PEAK_TBS = {"H200": 4.8, "H100": 3.35}  # HBM peak by card name (else --peak)


def median_ms(fn, iters=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def cases(block):
    """(kernel, launch args, grid, reference, bytes moved) of each kernel at `block`."""
    x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    out = torch.empty_like(x)
    rows = N // block
    return [("vadd", "big_add", (x, y, out, N), (N // block,), out, x + y, 3 * N * 4),
            ("softmax", "big_softmax", (x, out, block), (rows,), out,
             torch.softmax(x.view(rows, block), -1).view(-1), 2 * N * 4)]


def measure(mod, name, args, grid, out, ref, block, **opts):
    """(compile s, run ms, ok, note) of one kernel under one compiler and options."""
    kern = getattr(mod, name)
    t = time.perf_counter()
    k = kern.warmup(*args, BLOCK=block, num_warps=4, grid=grid, **opts)
    compile_s = time.perf_counter() - t
    out.zero_()

    def launch():
        kern[grid](*args, BLOCK=block, num_warps=4, **opts)
    launch()
    torch.cuda.synchronize()
    ok = torch.allclose(out, ref, atol=1e-9, rtol=1e-4)  # (softmax values are ~1/BLOCK)
    ms = median_ms(launch)
    compiled = getattr(k, "compiled", None)
    if compiled is not None:  # tilework: the ptxas level, registers, spilled bytes
        note = (f"-O{compiled.metadata.get('ptxas_opt_level', '?')} "
                f"{compiled.n_regs}r {4 * (compiled.n_spills or 0)}B")
    else:  # Triton: loaded at the first launch
        try:
            k._init_handles()
            note = f"{k.n_regs}r {4 * k.n_spills}B"
        except Exception:  # (another Triton version)
            note = ""
    return compile_s, ms, ok, note


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", default="16384,32768,65536,131072")
    ap.add_argument("--triton-max", type=int, default=32768)
    ap.add_argument("--kernels", default="vadd,softmax")
    ap.add_argument("--peak", type=float, default=None, help="HBM TB/s (default: by name)")
    a = ap.parse_args()
    card = torch.cuda.get_device_name()
    peak = a.peak or next((v for k, v in PEAK_TBS.items() if k in card), 4.8)
    tw = load_source(SRC, "tilework", "big_tile")
    try:
        tr = load_source(SRC, "triton", "big_tile")
    except ImportError:
        tr = None
    rows, wrong = [], False
    for block in (int(b) for b in a.blocks.split(",")):
        for kname, name, args, grid, out, ref, nbytes in cases(block):
            if kname not in a.kernels.split(","):
                continue
            row = {"kernel": kname, "BLOCK": block, "floor": nbytes / (peak * 1e12) * 1e3}
            for label, opts in (("old", {"opt_level": 3}), ("new", {})):
                c, ms, ok, note = measure(tw, name, args, grid, out, ref, block, **opts)
                row[label] = (c, ms, ok, note)
                wrong |= not ok
                print(f"{kname} {block} tilework {label}: compile {c:.2f} s, {ms:.3f} ms, "
                      f"{'ok' if ok else 'WRONG'}, {note}", flush=True)
            if tr is not None and block <= a.triton_max:
                c, ms, ok, note = measure(tr, name, args, grid, out, ref, block)
                row["triton"] = (c, ms, ok, note)
                wrong |= not ok
                print(f"{kname} {block} triton: compile {c:.2f} s, {ms:.3f} ms, "
                      f"{'ok' if ok else 'WRONG'}, {note}", flush=True)
            rows.append(row)
            torch.cuda.empty_cache()
    print(f"\n{card}, fp32, 2^26 elements, 4 warps; floor = bytes / {peak} TB/s")
    print(f"{'kernel':8s} {'BLOCK':>6s} | {'old compile s':>13s} {'ms':>7s} {'ptxas':>16s} | "
          f"{'new compile s':>13s} {'ms':>7s} {'ptxas':>16s} | {'triton s':>8s} {'ms':>7s} | "
          f"{'floor ms':>8s}")
    for r in rows:
        old, new = r["old"], r["new"]
        t = r.get("triton")
        tcol = f"{t[0]:8.2f} {t[1]:7.3f}" if t else f"{'skipped':>8s} {'':>7s}"
        print(f"{r['kernel']:8s} {r['BLOCK']:6d} | {old[0]:13.2f} {old[1]:7.3f} {old[3]:>16s} | "
              f"{new[0]:13.2f} {new[1]:7.3f} {new[3]:>16s} | {tcol} | {r['floor']:8.3f}")
    if wrong:
        print("WRONG results above")
        sys.exit(1)


if __name__ == "__main__":
    main()
