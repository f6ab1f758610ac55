"""The sm_90a PTX of the kernels a behaviour-preserving compiler change must not alter, as one
SHA-256 per case: the descriptor GEMM (benchmarks/tma_matmul.py, TMA store on, off and its
block-pointer fallback), examples/persistent_matmul.py, examples/matmul.py's configs (skinny
and split-K included) and examples/attention.py's forward and backward, each with
`wgmma_cp_async_fence` on and off, and examples/attention_tma.py's forward (warp-specialized
or not).  No GPU; ptxas is not run (PTX only).

    python benchmarks/tools/ptx_identity.py OUT.json [--only SUBSTRING] [--ptx-dir DIR]
    python benchmarks/tools/ptx_identity.py --compare BEFORE.json AFTER.json

Run it on the tree before the change and after; `--compare` lists the cases that differ and
exits 1 if any does."""
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

TMA_GEMM_CONFIGS = [(128, 128, 64, 4, 3), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3),
                    (128, 128, 64, 4, 4), (64, 128, 64, 4, 4)]


def _tma_matmul_src():
    """benchmarks/tma_matmul.py's kernel source, read without importing that file (torch)."""
    from quick_matmul import GROUPED_PIDS
    text = open(os.path.join(ROOT, "benchmarks", "tma_matmul.py")).read()
    head, body = text.split("SRC = '''", 1)[1].split("''' + GROUPED_PIDS + '''", 1)
    return head + GROUPED_PIDS + body.split("'''", 1)[0]


LOADS_SRC = """
@jit
def copy_at(a_desc, o, n, C0: tl.constexpr):
    r = tl.arange(0, 64)
    v = a_desc.load([tl.program_id(0) * 64, C0])
    tl.store(o + r[:, None] * 64 + r[None, :], v)


@jit
def loop_var(a_desc, o, n):
    r = tl.arange(0, 64)
    acc = tl.zeros((64, 64), tl.float32)
    for k in range(0, n, 64):  # the inner offset a loop's variable (by a constant step)
        acc += a_desc.load([0, k]).to(tl.float32)
    tl.store(o + r[:, None] * 64 + r[None, :], acc.to(tl.float16))


@jit
def loop_mul(a_desc, o, n):
    r = tl.arange(0, 64)
    acc = tl.zeros((64, 64), tl.float32)
    for k in range(n):
        acc += a_desc.load([0, k * 64]).to(tl.float32)
    tl.store(o + r[:, None] * 64 + r[None, :], acc.to(tl.float16))
"""


