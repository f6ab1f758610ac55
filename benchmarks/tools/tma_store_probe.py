"""Probe of the TMA-store fault (issue 9) on an sm_90 GPU: small kernels storing through
descriptors with `tma_store=True` (the guarded compiler: the TMA store where every coordinate
is provably >= 0 and rows are a multiple of 16 bytes, the block-pointer store elsewhere), or
with `--raw` `tma_store="unguarded"` (`tilegpu.tma_store` wherever TMA applies: what the
hardware does), each variant in its own subprocess (a fault poisons only that process's CUDA
context), optionally again under `compute-sanitizer --tool memcheck`.

    python benchmarks/tools/tma_store_probe.py                 # every variant, guarded: all ok,
                                                               # each with the expected store
    python benchmarks/tools/tma_store_probe.py --raw           # the raw store: tails write the
                                                               # row's 16-byte chunk, negative
                                                               # coordinates fault; then each
                                                               # hypothesis on the failing ones
    python benchmarks/tools/tma_store_probe.py --list          # variants and hypotheses
    python benchmarks/tools/tma_store_probe.py --raw --variants neg_inner16 --hyp wait_full
    python benchmarks/tools/tma_store_probe.py --dry           # compile only (no GPU): PTX

Raw results on an H200 (2026-11-27, docs/performance.md "TMA-store epilogue"): rows of 140 /
132 / 200 bytes get the rest of their last 16-byte chunk written (tail_*, f32_16x32,
f16_4x64_noswz, gemm_odd), any negative coordinate faults with an illegal instruction (neg_*,
f32_neg_inner; TMA loads there are fine), everything else is exact; none of the hypotheses
changes that.  Each line says which store the kernel got (store=tma / store=ptr); in the
guarded mode a variant whose store is not the expected one is `wrong`.

The output tensor lives inside a larger buffer poisoned with a sentinel bit pattern (16-bit:
0x7fff, 32-bit: 0x7fffffff, NaN), with guard rows above and below and guard columns past the
logical width (the row stride exceeds the width).  Stored values are distinct bit patterns
(16-bit: 0x0400 + source index; 32-bit: 0x3f800000 + index), so a wrong element names the
source element it came from.  Per variant one line: ok / wrong (bad count inside the tensor
and in the guards, first bad places as (row, col): got <- src(i, j) or SENT, want ...) /
fault (the CUDA error; the sanitizer's first lines), then (first time a store sequence is
seen) the PTX around the store.  A hypothesis (`--hyp`) monkeypatches the compiler or the
tensor-map encoding in the child before compiling (the disk cache is a fresh directory per
child, so a patched compile is never cached).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# ---- variants -------------------------------------------------------------------------------
# kind "store": probe_store, o's block (R0 + pm*BM, C0 + pn*BN) = x's block (pm, pn).
#   M x W logical tensor, row stride LD (>= W; LD > W: guard columns), grid (gm, gn).
# kind "load": probe_load (TMA load of a descriptor, pointer store): the load side, same
#   coordinates, for comparison.
# kind "gemm": desc_matmul_store (tests' tma_kernels.py), C through a padded descriptor.
# kind "ptrgemm": ptr_matmul_desc_store: the same epilogue with pointer loads (no TMA loads).
V = {}


def _v(name, **kw):
    base = dict(kind="store", dtype="float16", M=128, W=128, LD=None, BM=64, BN=64, R0=0, C0=0,
                grid=(2, 2), warps=4, note="")
    base.update(kw)
    if base["LD"] is None:
        base["LD"] = base["W"]
    V[name] = base


_v("full_contig", note="in-bounds full tiles, contiguous rows (LD == W)")
_v("full_padded", LD=192, note="in-bounds full tiles, row stride 192 > width 128")
_v("tail_test", M=100, W=70, LD=72, grid=(2, 2), note="test_store_window's tensor: 100x70, LD 72")
_v("tail_wide", M=100, W=70, LD=160, grid=(2, 2), note="100x70, LD 160: how far past W")
_v("tail_w72", M=100, W=72, LD=160, grid=(2, 2),
   note="100x72 (144 B rows, a 16 B multiple), LD 160: clipped at a 16 B granule?")
_v("tail_w66", M=100, W=66, LD=160, grid=(2, 2), note="100x66 (132 B rows), LD 160")
_v("tail_contig80", M=100, W=80, LD=80, grid=(2, 2), note="inner tail, no padding (next row)")
_v("neg_row", M=100, W=128, LD=144, R0=-40, grid=(3, 2), note="negative row coordinate")
_v("neg_inner8", M=128, W=128, LD=144, C0=-8, grid=(2, 3), note="inner -8 el (16 B)")
_v("neg_inner16", M=128, W=128, LD=144, C0=-16, grid=(2, 3), note="inner -16 el (the test's)")
_v("neg_inner16_contig", M=128, W=128, LD=128, C0=-16, grid=(2, 3),
   note="inner -16 el, contiguous rows")
_v("neg_inner64", M=128, W=128, LD=144, C0=-64, grid=(2, 3), note="first block wholly left")
_v("pos_inner16", M=128, W=128, LD=160, C0=16, grid=(2, 2), note="inner +16 el, tail clipped")
_v("off_right", M=128, W=70, LD=80, C0=128, grid=(2, 1), note="block wholly past W")
_v("off_bottom", M=100, W=128, LD=128, R0=100, grid=(1, 2), note="block wholly past M")
_v("f32_16x32", dtype="float32", M=100, W=70, LD=72, BM=16, BN=32, grid=(7, 3),
   note="fp32 16x32 (swizzle 128, one box)")
_v("f32_neg_inner", dtype="float32", M=64, W=96, LD=104, BM=16, BN=32, C0=-16, grid=(4, 4),
   note="fp32 inner -16 el (64 B)")
_v("bf16_32x128", dtype="bfloat16", M=90, W=200, LD=208, BM=32, BN=128, grid=(3, 2),
   note="bf16 32x128: two 128 B boxes")
_v("f16_64x16", M=100, W=40, LD=48, BM=64, BN=16, grid=(2, 3), note="swizzle 32")
_v("f32_8x8", dtype="float32", M=20, W=20, LD=24, BM=8, BN=8, grid=(3, 3), note="swizzle 32")
_v("f16_4x64_noswz", M=10, W=100, LD=104, BM=4, BN=64, grid=(3, 2),
   note="4 rows: row-major buffer, swizzle none")
_v("load_neg_inner16", kind="load", M=128, W=128, LD=144, C0=-16, grid=(2, 3),
   note="TMA LOAD at inner -16 (pointer store)")
_v("load_tail", kind="load", M=100, W=70, LD=72, grid=(2, 2), note="TMA LOAD, 100x70 LD 72")
for _n, _M, _N, _K, _bm, _bn, _bk, _w, _s, _od in [
        ("gemm_256", 256, 256, 256, 128, 128, 64, 4, 3, "float16"),
        ("gemm_small", 200, 136, 120, 128, 128, 64, 4, 3, "float16"),
        ("gemm_odd", 77, 190, 70, 64, 64, 32, 4, 1, "float16"),
        ("gemm_f32out", 200, 136, 120, 128, 128, 64, 4, 3, "float32"),
        ("gemm_w8", 256, 256, 256, 128, 256, 64, 8, 3, "float16")]:
    _v(_n, kind="gemm", dtype="float16", out=_od, M=_M, N=_N, K=_K, BM=_bm, BN=_bn, BK=_bk,
       warps=_w, stages=_s, note=f"desc GEMM {_M}x{_N}x{_K} {_bm}x{_bn}x{_bk} w{_w} s{_s} "
                                 f"-> {_od}")
_v("ptrgemm_small", kind="ptrgemm", dtype="float16", out="float16", M=200, N=136, K=120,
   BM=128, BN=128, BK=64, warps=4, stages=3, note="pointer loads, TMA-store epilogue")

# ---- hypotheses (monkeypatches applied in the child) ----------------------------------------
HYP = {
    "none": "the code as it is",
    "wait_full": "cp.async.bulk.wait_group 0 (writes complete) instead of wait_group.read 0",
    "bar_after": "a CTA barrier after the store's asm (no thread runs ahead of the copy)",
    "fence_in_asm": "thread 0 also fences (fence.proxy.async.shared::cta) right before the copy",
    "fence_all": "fence.proxy.async (every state space) instead of .shared::cta",
    "no_fence": "negative control: no proxy fence (expect stale data, not a fault)",
    "align1024": "every TMA buffer 1024-byte aligned (smem_alloc.TMA_ALIGN)",
    "no_reuse": "the store's buffer live from the kernel's start (it shares no bytes with the "
                "GEMM's operand rings)",
    "no_swizzle": "every TMA plan unswizzled, one box (buffer row-major, map SWIZZLE_NONE)",
    "clamp_neg_inner": "inner coordinate clamped at 0 in the store rule (wrong data, but a fault "
                       "that goes away points at the negative inner coordinate)",
    "map_dim0_stride": "negative control: map globalDim[0] = the row stride (the padding bug)",
    "map_l2_none": "map L2 promotion NONE",
    "map_oob_nan": "map oobFill NAN_REQUEST_ZERO_FMA",
    "map_box_rows8": "map boxDim[1] (rows) 8 while the kernel copies BM rows (negative control "
                     "for a box mismatch)",
}

SENT16, SENT32 = 0x7FFF, 0x7FFFFFFF
G_ROWS = 8  # guard rows above and below the tensor


# ---- child: one variant under one set of hypotheses -----------------------------------------

import tilework  # noqa: E402  (no GPU, MLIR or toolchain at import)
import tilework.language as tl  # noqa: E402


@tilework.jit
def probe_store(x, o_desc, R0: tl.constexpr, C0: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr):
    """o's block (R0 + pm*BM, C0 + pn*BN) = x's block (pm, pn) (blocks side by side)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :])
    o_desc.store([R0 + pm * BM, C0 + pn * BN], v)


