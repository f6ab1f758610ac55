"""Host cost of one attention_forward call (issue 10): cProfile over many calls of the TMA and
the pointer route at a small shape, top entries by own and cumulative time.

    python benchmarks/tools/attn_host.py [--calls 300]"""
import argparse
import cProfile
import math
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    import torch
    import attention
    q, k, v = (torch.randn(1, 2, 256, 64, device="cuda", dtype=torch.float16)
               for _ in range(3))
    for tma in (True, False):
        def fn():
            attention.attention_forward(q, k, v, True, 1 / math.sqrt(64), tma=tma)
        fn()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(args.calls):
            fn()
        per = (time.perf_counter() - t) / args.calls * 1e6
        torch.cuda.synchronize()
        print(f"## tma={tma}: {per:.1f} us a call", flush=True)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(args.calls):
            fn()
        pr.disable()
        torch.cuda.synchronize()
        st = pstats.Stats(pr)
        st.sort_stats("tottime").print_stats(25)
        st.sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