def cases():
    """name -> a function compiling the case (a CompiledKernel)."""
    import tilework
    import tilework.language as tl
    from tilework import CompileOptions
    from tilework.compiler.driver import ASTSource, compile
    from tilework.language.descriptor import tensor_descriptor_type as TD
    from quick_matmul import load_source

    out = {}

    def ast(fn, sig, consts, attrs, **opts):
        return lambda: compile(ASTSource(fn, sig, consts, attrs), "sm_90a",
                               CompileOptions(**opts), cache=False)

    tma_mm = load_source(_tma_matmul_src(), "tilework", "tma_matmul").matmul_tma
    for dt in (tl.float16, tl.bfloat16):
        for bm, bn, bk, w, s in TMA_GEMM_CONFIGS:
            sig = {"a_desc": TD(dt, [bm, bk]), "b_desc": TD(dt, [bk, bn]),
                   "c_desc": TD(dt, [bm, bn]), "M": tl.int32, "N": tl.int32, "K": tl.int32}
            consts = {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8}
            rows16 = {"c_desc.shape1": {"tile.divisibility": 16}}
            for st, attrs in (("on", rows16), ("off", rows16), ("on-tail", {})):
                out[f"tma_matmul/{dt}/{bm}x{bn}x{bk}w{w}s{s}/store-{st}"] = ast(
                    tma_mm, sig, consts, attrs, num_warps=w, num_stages=s,
                    tma_store=st != "off")

    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    import tma_kernels as K  # the TMA-store tests' kernels: the store taken and refused
    f16 = tl.float16
    for bm, bn, bk, w in ((128, 128, 64, 4), (128, 256, 64, 8), (64, 128, 64, 4)):
        for kern in (K.desc_matmul_store, K.ptr_matmul_desc_store):
            sig = ({"a_desc": TD(f16, [bm, bk]), "b_desc": TD(f16, [bk, bn])}
                   if kern is K.desc_matmul_store else
                   {"a_ptr": tl.pointer_type(f16), "b_ptr": tl.pointer_type(f16)})
            sig.update({"c_desc": TD(f16, [bm, bn]), "M": tl.int32, "N": tl.int32,
                        "K": tl.int32})
            for st, attrs in (("on", {"c_desc.shape1": {"tile.divisibility": 16}}),
                              ("on-tail", {}), ("unguarded", {})):
                out[f"tma_kernels/{kern.__name__}/{bm}x{bn}x{bk}w{w}/store-{st}"] = ast(
                    kern, sig, {"BM": bm, "BN": bn, "BK": bk}, attrs, num_warps=w,
                    num_stages=3, tma_store=True if st != "unguarded" else st)
    ssig = {"x": tl.pointer_type(f16), "o_desc": TD(f16, [64, 64])}
    rows = {"o_desc.shape1": {"tile.divisibility": 16}}
    for r0, c0 in ((0, 0), (64, 128), (0, 4), (-40, 0), (0, -16)):
        for st in (True, "unguarded"):
            out[f"tma_kernels/store_block/r{r0}c{c0}/store-{st}"] = ast(
                K.store_block, ssig, {"BM": 64, "BN": 64, "R0": r0, "C0": c0}, rows,
                tma_store=st)
    out["tma_kernels/store_block_rt"] = ast(
        K.store_block_rt, dict(ssig, r0=tl.int32), {"BM": 64, "BN": 64},
        dict(rows, r0={"tile.divisibility": 16}), tma_store=True)
    out["tma_kernels/store_loop"] = ast(
        K.store_loop, dict(ssig, n=tl.int32), {"BM": 64, "BN": 64}, rows, tma_store=True)
    out["tma_kernels/store_block3d"] = ast(
        K.store_block3d, {"x": tl.pointer_type(tl.float32),
                          "o_desc": TD(tl.float32, [2, 4, 8])},
        {"R0": 0, "C1": 1, "B0": 2, "B1": 4, "B2": 8},
        {"o_desc.shape2": {"tile.divisibility": 4}}, tma_store=True)

    for bm, bn, bk, w in ((128, 128, 64, 4), (64, 128, 64, 4)):
        sig = {"a_desc": TD(f16, [bm, bk]), "b_desc": TD(f16, [bk, bn]),
               "c_ptr": tl.pointer_type(f16), "M": tl.int32, "N": tl.int32, "K": tl.int32}
        out[f"tma_kernels/desc_matmul/{bm}x{bn}x{bk}w{w}"] = ast(
            K.desc_matmul, sig, {"BM": bm, "BN": bn, "BK": bk}, {}, num_warps=w, num_stages=3)
    loads = load_source(LOADS_SRC, "tilework", "tma_loads")
    lsig = {"a_desc": TD(f16, [64, 64]), "o": tl.pointer_type(f16), "n": tl.int32}
    for c0 in (0, 4, 8, 16):  # inner offsets of 0, 8, 16, 32 bytes: TMA, block pointers, TMA
        out[f"tma_loads/copy_at/c{c0}"] = ast(loads.copy_at, lsig, {"C0": c0}, {})
    out["tma_loads/loop_var"] = ast(loads.loop_var, lsig, {}, {})
    out["tma_loads/loop_mul"] = ast(loads.loop_mul, lsig, {}, {})

    import persistent_matmul as pm
    for bm, bn, bk, w, s in ((128, 128, 64, 4, 3), (128, 256, 64, 8, 3)):
        consts = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "NUM_SMS": 132}
        sig = {"a_desc": TD(tl.float16, [bm, bk]), "b_desc": TD(tl.float16, [bk, bn]),
               "c_desc": TD(tl.float16, [bm, bn]), "M": tl.int32, "N": tl.int32, "K": tl.int32}
        for st in (True, False):
            out[f"persistent/host/{bm}x{bn}x{bk}/store-{st}"] = ast(
                pm.matmul_persistent, sig, consts, {"c_desc.shape1": {"tile.divisibility": 16}},
                num_warps=w, num_stages=s, tma_store=st)
        dsig = {"a_ptr": tl.pointer_type(tl.float16), "b_ptr": tl.pointer_type(tl.float16),
                "c_ptr": tl.pointer_type(tl.float16), "M": tl.int32, "N": tl.int32,
                "K": tl.int32, "stride_am": tl.int32, "stride_bk": tl.int32,
                "stride_cm": tl.int32}
        out[f"persistent/device/{bm}x{bn}x{bk}"] = ast(
            pm.matmul_persistent_device, dsig, consts,
            {k: {"tile.divisibility": 16} for k in ("a_ptr", "b_ptr", "c_ptr", "stride_am",
                                                      "stride_bk", "stride_cm")},
            num_warps=w, num_stages=s, tma_store=True)

    import matmul as mm
    import attention as A

    def api(fn, sig, consts, **opts):
        return lambda: tilework.compile(fn, target="sm_90a", signature=sig, constexprs=consts,
                                        cache=False, **opts)

    def mm_sig(out_dt):
        sig = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": f"*{out_dt}:16"}
        sig.update({k: "i32" if k == "M" else "i32:16"
                    for k in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")})
        return sig

    strides = ["stride_qz", "stride_qh", "stride_qn", "stride_kz", "stride_kh", "stride_kn",
               "stride_vz", "stride_vh", "stride_vn"]
    fsig = {n: "*fp16:16" for n in ("Q", "K", "V", "O")}
    fsig.update(LSE="*fp32:16", sm_scale="fp32")
    fsig.update({n: "i32:16" for n in strides + ["stride_oz", "stride_oh", "stride_on"]})
    fsig.update(H="i32", GROUP="i32", N_CTX="i32:16")

    def bsig(which):
        sig = {n: "*fp16:16" for n in ("Q", "K", "V", "DO")}
        sig.update({"DK": "*fp16:16", "DV": "*fp16:16"} if which == "dkdv"
                   else {"DQ": "*fp16:16"})
        sig.update(LSE="*fp32:16", DELTA="*fp32:16", sm_scale="fp32")
        sig.update({n: "i32:16" for n in strides + ["stride_dz", "stride_dh", "stride_dn"]})
        sig.update(H="i32", GROUP="i32", N_CTX="i32")
        return sig

    for fence in (True, False):
        tag = f"fence-{'on' if fence else 'off'}"
        for c in mm.ALL_CONFIGS:
            k = c.kwargs
            name = f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']}w{c.num_warps}s{c.num_stages}"
            cx = dict(k, EVEN_K=True, stride_ak=1, stride_bn=1, stride_cn=1)
            out[f"matmul/{name}/{tag}"] = api(mm.matmul_kernel.base_fn, mm_sig("fp16"), cx,
                                              num_warps=c.num_warps, num_stages=c.num_stages,
                                              wgmma_cp_async_fence=fence)
        for c in mm.SPLITK_CONFIGS:
            k = c.kwargs
            name = f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']}w{c.num_warps}s{c.num_stages}"
            cx = dict(k, EVEN_K=True, stride_ak=1, stride_bn=1, stride_cn=1)
            out[f"splitk/{name}/{tag}"] = api(mm.matmul_splitk_kernel.base_fn, mm_sig("fp32"),
                                              cx, num_warps=c.num_warps,
                                              num_stages=c.num_stages,
                                              wgmma_cp_async_fence=fence)
        for d in (64, 128):
            for causal in (False, True):
                for i, c in enumerate(A.FWD_CONFIGS):
                    if not A.fwd_config_fits(c, d):
                        continue
                    cx = dict(HEAD_DIM=d, CAUSAL=causal, EVEN_N=True, **c.kwargs)
                    out[f"attn_fwd/d{d}/causal-{causal}/cfg{i}/{tag}"] = api(
                        A.attn_fwd_kernel, fsig, cx, num_warps=c.num_warps,
                        num_stages=c.num_stages, wgmma_cp_async_fence=fence)
                for which, fn, cfg in (("dkdv", A.attn_bwd_dkdv, A.default_bwd_configs(d)[0]),
                                       ("dq", A.attn_bwd_dq, A.default_bwd_configs(d)[1])):
                    cx = dict(HEAD_DIM=d, CAUSAL=causal, **cfg.kwargs)
                    out[f"attn_bwd/{which}/d{d}/causal-{causal}/{tag}"] = api(
                        fn, bsig(which), cx, num_warps=cfg.num_warps,
                        num_stages=cfg.num_stages, wgmma_cp_async_fence=fence)
    import attention_tma as AT  # the descriptor forward (its own configs; no cp.async fence)
    for d in (64, 128):
        for causal in (False, True):
            for ws in (False, True):
                for i, c in enumerate(AT.FWD_TMA_CONFIGS):
                    if not AT.config_fits(c, d):
                        continue
                    bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
                    sig = {"sm_scale": tl.float32, "LSE": tl.pointer_type(tl.float32),
                           "O": tl.pointer_type(f16), "desc_q": TD(f16, [bm, d]),
                           "desc_k": TD(f16, [bn, d]), "desc_v": TD(f16, [bn, d]),
                           "desc_o": TD(f16, [bm, d]), "H": tl.int32, "GROUP": tl.int32,
                           "N_CTX": tl.int32}
                    cx = dict(HEAD_DIM=d, CAUSAL=causal, EVEN_N=True,
                              **{**c.kwargs, "WARP_SPECIALIZE": ws})
                    attrs = {n: {"tile.divisibility": 16} for n in ("LSE", "O", "N_CTX")}
                    out[f"attn_fwd_tma/d{d}/causal-{causal}/ws-{ws}/cfg{i}"] = ast(
                        AT.attn_fwd_tma_kernel, sig, cx, attrs, num_warps=c.num_warps,
                        num_stages=c.num_stages)
    return out


def main(argv):
    if argv[:1] == ["--compare"]:
        a, b = (json.load(open(p)) for p in argv[1:3])
        both = sorted(set(a) & set(b))
        diff = [k for k in both if a[k] != b[k]]
        for k in diff:
            print(f"DIFFERS: {k}: {a[k][:12]} -> {b[k][:12]}")
        missing = sorted(set(a) ^ set(b))
        print(f"{len(both) - len(diff)} identical, {len(diff)} differing, {len(missing)} in one "
              f"file only")
        return 1 if diff else 0
    out_path = argv[0]
    only = argv[argv.index("--only") + 1] if "--only" in argv else ""
    ptx_dir = argv[argv.index("--ptx-dir") + 1] if "--ptx-dir" in argv else None
    import tilework.backends.nvidia.compiler as nv
    nv.find_ptxas = lambda: None  # PTX only: the cubin stage is skipped
    result = json.load(open(out_path)) if os.path.exists(out_path) else {}
    for name, fn in cases().items():
        if only not in name:
            continue
        t = time.time()
        ptx = fn().asm["ptx"]
        result[name] = hashlib.sha256(ptx.encode()).hexdigest()
        if ptx_dir:
            p = os.path.join(ptx_dir, name.replace("/", "__") + ".ptx")
            os.makedirs(ptx_dir, exist_ok=True)
            with open(p, "w") as f:
                f.write(ptx)
        print(f"{name}: {result[name][:12]} ({time.time() - t:.1f} s)", flush=True)
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