@tilework.jit
def probe_load(i_desc, y, R0: tl.constexpr, C0: tl.constexpr, BM: tl.constexpr,
               BN: tl.constexpr):
    """y's block (pm, pn) = i's block at (R0 + pm*BM, C0 + pn*BN) (TMA load, zero-filled)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    v = i_desc.load([R0 + pm * BM, C0 + pn * BN])
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(y + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :], v)


def _kernels():
    return probe_store, probe_load


TMA_STORE = True  # the child's tma_store option: True (guarded) or "unguarded" (--raw)
ESIZE = {"float16": 2, "bfloat16": 2, "float32": 4}


def expect_tma(cfg, raw: bool):
    """Whether the kernel should store by TMA (None: a load variant)."""
    if cfg["kind"] == "load":
        return None
    if raw:
        return True
    if cfg["kind"] in ("gemm", "ptrgemm"):
        return cfg["N"] * ESIZE[cfg["out"]] % 16 == 0
    return cfg["R0"] >= 0 and cfg["C0"] >= 0 and cfg["W"] * ESIZE[cfg["dtype"]] % 16 == 0


def row_attrs(name, width, esize):
    """The launcher's specialization of the last shape argument (the dry compile's)."""
    div = 16 if width % 16 == 0 else 16 // esize if width * esize % 16 == 0 else None
    return {f"{name}.shape1": {"tile.divisibility": div}} if div else {}


def _gemm_kernels():
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    from tma_kernels import desc_matmul_store, ptr_matmul_desc_store
    return desc_matmul_store, ptr_matmul_desc_store


def apply_hyps(hyps):
    """Monkeypatch the compiler / runtime for the hypotheses `hyps`."""
    import mlir.ir as ir
    from tilework.lowering import registry, smem_alloc
    from tilework.lowering.rules import tma as rt
    from tilework.runtime import tma as rtm
    from tilework.frontend import ops_descriptor as od

    hyps = set(hyps) - {"none"}
    if not hyps:
        return
    if "align1024" in hyps:
        smem_alloc.TMA_ALIGN = 1024
    if "no_reuse" in hyps:
        orig_lr = smem_alloc.live_range

        def live_range(num, alloc):
            start, end = orig_lr(num, alloc)
            if any(u.name == "tilegpu.tma_store"
                   for u in smem_alloc.memdesc_users(alloc.results[0])):
                start = 0
            return start, end
        smem_alloc.live_range = live_range
    if "no_swizzle" in hyps:
        orig_plan = od.tma_plan

        def plan(bits, shape, padding):
            p = orig_plan(bits, shape, padding)
            return None if p is None else ([int(d) for d in shape], 0)
        od.tma_plan = plan
    if hyps & {"wait_full", "bar_after", "fence_in_asm", "fence_all", "no_fence",
               "clamp_neg_inner"}:
        from tilework.dialects import tile as T
        from tilework.dialects.verify import named_operands

        def asm(ctx, text, operands, constraints):  # as rules/tma.py (its helpers are private)
            ctx.create("llvm.inline_asm", operands, [], {
                "asm_string": ir.StringAttr.get(text),
                "constraints": ir.StringAttr.get(
                    (constraints + "," if constraints else "") + "~{memory}"),
                "has_side_effects": ir.UnitAttr.get(),
                "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})

        def tma_store(ctx, op, args):  # rules/tma.py's tma_store rule with the switches
            named = named_operands(op)
            md = T.memdesc_of(named["src"].type)
            desc, src = args[0], args[1]
            rank = sum(1 for k, v in named.items() if k.startswith("coord") and v is not None)
            coords = list(args[2:2 + rank])[::-1]  # innermost first
            if "clamp_neg_inner" in hyps:
                coords[0] = ctx.op1("arith.maxsi", [coords[0], ctx.const(0)], ctx.i32)
            if "fence_all" in hyps:
                asm(ctx, "fence.proxy.async;", [], "")
            elif "no_fence" not in hyps:
                ctx.create("nvvm.fence.proxy", [], [], {
                    "kind": ir.Attribute.parse("#nvvm.proxy_kind<async.shared>"),
                    "space": ir.Attribute.parse("#nvvm.shared_space<cta>")})
            ctx.barrier()
            src_addr = ctx.op1("llvm.ptrtoint", [src], ctx.i32)
            ops = [ctx.thread_id(), desc]
            body = ["@%p fence.proxy.async.shared::cta;"] if "fence_in_asm" in hyps else []
            for off, dc in rt.boxes(md):
                a = src_addr if not off else \
                    ctx.op1("arith.addi", [src_addr, ctx.const(off)], ctx.i32)
                c0 = coords[0] if not dc else \
                    ctx.op1("arith.addi", [coords[0], ctx.const(dc)], ctx.i32)
                n = len(ops)
                ops += [a, c0] + coords[1:]
                cs = ", ".join(f"${n + 1 + i}" for i in range(rank))
                body.append(f"@%p cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group "
                            f"[$1, {{{cs}}}], [${n}];")
            wait = "cp.async.bulk.wait_group 0;" if "wait_full" in hyps else \
                "cp.async.bulk.wait_group.read 0;"
            body += ["@%p cp.async.bulk.commit_group;", "@%p " + wait]
            asm(ctx, "{ .reg .pred %%p; setp.eq.u32 %%p, $0, 0; %s }" % " ".join(body), ops,
                "r,l" + ",r" * (len(ops) - 2))
            if "bar_after" in hyps:
                ctx.barrier()
            return []
        rules = registry.RULES["tilegpu.tma_store"]
        for i, r in enumerate(rules):
            if r.target == "nvidia":
                rules[i] = registry.Rule(r.op, tma_store, r.target, r.arch)
    if hyps & {"map_dim0_stride", "map_l2_none", "map_oob_nan", "map_box_rows8"}:
        orig = rtm.tensor_map_params

        def params(desc, plan):
            p = orig(desc, plan)
            if "map_dim0_stride" in hyps and len(p["dims"]) > 1:
                p["dims"][0] = p["strides"][0] // desc.base.element_size()
            if "map_l2_none" in hyps:
                p["l2_promotion"] = "NONE"
            if "map_oob_nan" in hyps:
                p["oob_fill"] = "NAN_REQUEST_ZERO_FMA"
            if "map_box_rows8" in hyps and len(p["box"]) > 1:
                p["box"][1] = min(8, p["box"][1])
            return p
        rtm.tensor_map_params = params


def ptx_excerpt(ptx: str, tilegpu: str | None) -> list:
    """The lines around the store: the tensor-map parameter and its cvta, the last shared
    stores, fence, barrier, the copy asm and what follows it, and the store buffer's offset."""
    lines = [l.strip() for l in ptx.splitlines()]
    out = [l for l in lines if re.search(r"\.b8 \w+\[128\]|cvta\.param|\.extern \.shared", l)]
    idx = [i for i, l in enumerate(lines) if "bulk_group" in l]
    if not idx:
        return out + ["(no cp.async.bulk.tensor ... bulk_group in the PTX: not a TMA store)"]
    for i in idx:
        keep = [l for l in lines[max(i - 7, 0):i + 3] if l and not l.startswith("//") and
                re.match(r"(st\.shared|fence|bar|cvt|add|or|mov\.b64|ret|\{|@)", l)]
        out += ["..."] + keep
        # where the copy's coordinates and addresses come from (one definition back)
        regs = []
        for m in re.finditer(r"\[(%\w+), \{([^}]*)\}\], \[(%\w+)\]", lines[i]):
            regs += [m.group(1)] + [r.strip() for r in m.group(2).split(",")] + [m.group(3)]
        defs = []
        for r in dict.fromkeys(regs):
            for j in range(i - 1, -1, -1):
                if re.match(rf"[\w.]+\s+{re.escape(r)},", lines[j]):
                    if lines[j] not in keep:
                        defs.append(f"{r}: {lines[j]}")
                    break
        out += defs
    if tilegpu:
        offs = re.findall(r'"tilegpu\.local_alloc".*?tilegpu\.smem_offset = (\d+)', tilegpu)
        out.append(f"local_alloc smem offsets: {offs}")
        m = re.search(r"tilegpu\.shared = (\d+)", tilegpu)
        if m:
            out.append(f"shared bytes: {m.group(1)}")
    return out


