"""Attention forward at short sequences: host cost per call against kernel time, per side and
per TMA config (issue 10: the TMA route trailed Triton at N <= 2048, causal most).

    python benchmarks/tools/attn_small.py [--n 1024,2048] [--d 64,128]

Prints, per (N, D, causal): for the routed TMA kernel and the pointer kernel, the host time
of one call (enqueue only), the time of back-to-back calls (CUDA events, no L2 flush) and
do_bench's figure; then every TMA config's back-to-back time, launched directly."""
import argparse
import math
import os
import sys
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1024,2048")
    ap.add_argument("--d", default="64,128")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--configs", default=None,
                    help="BMxBNxWxS,... to time instead of attention_tma.FWD_TMA_CONFIGS")
    ap.add_argument("--no-route", action="store_true", help="only the configs")
    args = ap.parse_args()
    import torch
    import attention
    import attention_tma as at
    from tilework.testing import do_bench
    from tilework.tools.tensor_descriptor import TensorDescriptor

    def back_to_back(fn, n=50):
        fn()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            fn()
        e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) / n

    def host(fn, n=50):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = (time.perf_counter() - t) / n
        torch.cuda.synchronize()
        return dt * 1e3

    print(f"# {torch.cuda.get_device_name()}  fp16 Z=4 H=32; ms (host: enqueue time per call)")
    for D in (int(x) for x in args.d.split(",")):
        for N in (int(x) for x in args.n.split(",")):
            for causal in (bool(int(c)) for c in args.causal.split(",")):
                q, k, v = (torch.randn(4, 32, N, D, device="cuda", dtype=torch.float16) * .5
                           for _ in range(3))
                sc = 1 / math.sqrt(D)
                flop = 4 * 4 * 32 * N * N * D * (0.5 if causal else 1.0)
                for name, kw in () if args.no_route else (("tma", {"tma": True}),
                                                          ("ptr", {"tma": False})):
                    def fn():
                        attention.attention_forward(q, k, v, causal, sc, **kw)
                    fn()
                    b2b, h, db = back_to_back(fn), host(fn), do_bench(fn)
                    print(f"N={N:5} D={D:3} causal={int(causal)} {name}: host {h:.3f}  "
                          f"b2b {b2b:.3f} ({flop / b2b / 1e9:.0f} TF)  do_bench {db:.3f} "
                          f"({flop / db / 1e9:.0f} TF)", flush=True)
                o = torch.empty_like(q)
                lse = torch.empty(4, 32, N, device="cuda", dtype=torch.float32)
                cfgs = [(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages)
                        for c in at.FWD_TMA_CONFIGS if at.config_fits(c, D)]
                if args.configs:
                    cfgs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
                for (m, n_, w, st) in cfgs:
                    cfg = types.SimpleNamespace(num_warps=w, num_stages=st)
                    for ws in (False, True):
                        descs = [TensorDescriptor(t, [4 * 32 * N, D], [D, 1], [bs, D])
                                 for t, bs in ((q, m), (k, n_), (v, n_), (o, m))]

                        def launch():
                            at.attn_fwd_tma_kernel[(N // m, 128)](
                                sc, lse, o, *descs, 32, 1, N, HEAD_DIM=D, BLOCK_M=m,
                                BLOCK_N=n_, CAUSAL=causal, EVEN_N=True, WARP_SPECIALIZE=ws,
                                num_warps=cfg.num_warps, num_stages=cfg.num_stages)
                        try:
                            t = back_to_back(launch)
                            kern = launch()
                            stats = " ".join(f"{a} {getattr(kern, a, '?')}"
                                             for a in ("n_regs", "n_spills"))
                            shared = getattr(getattr(kern, "metadata", None), "shared", "?")
                            print(f"    {m}x{n_} w{cfg.num_warps} s{cfg.num_stages} ws={int(ws)}:"
                                  f" b2b {t:.3f} ({flop / t / 1e9:.0f} TF)  host "
                                  f"{host(launch):.3f}  {stats} shared {shared}", flush=True)
                        except Exception as e:
                            print(f"    {m}x{n_} w{cfg.num_warps} s{cfg.num_stages} ws={int(ws)}:"
                                  f" failed {type(e).__name__}: {str(e)[:200]}", flush=True)


if __name__ == "__main__":
    main()
