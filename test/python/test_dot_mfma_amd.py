"""tl.dot on CDNA matrix cores (MFMA): the layouts and instruction chosen per target and option,
the lowered code run on the SIMT emulator (MFMA from the ISA's register layouts in
simt_mfma_amd.py) against numpy on random inputs, tails included, and the ISA (`v_mfma_*`
present, no scratch).  Error bounds and inputs are test_dot.py's."""
import re

import numpy as np
import pytest

from tilework import CompileOptions
from tilework.backends import parse_target
from tilework.compiler.driver import ASTSource, compile
from tilework.dialects.layout_amd import AmdMfma

from dot_kernels import matmul_kernel
from simt_emulator import Emulator
from simt_mfma_amd import fp8_values
from test_dot import CASES, _operands, cdiv, check_matmul, matmul_signature


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def _consts(case, bm, bn, bk, plus_eq=False):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1], PLUS_EQ=plus_eq)


def _emulate(case, target, m, n, k, bm, bn, bk, warps, rng, plus_eq=False, **opts):
    emu = _emulator(matmul_signature(case), _consts(case, bm, bn, bk, plus_eq), target,
                    warps, **opts)
    a, b, a64, b64 = _operands(rng, case, m, k, n)
    c = np.full((m, n), 7, CASES[case][4])
    emu.run((cdiv(m, bm), cdiv(n, bn)), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    check_matmul(c, a64, b64, case, bk)
    return emu


def _emulator(sig, consts, target, warps, **opts):
    """Emulator.from_kernel with compile options (kpack, matrix_instr_nonkdim)."""
    ck = compile(ASTSource(matmul_kernel, sig, consts, {}), target,
                 CompileOptions(num_warps=warps, **opts), cache=False)
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], target, warps)
    emu.compiled = ck
    return emu


def _mfmas(emu):
    return sorted(set(re.findall(r"rocdl\.mfma\.[\w.]+", str(emu.module))))


@pytest.mark.parametrize("target, case, op", [
    ("gfx942", "fp16_acc32", "rocdl.mfma.f32.32x32x8f16"),
    ("gfx942", "fp16_acc16", "rocdl.mfma.f32.32x32x8f16"),
    ("gfx942", "bf16", "rocdl.mfma.f32.32x32x8bf16.1k"),
    ("gfx942", "int8", "rocdl.mfma.i32.32x32x16.i8"),
    ("gfx942", "fp32", "rocdl.mfma.f32.32x32x4.xf32"),
    ("gfx90a", "int8", "rocdl.mfma.i32.32x32x8i8"),
    ("gfx950", "fp16_acc32", "rocdl.mfma.f32.32x32x16.f16"),
    ("gfx950", "bf16", "rocdl.mfma.f32.32x32x16.bf16"),
])
def test_matmul_on_mfma_emulated(target, case, op, rng):
    emu = _emulate(case, target, 70, 90, 100, 64, 64, 32, 4, rng)  # M, N, K tails
    assert _mfmas(emu) == [op]


@pytest.mark.parametrize("target, case, op", [
    ("gfx942", "fp16_acc32", "rocdl.mfma.f32.16x16x16f16"),
    ("gfx90a", "bf16", "rocdl.mfma.f32.16x16x16bf16.1k"),
    ("gfx942", "int8", "rocdl.mfma.i32.16x16x32.i8"),
    ("gfx950", "fp16_acc32", "rocdl.mfma.f32.16x16x32.f16"),
])
def test_16x16_for_narrow_tiles_emulated(target, case, op, rng):
    emu = _emulate(case, target, 20, 40, 70, 16, 32, 32, 2, rng)
    assert _mfmas(emu) == [op]


@pytest.mark.parametrize("nonkdim, op", [(16, "rocdl.mfma.f32.16x16x16f16"),
                                         (32, "rocdl.mfma.f32.32x32x8f16")])