def _bits(torch, dtype):
    return {"float16": torch.int16, "bfloat16": torch.int16, "float32": torch.int32}[dtype]


def _values(torch, n, dtype):
    """n distinct values as bit patterns (int) and as `dtype`."""
    import numpy as np
    if dtype == "float32":
        b = (0x3F800000 + np.arange(n, dtype=np.int64)).astype(np.int32)
    else:
        assert n <= 0x7800, "too many elements for distinct 16-bit patterns"
        b = (0x0400 + np.arange(n, dtype=np.int64)).astype(np.int16)
    t = torch.from_numpy(b).cuda().view(getattr(torch, dtype))
    return b, t


def _decode(bits, dtype, src_cols):
    """'SENT' or 'src(i,j)' of a stored bit pattern."""
    b = int(bits) & (0xFFFFFFFF if dtype == "float32" else 0xFFFF)
    if b == (SENT32 if dtype == "float32" else SENT16):
        return "SENT"
    k = b - (0x3F800000 if dtype == "float32" else 0x0400)
    return f"src({k // src_cols},{k % src_cols})" if k >= 0 else hex(b)


def want_store(cfg, xb, dtype):
    """The poisoned buffer (guard rows and columns included) after probe_store, by numpy:
    each block clipped at the tensor's edges."""
    import numpy as np
    M, W, LD, BM, BN, R0, C0 = (cfg[k] for k in ("M", "W", "LD", "BM", "BN", "R0", "C0"))
    sent = SENT32 if cfg["dtype"] == "float32" else SENT16
    want = np.full((G_ROWS + M + G_ROWS, LD), sent, dtype=dtype)
    gm, gn = cfg["grid"]
    for pm in range(gm):
        for pn in range(gn):
            r0, c0 = R0 + pm * BM, C0 + pn * BN
            rs, re_, cs, ce = max(r0, 0), min(r0 + BM, M), max(c0, 0), min(c0 + BN, W)
            if rs < re_ and cs < ce:
                want[G_ROWS + rs:G_ROWS + re_, cs:ce] = \
                    xb[pm * BM + rs - r0:pm * BM + re_ - r0, pn * BN + cs - c0:pn * BN + ce - c0]
    return want


