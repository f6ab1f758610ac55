"""One attention forward of each side inside an NVTX range `prof`, for ncu (issue 10's ncu
figures where a target is missed): tilework's routed TMA kernel (autotuned first, outside the
range) and torch SDPA (flash), fp16, Z=4 H=32.

    ncu --nvtx --nvtx-include "prof/" --section SpeedOfLight ... \\
        python benchmarks/tools/attn_ncu.py [--n 2048] [--d 128] [--causal 0]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--causal", type=int, default=0)
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    import attention
    q, k, v = (torch.randn(4, 32, args.n, args.d, device="cuda", dtype=torch.float16) * .5
               for _ in range(3))
    sc = 1 / math.sqrt(args.d)
    causal = bool(args.causal)
    runs = {"tilework": lambda: attention.attention_forward(q, k, v, causal, sc),
            "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sc)}
    for fn in runs.values():  # autotune, compile, warm up: outside the range
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    print("tilework's kernel:", attention.forward_kernel(q, k, v))
    for label, fn in runs.items():
        torch.cuda.nvtx.range_push("prof")
        fn()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        print("profiled", label)


if __name__ == "__main__":
    main()
