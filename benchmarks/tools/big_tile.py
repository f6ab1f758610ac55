"""Huge tiles on one GPU: compile time and run time of a one-row-per-program softmax and a
masked vector add at BLOCK = 8K .. 128K (fp32, 2^26 elements, 4 warps by default), under
tilework (the defaults: `.minnctapersm 1` and, for the vector add, ptxas -O1 where the kernel
holds far more data than registers: backends/nvidia/ptxas_level.py), tilework without the
launch bound ("no bound": TILEWORK_HUGE_TILE_BOUNDS=0, the old PTX), Triton on the same
source (up to --triton-max) and torch (torch.softmax, x + y), next to the bandwidth floor
(bytes moved / the card's peak).  Each result is checked against torch first.

    python benchmarks/tools/big_tile.py [--kernels softmax,vadd]
        [--blocks 8192,16384,32768,65536,131072] [--triton-max 131072] [--warps 4]

Compile times are cold (a fresh cache directory), one compile each (Triton's ptxas takes
15-30 s at 128K); run times are the median of CUDA-event timings of single launches.  Prints
a table with the card's name.
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


def measure(mod, name, args, grid, out, ref, block, warps, env=None):
    """(compile s, run ms, ok, note) of one kernel under one compiler; `env`: variables set
    while it compiles (they fill tilework's CompileOptions)."""
    kern = getattr(mod, name)
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        t = time.perf_counter()
        k = kern.warmup(*args, BLOCK=block, num_warps=warps, grid=grid)
        compile_s = time.perf_counter() - t
    finally:
        for key, v in saved.items():
            if v is None:
                os.environ.pop(key)
            else:
                os.environ[key] = v
    out.zero_()

    def launch():
        kern[grid](*args, BLOCK=block, num_warps=warps)
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


def torch_ms(kname, args, ref):
    """(None, run ms, ok, "") of torch's own op."""
    def fn():
        if kname == "softmax":
            return torch.softmax(args[0].view(-1, args[2]), -1)
        return torch.add(args[0], args[1])
    ok = torch.allclose(fn().view(-1), ref, atol=1e-9, rtol=1e-4)
    return None, median_ms(fn), ok, ""


COLUMNS = ("tilework", "no bound", "triton", "torch")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", default="8192,16384,32768,65536,131072")
    ap.add_argument("--triton-max", type=int, default=131072)
    ap.add_argument("--kernels", default="softmax,vadd")
    ap.add_argument("--warps", type=int, default=4)
    ap.add_argument("--peak", type=float, default=None, help="HBM TB/s (default: by name)")
    a = ap.parse_args()
    card = torch.cuda.get_device_name()
    peak = a.peak or next((v for k, v in PEAK_TBS.items() if k in card), 4.8)
    tw = load_source(SRC, "tilework", "big_tile")
    tw_old = load_source(SRC, "tilework", "big_tile_old")  # (its own variant cache)
    try:
        tr = load_source(SRC, "triton", "big_tile")
    except ImportError:
        tr = None
    rows, wrong = [], False
    for kname_wanted in a.kernels.split(","):
        for block in (int(b) for b in a.blocks.split(",")):
            for kname, name, args, grid, out, ref, nbytes in cases(block):
                if kname != kname_wanted:
                    continue
                row = {"kernel": kname, "BLOCK": block,
                       "floor": nbytes / (peak * 1e12) * 1e3}
                runs = [("tilework", lambda: measure(tw, name, args, grid, out, ref, block,
                                                     a.warps)),
                        ("no bound", lambda: measure(tw_old, name, args, grid, out, ref, block,
                                                     a.warps,
                                                     {"TILEWORK_HUGE_TILE_BOUNDS": "0"}))]
                if tr is not None and block <= a.triton_max:
                    runs.append(("triton", lambda: measure(tr, name, args, grid, out, ref,
                                                           block, a.warps)))
                runs.append(("torch", lambda: torch_ms(kname, args, ref)))
                for label, fn in runs:
                    c, ms, ok, note = row[label] = fn()
                    wrong |= not ok
                    cs = "-" if c is None else f"{c:.2f} s"
                    print(f"{kname} {block} {label}: compile {cs}, {ms:.3f} ms, "
                          f"{'ok' if ok else 'WRONG'}, {note}", flush=True)
                rows.append(row)
                torch.cuda.empty_cache()
    print(f"\n{card}, fp32, 2^26 elements, {a.warps} warps; floor = bytes / {peak} TB/s; "
          f"cells: compile s / run ms / ptxas")
    print("| kernel | BLOCK | " + " | ".join(COLUMNS) + " | floor ms |")
    print("| --- | --- | " + " | ".join("---" for _ in COLUMNS) + " | --- |")
    for r in rows:
        cells = []
        for col in COLUMNS:
            v = r.get(col)
            if v is None:
                cells.append("skipped")
                continue
            c, ms, ok, note = v
            cell = (f"{c:.2f} / " if c is not None else "") + f"{ms:.3f}"
            cells.append(cell + (f" / {note}" if note else "") + ("" if ok else " WRONG"))
        print(f"| {r['kernel']} | {r['BLOCK']} | " + " | ".join(cells) +
              f" | {r['floor']:.3f} |")
    if wrong:
        print("WRONG results above")
        sys.exit(1)


if __name__ == "__main__":
    main()
