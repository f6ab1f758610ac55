"""AMD's compile options (waves_per_eu, matrix_instr_nonkdim, kpack): validated with clear
errors, part of the options key and the disk cache key, CLI flags; and the
per-target facts (fp8 formats, code-object version, waves per EU)."""
import pytest

from tilework import CompileOptions
from tilework.backends import parse_target
from tilework.compiler.cache import FileCache
from tilework.compiler.driver import ASTSource, compile

import tilework.language as tl
from dot_kernels import matmul_kernel
from test_dot import CASES, matmul_signature


@pytest.mark.parametrize("kw, message", [
    (dict(waves_per_eu=-1), "waves_per_eu must be an int between 0 (no hint) and 16, got -1"),
    (dict(waves_per_eu=17), "waves_per_eu must be an int between 0 (no hint) and 16, got 17"),
    (dict(waves_per_eu=1.5), "waves_per_eu must be an int between 0 (no hint) and 16, got 1.5"),
    (dict(matrix_instr_nonkdim=8), "matrix_instr_nonkdim must be 0 (chosen per dot), 16 or 32, "
                                   "got 8"),
    (dict(kpack=4), "kpack must be 1 or 2, got 4"),
])
def test_bad_values(kw, message):
    with pytest.raises(ValueError) as e:
        CompileOptions(**kw)
    assert str(e.value) == message


@pytest.mark.parametrize("target, kw, message", [
    ("gfx1100", dict(matrix_instr_nonkdim=32), "matrix_instr_nonkdim=32 needs MFMA (CDNA); "
     "gfx1100 has WMMA, 16x16 only: use 0 or 16"),
    ("gfx1201", dict(kpack=2), "kpack=2 applies to MFMA (CDNA); gfx1201 has WMMA: use kpack=1"),
    ("gfx942", dict(waves_per_eu=9), "waves_per_eu=9: gfx942 runs at most 8 waves per EU"),
])
def test_target_refuses(target, kw, message):
    with pytest.raises(ValueError) as e:
        CompileOptions(**kw).check_target(parse_target(target))
    assert str(e.value) == message


def test_accepted_and_ignored_on_nvidia():
    for t in ("gfx942", "gfx950", "gfx90a"):
        CompileOptions(waves_per_eu=8, matrix_instr_nonkdim=32, kpack=2).check_target(
            parse_target(t))
    CompileOptions(waves_per_eu=16, matrix_instr_nonkdim=16).check_target(parse_target("gfx1100"))
    # one autotune list for both vendors, as in Triton: NVIDIA ignores them
    CompileOptions(waves_per_eu=2, kpack=2).check_target(parse_target("sm_90a"))


def test_in_the_keys(tmp_path):
    keys = {CompileOptions().key(), CompileOptions(waves_per_eu=2).key(),
            CompileOptions(matrix_instr_nonkdim=16).key(), CompileOptions(kpack=2).key()}
    assert len(keys) == 4
    fc = FileCache(str(tmp_path / "c"))
    src = ASTSource(matmul_kernel, matmul_signature("fp16_acc32"),
                    dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, ACC=CASES["fp16_acc32"][1],
                         PLUS_EQ=False), {})
    a = compile(src, "gfx942", CompileOptions(), cache=fc)
    b = compile(src, "gfx942", CompileOptions(matrix_instr_nonkdim=16), cache=fc)
    assert a.key != b.key
    assert "array<i32: 32, 32>" in a.asm["tilegpu"] and "array<i32: 16, 16>" in b.asm["tilegpu"]


def test_cli_flags():
    import argparse
    from tilework.tools.cli import add_option_flags
    ap = argparse.ArgumentParser()
    add_option_flags(ap)
    ns = ap.parse_args(["--waves-per-eu", "2", "--matrix-instr-nonkdim", "16", "--kpack", "2"])
    assert (ns.waves_per_eu, ns.matrix_instr_nonkdim, ns.kpack) == (2, 16, 2)


@pytest.mark.parametrize("arch, fp8, waves", [
    ("gfx90a", (), 8), ("gfx942", ("fnuz",), 8), ("gfx950", ("ocp",), 8),
    ("gfx1100", (), 16), ("gfx1101", (), 16), ("gfx1200", ("ocp",), 16),
    ("gfx1201", ("ocp",), 16),
])
def test_target_facts(arch, fp8, waves):
    t = parse_target(arch)
    assert (t.fp8, t.code_object, t.max_waves_per_eu) == (fp8, 5, waves)
    assert parse_target("sm_90a").code_object == 0 and parse_target("sm_90a").fp8 == ()


def test_fp8_on_gfx942_stays_on_fma():
    """gfx942's MFMA reads fnuz fp8; the language's fp8 types are OCP: FMA, not MFMA."""
    sig = {"a_ptr": tl.pointer_type(tl.float8e4nv), "b_ptr": tl.pointer_type(tl.float8e4nv),
           "c_ptr": tl.pointer_type(tl.float32)}
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                      "stride_bn", "stride_cm", "stride_cn")})
    consts = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, ACC=tl.float32, PLUS_EQ=False)
    ck = compile(ASTSource(matmul_kernel, sig, consts, {}), "gfx942", CompileOptions(),
                 cache=False)
    assert "#tilegpu.mfma" not in ck.asm["tilegpu"] and "v_mfma" not in ck.asm["amdgcn"]
    ck = compile(ASTSource(matmul_kernel, sig, consts, {}), "gfx950", CompileOptions(),
                 cache=False)
    assert "v_mfma_f32_32x32x16_fp8_fp8" in ck.asm["amdgcn"]
