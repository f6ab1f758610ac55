"""Host-side launch overhead (µs per launch, 5,000 launches each, best of 3) of one tiny kernel:
tilework's native launch path, its Python path (TILEWORK_NATIVE_LAUNCH=0's), Triton and a
torch eager op, in one run; the Python path broken into its parts; and the warm start (a
fresh process, the kernel already in the disk cache, from the import to the first launch
returning) of tilework against Triton.

    python benchmarks/launch_overhead.py [--no-warm-start]
"""
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))


def per_call_us(fn, n=5000, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        fn()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
        torch.cuda.synchronize()
        best = min(best, dt / n * 1e6)
    return best


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


def launch_rows():
    from tilework.runtime import launcher, native_launch
    from vector_add import add_kernel
    x = torch.randn(1024, device="cuda")
    y, o = torch.randn_like(x), torch.empty_like(x)
    k = add_kernel.warmup(x, y, o, 1024, BLOCK_SIZE=1024)
    launch = lambda: add_kernel[(1,)](x, y, o, 1024, BLOCK_SIZE=1024)  # noqa: E731
    launch()
    rows = {}
    if add_kernel._native_launch and k.native is not None:
        rows["tilework launch (native)"] = per_call_us(launch)
        sig = launcher.native_signature(add_kernel)
        values, opts = launcher.bind(add_kernel, (x, y, o, 1024), {"BLOCK_SIZE": 1024})
        rows["  binder"] = per_call_us(lambda: add_kernel._binder(x, y, o, 1024,
                                                                  BLOCK_SIZE=1024))
        rows["  key, lookup, pack, launch"] = per_call_us(
            lambda: sig.launch(values, opts, add_kernel.cache, (1,)))
    else:
        rows["tilework launch (native)"] = float("nan")
        print(f"native launch path off: {native_launch.why_not()}")
    saved = add_kernel._native_launch
    add_kernel._native_launch = False  # the Python path
    try:
        rows["tilework launch (Python path)"] = per_call_us(launch)
        rt = launcher._get_runtime()
        values = (x, y, o, 1024, 1024)
        kp = launcher.fast_key_and_params(add_kernel)
        _, params = kp(values)
        rows["  binder "] = per_call_us(lambda: add_kernel._binder(x, y, o, 1024,
                                                                   BLOCK_SIZE=1024))
        rows["  key and parameters"] = per_call_us(lambda: kp(values))
        rows["  stream()"] = per_call_us(rt.stream)
        rows["  rt.launch (cuda-python)"] = per_call_us(lambda: rt.launch(k, (1, 1, 1), params))
    finally:
        add_kernel._native_launch = saved
    try:
        tadd = _triton_add()
        rows["triton launch"] = per_call_us(lambda: tadd[(1,)](x, y, o, 1024, BLOCK_SIZE=1024))
    except ImportError:
        rows["triton launch"] = float("nan")
    rows["torch eager (torch.add out=)"] = per_call_us(lambda: torch.add(x, y, out=o))
    return rows


_WARM = {
    "tilework": """
import time, torch
x = torch.randn(1024, device="cuda"); y = torch.randn_like(x); o = torch.empty_like(x)
torch.cuda.synchronize()
t = time.perf_counter()
import tilework, tilework.language as tl
@tilework.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    off = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = off < n
    tl.store(out_ptr + off, tl.load(x_ptr + off, mask=m) + tl.load(y_ptr + off, mask=m), mask=m)
add[(1,)](x, y, o, 1024, BLOCK_SIZE=1024)
torch.cuda.synchronize()
print((time.perf_counter() - t) * 1e3)
""",
    "triton": """
import time, torch
x = torch.randn(1024, device="cuda"); y = torch.randn_like(x); o = torch.empty_like(x)
torch.cuda.synchronize()
t = time.perf_counter()
import triton, triton.language as tl
@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    off = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = off < n
    tl.store(out_ptr + off, tl.load(x_ptr + off, mask=m) + tl.load(y_ptr + off, mask=m), mask=m)
add[(1,)](x, y, o, 1024, BLOCK_SIZE=1024)
torch.cuda.synchronize()
print((time.perf_counter() - t) * 1e3)
""",
}


def warm_start_ms(which: str, runs: int = 3):
    """ms from `import <compiler>` to the first launch returning, in a fresh process whose
    kernel is in the disk cache (a first process fills a private cache); best of `runs`.
    (torch's import and CUDA initialisation come before, the same for both.)"""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TILEWORK_CACHE_DIR=os.path.join(d, "tw"),
                   TRITON_CACHE_DIR=os.path.join(d, "triton"))
        script = os.path.join(d, f"warm_{which}.py")  # @jit needs the kernel's source file
        with open(script, "w") as f:
            f.write(_WARM[which])
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
    rows = launch_rows()
    print(f"\n== launch overhead on {torch.cuda.get_device_name()} (us per launch) ==")
    for name, us in rows.items():
        print(f"{name:34s} {us:7.2f}")
    if "--no-warm-start" not in sys.argv:
        print("\n== start-up (ms) ==")
        print(f"{'import tilework':34s} {import_ms():7.1f}")
        for which in ("tilework", "triton"):
            print(f"{'warm start ' + which:34s} {warm_start_ms(which):7.1f}")


if __name__ == "__main__":
    main()
