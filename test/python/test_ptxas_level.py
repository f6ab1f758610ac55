"""The ptxas level chosen per kernel (backends/nvidia/ptxas_level.py): -O1 for a huge tile's
kernel, whose values pinned across a store far exceed the register file; -O3 (the same flags
and PTX as before) for ordinary kernels; an explicit opt_level always wins.  And the launch
bounds: `.minnctapersm 1` for a kernel whose loaded data live across a store or barrier
exceed the registers (a 32K softmax: 255 registers instead of 32 and most of the row
spilled), nowhere else.  Compile-only."""
import subprocess

import gpu_sim
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends.nvidia import compiler as nvidia
from tilework.backends.nvidia.ptxas_level import (LIVE_LIMIT, PINNED_LIMIT, huge_tile_bounds,
                                                  live_registers, pinned_registers,
                                                  ptxas_opt_level)
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type(tl.float32)


@tilework.jit
def big_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


@tilework.jit
def big_softmax(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + tl.program_id(0) * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


@tilework.jit
def big_rowsum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


@pytest.fixture(autouse=True)
def no_ptxas(request, monkeypatch):
    """PTX only (the driver then JITs it), except in the tests that run ptxas."""
    if "ptxas_calls" not in request.fixturenames:
        monkeypatch.setattr(nvidia, "find_ptxas", lambda: None)


def _ptx(fn, block, **options):
    sig = {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n": tl.int32}
    if fn is not big_add:
        sig = {"x_ptr": P, "out_ptr": P, "n": tl.int32}
    src = ASTSource(fn, sig, {"BLOCK": block}, {k: {"tile.divisibility": 16} for k in sig})
    return compile(src, "sm_90a", CompileOptions(num_warps=4, **options),
                   cache=False).asm["ptx"]


@pytest.fixture
def ptxas_calls(monkeypatch):
    """The ptxas command lines the NVIDIA backend runs (ptxas itself still runs)."""
    calls, popen = [], subprocess.Popen

    def recording(cmd, *a, **k):
        if "-arch=sm_90a" in cmd:
            calls.append(cmd)
        return popen(cmd, *a, **k)
    monkeypatch.setattr(nvidia.subprocess, "Popen", recording)  # (subprocess.run uses it)
    return calls


needs_ptxas = pytest.mark.skipif(nvidia.find_ptxas() is None, reason="no ptxas found")


def test_pinned_registers_counts_values_live_across_a_store():
    ptx = """
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<3>;
	ld.param.b64 	%rd1, [k_param_0];
	ld.global.v4.b32 	{%r1, %r2, %r3, %r4}, [%rd1];
	add.f32 	%r5, %r1, %r2;
	st.global.b32 	[%rd1], %r5;
	add.f32 	%r6, %r3, %r4;
	st.global.b32 	[%rd1+4], %r6;
	ret;
}
"""
    # across the first store: the loaded %r3 and %r4, not the parameter %rd1 (an address)
    assert pinned_registers(ptx) == 2
    # no store before the last: values only feeding arithmetic pin nothing
    assert pinned_registers(ptx.replace("st.global.b32 \t[%rd1], %r5;\n", "")) == 0


def test_pinned_registers_ignores_shared_memory_and_values_from_before_a_barrier():
    """A reduction's partials read from shared memory, and a row loaded before the barrier
    of a reduction, are pinned by the data flow, not by the stores' order: they count 0."""
    ptx = """
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<3>;
	ld.param.b64 	%rd1, [k_param_0];
	ld.global.v4.b32 	{%r1, %r2, %r3, %r4}, [%rd1];
	st.shared.b32 	[%rd1], %r1;
	bar.sync 	0;
	ld.shared.v4.b32 	{%r5, %r6, %r7, %r8}, [%rd1];
	st.global.b32 	[%rd1], %r5;
	add.f32 	%r9, %r2, %r6;
	add.f32 	%r10, %r3, %r7;
	add.f32 	%r11, %r4, %r8;
	st.global.v4.b32 	[%rd1], {%r9, %r10, %r11, %r2};
	ret;
}
"""
    assert pinned_registers(ptx) == 0
    # without the barrier the loaded %r2, %r3, %r4 are live across both stores
    no_bar = ptx.replace("bar.sync \t0;\n", "")
    assert pinned_registers(no_bar) == 3
    assert pinned_registers(no_bar.replace("ld.global.v4", "ld.shared.v4")) == 0


def test_huge_vector_add_gets_ptxas_O1():
    ptx = _ptx(big_add, 32768)
    assert pinned_registers(ptx) > PINNED_LIMIT
    assert ptxas_opt_level(ptx, CompileOptions()) == 1


def test_explicit_opt_level_wins():
    ptx = _ptx(big_add, 32768)
    for level in (0, 1, 2, 3):
        assert ptxas_opt_level(ptx, CompileOptions(opt_level=level)) == level
    assert CompileOptions().key() != CompileOptions(opt_level=3).key()


def test_explicit_opt_level_from_the_environment_wins(monkeypatch):
    ptx = _ptx(big_add, 32768)
    monkeypatch.setenv("TILEWORK_OPT_LEVEL", "3")
    assert ptxas_opt_level(ptx, CompileOptions.from_env()) == 3
    monkeypatch.delenv("TILEWORK_OPT_LEVEL")
    assert CompileOptions.from_env().opt_level is None
    assert CompileOptions().llvm_opt_level == 3


@pytest.mark.parametrize("block", [1024, 4096, 16384])
def test_ordinary_vector_add_keeps_O3_and_its_ptx(block):
    ptx = _ptx(big_add, block)
    assert pinned_registers(ptx) <= PINNED_LIMIT
    assert ptxas_opt_level(ptx, CompileOptions()) == 3
    assert ptx == _ptx(big_add, block, opt_level=3)  # the LLVM level is unchanged


def test_huge_row_sum_and_softmax_keep_O3():
    """ptxas -O3 interleaves a row sum's loads with the adds reducing it (no spill at 128K,
    -O1 spills); a softmax's row is pinned by its reductions (-O1 spills as much, no faster):
    neither pins loaded data across a store."""
    for fn in (big_rowsum, big_softmax):
        ptx = _ptx(fn, 131072)
        assert pinned_registers(ptx) == 0
        assert ptxas_opt_level(ptx, CompileOptions()) == 3


def test_live_registers_count_data_live_across_a_barrier():
    """A row held across a reduction's barrier counts (pinned_registers does not count it),
    also where an earlier block loaded it; loads feeding only arithmetic count nothing."""
    ptx = """
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<3>;
	ld.param.b64 	%rd1, [k_param_0];
	ld.global.v4.b32 	{%r1, %r2, %r3, %r4}, [%rd1];
	max.f32 	%r5, %r1, %r2;
	st.shared.b32 	[%rd1], %r5;
	bar.sync 	0;
	ld.shared.b32 	%r6, [%rd1];
	sub.f32 	%r7, %r1, %r6;
	sub.f32 	%r8, %r2, %r6;
	sub.f32 	%r9, %r3, %r6;
	sub.f32 	%r10, %r4, %r6;
	st.global.v4.b32 	[%rd1], {%r7, %r8, %r9, %r10};
	ret;
}
"""
    # across st.shared: %r1..%r4 (%r5 is read by it); across bar.sync: %r1..%r4
    assert live_registers(ptx) == 4
    assert pinned_registers(ptx) == 0
    # the row loaded in an earlier block (a loop's prefetch) counts where it is held
    prefetched = ptx.replace("st.shared.b32 \t[%rd1], %r5;\n", "").replace(
        "bar.sync \t0;", "bra.uni \t$L1;\n$L1:\n\tbar.sync \t0;")
    assert live_registers(prefetched) == 4
    assert live_registers(prefetched.replace("bar.sync \t0;", "")) == 0
    sums = """
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<3>;
	ld.param.b64 	%rd1, [k_param_0];
	ld.global.v4.b32 	{%r1, %r2, %r3, %r4}, [%rd1];
	add.f32 	%r5, %r1, %r2;
	add.f32 	%r6, %r3, %r4;
	add.f32 	%r7, %r5, %r6;
	st.global.b32 	[%rd1], %r7;
	ret;
}
"""
    assert live_registers(sums) == 0


@pytest.mark.parametrize("fn,block", [(big_softmax, 32768), (big_softmax, 65536),
                                      (big_add, 32768)])
def test_huge_tile_gets_min_ctas_1(fn, block):
    ptx = _ptx(fn, block)
    assert live_registers(ptx) > LIVE_LIMIT
    lines = ptx.splitlines()
    i = lines.index(".maxntid 128, 1, 1")
    assert lines[i + 1] == ".minnctapersm 1"
    assert ptx.count(".minnctapersm") == 1
    # off: the PTX LLVM made, unchanged
    off = _ptx(fn, block, huge_tile_bounds=False)
    assert ".minnctapersm" not in off and off == ptx.replace(".minnctapersm 1\n", "")
    # a register cap given by the user bounds the kernel already
    assert ".minnctapersm" not in _ptx(fn, block, maxnreg=128)


@pytest.mark.parametrize("fn,block", [(big_softmax, 4096), (big_softmax, 16384),
                                      (big_add, 16384), (big_rowsum, 131072)])
def test_ordinary_tile_keeps_its_ptx(fn, block):
    """Below the limit (a 16K vector add: 229 registers, no spill; with the directive 254 and
    a spill) and for a row sum (no data held across anything) the PTX is unchanged."""
    ptx = _ptx(fn, block)
    assert live_registers(ptx) <= LIVE_LIMIT
    assert ".minnctapersm" not in ptx
    assert ptx == _ptx(fn, block, huge_tile_bounds=False)
    assert huge_tile_bounds(ptx, CompileOptions()) is ptx


def test_huge_tile_bounds_option_from_the_environment(monkeypatch):
    assert CompileOptions().huge_tile_bounds is True
    monkeypatch.setenv("TILEWORK_HUGE_TILE_BOUNDS", "0")
    assert CompileOptions.from_env().huge_tile_bounds is False
    assert CompileOptions().key() != CompileOptions(huge_tile_bounds=False).key()
    with pytest.raises(ValueError, match="huge_tile_bounds must be a bool, got 1"):
        CompileOptions(huge_tile_bounds=1)


def test_example_kernels_keep_O3():
    from main import AOT, WARPS
    for mod, name, sig, constexprs in AOT:
        signature = {k: tl.str_to_ty(v) for k, v in sig.items()}
        attrs = {k: {"tile.divisibility": 16} for k in sig}
        fn = getattr(mod, name)
        ck = compile(ASTSource(getattr(fn, "base_fn", fn), signature, constexprs, attrs), "sm_90a",
                     CompileOptions(num_warps=WARPS.get(name, 4)), cache=False)
        assert pinned_registers(ck.asm["ptx"]) <= PINNED_LIMIT // 2, name
        assert live_registers(ck.asm["ptx"]) <= LIVE_LIMIT, name  # (at most 128: matmuls)
        assert ".minnctapersm" not in ck.asm["ptx"], name
        assert ptxas_opt_level(ck.asm["ptx"], CompileOptions()) == 3, name


@needs_ptxas
def test_ptxas_command_lines(ptxas_calls):
    sig = {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in sig}

    def run(block, **options):
        ptxas_calls.clear()
        ck = compile(ASTSource(big_add, sig, {"BLOCK": block}, attrs), "sm_90a",
                     CompileOptions(num_warps=4, **options), cache=False)
        return ck, [c[2] for c in ptxas_calls]

    ck, flags = run(1024)
    assert flags == ["-O3"] and ck.metadata["ptxas_opt_level"] == 3
    ck, flags = run(32768)
    assert flags == ["-O1"] and ck.metadata["ptxas_opt_level"] == 1
    ck, flags = run(32768, opt_level=3)
    assert flags == ["-O3"] and ck.metadata["ptxas_opt_level"] == 3
    ck, flags = run(32768, opt_level=2)
    assert flags == ["-O2"] and ck.metadata["ptxas_opt_level"] == 2


@needs_ptxas
@pytest.mark.parametrize("fn", [big_softmax, big_add])
def test_huge_tile_registers_and_spills(fn, ptxas_calls):
    """ptxas -v of the 32K kernels (4 warps): without the directive ptxas settles on 32
    registers and spills most of the tile (softmax: 3,460 bytes of spill stores, vector add
    at -O1 1,136); with it 255 registers and a few hundred bytes (216; 1,136 at -O1)."""
    sig = {"x_ptr": P, "out_ptr": P, "n": tl.int32}
    if fn is big_add:
        sig = {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in sig}
    ck = compile(ASTSource(fn, sig, {"BLOCK": 32768}, attrs), "sm_90a",
                 CompileOptions(num_warps=4), cache=False)
    assert ck.metadata["min_ctas_per_sm"] == 1
    assert ck.n_regs > 128, ck.metadata["ptxas_info"]
    assert 4 * ck.n_spills < (512 if fn is big_softmax else 2048), ck.metadata["ptxas_info"]
    if fn is big_softmax:
        old = compile(ASTSource(fn, sig, {"BLOCK": 32768}, attrs), "sm_90a",
                      CompileOptions(num_warps=4, huge_tile_bounds=False), cache=False)
        assert 4 * old.n_spills > 4 * 4 * ck.n_spills, old.metadata["ptxas_info"]


def test_huge_tiles_values_on_the_simulator():
    """The kernels that get the bound, run (their llir, on gpu_sim) against numpy: a 32K
    softmax over rows of 32K - 5 columns (the masked tail loads -inf), a 32K vector add over
    2 * 32K - 7 elements."""
    rng = np.random.default_rng(7)
    sig = {"x_ptr": P, "out_ptr": P, "n": tl.int32}
    ck = compile(ASTSource(big_softmax, sig, {"BLOCK": 32768}, {}), "sm_90a",
                 CompileOptions(num_warps=4), cache=False)
    assert ".minnctapersm 1" in ck.asm["ptx"]
    n = 32768 - 5
    x = rng.standard_normal((2, n)).astype(np.float32) * 4
    out = np.zeros_like(x)
    gpu_sim.run(ck, (2,), x, out, n)
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, ref / ref.sum(1, keepdims=True), rtol=1e-5, atol=1e-12)
    sig = {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n": tl.int32}
    ck = compile(ASTSource(big_add, sig, {"BLOCK": 32768}, {}), "sm_90a",
                 CompileOptions(num_warps=4), cache=False)
    assert ".minnctapersm 1" in ck.asm["ptx"]
    n = 2 * 32768 - 7
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.full(2 * 32768, 3.0, np.float32)
    gpu_sim.run(ck, (2,), x, y, out, n)
    np.testing.assert_array_equal(out[:n], x + y)
    assert (out[n:] == 3.0).all()  # the masked tail is not written
