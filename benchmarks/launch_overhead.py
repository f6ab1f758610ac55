"""Host-side launch overhead (µs per launch, 5,000 launches in batches of 500, best of 3) of one
tiny kernel: tilework's native launch path, its Python path (TILEWORK_NATIVE_LAUNCH=0's),
Triton and a torch eager op, in one run; each path broken into its parts; the floor (the same
kernel and parameters launched by a bare cuLaunchKernel loop in C, no Python); and the warm
start (a fresh process, the kernel already in the disk cache, from the import to the first
launch returning) of tilework against Triton.

    python benchmarks/launch_overhead.py [--no-warm-start] [--breakdown] [--descriptors]

--breakdown loads the native launcher's timing build (TILEWORK_NATIVE_TIMING=1, compiled with
-DTW_LAUNCH_TIMING) and prints, per launch, the time of each phase of the native call next to
the totals; every figure of that run includes the timing build's clock reads.  --descriptors
adds a one-program kernel taking three host TensorDescriptors (sm_90: two loads' TMA tensor maps
passed per launch), tilework's native and Python paths against Triton.
"""
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

N, BATCH, REPEATS = 5000, 500, 3


def per_call_us(fn, n=N, batch=BATCH, repeats=REPEATS):
    """µs per call of `fn`: n calls in batches, synchronized between batches outside the timed
    part (the launch queue never fills, so the GPU's own time does not count); best of
    `repeats`.  `fn(k)` instead makes k calls itself and returns their ns, when it has a
    `batched` attribute (the C floor)."""
    best = float("inf")
    for _ in range(repeats):
        fn()
        torch.cuda.synchronize()
        total = 0.0
        for _ in range(n // batch):
            if hasattr(fn, "batched"):
                total += fn.batched(batch) / 1e9
            else:
                t = time.perf_counter()
                for _ in range(batch):
                    fn()
                total += time.perf_counter() - t
            torch.cuda.synchronize()
        best = min(best, total / (n // batch * batch) * 1e6)
    return best


def time_rows(rows: dict, cases) -> None:
    """rows[name] = per_call_us(fn) for each (name, fn); fn None: no figure (nan)."""
    for name, fn in cases:
        rows[name] = per_call_us(fn) if fn is not None else float("nan")


def _triton_add():
    import triton
    import triton.language as tl

    @triton.jit
    def tadd(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
        off = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        m = off < n
        tl.store(out_ptr + off, tl.load(x_ptr + off, mask=m) + tl.load(y_ptr + off, mask=m),
                 mask=m)
    return tadd


class _Floor:
    """The bare cuLaunchKernel loop in C: k.native.bench, the same kernel and parameters
    (`packed`: in one buffer, CU_LAUNCH_PARAM_BUFFER_POINTER, instead of kernelParams)."""

    def __init__(self, k, params, packed=False):
        self.k, self.params, self.packed = k, params, packed

    def __call__(self):
        self.batched(1)

    def batched(self, n):
        stream = torch.cuda.current_stream().cuda_stream
        return self.k.native.bench(1, 1, 1, stream, self.params, n, self.packed)


def launch_rows(breakdown=False):
    from tilework.runtime import launcher, native_launch
    from vector_add import add_kernel
    x = torch.randn(1024, device="cuda")
    y, o = torch.randn_like(x), torch.empty_like(x)
    k = add_kernel.warmup(x, y, o, 1024, BLOCK_SIZE=1024)
    launch = lambda: add_kernel[(1,)](x, y, o, 1024, BLOCK_SIZE=1024)  # noqa: E731
    launch()
    values, opts = launcher.bind(add_kernel, (x, y, o, 1024), {"BLOCK_SIZE": 1024})
    _, params = launcher.fast_key_and_params(add_kernel)(values)
    binder = lambda: add_kernel._binder(x, y, o, 1024, BLOCK_SIZE=1024)  # noqa: E731
    rows = {}
    sig = add_kernel._native_launch
    native = bool(sig) and k.native is not None
    if not native:
        print(f"native launch path off: {native_launch.why_not()}")
    cases = [("tilework launch (native)", launch),
             ("  kernel[grid]", lambda: add_kernel[(1,)]),
             ("  binder", binder),
             ("  sig.launch: key, lookup, pack, launch",
              lambda: sig.launch(values, opts, add_kernel.cache, (1,))),
             ("  bare cuLaunchKernel loop in C (floor)", _Floor(k, params)),
             ("  the same, parameters in one buffer", _Floor(k, params, packed=True))]
    cases = [(name, fn if native else None) for name, fn in cases]
    mod = native_launch.module()
    if native and breakdown:
        mod.reset_timings()  # the phases of the first row's launches (all repeats)
    time_rows(rows, cases[:1])
    phases = mod.timings() if native and breakdown else None
    time_rows(rows, cases[1:])
    saved = add_kernel._native_launch
    add_kernel._native_launch = False  # the Python path
    try:
        rt = launcher._get_runtime()
        kp = launcher.fast_key_and_params(add_kernel)
        time_rows(rows, [
            ("tilework launch (Python path)", launch),
            ("  binder ", binder),
            ("  key and parameters", lambda: kp(values)),
            ("  stream()", rt.stream),
            ("  rt.launch (cuda-python)", lambda: rt.launch(k, (1, 1, 1), params)),
        ])
    finally:
        add_kernel._native_launch = saved
    try:
        tadd = _triton_add()
        triton_launch = lambda: tadd[(1,)](x, y, o, 1024, BLOCK_SIZE=1024)  # noqa: E731
    except ImportError:
        triton_launch = None
    time_rows(rows, [("triton launch", triton_launch),
                     ("torch eager (torch.add out=)", lambda: torch.add(x, y, out=o))])
    return rows, phases


_DESC_SRC = """
@jit
def desc_add(a_desc, b_desc, c_desc, BM: tl.constexpr, BN: tl.constexpr):
    c_desc.store([0, 0], a_desc.load([0, 0]) + b_desc.load([0, 0]))
"""


def descriptor_rows():
    """µs per launch of a one-program kernel taking three host TensorDescriptors (TMA loads
    on sm_90: each launch passes their tensor maps), tilework native and Python paths and
    Triton; --descriptors."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
    from quick_matmul import load_source
    x = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    y, o = torch.randn_like(x), torch.empty_like(x)
    rows = {}
    for which in ("tilework", "triton"):
        try:
            k = load_source(_DESC_SRC, which, "desc_launch").desc_add
            if which == "triton":
                from triton.tools.tensor_descriptor import TensorDescriptor
            else:
                from tilework.tools.tensor_descriptor import TensorDescriptor
        except ImportError:
            rows[f"{which} 3 host descriptors"] = float("nan")
            continue
        ds = [TensorDescriptor.from_tensor(t, [64, 64]) for t in (x, y, o)]
        launch = lambda k=k, ds=ds: k[(1,)](*ds, BM=64, BN=64)  # noqa: E731
        launch()
        if which == "triton":
            time_rows(rows, [("triton 3 host descriptors", launch)])
            continue
        v = launch()
        time_rows(rows, [("tilework 3 host descriptors"
                          f" ({'native' if getattr(v, 'native', None) else 'Python path'})",
                          launch)])
        saved, k._native_launch = k._native_launch, False
        try:
            time_rows(rows, [("tilework 3 host descriptors (Python path)", launch)])
        finally:
            k._native_launch = saved
    return rows


def print_breakdown(rows, t):
    """The timing build's phases, µs per launch (averaged over all the native row's launches,
    its repeats included), under that row's total (the best repeat)."""
    n = t["launches"]
    us = {p: v / n / 1e3 for p, v in t.items() if p not in ("launches", "clock_ns")}
    key_parts = us["get_device"] + us["data_ptr"] + us["dtype"]
    top = ("bind", "key", "lookup", "grid", "device", "stream", "pack", "driver")
    print(f"\n== native launch by phase (timing build; {n} launches; one clock read "
          f"{t['clock_ns']:.0f} ns, counted once in each phase) ==")
    print(f"{'tilework launch (native), timing build':40s} {rows['tilework launch (native)']:7.2f}")
    print(f"{'  Python before the C call (kernel[grid])':40s} "
          f"{rows['tilework launch (native)'] - us['total']:7.2f}")
    print(f"{'  the C call (Launch)':40s} {us['total']:7.2f}")
    for p in top:
        print(f"{'    ' + p:40s} {us[p]:7.2f}")
        if p == "key":
            for q in ("get_device", "data_ptr", "dtype"):
                print(f"{'      ' + q:40s} {us[q]:7.2f}")
            print(f"{'      the rest (types, fingerprint)':40s} {us['key'] - key_parts:7.2f}")
    print(f"{'    the rest of the C call':40s} {us['total'] - sum(us[p] for p in top):7.2f}")
    print(f"{'  bare cuLaunchKernel loop in C (floor)':40s} "
          f"{rows['  bare cuLaunchKernel loop in C (floor)']:7.2f}")


_WARM = """
import time, torch
x = torch.randn(1024, device="cuda"); y = torch.randn_like(x); o = torch.empty_like(x)
torch.cuda.synchronize()
t = time.perf_counter()
import {mod}, {mod}.language as tl
@{mod}.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    off = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = off < n
    tl.store(out_ptr + off, tl.load(x_ptr + off, mask=m) + tl.load(y_ptr + off, mask=m), mask=m)
add[(1,)](x, y, o, 1024, BLOCK_SIZE=1024)
torch.cuda.synchronize()
print((time.perf_counter() - t) * 1e3)
"""


def warm_start_ms(which: str, runs: int = 3):
    """ms from `import <compiler>` to the first launch returning, in a fresh process whose
    kernel is in the disk cache (a first process fills a private cache); best of `runs`.
    (torch's import and CUDA initialisation come before, the same for both.)"""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TILEWORK_CACHE_DIR=os.path.join(d, "tw"),
                   TRITON_CACHE_DIR=os.path.join(d, "triton"))
        env.pop("TILEWORK_NATIVE_TIMING", None)
        script = os.path.join(d, f"warm_{which}.py")  # @jit needs the kernel's source file
        with open(script, "w") as f:
            f.write(_WARM.format(mod=which))
        times = []
        for i in range(runs + 1):
            r = subprocess.run([sys.executable, script], env=env, capture_output=True,
                               text=True)
            if r.returncode != 0:
                print(f"warm start {which} failed:\n{r.stderr.strip()[-2000:]}")
                return float("nan")
            if i:  # the first run compiles
                times.append(float(r.stdout.strip().splitlines()[-1]))
        return min(times)


def import_ms(runs: int = 5):
    """`import tilework` in a fresh process, ms (best of `runs`)."""
    code = "import time; t = time.perf_counter(); import tilework; " \
           "print((time.perf_counter() - t) * 1e3)"
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                    text=True, check=True).stdout) for _ in range(runs))


def main():
    breakdown = "--breakdown" in sys.argv
    if breakdown:  # before the native module is loaded (on the first launch)
        os.environ["TILEWORK_NATIVE_TIMING"] = "1"
    rows, phases = launch_rows(breakdown)
    if "--descriptors" in sys.argv:
        rows.update(descriptor_rows())
    build = " (timing build)" if breakdown else ""
    print(f"\n== launch overhead on {torch.cuda.get_device_name()}{build} (us per launch) ==")
    for name, us in rows.items():
        print(f"{name:40s} {us:7.2f}")
    if phases:
        print_breakdown(rows, phases)
    elif breakdown:
        print("no breakdown: the native launch path is off, or the module loaded is not the "
              "timing build (TILEWORK_NATIVE_LIB names another)")
    if "--no-warm-start" not in sys.argv:
        print("\n== start-up (ms) ==")
        print(f"{'import tilework':40s} {import_ms():7.1f}")
        for which in ("tilework", "triton"):
            print(f"{'warm start ' + which:40s} {warm_start_ms(which):7.1f}")


if __name__ == "__main__":
    main()