@pytest.mark.parametrize("kpack", [1, 2])
def test_options_pick_the_instruction_emulated(nonkdim, op, kpack, rng):
    emu = _emulate("fp16_acc32", "gfx942", 50, 70, 80, 64, 64, 32, 4, rng,
                   matrix_instr_nonkdim=nonkdim, kpack=kpack)
    assert _mfmas(emu) == [op]
    mfma = (f"#tilegpu.mfma<array<i32: 2, 2>, array<i32: {nonkdim}, {nonkdim}>, false>, "
            f"{4 * kpack} : i32>")
    assert f"#tilegpu.dot_operand<0 : i32, {mfma}" in emu.compiled.asm["tilegpu"]


def test_plus_equals_accumulator_emulated(rng):
    emu = _emulate("fp16_acc32", "gfx942", 50, 40, 100, 32, 32, 16, 4, rng, plus_eq=True)
    assert _mfmas(emu) == ["rocdl.mfma.f32.32x32x8f16"]



_FINITE = {"fp8": lambda r: (r & 0x7F) != 0x7F, "bf8": lambda r: (r & 0x7C) != 0x7C}


def fp8_bits(rng, kind, shape):
    """Random OCP fp8 ("fp8": e4m3) or bf8 (e5m2) bit patterns; non-finite ones become 1.0."""
    r = rng.integers(0, 256, shape).astype(np.uint8)
    return np.where(_FINITE[kind](r), r, 0x38).astype(np.uint8)

