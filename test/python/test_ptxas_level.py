"""The ptxas level chosen per kernel (backends/nvidia/ptxas_level.py): -O1 for a huge tile's
kernel, whose values pinned across a store far exceed the register file; -O3 (the same flags
and PTX as before) for ordinary kernels; an explicit opt_level always wins.  Compile-only."""
import subprocess

import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends.nvidia import compiler as nvidia
from tilework.backends.nvidia.ptxas_level import (PINNED_LIMIT, pinned_registers,
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
    calls, run = [], subprocess.run

    def recording(cmd, *a, **k):
        if "-arch=sm_90a" in cmd:
            calls.append(cmd)
        return run(cmd, *a, **k)
    monkeypatch.setattr(nvidia.subprocess, "run", recording)
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


def test_example_kernels_keep_O3():
    from main import AOT, WARPS
    for mod, name, sig, constexprs in AOT:
        signature = {k: tl.str_to_ty(v) for k, v in sig.items()}
        attrs = {k: {"tile.divisibility": 16} for k in sig}
        fn = getattr(mod, name)
        ck = compile(ASTSource(getattr(fn, "base_fn", fn), signature, constexprs, attrs), "sm_90a",
                     CompileOptions(num_warps=WARPS.get(name, 4)), cache=False)
        assert pinned_registers(ck.asm["ptx"]) <= PINNED_LIMIT // 2, name
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