def run_store_like(cfg, dry):
    import numpy as np
    import torch
    from tilework.tools.tensor_descriptor import TensorDescriptor
    probe_store, probe_load = _kernels()
    dt, M, W, LD = cfg["dtype"], cfg["M"], cfg["W"], cfg["LD"]
    BM, BN, R0, C0 = cfg["BM"], cfg["BN"], cfg["R0"], cfg["C0"]
    gm, gn = cfg["grid"]
    tdt = getattr(torch, dt)
    ib = _bits(torch, dt)
    sent = SENT32 if dt == "float32" else SENT16
    src_rows, src_cols = gm * BM, gn * BN
    res = {}
    if cfg["kind"] == "store":
        xb, x = _values(torch, src_rows * src_cols, dt)
        xb = xb.reshape(src_rows, src_cols)
        buf = torch.full((G_ROWS + M + G_ROWS, LD), sent, dtype=ib, device="cuda")
        o = buf.view(tdt)[G_ROWS:G_ROWS + M, :W]
        d = TensorDescriptor(o, [M, W], [LD, 1], [BM, BN])
        k = probe_store[(gm, gn)](x, d, R0=R0, C0=C0, BM=BM, BN=BN, num_warps=cfg["warps"],
                                  tma_store=TMA_STORE)
        res["asm"] = k
        torch.cuda.synchronize()
        got = buf.cpu().numpy()
        res["cmp"] = (got, want_store(cfg, xb, got.dtype), src_cols, W)
    else:  # TMA load of a poisoned-padding tensor, stored by pointers
        vb, vals = _values(torch, M * LD, dt)
        t = vals.view(M, LD)
        i_t = t[:, :W]
        d = TensorDescriptor(i_t, [M, W], [LD, 1], [BM, BN])
        y = torch.full((src_rows, src_cols), sent, dtype=ib, device="cuda")
        k = probe_load[(gm, gn)](d, y.view(tdt), R0=R0, C0=C0, BM=BM, BN=BN,
                                 num_warps=cfg["warps"])
        res["asm"] = k
        torch.cuda.synchronize()
        got = y.cpu().numpy()
        vb = vb.reshape(M, LD)
        want = np.zeros(got.shape, dtype=got.dtype)  # TMA zero-fills out of bounds
        for pm in range(gm):
            for pn in range(gn):
                for i in range(BM):
                    r = R0 + pm * BM + i
                    for j in range(BN):
                        c = C0 + pn * BN + j
                        if 0 <= r < M and 0 <= c < W:
                            want[pm * BM + i, pn * BN + j] = vb[r, c]
        res["cmp"] = (got, want, LD, None)
    return res


