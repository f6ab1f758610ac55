"""Branches, registers and instruction counts of a few kernels' PTX (and SASS, where a
cuobjdump is found) for sm_90a, compiled with no GPU: the figures of docs/performance.md's
masked-access notes.

    python benchmarks/tools/ptx_stats.py [--triton] [--dump DIR]

--triton adds Triton's PTX of the tutorial-style kernels (Triton
importable, e.g. PYTHONPATH=/tmp/tsite); --dump writes each kernel's PTX there.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

LN_BWD_SIG = {"DX": "*fp16", "DY": "*fp16", "PDW": "*fp32", "PDB": "*fp32", "X": "*fp16",
              "W": "*fp16", "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32",
              "N": "i32"}
LN_FWD_SIG = {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean": "*fp32",
              "Rstd": "*fp32", "stride": "i32", "N": "i32", "eps": "fp32"}
GG_SIG = {"a_ptrs": "*i64", "b_ptrs": "*i64", "c_ptrs": "*i64", "sizes": "*i32", "lds": "*i32",
          "group_count": "i32"}
MM = {k: "i32" for k in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
                         "stride_cm", "stride_cn")}


def tutorial_cases():
    """(label, kernel name in tutorial_style.SRC, signature, constexprs, num_warps)."""
    return [
        ("ln_bwd_dx N=8192", "ln_bwd_dx", LN_BWD_SIG,
         {"GROUP_SIZE_M": 96, "BLOCK_SIZE_N": 8192}, 8),
        ("ln_bwd_dx N=1024", "ln_bwd_dx", LN_BWD_SIG,
         {"GROUP_SIZE_M": 256, "BLOCK_SIZE_N": 1024}, 4),
        ("ln_fwd (tutorial) N=8192", "ln_fwd", LN_FWD_SIG, {"BLOCK_SIZE": 8192}, 8),
        ("grouped_gemm (epilogue)", "grouped_matmul", GG_SIG,
         {"NUM_SM": 132, "BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64}, 8),
    ]


def example_cases():
    """(label, module, kernel, signature, constexprs, num_warps) of examples/."""
    return [
        ("vector_add", "vector_add", "add_kernel",
         {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32"},
         {"BLOCK_SIZE": 1024}, 4),
        ("softmax_prefetch 32768", "softmax", "softmax_prefetch_kernel",
         {"out_ptr": "*fp16", "in_ptr": "*fp16", "in_stride": "i32", "out_stride": "i32",
          "n_rows": "i32", "n_cols": "i32"}, {"BLOCK_N": 32768}, 16),
        ("layernorm_fwd 4096", "layernorm", "layernorm_fwd",
         {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp16", "b_ptr": "*fp16",
          "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "stride": "i32", "n_rows": "i32",
          "n_cols": "i32", "eps": "fp32"}, {"BLOCK_N": 4096, "ROWS": 1, "RMS": False}, 8),
        ("matmul 128x128x32 w8 (masked)", "matmul", "matmul_kernel",
         {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **MM},
         {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "EVEN_K": False}, 8),
    ]


_INSTR = re.compile(r"^\s+(@!?%p\d+\s+)?[a-z][a-z0-9_.:]*[\s;]", re.M)


def ptx_figures(ptx):
    """Branches, predicated global accesses and instructions of a PTX text."""
    body = "\n".join(ln for ln in ptx.splitlines()
                     if not ln.lstrip().startswith((".", "//", "$", "{", "}")))
    return {"bra": len(re.findall(r"\bbra(\.uni)?\s", ptx)),
            "pred_mem": len(re.findall(r"@!?%p\d+\s+(ld|st)\.global", ptx)),
            "ptx_instr": len(_INSTR.findall(body))}


def cuobjdump():
    for c in (shutil.which("cuobjdump"), "/tmp/tsite/triton/backends/nvidia/bin/cuobjdump"):
        if c and os.path.exists(c):
            return c
    return None


def sass_figures(cubin):
    tool = cuobjdump()
    if tool is None or not cubin:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True).stdout
    ins = [ln.split(";")[0] for ln in out.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)]
    return {"sass": len(ins), "sass_bra": sum(" BRA " in i for i in ins)}


def ptxas_figures(ptx):
    from tilework.backends.nvidia.compiler import find_ptxas
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run([find_ptxas(), "-arch=sm_90a", "-v", p, "-o", p + ".cubin"],
                           capture_output=True, text=True, check=True)
        with open(p + ".cubin", "rb") as f:
            cubin = f.read()
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    return {"regs": int(regs.group(1)), "spill": int(spill.group(1)) if spill else 0,
            **sass_figures(cubin)}


def tilework_ptx():
    """(label, PTX) of every case, compiled by tilework for sm_90a (no cache)."""
    import importlib

    import tilework
    import tilework.language as tl
    import tutorial_style as ts
    from tilework import CompileOptions
    from tilework.compiler.driver import ASTSource, compile
    mod = ts.build("tilework")
    out = []
    for label, name, sig, cx, warps in tutorial_cases():
        fn = getattr(mod, name)
        signature = {k: v + (":16" if v != "fp32" else "") for k, v in sig.items()}
        ck = tilework.compile(fn, target="sm_90a", signature=signature, constexprs=cx,
                              num_warps=warps, cache=False)
        out.append((label, ck.asm["ptx"]))
    for label, modname, name, sig, cx, warps in example_cases():
        fn = getattr(importlib.import_module(modname), name)
        fn = getattr(fn, "base_fn", fn)
        signature = {k: tl.str_to_ty(v) for k, v in sig.items()}
        attrs = {k: {"tile.divisibility": 16} for k in sig if sig[k] != "fp32"}
        ck = compile(ASTSource(fn, signature, cx, attrs), "sm_90a",
                     CompileOptions(num_warps=warps), cache=False)
        out.append((label, ck.asm["ptx"]))
    return out


def triton_ptx():
    """(label, PTX) of the tutorial-style cases compiled by Triton (no GPU needed)."""
    import triton
    from triton.backends.compiler import GPUTarget
    import tutorial_style as ts
    mod = ts.build("triton")
    out = []
    for label, name, sig, cx, warps in tutorial_cases():
        fn = getattr(mod, name)
        s = dict(sig)
        s.update({k: "constexpr" for k in cx})
        attrs = {(i,): [["tt.divisibility", 16]] for i, v in enumerate(sig.values())
                 if v != "fp32"}
        k = triton.compile(triton.compiler.ASTSource(fn, s, cx, attrs),
                           target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
        out.append(("triton " + label, k.asm["ptx"]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--triton", action="store_true")
    ap.add_argument("--dump")
    a = ap.parse_args()
    rows = tilework_ptx() + (triton_ptx() if a.triton else [])
    cols = ("bra", "pred_mem", "ptx_instr", "regs", "spill", "sass", "sass_bra")
    print(f"{'kernel':36s}" + "".join(f"{c:>10s}" for c in cols))
    for label, ptx in rows:
        if a.dump:
            os.makedirs(a.dump, exist_ok=True)
            with open(os.path.join(a.dump, re.sub(r"\W+", "_", label) + ".ptx"), "w") as f:
                f.write(ptx)
        fig = {**ptx_figures(ptx), **ptxas_figures(ptx)}
        print(f"{label:36s}" + "".join(f"{fig.get(c, '-')!s:>10s}" for c in cols))


if __name__ == "__main__":
    main()
