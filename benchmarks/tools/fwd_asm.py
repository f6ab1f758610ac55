"""Dumps PTX and SASS of the attention forward (examples/attention.py's attn_fwd_kernel, or
with `--kernel tma` examples/attention_tma.py's descriptor form), compiled for sm_90a by
tilework and by Triton from the same source, with no GPU: the figures of
docs/performance.md's "fwd analysis".

    PYTHONPATH=/tmp/tsite python benchmarks/tools/fwd_asm.py OUTDIR [--d 64,128]
        [--configs 128x64w8s3,128x128w8s2] [--causal 0,1] [--sides tilework,triton]
        [--kernel ptr|tma] [--ws] [--on overlap-dots] [--off NAME] [--dtype fp16|e4m3|e5m2]

Writes OUTDIR/<side>_d<D>_<cfg>_c<causal>.{ptx,sass} and prints per file: counts of PTX
instruction kinds (wgmma, wait_group, bar.sync, ex2, shfl, cvt, shared accesses, cp.async, ...),
registers, spills, SASS instructions, and in the key loops' SASS bodies: instructions,
MEMBAR.ALL.CTA (fence.proxy.async), BAR.SYNC, WARPGROUP.DEPBAR (wgmma waits), HGMMA,
SYNCS.PHASECHK (mbarrier waits), MUFU.EX2, FFMA, SHFL, PRMT and F2FP (fp8 conversions).  The
TMA kernel is compiled with
`CompileOptions.from_env` (so `--on overlap-dots`, which sets TILEWORK_OVERLAP_DOTS, applies);
`--ws` sets its WARP_SPECIALIZE (Triton 3.6 ignores it on Hopper).  `--dtype e4m3|e5m2` (TMA
kernel only): q, k, v in that fp8 type, V read transposed (V_T), o fp16, as the benchmark's fp8.
"""
import argparse
import functools
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

STRIDES = ["stride_qz", "stride_qh", "stride_qn", "stride_kz", "stride_kh", "stride_kn",
           "stride_vz", "stride_vh", "stride_vn", "stride_oz", "stride_oh", "stride_on"]
PARAMS = ["Q", "K", "V", "O", "LSE", "sm_scale"] + STRIDES + ["H", "GROUP", "N_CTX"]


def signature():
    sig = {n: "*fp16" for n in ("Q", "K", "V", "O")}
    sig.update(LSE="*fp32", sm_scale="fp32")
    sig.update({n: "i32" for n in STRIDES + ["H", "GROUP", "N_CTX"]})
    return sig


def divisible():  # every pointer, stride and N_CTX divisible by 16 (as the benchmark's shapes)
    return [n for n in PARAMS if n not in ("sm_scale", "H", "GROUP")]


def parse_cfg(s):
    m = re.fullmatch(r"(\d+)x(\d+)w(\d+)s(\d+)", s)
    return {"BLOCK_M": int(m[1]), "BLOCK_N": int(m[2])}, int(m[3]), int(m[4])


def tilework_kernel(d, causal, cfg):
    import tilework
    import attention as A
    kw, warps, stages = parse_cfg(cfg)
    sig = {k: v + (":16" if k in divisible() else "") for k, v in signature().items()}
    ck = tilework.compile(A.attn_fwd_kernel, target="sm_90a", signature=sig,
                          constexprs=dict(HEAD_DIM=d, CAUSAL=bool(causal), EVEN_N=True, **kw),
                          num_warps=warps, num_stages=stages, cache=False)
    return ck.asm["ptx"], ck.asm.get("cubin")


def _tma_setup(d, causal, cfg, ws, tl, td, fp8=False):
    """(signature, constexprs, names divisible by 16) of attn_fwd_tma_kernel (even N); `td(shape,
    fp8)` a descriptor type (fp8: q, k, v in fp8, V transposed, o fp16)."""
    kw, warps, stages = parse_cfg(cfg)
    bm, bn = kw["BLOCK_M"], kw["BLOCK_N"]
    sig = {"sm_scale": tl[0], "LSE": tl[1], "O": tl[2], "desc_q": td([bm, d], fp8),
           "desc_k": td([bn, d], fp8), "desc_v": td([d, bn] if fp8 else [bn, d], fp8),
           "desc_o": td([bm, d], False), "H": tl[3], "GROUP": tl[3], "N_CTX": tl[3]}
    cx = dict(HEAD_DIM=d, CAUSAL=bool(causal), EVEN_N=True, WARP_SPECIALIZE=bool(ws), **kw)
    if fp8:
        cx["V_T"] = True
    return sig, cx, ("LSE", "O", "N_CTX"), warps, stages