def padded_mat(torch, rows, cols, dt, g):
    item = torch.empty((), dtype=dt).element_size()
    ld = -(-cols * item // 16) * 16 // item
    return torch.randn(rows, ld, device="cuda", generator=g).to(dt)[:, :cols]


def run_gemm(cfg, dry):
    import torch
    from tilework.tools.tensor_descriptor import TensorDescriptor
    desc_matmul_store, ptr_matmul_desc_store = _gemm_kernels()
    M, N, K, BM, BN, BK = (cfg[k] for k in ("M", "N", "K", "BM", "BN", "BK"))
    dt, od = getattr(torch, cfg["dtype"]), getattr(torch, cfg["out"])
    cd = lambda a, b: (a + b - 1) // b  # noqa: E731
    item = torch.empty((), dtype=od).element_size()
    ld = cd(N * item, 16) * 16 // item + 16  # 16 guard columns at least
    g = torch.Generator(device="cuda").manual_seed(0)
    if cfg["kind"] == "gemm":  # padded rows (TMA strides: multiples of 16 bytes), as the tests
        a = padded_mat(torch, M, K, dt, g)
        b = padded_mat(torch, K, N, dt, g)
    else:  # pointer loads: contiguous
        a = torch.randn(M, K, device="cuda", generator=g).to(dt)
        b = torch.randn(K, N, device="cuda", generator=g).to(dt)
    ib = _bits(torch, cfg["out"])
    sent = SENT32 if cfg["out"] == "float32" else SENT16
    buf = torch.full((G_ROWS + M + G_ROWS, ld), sent, dtype=ib, device="cuda")
    c = buf.view(od)[G_ROWS:G_ROWS + M, :N]
    cdsc = TensorDescriptor(c, [M, N], [ld, 1], [BM, BN])
    grid = (cd(M, BM), cd(N, BN))
    opts = dict(BM=BM, BN=BN, BK=BK, num_warps=cfg["warps"], num_stages=cfg["stages"],
                tma_store=TMA_STORE)
    if cfg["kind"] == "gemm":
        k = desc_matmul_store[grid](TensorDescriptor(a, [M, K], [a.stride(0), 1], [BM, BK]),
                                    TensorDescriptor(b, [K, N], [b.stride(0), 1], [BK, BN]),
                                    cdsc, M, N, K, **opts)
    else:
        k = ptr_matmul_desc_store[grid](a, b, cdsc, M, N, K, **opts)
    torch.cuda.synchronize()
    ref = (a.float() @ b.float()).to(od)
    got = buf.cpu()
    want = torch.full_like(got, sent)
    want.view(od)[G_ROWS:G_ROWS + M, :N] = ref.cpu()
    return {"asm": k, "gemm": (got.numpy(), want.numpy(), N)}


def summarize(got, want, src_cols, W, dtype, rows_off, approx=None):
    """(status, detail) of a bitwise comparison (approx: the atol of GEMM values)."""
    import numpy as np
    if approx is None:
        bad = got != want
    else:  # GEMM outputs (fp16 / fp32 bit patterns): values within atol + 1% of torch's
        atol = approx
        fdt = np.float32 if got.dtype == np.int32 else np.float16
        g = got.view(fdt).astype(np.float32)
        w = want.view(fdt).astype(np.float32)
        sent_mask = want == (SENT32 if got.dtype == np.int32 else SENT16)
        with np.errstate(invalid="ignore"):
            close = np.abs(g - w) <= atol + 1e-2 * np.abs(w)
        bad = np.where(sent_mask, got != want, ~close)
    n = int(bad.sum())
    if not n:
        return "ok", ""
    rr, cc = np.nonzero(bad)
    rows = rr - rows_off
    inside = (rows >= 0) & (rows < (got.shape[0] - 2 * rows_off))
    if W is not None:
        inside &= cc < W
    parts = [f"{n} bad: {int(inside.sum())} in the tensor, {int((~inside).sum())} in guards"]
    if (~inside).any():
        orr, occ = rows[~inside], cc[~inside]
        parts.append(f"guard writes rows {orr.min()}..{orr.max()} cols {occ.min()}..{occ.max()}")
    shown = []
    for sel in (inside, ~inside):
        for r, c, rel in list(zip(rr[sel], cc[sel], rows[sel]))[:3]:
            if approx is None:
                shown.append(f"({rel},{c}) got {_decode(got[r, c], dtype, src_cols)} want "
                             f"{_decode(want[r, c], dtype, src_cols)}")
            else:
                shown.append(f"({rel},{c}) got {g[r, c]:.4g} want {w[r, c]:.4g}")
    return "wrong", "; ".join(parts) + " | " + "; ".join(shown)


def child(name, hyps, dry, raw):
    global TMA_STORE
    TMA_STORE = "unguarded" if raw else True
    cfg = V[name]
    apply_hyps(hyps)
    out = {"variant": name, "hyp": ",".join(hyps)}
    want_tma = expect_tma(cfg, raw)
    try:
        if dry:
            out.update(dry_compile(cfg))
        else:
            res = run_gemm(cfg, dry) if cfg["kind"] in ("gemm", "ptrgemm") else \
                run_store_like(cfg, dry)
            k = res["asm"]
            asm = getattr(k, "asm", {}) or {}
            out["ptx"] = ptx_excerpt(asm.get("ptx", ""), asm.get("tilegpu"))
            out["tma"] = (getattr(k, "metadata", {}) or {}).get("tma")
            if want_tma is not None:
                out["store"] = "tma" if "bulk_group" in asm.get("ptx", "") else "ptr"
            if "cmp" in res:
                got, want, src_cols, W = res["cmp"]
                rows_off = G_ROWS if cfg["kind"] == "store" else 0
                out["status"], out["detail"] = summarize(got, want, src_cols, W, cfg["dtype"],
                                                         rows_off)
            else:
                got, want, N = res["gemm"]
                out["status"], out["detail"] = summarize(got, want, None, N, cfg["out"],
                                                         G_ROWS, 2e-2)
            if want_tma is not None and (out["store"] == "tma") != want_tma:
                out["status"] = "wrong"
                out["detail"] = (f"store={out['store']}, expected "
                                 f"{'tma' if want_tma else 'ptr'}; " + out["detail"])
    except Exception as e:  # noqa: BLE001  (the probe reports every failure as a line)
        msg = f"{type(e).__name__}: {e}".splitlines()
        fault = re.search(r"ILLEGAL|illegal|MISALIGNED|misaligned|LAUNCH_FAILED|"
                          r"illegal memory|ILLEGAL_ADDRESS|launch failure", str(e))
        out["status"] = "fault" if fault else "error"
        out["detail"] = " ".join(msg[:3])[:400]
    print("PROBE_RESULT " + json.dumps(out), flush=True)


def dry_compile(cfg):
    """Compile-only (no GPU): the PTX excerpt of the variant's kernel for sm_90a."""
    import tilework.language as tl
    from tilework import CompileOptions
    from tilework.compiler.driver import ASTSource, compile
    from tilework.language.descriptor import tensor_descriptor_type
    tdt = {"float16": tl.float16, "bfloat16": tl.bfloat16, "float32": tl.float32}
    if cfg["kind"] in ("store", "load"):
        probe_store, probe_load = _kernels()
        dt = tdt[cfg["dtype"]]
        consts = {"BM": cfg["BM"], "BN": cfg["BN"], "R0": cfg["R0"], "C0": cfg["C0"]}
        attrs = row_attrs("o_desc", cfg["W"], ESIZE[cfg["dtype"]])
        if cfg["kind"] == "store":
            fn, sig = probe_store, {"x": tl.pointer_type(dt),
                                    "o_desc": tensor_descriptor_type(dt, [cfg["BM"], cfg["BN"]])}
        else:
            fn, sig = probe_load, {"i_desc": tensor_descriptor_type(dt, [cfg["BM"], cfg["BN"]]),
                                   "y": tl.pointer_type(dt)}
    else:
        desc_matmul_store, ptr_matmul_desc_store = _gemm_kernels()
        dt, od = tdt[cfg["dtype"]], tdt[cfg["out"]]
        consts = {"BM": cfg["BM"], "BN": cfg["BN"], "BK": cfg["BK"]}
        cdesc = tensor_descriptor_type(od, [cfg["BM"], cfg["BN"]])
        attrs = row_attrs("c_desc", cfg["N"], ESIZE[cfg["out"]])
        ints = {"M": tl.int32, "N": tl.int32, "K": tl.int32}
        if cfg["kind"] == "gemm":
            fn = desc_matmul_store
            sig = {"a_desc": tensor_descriptor_type(dt, [cfg["BM"], cfg["BK"]]),
                   "b_desc": tensor_descriptor_type(dt, [cfg["BK"], cfg["BN"]]),
                   "c_desc": cdesc, **ints}
        else:
            fn = ptr_matmul_desc_store
            sig = {"a_ptr": tl.pointer_type(dt), "b_ptr": tl.pointer_type(dt), "c_desc": cdesc,
                   **ints}
    opts = CompileOptions(tma_store=TMA_STORE if cfg["kind"] != "load" else False,
                          num_warps=cfg["warps"], num_stages=cfg.get("stages", 3))
    ck = compile(ASTSource(fn, sig, consts, attrs), "sm_90a", opts, cache=False)
    out = {"status": "compiled", "detail": "", "tma": ck.metadata.get("tma"),
           "ptx": ptx_excerpt(ck.asm["ptx"], ck.asm.get("tilegpu"))}
    if cfg["kind"] != "load":
        out["store"] = "tma" if "bulk_group" in ck.asm["ptx"] else "ptr"
    return out


# ---- parent ---------------------------------------------------------------------------------

def find_sanitizer():
    for p in (shutil.which("compute-sanitizer"), "/usr/local/cuda/bin/compute-sanitizer",
              "/usr/local/cuda/compute-sanitizer/compute-sanitizer"):
        if p and os.path.exists(p):
            return p
    return None


def spawn(name, hyps, dry, timeout, sanitizer=None, raw=False):
    env = dict(os.environ)
    env["TILEWORK_CACHE_DIR"] = tempfile.mkdtemp(prefix="tma_probe_cache_")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "test", "python"),
                                         env.get("PYTHONPATH", "")])
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--hyp", ",".join(hyps)]
    if dry:
        cmd.append("--dry")
    if raw:
        cmd.append("--raw")
    if sanitizer:
        cmd = [sanitizer, "--tool", "memcheck", "--print-limit", "4", "--show-backtrace", "no",
               "--error-exitcode", "99"] + cmd
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=ROOT)
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        text = ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes)
                else (e.stdout or "")) + "\n(timeout)"
        rc = "timeout"
    finally:
        shutil.rmtree(env["TILEWORK_CACHE_DIR"], ignore_errors=True)
    res = None
    for line in text.splitlines():
        if line.startswith("PROBE_RESULT "):
            res = json.loads(line[len("PROBE_RESULT "):])
    if res is None:
        tail = [l for l in text.splitlines() if l.strip()][-4:]
        res = {"variant": name, "hyp": ",".join(hyps),
               "status": "timeout" if rc == "timeout" else "crash",
               "detail": f"rc={rc}: " + " | ".join(tail)[:400]}
    res["secs"] = round(time.time() - t0, 1)
    if sanitizer:
        errs = [l.strip() for l in text.splitlines() if l.startswith("=========")
                and l.strip("= ") and not re.search(r"COMPUTE-SANITIZER|ERROR SUMMARY: 0 "
                                                     r"errors", l)]
        res["sanitizer"] = errs[:8]
    return res


