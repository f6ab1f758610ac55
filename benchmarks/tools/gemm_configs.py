"""Per-config timing of examples/persistent_matmul.py's `matmul_tma_persistent` (the tma-ws
family of benchmarks/matmul.py), tilework and Triton on the same source, each config alone
(no autotuner), at the shapes where tilework trails (issue 9: 1000^3, K=512). One table per
shape: TFLOP/s per config and side (tilework.testing.do_bench, median, L2 flushed; the sides
take turns over --rounds rounds, the median round kept), `!` where a result is off torch's.

    python benchmarks/tools/gemm_configs.py [--shapes 1000x1000x1000 ...] [--dtype fp16]
        [--configs BMxBNxBK/wW/sS[/ws] ...] [--tma-store] [--rounds 3] [--once]

Default configs: persistent_matmul.TMA_CONFIGS plus EXTRA below (candidates for small
problems).  `--tma-store`: a third column, tilework with `tma_store=True`; `--stmatrix`: columns
with `stmatrix=True` too (with `--tma-store`, both options).
"""
import argparse
import importlib.util
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

# (BM, BN, BK, warps, stages, ws): more tiles per problem, or fewer K steps
EXTRA = [(128, 128, 64, 8, 3, True), (128, 128, 128, 8, 3, True), (128, 128, 128, 8, 3, False),
         (64, 128, 64, 4, 3, False), (64, 256, 64, 4, 3, False), (128, 64, 64, 4, 3, False),
         (64, 128, 128, 4, 3, False), (64, 64, 64, 4, 4, False)]


def parse_config(s):
    parts = s.split("/")
    bm, bn, bk = (int(x) for x in parts[0].split("x"))
    return (bm, bn, bk, int(parts[1][1:]), int(parts[2][1:]), len(parts) > 3 and parts[3] == "ws")


def name(c):
    return f"{c[0]}x{c[1]}x{c[2]}/w{c[3]}/s{c[4]}{'/ws' if c[5] else ''}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", nargs="*", default=["1000x1000x1000", "8192x8192x512"])
    ap.add_argument("--dtype", default="fp16")
    ap.add_argument("--configs", nargs="*")
    ap.add_argument("--tma-store", action="store_true")
    ap.add_argument("--stmatrix", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--once", action="store_true",
                    help="run each config once per side, untimed (for ncu -k regex:matmul)")
    args = ap.parse_args()
    import torch
    import tilework
    spec = importlib.util.spec_from_file_location(  # benchmarks/matmul.py: `matmul` is the
        "matmul_bench", os.path.join(HERE, "..", "matmul.py"))  # example's name
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    import persistent_matmul as pm
    from tilework.testing import do_bench
    tr_mod = bench.triton_module("cfg")
    TW, TR = bench.descriptor_classes(tr_mod)
    tw_jit = tilework.jit(pm.matmul_tma_persistent.fn)
    configs = ([parse_config(s) for s in args.configs] if args.configs else
               [(c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"], c.num_warps, c.num_stages,
                 c.kwargs["WARP_SPECIALIZE"]) for c in pm.TMA_CONFIGS] + EXTRA)
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    sides = [("tilework", tw_jit, TW, {}), ("Triton", tr_mod.tma_jit, TR, {})]
    if args.tma_store:
        sides.append(("tw tma_store", tw_jit, TW, {"tma_store": True}))
    if args.stmatrix:
        sides.append(("tw stmatrix", tw_jit, TW, {"stmatrix": True}))
        if args.tma_store:
            sides.append(("tw tma+stm", tw_jit, TW, {"tma_store": True, "stmatrix": True}))
    print(f"GPU: {torch.cuda.get_device_name()} ({sms} SMs); {args.dtype}; TFLOP/s")
    for shape in args.shapes:
        M, N, K = (int(x) for x in shape.split("x"))
        a = torch.randn(M, K, device="cuda", dtype=dt)
        b = torch.randn(K, N, device="cuda", dtype=dt)
        ref = torch.matmul(a, b).float()
        flop = 2 * M * N * K
        cub = [1.0] if args.once else [do_bench(lambda: torch.matmul(a, b), return_mode="median")
               for _ in range(args.rounds)]
        print(f"\n{M}x{N}x{K}: cuBLAS {flop / statistics.median(cub) / 1e9:.1f}")
        print(f"{'config':24s} " + " ".join(f"{s[0]:>13s}" for s in sides))
        for c in configs:
            bm, bn, bk, w, s, ws = c
            fns, oks = {}, {}
            for label, k, TD, extra in sides:
                out = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
                ad, bd, cd = (TD.from_tensor(t, blk) for t, blk in
                              ((a, [bm, bk]), (b, [bk, bn]), (out, [bm, bn])))
                tiles = -(-M // bm) * -(-N // bn)

                def run(k=k, ad=ad, bd=bd, cd=cd, tiles=tiles, extra=extra):
                    k[(min(sms, tiles),)](ad, bd, cd, M, N, K, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                                          NUM_SMS=sms, WARP_SPECIALIZE=ws, B_NK=False,
                                          num_warps=w, num_stages=s, **extra)
                try:
                    run()
                    torch.cuda.synchronize()
                    err = (out.float() - ref).abs().max().item()
                    oks[label] = err <= (0.5 if dt == torch.float16 else 2.0)
                    fns[label] = run
                except Exception as e:  # noqa: BLE001 - a config may not fit; say so
                    oks[label] = f"{type(e).__name__}: {str(e).splitlines()[0][:60]}"
            if args.once:
                print(f"{name(c):24s} ran once: {oks}")
                continue
            times = {lab: [] for lab in fns}
            for _ in range(args.rounds):
                for lab, fn in fns.items():
                    times[lab].append(do_bench(fn, return_mode="median"))
            cells = []
            for label, *_ in sides:
                if label in times:
                    tf = flop / statistics.median(times[label]) / 1e9
                    cells.append(f"{tf:12.1f}{' ' if oks[label] is True else '!'}")
                else:
                    cells.append(f"{'fail':>13s}")
            print(f"{name(c):24s} " + " ".join(cells), flush=True)
            for label, ok in oks.items():
                if ok is not True and ok is not False:
                    print(f"    {label}: {ok}")


if __name__ == "__main__":
    main()
