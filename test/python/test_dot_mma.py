"""tl.dot on tensor cores (mma.sync, sm_80+): the layouts tilegpu-assign-layouts chooses, the
lowered code run on the SIMT emulator (mma.sync from the PTX ISA's fragment tables in
simt_emulator.py) against numpy on random inputs, and the PTX (mma.sync present, no spills).
Error bounds and inputs are test_dot.py's."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile

import gpu_sim
from dot_kernels import dot_tile, matmul_kernel
from simt_emulator import Emulator
from test_dot import CASES, _operands, cdiv, check_matmul, matmul_signature, ptr, tf32_round

from tilework.lowering.dot_layouts import choose_dot_layouts, warps_per_tile


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def _emulate_matmul(case, m, n, k, bm, bn, bk, warps, rng, plus_eq=False, strides=None):
    emu = Emulator.from_kernel(matmul_kernel, matmul_signature(case),
                               dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1],
                                    PLUS_EQ=plus_eq), "sm_80", warps)
    a, b, a64, b64 = _operands(rng, case, m, k, n)
    c = np.full((m, n), 7, CASES[case][4])
    sa, sb = (k, 1), (n, 1)
    if strides == "a_kmajor":  # a stored transposed: a[i, j] at j * m + i
        a, sa = np.ascontiguousarray(a.T), (1, m)
    elif strides == "b_kmajor":
        b, sb = np.ascontiguousarray(b.T), (1, k)
    emu.run((cdiv(m, bm), cdiv(n, bn)), a, b, c, m, n, k, *sa, *sb, n, 1)
    check_matmul(c, a64, b64, case, bk)
    return emu


MMA_CASES = ["fp16_acc32", "fp16_acc16", "bf16", "int8", "fp32"]


@pytest.mark.parametrize("case", MMA_CASES)
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps", [
    (70, 33, 100, 32, 32, 32, 4),     # M, N, K tails
    (40, 24, 64, 64, 32, 32, 2),      # one program, masked M and N
])
def test_matmul_on_mma_emulated(case, m, n, k, bm, bn, bk, warps, rng):
    if case == "fp32":  # K slices of 16 keep tf32 fragments within dot_layouts' budget
        bk = 16
    emu = _emulate_matmul(case, m, n, k, bm, bn, bk, warps, rng)
    assert "nvvm.mma.sync" in str(emu.module), "not on the tensor-core path"


@pytest.mark.parametrize("case", ["fp16_acc32", "int8"])
@pytest.mark.parametrize("strides", ["a_kmajor", "b_kmajor"])
def test_transposed_operands_emulated(case, strides, rng):
    _emulate_matmul(case, 50, 40, 70, 32, 32, 32, 4, rng, strides=strides)


@pytest.mark.parametrize("case", ["fp16_acc32", "fp32"])
def test_plus_equals_accumulator_emulated(case, rng):
    """`acc += tl.dot(a, b)`: the loop-carried accumulator stays in the mma layout."""
    emu = _emulate_matmul(case, 50, 40, 100, 32, 32, 16, 4, rng, plus_eq=True)
    assert "nvvm.mma.sync" in str(emu.module)


def _loop_body(tilegpu: str) -> str:
    start = tilegpu.index("scf.for")
    return tilegpu[start:tilegpu.index("scf.yield", start)]


@pytest.mark.parametrize("plus_eq", [False, True])
def test_loop_carried_accumulator_stays_in_mma_layout(plus_eq):
    ck = compile(ASTSource(matmul_kernel, matmul_signature("fp16_acc32"),
                           dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, ACC=tl.float32,
                                PLUS_EQ=plus_eq), {}), "sm_80", cache=False)
    text = ck.asm["tilegpu"]
    body = _loop_body(text)
    convs = [ln for ln in body.splitlines() if "tilegpu.convert_layout" in ln]
    assert len(convs) == 2 and all("dot_operand" in ln.split("->")[-1] for ln in convs), convs
    assert re.search(r"scf\.for .*-> \(tensor<64x64xf32, #tilegpu\.mma<2", text)
    tail = text[text.index("scf.yield"):]
    assert "nvvm" not in tail and tail.count("tilegpu.convert_layout") <= 1


@pytest.mark.parametrize("mode", ["plain", "acc", "trans_a", "trans_b"])
@pytest.mark.parametrize("out, prec", [(tl.float32, "tf32"), (tl.float32, "tf32x3")])
def test_dot_tile_fp32_emulated(mode, out, prec, rng):
    m, n, k = 32, 16, 16
    P = ptr(tl.float32)
    emu = Emulator.from_kernel(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=P, d_ptr=P),
                               dict(M=m, N=n, K=k, MODE=mode, OUT=out, PRECISION=prec),
                               "sm_80", 2)
    assert "nvvm.mma.sync" in str(emu.module)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    d = np.zeros((m, n), np.float32)
    aa = np.ascontiguousarray(a.T) if mode == "trans_a" else a
    bb = np.ascontiguousarray(b.T) if mode == "trans_b" else b
    emu.run((1,), aa, bb, c, d)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64 + (c if mode == "acc" else 0)
    absref = np.abs(a64) @ np.abs(b64) + np.abs(c)
    if prec == "tf32":
        at, bt = tf32_round(a).astype(np.float64), tf32_round(b).astype(np.float64)
        ref_t = at @ bt + (c if mode == "acc" else 0)
        assert (np.abs(d - ref_t) <= 2 * k * 2.0**-23 * absref).all()
    else:  # three tf32 products: close to fp32 (the lo*lo term and tf32 rounding of lo left)
        assert (np.abs(d - ref) <= 2 * k * 2.0**-21 * absref).all()
        at, bt = tf32_round(a).astype(np.float64), tf32_round(b).astype(np.float64)
        assert np.abs(d - ref).max() < np.abs(at @ bt - a64 @ b64).max() / 16


@pytest.mark.parametrize("m, n, k, warps", [(8, 8, 16, 1), (16, 4, 16, 1), (8, 32, 16, 2)])
def test_small_shapes_fall_back(m, n, k, warps, rng):
    """Below one m16n8k16 tile: the FMA path, still correct."""
    P = ptr(tl.float16)
    emu = Emulator.from_kernel(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=ptr(tl.float32),
                                              d_ptr=ptr(tl.float32)),
                               dict(M=m, N=n, K=k, MODE="plain", OUT=tl.float32,
                                    PRECISION="tf32"), "sm_80", warps)
    assert "nvvm.mma.sync" not in str(emu.module)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    d = np.zeros((m, n), np.float32)
    emu.run((1,), a, b, c, d)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(d, ref, rtol=0, atol=k * 2.0**-22 * np.abs(ref).max() + 1e-6)


def test_warp_replication_copies(rng):
    """16x8 with 4 warps: warps beyond the tile hold copies and compute the same values."""
    P = ptr(tl.float16)
    m, n, k = 16, 8, 32
    emu = Emulator.from_kernel(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=ptr(tl.float32),
                                              d_ptr=ptr(tl.float32)),
                               dict(M=m, N=n, K=k, MODE="plain", OUT=tl.float32,
                                    PRECISION="tf32"), "sm_80", 4)
    assert "nvvm.mma.sync" in str(emu.module)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    d = np.zeros((m, n), np.float32)
    emu.run((1,), a, b, np.zeros((m, n), np.float32), d)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(d, ref, rtol=0, atol=k * 2.0**-22 * np.abs(ref).max())


@pytest.mark.parametrize("case", ["fp16_acc32", "int8", "bf16"])
def test_matmul_on_mma_gpu_sim(case, rng):
    """The llir stage on gpu_sim (mma.sync intrinsics hooked there)."""
    ck = compile(ASTSource(matmul_kernel, matmul_signature(case),
                           dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, ACC=CASES[case][1],
                                PLUS_EQ=False), {}), "sm_80", CompileOptions(num_warps=2),
                 cache=False)
    assert "llvm.nvvm.mma.m16n8k" in ck.asm["llir"]
    m, n, k = 45, 37, 70
    a, b, a64, b64 = _operands(rng, case, m, k, n)
    c = np.full((m, n), 7, CASES[case][4])
    gpu_sim.run(ck, (cdiv(m, 32), cdiv(n, 32)), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    check_matmul(c, a64, b64, case, 32)


# ---- the layout choice ------------------------------------------------------------------------

@pytest.mark.parametrize("shape, warps, want", [
    ((128, 128), 8, (2, 4)), ((128, 128), 4, (2, 2)), ((64, 64), 4, (2, 2)),
    ((16, 64), 4, (1, 4)), ((128, 16), 4, (4, 1)), ((16, 8), 4, (1, 4)), ((256, 8), 8, (8, 1))])
def test_warps_per_tile(shape, warps, want):
    assert warps_per_tile(shape, warps) == want


@pytest.mark.parametrize("target, dtype, prec, mma", [
    ("sm_80", tl.float16, "tf32", True), ("sm_90a", tl.bfloat16, "tf32", True),
    ("sm_80", tl.float32, "tf32", True), ("sm_80", tl.float32, "ieee", False),
    ("sm_80", tl.float32, "bf16x3", False), ("sm_75", tl.float16, "tf32", False),
    ("sm_80", tl.float64, "ieee", False), ("gfx942", tl.float16, "tf32", True),
    ("sm_89", tl.float8e4nv, "tf32", False)])
def test_which_dots_use_mma(target, dtype, prec, mma):
    from test_dot import _dot_check
    P = ptr(dtype)
    out = tl.float64 if dtype == tl.float64 else tl.float32
    const = dict(M=32, N=32, K=32, K2=32, RANK=2, USE_ACC=False, PREC=prec, ALLOW=None,
                 IMP=None, OUT=out)
    ck = compile(ASTSource(_dot_check, dict(a_ptr=P, b_ptr=P, c_ptr=ptr(out),
                                            out_ptr=ptr(out)), const, {}), target,
                 CompileOptions(target=target), cache=False)
    line = next(ln for ln in ck.asm["tilegpu"].splitlines() if '"tile.dot"' in ln)
    assert ("#tilegpu.dot_operand<0" in line) == mma, line
    if target.startswith("sm") and target != "sm_75":
        assert ("mma.sync.aligned" in ck.asm["ptx"]) == mma


def test_no_target_no_mma():
    assert choose_dot_layouts(None, None, 4) is None
    # (a target without tensor cores, sm_75, and AMD's MFMA: test_which_dots_use_mma)


# ---- PTX --------------------------------------------------------------------------------------

def compile_gemm(case, bm, bn, bk, warps, target="sm_80", b_kmajor=False):
    """matmul_kernel specialized as the launcher does for contiguous tensors: unit strides
    are constants, sizes and the other strides divisible by 16, pointers 16-byte aligned."""
    din, acc, dout, _, _ = CASES[case]
    sig = {"a_ptr": ptr(din), "b_ptr": ptr(din), "c_ptr": ptr(dout), "M": tl.int32,
           "N": tl.int32, "K": tl.int32, "stride_am": tl.int32,
           "stride_bn" if b_kmajor else "stride_bk": tl.int32, "stride_cm": tl.int32}
    const = dict(stride_ak=1, stride_cn=1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=acc,
                 PLUS_EQ=False)
    const["stride_bk" if b_kmajor else "stride_bn"] = 1
    attrs = {k: {"tile.divisibility": 16} for k in sig}
    return compile(ASTSource(matmul_kernel, sig, const, attrs), target,
                   CompileOptions(num_warps=warps), cache=False)


@pytest.mark.parametrize("case, instr", [
    ("fp16_acc32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
    ("fp16_acc16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"),
    ("bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    ("int8", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"),
])
@pytest.mark.parametrize("bm, bn, bk, warps, spills", [
    (64, 64, 32, 4, False), (128, 128, 64, 8, False), (128, 128, 32, 4, None)])
def test_ptx_mma_ldmatrix_and_spills(case, instr, bm, bn, bk, warps, spills):
    """Per k-step of the block: one mma per 16x8 tile and instruction K of each warp; 16-bit
    operands through ldmatrix.x4 (A plain, row-major B .trans: 256 elements each) and no
    scalar shared loads; no spills for the default configs (128x128x32 with 4 warps: the
    128 accumulators leave ptxas a few bytes short, not checked)."""
    ck = compile_gemm(case, bm, bn, bk, warps)
    ptx = ck.asm["ptx"]
    kinst = 32 if case == "int8" else 16
    assert len(re.findall(re.escape(instr), ptx)) == bm * bn * bk // (16 * 8 * kinst) // warps
    wm, wn = warps_per_tile((bm, bn), warps)
    if case != "int8":
        plain = len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", ptx))
        trans = len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16", ptx))
        assert (plain, trans) == (bm // wm * bk // 256, bk * (bn // wn) // 256)
        loop = ptx[ptx.index("mma.sync") - 20000:ptx.rindex("mma.sync")]
        assert not re.search(r"ld\.shared\.(b16|u16|b32)", loop)
    if spills is False:
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"], ck.metadata["ptxas_info"]
        assert ".local" not in ptx


@pytest.mark.parametrize("target", ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100a", "sm_120"])
def test_every_sm80_plus_target_uses_mma_v2(target):
    ck = compile_gemm("fp16_acc32", 64, 64, 32, 4, target=target)
    assert "#tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>" in ck.asm["tilegpu"]
    assert "mma.sync.aligned.m16n8k16" in ck.asm["ptx"]


def test_sm90a_takes_wgmma_where_it_can():
    """sm_90a: wgmma for a dot of whole warpgroup tiles (64 rows per warpgroup), mma.sync for
    a smaller one."""
    ck = compile_gemm("fp16_acc32", 64, 64, 32, 4, target="sm_90a")
    assert "#tilegpu.mma<3 : i32" in ck.asm["tilegpu"]
    assert "wgmma.mma_async" in ck.asm["ptx"] and "mma.sync" not in ck.asm["ptx"]
    ck = compile_gemm("fp16_acc32", 32, 64, 32, 4, target="sm_90a")
    assert "#tilegpu.mma<2 : i32" in ck.asm["tilegpu"]
    assert "mma.sync.aligned.m16n8k16" in ck.asm["ptx"]


# ---- ldmatrix in conversions ---------------------------------------------------------------

@tilework.jit
def _copy16(x, o, BM: tl.constexpr, BN: tl.constexpr, TRANS: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    if TRANS:  # loaded column-major: the blocked layout runs along dim 0
        offs = tl.arange(0, BM)[:, None] + tl.arange(0, BN)[None, :] * BM
    tl.store(o + offs, tl.load(x + offs))


def _through16(chain):
    def rewrite(text):
        m = re.search(r'"tile.store"\((%\d+), (%\d+)\).*: \(.*, (tensor<(\d+)x(\d+)xf16, (.*)>)\) '
                      r'-> \(\)', text)
        assert m, text
        ptrs, val, ty, bm, bn, _ = m.groups()
        lines, prev, prev_ty = [], val, ty
        for i, lay in enumerate(list(chain) + [None]):
            t = ty if lay is None else f"tensor<{bm}x{bn}xf16, {lay.text()}>"
            lines.append(f'    %cv{i} = "tilegpu.convert_layout"({prev}) : ({prev_ty}) -> {t}')
            prev, prev_ty = f"%cv{i}", t
        store = m.group(0).replace(f"({ptrs}, {val})", f"({ptrs}, {prev})")
        return text.replace(m.group(0), "\n".join(lines) + "\n    " + store.strip())
    return rewrite


def _mma(version, warps, instr):
    from tilework.dialects.layout import NvidiaMma
    return NvidiaMma(version, warps, instr)


@pytest.mark.parametrize("chain, shape, warps, trans, plain_trans", [
    (["A"], (64, 32), 4, False, (1, 0)),
    (["B"], (32, 64), 4, False, (0, 1)),
    # column-major loads: the default blocked layout still runs along dim 1 (the coalescing
    # default follows the last dim), so the buffer and the instructions are the same
    (["B"], (32, 64), 4, True, (0, 1)),
    (["A"], (64, 32), 4, True, (1, 0)),
    (["A8"], (128, 64), 8, False, (1, 0)),
    (["B8"], (64, 128), 8, False, (0, 1)),
    (["WG"], (64, 32), 4, False, (1, 0)),     # a wgmma accumulator has the same fragments
])
def test_ldmatrix_roundtrip_emulated(chain, shape, warps, trans, plain_trans, rng):
    """blocked f16 -> (ldmatrix) -> layout -> blocked keeps every value; the emulator checks
    ldmatrix's row addresses (16-byte aligned shared memory) and races."""
    from tilework.dialects.layout import DotOperand
    m2 = _mma(2, (2, 2), (16, 8))
    m8 = _mma(2, (2, 4), (16, 8))
    lays = {"A": DotOperand(0, m2, 2), "B": DotOperand(1, m2, 2), "A8": DotOperand(0, m8, 2),
            "B8": DotOperand(1, m8, 2), "WG": _mma(3, (4, 1), (64, 32, 16))}
    P = ptr(tl.float16)
    emu = Emulator.from_kernel(_copy16, {"x": P, "o": P},
                               {"BM": shape[0], "BN": shape[1], "TRANS": trans},
                               "sm_90a" if chain == ["WG"] else "sm_80", warps,
                               rewrite=_through16([lays[c] for c in chain]))
    text = str(emu.module)
    got = (len(re.findall(r"nvvm.ldmatrix .*mma_layout<row>", text)),
           len(re.findall(r"nvvm.ldmatrix .*mma_layout<col>", text)))
    assert (got[0] > 0, got[1] > 0) == tuple(bool(x) for x in plain_trans), got
    x = rng.standard_normal(shape).astype(np.float16)
    out = np.zeros(shape, np.float16)
    with emu.context:
        emu.run((1,), x, out)
    np.testing.assert_array_equal(out, x)