def fmt(res, seen_ptx, show_ptx, limit=300):
    store = f" store={res['store']}" if res.get("store") else ""
    lines = [f"[{res['status'].upper():5}] {res['variant']:<18} hyp={res['hyp'] or 'none'}"
             f"{store} ({res.get('secs', '?')}s) {res.get('detail', '')[:limit]}"]
    if res.get("tma") and show_ptx and res["status"] not in ("ok", "compiled"):
        lines.append(f"        tma plan: {res['tma']}")
    for l in (res.get("sanitizer") or [])[:6]:
        lines.append("        san: " + l[:160])
    if show_ptx == "fail" and res["status"] in ("ok", "compiled") and \
            res["variant"] != "full_contig":
        show_ptx = False  # the reference variant's excerpt and the failing ones'
    if show_ptx and res.get("ptx"):
        # an excerpt once per shape (registers and numbers aside); a failing variant's
        # coordinate / address definitions always
        failing = res["status"] not in ("ok", "compiled")
        key = re.sub(r"-?\b\d+\b", "0", "\n".join(re.sub(r"%\w+", "%", l)
                                                   for l in res["ptx"]))
        h = hashlib.sha1(key.encode()).hexdigest()[:8]
        if h in seen_ptx:
            defs = [l.split(":", 1)[1].strip() for l in res["ptx"]
                    if re.match(r"%\w+: ", l) and "cvta" not in l] if failing else []
            lines.append(f"        ptx: as {seen_ptx[h]}" +
                         (f"; defs: {' | '.join(defs)}"[:300] if defs else ""))
        else:
            seen_ptx[h] = f"{res['variant']}/{res['hyp'] or 'none'}"
            lines += ["        ptx| " + l[:700] for l in res["ptx"]]
    return "\n".join(lines)


