"""FlashAttention: torch SDPA, Triton and tilework in one run, on one GPU.

Triton runs the same kernel source as tilework: examples/attention.py with its two import lines
swapped (`import triton as tilework`, `import triton.language as tl`), so its autotune configs,
pruning and host code are the same and the comparison is of the compilers.  Every side is
checked against SDPA first (max abs error of o, and of dq/dk/dv for forward+backward); then
TFLOP/s (tilework.testing.do_bench: median, L2 flushed).  FLOPs: forward 4·Z·H·N²·D (half when
causal); forward+backward 3.5× that (the backward's five N²·D products against the forward's
two).  Batch 4, 32 heads, fp16 by default; N 1024..16384, D 64 and 128, causal and not.

    python benchmarks/attention.py [--mode fwd|fwdbwd|both] [--n 1024,2048,...] [--d 64,128]
                                   [--dtype fp16|bf16|fp8] [--batch 4] [--heads 32] [--json PATH]
                                   [--sides sdpa,triton,tilework,tilework-ptr,triton-tma,...]

The `-tma` sides run examples/attention_tma.py (the forward through tensor descriptors, as
Triton's tutorial writes it for Hopper; forward only) under Triton and tilework alike; their
ratio columns compare tilework-tma with triton-tma and SDPA.  `tilework-tma` and
`triton-tma` pass warp_specialize=False and `tilework-tma-ws` True (the key loop under
`tl.range(..., warp_specialize=True)`); the file's default, "auto", lets the autotuner choose
at D >= 128.

`--dtype fp8` (forward only): q, k, v in float8_e5m2 (as Triton's tutorial), V laid out
transposed beforehand as the tutorial does (`v.transpose(2, 3).contiguous().transpose(2, 3)`),
o fp16; SDPA, which takes no fp8, runs on the fp16 values of the same inputs (its figure is
fp16's) and is the error reference.

On an NVIDIA sm_90 GPU the `tilework` side's forward is the TMA kernel: examples/attention.py's
`attention_forward` routes there (`tma_forward_applies`; its key loop warp-specialized where
the autotuner finds it faster), while the `triton` side runs the pointer forward (the swapped source keeps it under
Triton).  So `tilework/triton` compares kernels as well as compilers; the `tilework-ptr` side
(`tma=False`, the pointer forward under tilework) and `tilework-ptr/triton` compare the same
source.  The configs column names the forward each tilework side ran (`tma:` or `ptr:`).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
sys.path.insert(0, EXAMPLES)

IMPORTS = "import tilework\nimport tilework.language as tl\n"
TRITON_IMPORTS = "import triton as tilework\nimport triton.language as tl\n"
DESC_IMPORT = "from tilework.tools.tensor_descriptor import"
TRITON_DESC_IMPORT = "from triton.tools.tensor_descriptor import"


def triton_attention(example="attention.py"):
    """examples/<example> under Triton: the same text with the imports swapped."""
    with open(os.path.join(EXAMPLES, example)) as f:
        src = f.read()
    if IMPORTS not in src:
        raise RuntimeError(f"examples/{example} no longer starts its code with the two "
                           "tilework imports this benchmark swaps")
    src = src.replace(IMPORTS, TRITON_IMPORTS, 1).replace(DESC_IMPORT, TRITON_DESC_IMPORT)
    name = "triton_" + example[:-3]
    path = os.path.join(tempfile.mkdtemp(prefix="tw-attn-bench-"), name + ".py")
    with open(path, "w") as f:  # Triton's jit reads the kernels' source from their file
        f.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sdpa_side(torch):
    import torch.nn.functional as F

    def fwd(q, k, v, causal, scale):
        g = q.shape[1] // k.shape[1]
        gqa = {"enable_gqa": True} if g > 1 else {}
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale,
                                              **gqa), None

    def fwdbwd(q, k, v, do, causal, scale):
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        o, _ = fwd(q, k, v, causal, scale)
        dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)
        return o, dq, dk, dv
    return fwd, fwdbwd


def chosen_config(mod, ws="auto") -> str | None:
    """The forward config the side's autotuner chose last (tilework's and Triton's `Autotuner`
    both keep it as `best_config`), as BMxBN/warps/stages (+"ws": warp-specialized);
    attention_tma's tuner for its `warp_specialize` argument `ws`."""
    tuners = getattr(mod, "TUNERS", None)
    tuner = getattr(mod, "attn_fwd", None) or (tuners[ws] if tuners else None) or \
        getattr(mod, "attn_fwd_tma", None)
    c = getattr(tuner, "best_config", None)
    if c is None:
        return None
    kw = getattr(c, "kwargs", {})
    return f"{kw.get('BLOCK_M')}x{kw.get('BLOCK_N')}w{c.num_warps}s{c.num_stages}" + \
        ("ws" if kw.get("WARP_SPECIALIZE") else "")