@pytest.mark.parametrize("a_kind, b_kind, op", [
    ("fp8", "fp8", "rocdl.mfma.f32.32x32x16.fp8.fp8"),
    ("bf8", "fp8", "rocdl.mfma.f32.32x32x16.bf8.fp8"),
])
def test_fp8_on_gfx950_emulated(a_kind, b_kind, op, rng):
    import tilework.language as tl
    from test_dot import ptr
    tys = {"fp8": tl.float8e4nv, "bf8": tl.float8e5}
    sig = {"a_ptr": ptr(tys[a_kind]), "b_ptr": ptr(tys[b_kind]), "c_ptr": ptr(tl.float32)}
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                      "stride_bn", "stride_cm", "stride_cn")})
    consts = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, ACC=tl.float32, PLUS_EQ=False)
    emu = _emulator(sig, consts, "gfx950", 4)
    assert _mfmas(emu) == [op]
    m, n, k = 70, 50, 80
    a, b = fp8_bits(rng, a_kind, (m, k)), fp8_bits(rng, b_kind, (k, n))
    c = np.zeros((m, n), np.float32)
    emu.run((cdiv(m, 64), cdiv(n, 64)), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    a64, b64 = fp8_values(a, a_kind), fp8_values(b, b_kind)
    ref = a64 @ b64
    np.testing.assert_allclose(c, ref, rtol=0, atol=(k * 2.0**-23 * (np.abs(a64) @ np.abs(b64))
                                                     ).max() + 1e-30)


# ---- RDNA: WMMA ------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("case", ["fp16_acc32", "fp16_acc16"])
def test_matmul_on_wmma_emulated(target, case, rng):
    emu = _emulate(case, target, 70, 40, 50, 32, 32, 16, 4, rng)  # M, N, K tails
    assert "rocdl.wmma.f32.16x16x16.f16" in str(emu.module)
    version = 1 if target == "gfx1100" else 2
    assert f"#tilegpu.wmma<{version} : i32, array<i32: 2, 2>>" in emu.compiled.asm["tilegpu"]
    assert "v_wmma_f32_16x16x16_f16" in emu.compiled.asm["amdgcn"]


def test_wmma_plus_equals_emulated(rng):
    emu = _emulate("fp16_acc32", "gfx1201", 40, 40, 70, 32, 32, 32, 2, rng, plus_eq=True)
    assert "rocdl.wmma.f32.16x16x16.f16" in str(emu.module)


@pytest.mark.parametrize("target", ["gfx1100", "gfx1201"])
@pytest.mark.parametrize("case, op, isa", [
    ("bf16", "rocdl.wmma.f32.16x16x16.bf16", "v_wmma_f32_16x16x16_bf16"),
    ("int8", "rocdl.wmma.i32.16x16x16.iu8", "v_wmma_i32_16x16x16_iu8"),
])
def test_bf16_int8_on_wmma_emulated(target, case, op, isa, rng):
    bk = 32 if case == "int8" else 16  # (int8 dots take K >= 32)
    emu = _emulate(case, target, 70, 40, 50, 32, 32, bk, 4, rng)  # M, N, K tails
    assert op in str(emu.module)
    assert isa in emu.compiled.asm["amdgcn"]
    assert not re.search(r"^\s*(scratch|buffer)_(load|store)", emu.compiled.asm["amdgcn"], re.M)


@pytest.mark.parametrize("a_kind, b_kind", [("fp8", "fp8"), ("bf8", "fp8")])
def test_fp8_on_gfx1201_wmma_emulated(a_kind, b_kind, rng):
    import tilework.language as tl
    from test_dot import ptr
    tys = {"fp8": tl.float8e4nv, "bf8": tl.float8e5}
    sig = {"a_ptr": ptr(tys[a_kind]), "b_ptr": ptr(tys[b_kind]), "c_ptr": ptr(tl.float32)}
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                      "stride_bn", "stride_cm", "stride_cn")})
    consts = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, ACC=tl.float32, PLUS_EQ=False)
    emu = _emulator(sig, consts, "gfx1201", 4)
    assert f"rocdl.wmma.f32.16x16x16.{a_kind}_{b_kind}" in str(emu.module)
    assert f"v_wmma_f32_16x16x16_{a_kind}_{b_kind}" in emu.compiled.asm["amdgcn"]
    m, n, k = 40, 50, 70
    a, b = fp8_bits(rng, a_kind, (m, k)), fp8_bits(rng, b_kind, (k, n))
    c = np.zeros((m, n), np.float32)
    emu.run((cdiv(m, 32), cdiv(n, 32)), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    a64, b64 = fp8_values(a, a_kind), fp8_values(b, b_kind)
    np.testing.assert_allclose(c, a64 @ b64, rtol=0, atol=(
        k * 2.0**-23 * (np.abs(a64) @ np.abs(b64))).max() + 1e-30)


@pytest.mark.parametrize("target, case", [("gfx1100", "fp32"), ("gfx1201", "fp32"),
                                          ("gfx1100", "fp64")])
def test_other_types_stay_on_fma_on_rdna(target, case):
    ck = compile(ASTSource(matmul_kernel, matmul_signature(case), _consts(case, 32, 32, 32), {}),
                 target, CompileOptions(num_warps=4), cache=False)
    assert "#tilegpu.wmma" not in ck.asm["tilegpu"] and "v_wmma" not in ck.asm["amdgcn"]


def test_fp8_stays_on_fma_on_gfx1100():  # RDNA3 has no fp8 WMMA
    import tilework.language as tl
    from test_dot import ptr
    sig = {"a_ptr": ptr(tl.float8e4nv), "b_ptr": ptr(tl.float8e4nv), "c_ptr": ptr(tl.float32)}
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                      "stride_bn", "stride_cm", "stride_cn")})
    consts = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, ACC=tl.float32, PLUS_EQ=False)
    ck = compile(ASTSource(matmul_kernel, sig, consts, {}), "gfx1100",
                 CompileOptions(num_warps=4), cache=False)
    assert "#tilegpu.wmma" not in ck.asm["tilegpu"] and "v_wmma" not in ck.asm["amdgcn"]


@pytest.mark.parametrize("target, case", [("gfx90a", "fp32"), ("gfx950", "fp32"),
                                          ("gfx942", "fp64")])
def test_types_without_mfma_stay_on_fma(target, case):
    ck = compile(ASTSource(matmul_kernel, matmul_signature(case), _consts(case, 32, 32, 32), {}),
                 target, CompileOptions(num_warps=4), cache=False)
    assert "#tilegpu.mfma" not in ck.asm["tilegpu"] and "v_mfma" not in ck.asm["amdgcn"]
