"""Launch options: num_ctas (validated, in the cache key), kernel parameters named like a
launch option (they bind as the kernel's arguments), and the CLI's flag for every
CompileOptions field."""
import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.language.function import LAUNCH_OPTIONS
from vector_add import add_kernel

F32 = tl.pointer_type(tl.float32)
SIG = {"x_ptr": F32, "y_ptr": F32, "out_ptr": F32, "n_elements": tl.int32}
VECTOR_ADD = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "vector_add.py")


def _src():
    return ASTSource(add_kernel, SIG, {"BLOCK_SIZE": 256}, {})


@pytest.mark.parametrize("bad", [0, 3, 32, -2, 2.0])
def test_num_ctas_must_be_a_power_of_two_up_to_16(bad):
    with pytest.raises(ValueError, match=rf"num_ctas must be a power of two between 1 and 16, "
                                         rf"got {bad!r}"):
        CompileOptions(num_ctas=bad)


@pytest.mark.parametrize("target", ["sm_80", "sm_89", "gfx942"])
def test_num_ctas_needs_clusters(target):
    with pytest.raises(ValueError, match=rf"num_ctas=4 needs thread block clusters \(NVIDIA "
                                         rf"sm_90 or newer\); target {target} has none: use "
                                         rf"num_ctas=1"):
        compile(_src(), target, CompileOptions(num_ctas=4), cache=False)


def test_num_ctas_is_part_of_the_options_key(tmp_path):
    one = compile(_src(), "sm_90a", CompileOptions(), cache=False)
    two = compile(_src(), "sm_90a", CompileOptions(num_ctas=2), cache=False)
    assert CompileOptions().num_ctas == 1 and "num_ctas" in LAUNCH_OPTIONS
    assert CompileOptions().key() != CompileOptions(num_ctas=2).key()
    assert one.metadata["num_ctas"] == 1 and two.metadata["num_ctas"] == 2
    # the disk cache keeps them apart
    from tilework.compiler.cache import FileCache
    fc = FileCache(str(tmp_path / "c"))
    a = compile(_src(), "sm_90a", CompileOptions(), cache=fc)
    b = compile(_src(), "sm_90a", CompileOptions(num_ctas=2), cache=fc)
    assert a.key != b.key and b.metadata["num_ctas"] == 2


@tilework.jit(interpret=True)
def staged(x, y, n, num_stages: tl.constexpr, num_warps, BLOCK: tl.constexpr):
    """A kernel whose parameters are named like launch options."""
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m) * num_stages + num_warps, mask=m)


def test_parameters_named_like_launch_options_bind_as_arguments():
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    staged[(1,)](x, y, 8, 5, 2.0, BLOCK=8)
    np.testing.assert_array_equal(y, x * 5 + 2)
    y[:] = 0
    staged[(1,)](x, y, 8, num_stages=3, num_warps=1.0, BLOCK=8, num_ctas=1)
    np.testing.assert_array_equal(y, x * 3 + 1)
    values, opts = staged._binder(x, y, 8, num_stages=4, num_warps=0.5, BLOCK=8, maxnreg=64)
    assert values[3:5] == (4, 0.5)
    assert dict(zip(LAUNCH_OPTIONS, opts)) == {
        "num_warps": None, "num_stages": None, "num_ctas": None, "target": None,
        "debug": None, "opt_level": None, "maxnreg": 64, "tma": None,
        "tma_store": None, "tma_store_guard": None, "launch_cooperative_grid": None}
    with pytest.raises(TypeError, match=r"staged\[grid\]\(\.\.\.\): .*missing 1 required "
                                        r"positional argument: 'num_stages'"):
        staged[(1,)](x, y, 8, num_warps=1.0, BLOCK=8)


def test_parameter_named_like_a_launch_option_under_autotune():
    """A Config's num_stages reaches the kernel's `num_stages` parameter (as in Triton)."""
    @tilework.autotune(configs=[tilework.Config({"BLOCK": 8}, num_stages=7)], key=["n"])
    @tilework.jit(interpret=True)
    def k(x, y, n, num_stages: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs) * num_stages)
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    k[(1,)](x, y, 8)
    np.testing.assert_array_equal(y, x * 7)


