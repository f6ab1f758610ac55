"""Warp specialization on Hopper: the descriptor GEMM with and without
`tl.range(..., warp_specialize=True)`, in the one-tile-per-program form (the K loop marked) and
the persistent form of Triton's tutorial 09 (the tiles' loop marked, `flatten=True`), run by
tilework and by Triton (the same source under each one's imports), against cuBLAS
(torch.matmul); CUDA-event medians, fp16, one short table with the card's name.

    python benchmarks/tools/ws_matmul.py [--dtype fp16|bf16] [--all-configs] [--tma-store]
        [--shapes MxNxK ...]

`--tma-store`: tilework's epilogue stores C by TMA where it can (`tma_store=True`; the
persistent kernel's grouped tile coordinates are not provably >= 0, so it keeps the
block-pointer store).

Default shapes: 4096^3, 8192^3, 8192x8192x512 (where the persistent kernel's producer,
running into the next tile, overlaps a tile's epilogue with the next one's loads).  Each cell:
TFLOP/s of the best of the configs (CONFIGS; MORE_CONFIGS too with --all-configs), `!` if
its result is off cuBLAS's by more than the tolerance.  Triton 3.6 ignores warp_specialize
on these Hopper loops (its PTX, compiled ahead of time for sm_90a, has no setmaxnreg and 256
threads), so its two columns show its plain pipeline.  Needs an sm_90 GPU.
"""
import ast
import inspect
import os
import sys
import textwrap

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "python"))
from quick_matmul import bench, load_source  # noqa: E402
import ws_kernels  # noqa: E402


def _source(jit_fn) -> str:
    """The kernel's `def` under a bare `@jit` (either compiler's: load_source)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(jit_fn.fn)))
    tree.body[0].decorator_list = []
    return "@jit\n" + ast.unparse(tree) + "\n"


# the kernels the warp-specialization tests check (test/python/ws_kernels.py; the persistent
# one is examples/persistent_matmul.py's matmul_tma_persistent), as source that runs under
# either compiler's `jit` and `tl`
SRC = "\n".join(_source(k) for k in (ws_kernels.ws_matmul, ws_kernels.ws_persistent))

# (BM, BN, BK, num_warps, num_stages): the best of these is reported per cell
CONFIGS = [(128, 256, 64, 8, 3)]
MORE_CONFIGS = [(128, 128, 64, 8, 4), (128, 256, 64, 8, 4)]  # with --all-configs
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 512)]


def descriptor_class(which):
    if which == "triton":
        from triton.tools.tensor_descriptor import TensorDescriptor
    else:
        from tilework.tools.tensor_descriptor import TensorDescriptor
    return TensorDescriptor


def run_cell(mod, which, form, ws, a, b, ref, flop, tol, configs, extra):
    """(best TFLOP/s over `configs`, whether every result was right) or (None, message)."""
    M, K = a.shape
    N = b.shape[1]
    TD = descriptor_class(which)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    best, ok = None, True
    for bm, bn, bk, w, s in configs:
        c = torch.full((M, N), float("nan"), device="cuda", dtype=a.dtype)
        ad, bd = TD.from_tensor(a, [bm, bk]), TD.from_tensor(b, [bk, bn])
        cd = TD.from_tensor(c, [bm, bn])
        tiles = -(-M // bm) * -(-N // bn)
        if form == "persistent":
            def run():
                mod.matmul_tma_persistent[(min(sms, tiles),)](
                    ad, bd, cd, M, N, K, BM=bm, BN=bn, BK=bk, GROUP_M=8, NUM_SMS=sms,
                    WARP_SPECIALIZE=ws, B_NK=False, num_warps=w, num_stages=s, **extra)
        else:
            def run():
                mod.ws_matmul[(-(-M // bm), -(-N // bn))](
                    ad, bd, cd, M, N, K, BM=bm, BN=bn, BK=bk, WS=ws, num_warps=w,
                    num_stages=s, **extra)
        try:
            run()
            torch.cuda.synchronize()
            ok = ok and bool((c.float() - ref).abs().max().item() <= tol)
            t = bench(run, reps=30)
        except Exception as e:  # report and go on
            return None, f"{type(e).__name__}: {str(e)[:80]}"
        tf = flop / t / 1e9
        best = tf if best is None else max(best, tf)
    return best, ok


def main():
    argv = sys.argv[1:]
    shapes, dt_name, configs = SHAPES, "fp16", CONFIGS
    if "--all-configs" in argv:
        argv.remove("--all-configs")
        configs = CONFIGS + MORE_CONFIGS
    tw_extra = {}
    if "--tma-store" in argv:
        argv.remove("--tma-store")
        tw_extra = {"tma_store": True}
    if "--dtype" in argv:
        i = argv.index("--dtype")
        dt_name = argv[i + 1]
        del argv[i:i + 2]
    if "--shapes" in argv:
        i = argv.index("--shapes")
        shapes = [tuple(int(x) for x in s.split("x")) for s in argv[i + 1:]]
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[dt_name]
    mods = {}
    for which in ("tilework", "triton"):
        try:
            mods[which] = load_source(SRC, which, "ws_matmul")
        except ImportError as e:
            print(f"({which} unavailable: {e})")
    cols = [("tilework", "tile", False), ("tilework", "tile", True),
            ("tilework", "persistent", False), ("tilework", "persistent", True),
            ("triton", "tile", True), ("triton", "persistent", True)]
    names = ["tw", "tw ws", "tw pers", "tw pers ws", "triton ws", "triton pers ws"]
    print(f"{torch.cuda.get_device_name()}  {dt_name} descriptor GEMM"
          f"{' (tilework: tma_store)' if tw_extra else ''}, TFLOP/s (best of "
          f"{', '.join(f'{c[0]}x{c[1]}x{c[2]}/w{c[3]}/s{c[4]}' for c in configs)})")
    print(f"{'M x N x K':>18} {'cuBLAS':>8} " + " ".join(f"{n:>14}" for n in names))
    for M, N, K in shapes:
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda").to(dt)
        b = torch.randn(K, N, device="cuda").to(dt)
        ref = (a @ b).float()
        flop = 2 * M * N * K
        row = [f"{flop / bench(lambda: torch.matmul(a, b)) / 1e9:8.1f}"]
        tol = 0.5 if dt == torch.float16 else 2.0
        for which, form, ws in cols:
            if which not in mods:
                row.append(f"{'-':>14}")
                continue
            tf, ok = run_cell(mods[which], which, form, ws, a, b, ref, flop, tol, configs,
                              tw_extra if which == "tilework" else {})
            row.append(f"{tf:13.1f}{' ' if ok else '!'}" if tf is not None else f"{'fail':>14}")
            if tf is None:
                print(f"  ({which} {form} ws={ws}: {ok})")
        print(f"{f'{M}x{N}x{K}':>18} " + " ".join(row))


if __name__ == "__main__":
    main()
