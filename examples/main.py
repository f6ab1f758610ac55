"""The main job: every example kernel compiled ahead of time for NVIDIA (sm_90a) and AMD
(gfx942) with every stage's IR dumped, then run and checked: on the GPU when there is one,
else in the CPU interpreter.

    python examples/main.py [-o out]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tilework.language as tl  # noqa: E402
from tilework import CompileOptions  # noqa: E402
from tilework.compiler.driver import ASTSource, compile, dump_kernel  # noqa: E402
from tilework.runtime.device import gpu_available  # noqa: E402

import fp8_matmul  # noqa: E402
import fused_epilogue  # noqa: E402
import layernorm  # noqa: E402
import linear_activation  # noqa: E402
import matmul  # noqa: E402
import softmax  # noqa: E402
import vector_add  # noqa: E402

TARGETS = ("sm_90a", "gfx942")

_ROWS = {"stride": "i32", "n_rows": "i32", "n_cols": "i32"}
_MM = {k: "i32" for k in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
                          "stride_cm", "stride_cn")}
_TILE = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}
# (module, kernel, signature, constexprs): what the main job compiles ahead of time
AOT = [
    (vector_add, "add_kernel",
     {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32"},
     {"BLOCK_SIZE": 1024}),
    (softmax, "softmax_kernel",
     {"out_ptr": "*fp16", "in_ptr": "*fp16", "in_stride": "i32", "out_stride": "i32",
      "n_rows": "i32", "n_cols": "i32"}, {"BLOCK_N": 1024, "ROWS": 4}),
    (softmax, "softmax_prefetch_kernel",
     {"out_ptr": "*fp16", "in_ptr": "*fp16", "in_stride": "i32", "out_stride": "i32",
      "n_rows": "i32", "n_cols": "i32"}, {"BLOCK_N": 32768}),
    (softmax, "softmax_online_kernel",
     {"out_ptr": "*fp16", "in_ptr": "*fp16", "in_stride": "i32", "out_stride": "i32",
      "n_cols": "i32"}, {"BLOCK_N": 4096}),
    (layernorm, "layernorm_fwd",
     {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp16", "b_ptr": "*fp16",
      "mean_ptr": "*fp32", "rstd_ptr": "*fp32", **_ROWS, "eps": "fp32"},
     {"BLOCK_N": 4096, "ROWS": 1, "RMS": False}),
    (layernorm, "layernorm_bwd",
     {"dy_ptr": "*fp16", "x_ptr": "*fp16", "w_ptr": "*fp16", "mean_ptr": "*fp32",
      "rstd_ptr": "*fp32", "dx_ptr": "*fp16", "dw_part_ptr": "*fp32", "db_part_ptr": "*fp32",
      **_ROWS, "rows_per_prog": "i32"}, {"BLOCK_N": 4096, "ROWS": 1, "RMS": False}),
    (fused_epilogue, "bias_gelu_rowsum",
     {"x_ptr": "*fp16", "bias_ptr": "*fp16", "y_ptr": "*fp16", "sum_ptr": "*fp32", **_ROWS},
     {"BLOCK_N": 4096, "ROWS": 1}),
    # the autotuned GEMMs at one of their configs (128x128x32, 4 warps)
    (matmul, "matmul_kernel", {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **_MM},
     {**_TILE, "EVEN_K": False}),
    (linear_activation, "linear_kernel",
     {"x_ptr": "*fp16", "w_ptr": "*fp16", "bias_ptr": "*fp16", "y_ptr": "*fp16",
      **{k: "i32" for k in ("M", "N", "K", "stride_xm", "stride_xk", "stride_wk", "stride_wn",
                            "stride_ym", "stride_yn")}},
     {**_TILE, "HAS_BIAS": True, "ACTIVATION": "gelu"}),
    (fp8_matmul, "fp8_matmul_kernel",
     {"a_ptr": "*u8", "b_ptr": "*u8", "c_ptr": "*bf16", "scale_a_ptr": "*fp32",
      "scale_b_ptr": "*fp32", **_MM}, _TILE),
]


# warps where a kernel's launcher (examples/*.py) uses other than 4
WARPS = {"softmax_prefetch_kernel": 16, "softmax_online_kernel": 8, "layernorm_fwd": 8,
         "layernorm_bwd": 8}


def compile_all(out_dir):
    rows = []
    for mod, name, sig, constexprs in AOT:
        fn = getattr(mod, name)
        fn = getattr(fn, "base_fn", fn)  # an @autotune kernel: its @jit function
        signature = {k: tl.str_to_ty(v) for k, v in sig.items()}
        attrs = {k: {"tile.divisibility": 16} for k in sig}
        for target in TARGETS:
            t = time.perf_counter()
            try:
                ck = compile(ASTSource(fn, signature, constexprs, attrs), target,
                             CompileOptions(num_warps=WARPS.get(name, 4)), cache=False)
            except RuntimeError as e:  # e.g. no ld.lld for the AMD code object here
                rows.append((f"{name} -> {target}", f"not compiled: {e}"))
                continue
            dt = time.perf_counter() - t
            paths = dump_kernel(ck, os.path.join(out_dir, target))
            rows.append((f"{name} -> {target}", f"{len(paths)} stages in {dt * 1e3:.0f} ms"))
    return rows


def run_gpu():
    import torch
    rows = []
    name = torch.cuda.get_device_name()
    x = torch.randn(1823, 781, device="cuda", dtype=torch.float16)
    ok = torch.allclose(softmax.softmax(x).float(), torch.softmax(x.float(), -1), atol=2e-3)
    rows.append((f"softmax fp16 1823x781 on {name}", "ok" if ok else "MISMATCH"))
    w = torch.randn(781, device="cuda", dtype=torch.float16)
    b = torch.randn(781, device="cuda", dtype=torch.float16)
    y, _, _ = layernorm.layer_norm(x, w, b)
    ref = torch.nn.functional.layer_norm(x.float(), (781,), w.float(), b.float())
    ok = torch.allclose(y.float(), ref, atol=2e-2, rtol=1e-2)
    rows.append((f"layernorm fp16 1823x781 on {name}", "ok" if ok else "MISMATCH"))
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        n = 98_432 + 7
        x, y = torch.randn(n, device="cuda", dtype=dt), torch.randn(n, device="cuda", dtype=dt)
        out = torch.full_like(x, float("nan"))
        vector_add.add_kernel[((n + 1023) // 1024,)](x, y, out, n, BLOCK_SIZE=1024)
        torch.cuda.synchronize()
        ok = torch.equal(out, x + y)
        rows.append((f"vector add {dt} n={n} on {torch.cuda.get_device_name()}",
                     "ok" if ok else "MISMATCH"))
    for dt in (torch.float16, torch.bfloat16):
        a = torch.randn(1000, 777, device="cuda", dtype=dt)
        b = torch.randn(777, 1200, device="cuda", dtype=dt)
        c = matmul.matmul(a, b)
        ok = torch.allclose(c.float(), a.float() @ b.float(), atol=0.1, rtol=2e-2)
        rows.append((f"matmul {dt} 1000x1200x777 on {name} ({matmul.matmul_kernel.best_config})",
                     "ok" if ok else "MISMATCH"))
    bias = torch.randn(1200, device="cuda", dtype=torch.float16)
    a, b = a.half(), b.half()
    y = linear_activation.linear(a, b, bias, "silu")
    ok = torch.allclose(y.float(), torch.nn.functional.silu(a.float() @ b.float() + bias.float()),
                        atol=0.1, rtol=2e-2)
    rows.append((f"linear + bias + SiLU fp16 1000x1200x777 on {name}", "ok" if ok else "MISMATCH"))
    if hasattr(torch, "float8_e4m3fn"):
        a8 = (torch.randn(512, 384, device="cuda") * 4).to(torch.float8_e4m3fn)
        b8 = torch.randn(384, 640, device="cuda").to(torch.float8_e4m3fn)
        sa = torch.tensor([0.5], device="cuda")
        sb = torch.tensor([3.0], device="cuda")
        c = fp8_matmul.fp8_matmul(a8, b8, sa, sb, out_dtype=torch.float32)
        ref = (a8.float() @ b8.float()) * 1.5
        # Hopper's fp8 tensor cores accumulate with fewer bits than fp32 (Triton's default too)
        mag = (a8.float().abs() @ b8.float().abs()) * 1.5
        ok = bool(((c - ref).abs() <= mag * 2.0**-9 + 1e-6).all())
        rows.append((f"fp8 e4m3 matmul with scales 512x640x384 on {name}",
                     "ok" if ok else "MISMATCH"))
    return rows


def run_interpreter():
    rows = []
    fn = vector_add.add_kernel
    fn.interpret = True
    rng = np.random.default_rng()
    for dt in (np.float32, np.float16):
        n = 9_843 + 7
        x, y = rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)
        out = np.full(n, np.nan, dtype=dt)
        fn[((n + 1023) // 1024,)](x, y, out, n, BLOCK_SIZE=1024)
        ok = np.array_equal(out, x + y)
        rows.append((f"vector add {np.dtype(dt).name} n={n} in the interpreter",
                     "ok" if ok else "MISMATCH"))
    k = softmax.softmax_kernel
    k.interpret = True
    x = rng.standard_normal((37, 200)).astype(np.float32)
    out = np.full_like(x, np.nan)
    k[(10,)](out, x, 200, 200, 37, 200, BLOCK_N=256, ROWS=4)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    rows.append(("softmax fp32 37x200 in the interpreter",
                 "ok" if np.allclose(out, ref, atol=1e-6) else "MISMATCH"))
    k = softmax.softmax_prefetch_kernel  # 3 programs walking 37 rows, next row loaded first
    k.interpret = True
    out = np.full_like(x, np.nan)
    k[(3,)](out, x, 200, 200, 37, 200, BLOCK_N=256)
    rows.append(("softmax (prefetching programs) fp32 37x200 in the interpreter",
                 "ok" if np.allclose(out, ref, atol=1e-6) else "MISMATCH"))
    m, n, kk = 100, 130, 70  # tails everywhere; the autotuner takes the first config
    a = rng.standard_normal((m, kk)).astype(np.float16)
    b = rng.standard_normal((kk, n)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for mod, kernel in ((matmul, "matmul_kernel"), (linear_activation, "linear_kernel")):
        k = getattr(mod, kernel)
        k.base_fn.interpret = True
        c = np.full((m, n), np.nan, np.float32)
        extra = {"HAS_BIAS": False, "ACTIVATION": "none"} if mod is linear_activation else {}
        args = (None,) if mod is linear_activation else ()
        k[matmul.grid](a, b, *args, c, m, n, kk, kk, 1, n, 1, n, 1, **extra)
        rows.append((f"{kernel} fp16 {m}x{n}x{kk} in the interpreter",
                     "ok" if np.allclose(c, ref, rtol=1e-4, atol=1e-4) else "MISMATCH"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--out", default="out/ir", help="where the IR of every stage goes")
    args = ap.parse_args(argv)
    rows = compile_all(args.out)
    rows += run_gpu() if gpu_available() else run_interpreter()
    print(f"IR of every stage: {os.path.abspath(args.out)}/<target>/<kernel>.<stage>")
    width = max(len(r[0]) for r in rows)
    for k, v in rows:
        print(f"{k:{width}s}  {v}")
    return 1 if any(v == "MISMATCH" for _, v in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