CODE = {"ok": "ok", "wrong": "W", "fault": "F", "error": "E", "crash": "C", "timeout": "T",
        "skip": "-", "compiled": "c"}


def code(r):
    c = CODE.get(r["status"], "?")
    m = re.match(r"(\d+) bad: (\d+) in the tensor, (\d+) in guards", r.get("detail", ""))
    return f"W{m.group(2)}/{m.group(3)}" if c == "W" and m else c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default="all", help="comma list or 'all'")
    ap.add_argument("--hyp", default="none", help="comma list of hypotheses applied together "
                    "(child) / the baseline's (parent)")
    ap.add_argument("--sweep", default="auto", help="hypotheses tried one at a time on the "
                    "variants that fail: comma list, 'auto' (all of them) or 'none'")
    ap.add_argument("--sanitize", choices=("fail", "all", "never"), default="fail",
                    help="rerun under compute-sanitizer memcheck: failing variants (default), "
                    "all, or never")
    ap.add_argument("--sweep-max", type=int, default=8, help="failing variants swept at most")
    ap.add_argument("--sanitize-max", type=int, default=6, help="failing variants run under "
                    "the sanitizer at most")
    ap.add_argument("--timeout", type=float, default=90, help="seconds per child (sanitizer: "
                    "twice)")
    ap.add_argument("--jobs", type=int, default=8, help="children at once")
    ap.add_argument("--budget", type=float, default=360, help="start no child after this many "
                    "seconds (a run ends within about budget + 2 * timeout)")
    ap.add_argument("--ptx", choices=("fail", "all", "none"), default="fail",
                    help="PTX excerpts around the store: of failing variants (and full_contig), "
                    "of all, or none")
    ap.add_argument("--raw", action="store_true", help="tma_store='unguarded': the raw TMA "
                    "store wherever TMA applies (tails and negative coordinates included)")
    ap.add_argument("--dry", action="store_true", help="compile only (no GPU), print the PTX")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    hyps = [h for h in a.hyp.split(",") if h]
    for h in hyps:
        if h not in HYP:
            ap.error(f"unknown hypothesis {h!r}; known: {', '.join(HYP)}")
    if a.child:
        return child(a.child, hyps, a.dry, a.raw)
    if a.list:
        for n, c in V.items():
            print(f"{n:<18} {c['kind']:<7} {c['note']}")
        for n, d in HYP.items():
            print(f"hyp {n:<16} {d}")
        return
    if a.dry and a.ptx == "fail":
        a.ptx = "all"  # nothing fails without a GPU
    names = list(V) if a.variants == "all" else a.variants.split(",")
    for n in names:
        if n not in V:
            ap.error(f"unknown variant {n!r}; --list shows them")
    t_start = time.time()
    seen_ptx = {}
    san = None if a.dry or a.sanitize == "never" else find_sanitizer()
    print(f"# tma_store_probe: {len(names)} variants, "
          f"{'raw (unguarded)' if a.raw else 'guarded'} TMA store, hyp={a.hyp}, "
          f"sanitizer={san or 'none'}, python={sys.executable}", flush=True)
    if not a.dry:
        try:
            info = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda."
                                   "get_device_name(), torch.version.cuda)"],
                                  capture_output=True, text=True, timeout=60).stdout.strip()
            drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,"
                                  "noheader"], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
            print(f"# device: {info}; driver {drv}", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"# device: ? ({e})")

    def guarded(n, h, sanitizer=None):
        if time.time() - t_start > a.budget:  # checked when the child would start
            return {"variant": n, "hyp": ",".join(h), "status": "skip",
                    "detail": "over --budget"}
        return spawn(n, h, a.dry, a.timeout * (2 if sanitizer else 1), sanitizer, a.raw)

    def run_many(jobs_list, jobs):
        out = []
        with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            futs = []
            for n, h in jobs_list:
                futs.append(ex.submit(guarded, n, h))
            for f in futs:
                out.append(f.result())
        return out

    base = run_many([(n, hyps) for n in names], a.jobs)
    print("## baseline (W<in tensor>/<in guards>: bad elements; F: fault; E: error)", flush=True)
    for r in base:
        print(fmt(r, seen_ptx, {"none": False}.get(a.ptx, a.ptx)), flush=True)
    bad = [r for r in base if r["status"] not in ("ok", "compiled", "skip")]
    # one of each group of variants first (gemm, tail, neg, ...: the name's first word),
    # faults before wrong results, then the rest in order
    bad.sort(key=lambda r: r["status"] != "fault")
    firsts, groups = [], set()
    for r in bad:
        g = r["variant"].split("_")[0]
        if g not in groups:
            groups.add(g)
            firsts.append(r["variant"])
    failing = firsts + [r["variant"] for r in bad if r["variant"] not in firsts]
    status0 = {r["variant"]: code(r) for r in base}
    sweep = [] if a.sweep == "none" or a.dry else \
        [h for h in HYP if h != "none"] if a.sweep == "auto" else a.sweep.split(",")
    swept = failing[:a.sweep_max]
    if sweep and swept:
        print(f"## hypotheses one at a time (rows) on failing variants (columns); baseline first",
              flush=True)
        rs = run_many([(n, [h]) for h in sweep for n in swept], a.jobs)
        got = {(r["hyp"], r["variant"]): r for r in rs}
        w = max(8, max(len(n) for n in swept) + 1)
        print(f"  {'':<16}" + "".join(f"{n[:w - 1]:>{w}}" for n in swept))
        print(f"  {'(baseline)':<16}" + "".join(f"{status0[n]:>{w}}" for n in swept))
        for h in sweep:
            print(f"  {h:<16}" + "".join(f"{code(got[(h, n)]) if (h, n) in got else '?':>{w}}"
                                         for n in swept), flush=True)
        print("## sweep results turned to another failure (F -> W, ...; at most 40)",
              flush=True)
        changed = [r for r in rs if code(r)[0] != status0.get(r["variant"], "?")[0]
                   and r["status"] != "ok"]  # (the matrix shows the ones turned ok)
        for r in changed[:40]:
            print(fmt(r, seen_ptx, False, limit=160), flush=True)
    if san and (a.sanitize == "all" or failing):
        todo = names if a.sanitize == "all" else failing[:a.sanitize_max]
        print(f"## compute-sanitizer memcheck on {len(todo)} variants", flush=True)
        with cf.ThreadPoolExecutor(max_workers=max(1, min(a.jobs, 4))) as ex:
            futs = []
            for n in todo:
                futs.append(ex.submit(guarded, n, hyps, san))
            for f in futs:
                print(fmt(f.result(), seen_ptx, False, limit=200), flush=True)
    print(f"# done in {time.time() - t_start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
