"""Host cost of one `attention_forward` call with no GPU (issue 10): attn_host.py's calls
(Z=1 H=2 N=256 D=64 fp16, causal) of the TMA route and the pointer route, timed over the
fake GPU of cpu_fakes.py (kernels compiled for sm_90a, launched natively into the fake
libcuda), then cProfile's top entries of each.  The autotuners take their first config
that fits instead of timing (no kernel runs here).  Figures: the best of 5 x `--calls`
calls, this thread's CPU time (cpu_fakes.best_time).  To compare trees, run each tree's
copy of this tool in turn (the figures move with the machine's load).

    python benchmarks/tools/attn_host_cpu.py [--calls 2000] [--top 25] [--python-path]

--python-path: TILEWORK_NATIVE_TMA=0 (TMA kernels launched by the Python path).
"""
import argparse
import cProfile
import os
import pstats
import subprocess
import sys

from cpu_fakes import best_time, fake_driver, in_child, install_fake_gpu

HERE = os.path.dirname(os.path.abspath(__file__))


def untimed(tuner):
    """`tuner` choosing its first config that fits (no timing: nothing runs here)."""
    tuner._tune = lambda key, args, kwargs, grid, nargs: tuner.prune_configs(kwargs, nargs)[0]


def child(args):
    allocator = install_fake_gpu()
    sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
    import torch
    import attention
    import attention_tma
    for tuner in (attention.attn_fwd, *attention_tma.TUNERS.values()):
        untimed(tuner)
    q, k, v = (allocator.empty((1, 2, 256, 64), torch.float16) for _ in range(3))
    for tma in (True, False):
        def fn():
            attention.attention_forward(q, k, v, True, 0.125, tma=tma)
        assert attention.forward_kernel(q, k, v, tma) == ("tma" if tma else "pointer")
        fn()  # (compiles, or reads the disk cache)
        fn()
        per = best_time(fn, args.calls)
        print(f"## tma={tma}: {per:.1f} us a call", flush=True)
        if args.top:
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(args.calls):
                fn()
            pr.disable()
            st = pstats.Stats(pr)
            st.sort_stats("tottime").print_stats(args.top)
            st.sort_stats("cumulative").print_stats(args.top)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--top", type=int, default=25, help="cProfile entries (0: none)")
    ap.add_argument("--python-path", action="store_true")
    args = ap.parse_args()
    if in_child():
        return child(args)
    with fake_driver() as env:
        env["TILEWORK_NATIVE_TMA"] = "0" if args.python_path else "1"
        subprocess.run([sys.executable] + sys.argv, env=env, check=True)


if __name__ == "__main__":
    main()