def test_num_stages_parameter_compiles():
    @tilework.jit
    def k(x, y, num_stages: tl.constexpr):
        tl.store(y + tl.arange(0, 16), tl.load(x + tl.arange(0, 16)) * num_stages)
    ck = compile(ASTSource(k, {"x": F32, "y": F32}, {"num_stages": 3}, {}), "sm_90a",
                 CompileOptions(num_stages=2), cache=False)
    assert "mul" in ck.asm["ptx"]


def _cli(tmp_path, *extra):
    return subprocess.run([sys.executable, "-m", "tilework.tools.cli", "compile",
                           VECTOR_ADD + ":add_kernel", "--signature", "*fp32,*fp32,*fp32,i32",
                           "--constexpr", "BLOCK_SIZE=1024", "--emit", "ptx", "-o",
                           str(tmp_path), *extra], capture_output=True, text=True)


def test_cli_has_a_flag_for_every_compile_option():
    from tilework.tools.cli import add_option_flags
    import argparse
    ap = argparse.ArgumentParser()
    add_option_flags(ap)
    flags = {a.dest for a in ap._actions}
    for f in dataclasses.fields(CompileOptions):
        assert f.name == "target" or f.name in flags, f.name
    ns = ap.parse_args(["--num-stages", "4", "--num-ctas", "2", "--no-enable-fp-fusion",
                        "--debug", "--opt-level", "1"])
    assert (ns.num_stages, ns.num_ctas, ns.enable_fp_fusion, ns.debug, ns.opt_level,
            ns.num_warps, ns.maxnreg) == (4, 2, False, True, 1, None, None)


def test_cli_options_reach_the_compiler(tmp_path):
    r = _cli(tmp_path / "a", "--target", "sm_90a", "--num-stages", "2", "--num-ctas", "2",
             "--opt-level", "2", "--no-enable-fp-fusion", "--num-warps", "8")
    assert r.returncode == 0, r.stderr
    assert "add_kernel.ptx" in os.listdir(tmp_path / "a")
    r = _cli(tmp_path / "b", "--target", "sm_80", "--num-ctas", "2")
    assert r.returncode == 1
    assert ("error: num_ctas=2 needs thread block clusters (NVIDIA sm_90 or newer); target "
            "sm_80 has none: use num_ctas=1") in r.stderr
    assert "Traceback" not in r.stderr
    r = _cli(tmp_path / "c", "--target", "sm_90a", "--num-stages", "0")
    assert r.returncode == 1 and "num_stages must be a positive int, got 0" in r.stderr
    assert "Traceback" not in r.stderr


@tilework.jit
def _copy(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs) + 1.0)


@pytest.mark.parametrize("opts, message", [
    ({"num_warps": 3}, "num_warps must be a power of 2 between 1 and 32, got 3"),
    ({"num_warps": 64}, "num_warps must be a power of 2 between 1 and 32, got 64"),
    ({"num_stages": 0}, "num_stages must be a positive int, got 0"),
    ({"launch_cooperative_grid": 1}, "launch_cooperative_grid must be a bool, got 1"),
])
def test_the_interpreter_checks_launch_options_as_the_compiler(opts, message):
    """The same error interpreted and compiled (Triton's test_num_warps_pow2: num_warps=3 is
    an AssertionError 'must be a power of 2'; tilework's is also a ValueError)."""
    x = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    y = np.zeros_like(x)
    with pytest.raises(ValueError) as compiled:
        _copy.warmup("*fp32:16", "*fp32:16", BLOCK=16, target="sm_90a", **opts)
    with pytest.raises(ValueError) as interpreted:
        tilework.jit(_copy.fn, interpret=True)[(1,)](x, y, BLOCK=16, **opts)
    assert str(compiled.value) == str(interpreted.value) == message
    assert isinstance(interpreted.value, tilework.errors.InterpreterError)
    if "num_warps" in opts:
        assert isinstance(compiled.value, AssertionError)
        assert isinstance(interpreted.value, AssertionError)
    assert not y.any()


def test_the_interpreter_runs_with_every_power_of_2_warps():
    x = np.random.default_rng(1).standard_normal(16).astype(np.float32)
    for w in (1, 2, 4, 8, 16, 32):
        y = np.zeros_like(x)
        tilework.jit(_copy.fn, interpret=True)[(1,)](x, y, BLOCK=16, num_warps=w)
        np.testing.assert_array_equal(y, x + np.float32(1.0))