def tilework_tma_kernel(d, causal, cfg, ws=False, dtype="fp16"):
    import tilework.language as tl
    from tilework import CompileOptions
    from tilework.compiler.driver import ASTSource, compile
    from tilework.language.descriptor import tensor_descriptor_type as TD
    import attention_tma as AT
    et = {"fp16": tl.float16, "e4m3": tl.float8e4nv, "e5m2": tl.float8e5}[dtype]
    sig, cx, div, warps, stages = _tma_setup(
        d, causal, cfg, ws, (tl.float32, tl.pointer_type(tl.float32),
                             tl.pointer_type(tl.float16), tl.int32),
        lambda shape, f8: TD(et if f8 else tl.float16, shape), dtype != "fp16")
    ck = compile(ASTSource(AT.attn_fwd_tma_kernel, sig, cx,
                           {n: {"tile.divisibility": 16} for n in div}), "sm_90a",
                 CompileOptions.from_env(num_warps=warps, num_stages=stages), cache=False)
    return ck.asm["ptx"], ck.asm.get("cubin")


def triton_tma_kernel(d, causal, cfg, ws=False, dtype="fp16"):
    import triton
    from triton.backends.compiler import GPUTarget
    mod = _triton_module("attention_tma.py")
    et = {"fp16": "fp16", "e4m3": "fp8e4nv", "e5m2": "fp8e5"}[dtype]
    sig, cx, div, warps, stages = _tma_setup(
        d, causal, cfg, ws, ("fp32", "*fp32", "*fp16", "i32"),
        lambda shape, f8: f"tensordesc<{et if f8 else 'fp16'}[{shape[0]}, {shape[1]}]>",
        dtype != "fp16")
    s = dict(sig)
    s.update({k: "constexpr" for k in cx})
    names = list(mod.attn_fwd_tma_kernel.arg_names)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in div}
    k = triton.compile(triton.compiler.ASTSource(mod.attn_fwd_tma_kernel, s, cx, attrs),
                       target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": warps, "num_stages": stages})
    return k.asm["ptx"], k.asm["cubin"]


def _triton_module(example):
    import shutil
    if "TRITON_PTXAS_PATH" not in os.environ and shutil.which("ptxas"):
        os.environ["TRITON_PTXAS_PATH"] = shutil.which("ptxas")  # (its own may not be +x)
    import importlib.util
    sys.path.insert(0, HERE)
    spec = importlib.util.spec_from_file_location("attention_benchmark",
                                                  os.path.join(HERE, "..", "attention.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.triton_attention(example)


def triton_kernel(d, causal, cfg):
    mod = _triton_module("attention.py")
    import triton
    from triton.backends.compiler import GPUTarget
    kw, warps, stages = parse_cfg(cfg)
    sig = signature()
    cx = dict(HEAD_DIM=d, CAUSAL=bool(causal), EVEN_N=True, **kw)
    s = dict(sig)
    s.update({k: "constexpr" for k in cx})
    attrs = {(PARAMS.index(n),): [["tt.divisibility", 16]] for n in divisible()}
    k = triton.compile(triton.compiler.ASTSource(mod.attn_fwd_kernel, s, cx, attrs),
                       target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": warps, "num_stages": stages})
    return k.asm["ptx"], k.asm["cubin"]


@functools.lru_cache(None)
def cuobjdump():
    """cuobjdump on PATH, else Triton's copy (made executable in a temporary folder when the
    installed one is not: it calls nvdisasm from its own folder)."""
    import shutil
    c = shutil.which("cuobjdump")
    if c:
        return c
    src = "/tmp/tsite/triton/backends/nvidia/bin"
    if os.access(os.path.join(src, "cuobjdump"), os.X_OK):
        return os.path.join(src, "cuobjdump")
    if not os.path.exists(os.path.join(src, "cuobjdump")):
        return None
    d = tempfile.mkdtemp(prefix="fwd_asm_bin_")
    for n in ("cuobjdump", "nvdisasm"):
        shutil.copy(os.path.join(src, n), d)
        os.chmod(os.path.join(d, n), 0o755)
    os.environ["PATH"] = d + os.pathsep + os.environ["PATH"]
    return os.path.join(d, "cuobjdump")


def sass_of(cubin):
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([cuobjdump(), "-sass", f.name], capture_output=True,
                              text=True).stdout


def ptxas_info(ptx):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", p, "-o", p + ".cubin"],
                           capture_output=True, text=True)
        with open(p + ".cubin", "rb") as f:
            return r.stderr, f.read()


KINDS = {"wgmma": r"wgmma\.mma_async", "wait_group": r"wgmma\.wait_group",
         "commit": r"wgmma\.commit_group", "fence": r"wgmma\.fence", "bar.sync": r"bar\.sync",
         "ex2": r"ex2\.approx", "shfl": r"shfl\.sync", "cvt": r"\bcvt\.",
         "ld.shared": r"ld\.shared", "st.shared": r"st\.shared", "cp.async": r"cp\.async\.",
         "ldmatrix": r"ldmatrix", "stmatrix": r"stmatrix", "fma": r"\bfma\.", "mul.f32":
         r"\bmul\.(rn\.)?f32", "max.f32": r"\bmax\.f32", "mbarrier": r"mbarrier\.",
         "prmt": r"\bprmt\."}


def loop_sass(sass):
    """The SASS instructions of the key loops' bodies (from a backward branch's target to it)
    that hold HGMMA (fp8: QGMMA), as lists of opcodes.  A range holding EXIT is not a loop:
    ptxas puts an
    mbarrier wait's retry after the kernel's end, branching back into the loop."""
    ins = []
    for ln in sass.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]{4})\*/\s+(.*?);", ln)
        if m:
            ins.append((int(m[1], 16), m[2].strip()))
    loops = []
    for addr, text in ins:
        b = re.search(r"BRA (0x[0-9a-f]+)", text)
        if b and int(b[1], 16) < addr:
            body = [t for a, t in ins if int(b[1], 16) <= a <= addr]
            if any("GMMA" in t for t in body) and not any(t.startswith("EXIT") for t in body):
                loops.append([re.sub(r"^@!?U?P\w+\s+", "", t).split()[0] for t in body])
    return loops


def figures(ptx, info, sass):
    f = {k: len(re.findall(v, ptx)) for k, v in KINDS.items()}
    loops = loop_sass(sass)
    f["loop_sass"] = sum(len(b) for b in loops)
    f["loop_membar"] = sum(b.count("MEMBAR.ALL.CTA") for b in loops)
    f["loop_bar"] = sum(b.count("BAR.SYNC.DEFER_BLOCKING") for b in loops)
    f["loop_wgwait"] = sum(b.count("WARPGROUP.DEPBAR.LE") for b in loops)
    f["loop_hgmma"] = sum(1 for b in loops for t in b if t[1:].startswith("GMMA"))
    for key, op in (("loop_syncs", "SYNCS.PHASECHK"),
                    ("loop_ex2", "MUFU.EX2"), ("loop_ffma", "FFMA"), ("loop_shfl", "SHFL"),
                    ("loop_prmt", "PRMT"), ("loop_f2fp", "F2FP")):
        f[key] = sum(1 for b in loops for t in b if t.startswith(op))
    f["regs"] = int(re.search(r"Used (\d+) registers", info).group(1))
    sp = re.search(r"(\d+) bytes spill stores", info)
    f["spill"] = int(sp.group(1)) if sp else 0
    f["sass"] = sum(1 for ln in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln))
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--d", default="64,128")
    ap.add_argument("--configs", default="128x64w8s3,128x128w8s2")
    ap.add_argument("--causal", default="0")
    ap.add_argument("--sides", default="tilework,triton")
    ap.add_argument("--kernel", default="ptr", choices=["ptr", "tma"])
    ap.add_argument("--ws", action="store_true", help="the TMA kernel's WARP_SPECIALIZE")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "e4m3", "e5m2"],
                    help="the TMA kernel's q, k, v (fp8: V transposed, o fp16)")
    ap.add_argument("--off", action="append", default=[],
                    help="a change switched off (ab_attention.py's names)")
    ap.add_argument("--on", action="append", default=[],
                    help="a change off by default switched on (overlap-dots)")
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    import ab_attention
    for name in a.off:
        ab_attention.switch_off(name)
    for name in a.on:
        ab_attention.switch_on(name)
    os.makedirs(a.out, exist_ok=True)
    sides = {"tilework": tilework_kernel, "triton": triton_kernel}
    if a.kernel == "tma":
        sides = {"tilework": lambda d, c, cfg: tilework_tma_kernel(d, c, cfg, a.ws, a.dtype),
                 "triton": lambda d, c, cfg: triton_tma_kernel(d, c, cfg, a.ws, a.dtype)}
    rows = []
    for d in map(int, a.d.split(",")):
        for cfg in a.configs.split(","):
            for c in map(int, a.causal.split(",")):
                for side in a.sides.split(","):
                    ptx, _ = sides[side](d, c, cfg)
                    info, cubin = ptxas_info(ptx)
                    sass = sass_of(cubin)
                    base = os.path.join(a.out, f"{side}_d{d}_{cfg}_c{c}")
                    with open(base + ".ptx", "w") as f:
                        f.write(ptx)
                    with open(base + ".sass", "w") as f:
                        f.write(sass)
                    rows.append((os.path.basename(base), figures(ptx, info, sass)))
    cols = list(rows[0][1])
    print(f"{'kernel':32s}" + "".join(f"{c[:9]:>10s}" for c in cols))
    for label, f in rows:
        print(f"{label:32s}" + "".join(f"{f[c]:>10d}" for c in cols))


if __name__ == "__main__":
    main()