def forward_ran(side, mod, q, k, v) -> str | None:
    """The forward a side ran and its chosen config: "tma:BMxBN..." when examples/attention.py
    routed to attention_tma.py (`forward_kernel`), else "ptr:..." (the `-tma` sides: the
    config alone)."""
    kind = getattr(mod, "forward_kernel", None)
    if kind is None:
        return chosen_config(mod, {"tilework-tma": False, "tilework-tma-ws": True,
                                    "triton-tma": False}.get(side, "auto"))
    if kind(q, k, v, tma=False if side == "tilework-ptr" else None) == "tma":
        import attention_tma
        return f"tma:{chosen_config(attention_tma)}"
    return f"ptr:{chosen_config(mod)}"


def kernel_side(mod, **fwd_options):
    def fwd(q, k, v, causal, scale):
        return mod.attention_forward(q, k, v, causal, scale, **fwd_options)

    def fwdbwd(q, k, v, do, causal, scale):
        o, lse = mod.attention_forward(q, k, v, causal, scale, **fwd_options)
        dq, dk, dv = mod.attention_backward(q, k, v, o, do, lse, causal, scale)
        return o, dq, dk, dv
    return fwd, fwdbwd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="both", choices=["fwd", "fwdbwd", "both"])
    ap.add_argument("--n", default="1024,2048,4096,8192,16384")
    ap.add_argument("--d", default="64,128")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "bf16", "fp8"])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--causal", default="0,1", help="0, 1 or both (0,1)")
    ap.add_argument("--sides", default="sdpa,triton,tilework")
    ap.add_argument("--json", default=None, help="write the figures to this path")
    args = ap.parse_args()

    import torch
    from tilework.testing import do_bench
    dev = torch.cuda.get_device_name()
    fp8 = args.dtype == "fp8"
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8": torch.float16}[args.dtype]
    sides, mods = {}, {}
    for s in args.sides.split(","):
        try:
            if s == "sdpa":
                sides[s] = sdpa_side(torch)
            elif s == "triton":
                mods[s] = triton_attention()
                sides[s] = kernel_side(mods[s])
            elif s in ("tilework", "tilework-ptr"):
                import attention
                mods[s] = attention
                sides[s] = kernel_side(attention, **({"tma": False} if s == "tilework-ptr"
                                                     else {}))
            elif s == "triton-tma":
                mods[s] = triton_attention("attention_tma.py")
                # (Triton 3.6's NVGPUWarpSpecialization aborts on this key loop at D=128: its
                # configs without warp specialization, as tilework-tma's)
                sides[s] = kernel_side(mods[s], warp_specialize=False)
            elif s in ("tilework-tma", "tilework-tma-ws"):
                import attention_tma
                mods[s] = attention_tma
                sides[s] = kernel_side(attention_tma, warp_specialize=s.endswith("-ws"))
            else:
                raise ValueError(f"unknown side {s!r}")
        except ImportError as e:
            print(f"# {s} skipped: {e}")
    modes = ["fwd", "fwdbwd"] if args.mode == "both" else [args.mode]
    if fp8:
        modes = ["fwd"]
        fp16_sdpa = sides.get("sdpa")
        as_fp16 = {}  # (SDPA takes no fp8: the same values in fp16, converted once a shape)
        if fp16_sdpa:
            sides["sdpa"] = (lambda q, k, v, c, s: fp16_sdpa[0](*as_fp16["qkv"], c, s), None)
    Z, H = args.batch, args.heads
    rows = []
    print(f"# {dev}  {args.dtype}  batch {Z}  heads {H}  (TFLOP/s; err: max |x - SDPA|)")
    names = list(sides)
    pairs = [("tilework", "triton"), ("tilework-ptr", "triton"), ("tilework", "sdpa"),
             ("tilework-tma", "triton-tma"), ("tilework-tma", "sdpa"),
             ("tilework-tma-ws", "triton-tma")]
    pairs = [p for p in pairs if p[0] in names and p[1] in names]
    print(f"{'pass':7} {'N':>6} {'D':>4} {'causal':>6} " +
          " ".join(f"{n:>16}" for n in names) + "  " +
          " ".join(f"{a + '/' + b:>16}" for a, b in pairs) +
          "  fwd configs chosen (BMxBN w warps s stages)")
    for mode in modes:
        for D in (int(x) for x in args.d.split(",")):
            for N in (int(x) for x in args.n.split(",")):
                for causal in (bool(int(c)) for c in args.causal.split(",")):
                    torch.manual_seed(0)
                    q, k, v, do = (torch.randn(Z, H, N, D, device="cuda", dtype=dtype) * 0.5
                                   for _ in range(4))
                    if fp8:
                        q, k, v = (t.to(torch.float8_e5m2) for t in (q, k, v))
                        v = v.transpose(2, 3).contiguous().transpose(2, 3)
                        as_fp16["qkv"] = tuple(t.half().contiguous() for t in (q, k, v))
                    scale = 1 / math.sqrt(D)
                    flop = 4 * Z * H * N * N * D * (0.5 if causal else 1.0)
                    if mode == "fwdbwd":
                        flop *= 3.5
                    ref = None
                    row = {"mode": mode, "N": N, "D": D, "causal": causal,
                           "dtype": args.dtype, "batch": Z, "heads": H, "device": dev}
                    cells = []
                    for name, (fwd, fwdbwd) in sides.items():
                        try:
                            if mode == "fwd":
                                out = (fwd(q, k, v, causal, scale)[0],)

                                def fn():
                                    fwd(q, k, v, causal, scale)
                            else:
                                out = fwdbwd(q, k, v, do, causal, scale)

                                def fn():
                                    fwdbwd(q, k, v, do, causal, scale)
                            if ref is None:
                                ref = out
                            err = max((a.float() - b.float()).abs().max().item()
                                      for a, b in zip(out, ref))
                            ms = do_bench(fn)
                            tf = flop / ms / 1e9
                            row[name] = {"ms": ms, "tflops": tf, "max_err": err}
                            if name in mods:  # the forward config its autotuner chose
                                row[name]["fwd_config"] = forward_ran(
                                    name, mods[name], q, k, v)
                            cells.append(f"{tf:7.1f} ({err:.0e})")
                        except Exception as e:  # report and go on
                            row[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
                            cells.append(f"{'failed':>16}")
                        torch.cuda.empty_cache()
                    ratio = []
                    for mine, other in pairs:
                        a, b = row.get(mine, {}), row.get(other, {})
                        ok = "tflops" in a and "tflops" in b
                        ratio.append(f"{a['tflops'] / b['tflops']:.2f}" if ok else "-")
                    print(f"{mode:7} {N:6d} {D:4d} {str(causal):>6} " +
                          " ".join(f"{c:>16}" for c in cells) + "  " +
                          " ".join(f"{r:>16}" for r in ratio) + "  " +
                          " ".join(f"{n}:{row[n].get('fwd_config')}" for n in mods
                                   if row.get(n, {}).get("fwd_config")), flush=True)
                    rows.append(row)
    for row in rows:
        for name in names:
            if "error" in row.get(name, {}):
                print(f"# {row['mode']} N={row['N']} D={row['D']} causal={row['causal']} "
                      f"{name}: {row[name]['error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev, "dtype": args.dtype, "batch": Z, "heads": H,
                       "rows": rows}, f, indent=1)
        print(f"# wrote {args.json}")


if __name__ == "__main__":
    main()
