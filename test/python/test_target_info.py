"""`tl.target_info` (compile-time answers for the compile target; the interpreter's for the
target it stands in for) and `tl.condition` (hints accepted and ignored): compiled for NVIDIA
and AMD targets (the branch taken read off the IR, and run on gpu_sim for sm_*), interpreted,
and their rejecting paths."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

import gpu_sim


@tilework.jit
def k_info(o):
    code = 0
    if tl.target_info.is_cuda():
        code += 1
    if tl.target_info.cuda_capability_geq(9, 0):
        code += 2
    if tl.target_info.cuda_capability_geq(8):
        code += 4
    if tl.target_info.is_hip():
        code += 8
    if tl.target_info.is_hip_cdna3():
        code += 16
    if tl.target_info.is_hip_cdna4():
        code += 32
    t = tl.target_info.current_target()
    if t is not None:
        if t.warp_size == 64:
            code += 64
        if t.backend == "cuda":
            if t.arch >= 90:
                code += 128
    tl.store(o, code)


EXPECTED = {"sm_75": 1, "sm_80": 1 + 4, "sm_90a": 1 + 2 + 4 + 128, "sm_120": 1 + 2 + 4 + 128,
            "gfx90a": 8 + 64, "gfx942": 8 + 16 + 64, "gfx950": 8 + 32 + 64, "gfx1100": 8}
SIG = {"o": tl.pointer_type(tl.int32)}


@pytest.mark.parametrize("target", sorted(EXPECTED))
def test_compile_time_answers(target):
    ck = compile(ASTSource(k_info, SIG, {}, {}), target, cache=False)
    tile = ck.asm["tile"]
    assert "scf.if" not in tile  # constexpr conditions: no runtime branch
    consts = {int(v) for v in re.findall(r"arith.constant (\d+) : i32", tile)}
    assert EXPECTED[target] in consts
    if target.startswith("sm_"):
        out = np.full(1, -1, np.int32)
        gpu_sim.run(ck, (1, 1, 1), out)
        assert out[0] == EXPECTED[target]


@pytest.mark.parametrize("target, want", [(None, 0), ("sm_90a", EXPECTED["sm_90a"]),
                                          ("gfx942", EXPECTED["gfx942"])])
def test_interpreter_answers_for_its_target(target, want, monkeypatch):
    monkeypatch.delenv("TILEWORK_TARGET", raising=False)
    out = np.full(1, -1, np.int32)
    k = tilework.jit(k_info.fn, interpret=True)
    if target is None:
        k[(1,)](out)
    else:
        k[(1,)](out, target=target)
    assert out[0] == want


def test_interpreter_reads_tilework_target(monkeypatch):
    monkeypatch.setenv("TILEWORK_TARGET", "gfx950")
    out = np.full(1, -1, np.int32)
    tilework.jit(k_info.fn, interpret=True)[(1,)](out)
    assert out[0] == EXPECTED["gfx950"]


@tilework.jit
def k_guarded(x, y):
    o = tl.arange(0, 128)
    v = tl.load(x + o)
    if tl.target_info.is_cuda():
        v = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [v], dtype=tl.int32,
                                      is_pure=True, pack=1)
    else:
        v = v << 3
    tl.store(y + o, v)


def test_guards_inline_asm_per_target():
    sig = {"x": tl.pointer_type(tl.int32), "y": tl.pointer_type(tl.int32)}
    nv = compile(ASTSource(k_guarded, sig, {}, {}), "sm_90a", cache=False)
    assert "shl.b32 %r" in nv.asm["ptx"] and "inline asm" in nv.asm["ptx"]
    amd = compile(ASTSource(k_guarded, sig, {}, {}), "gfx942", cache=False)
    assert "tile.inline_asm" not in amd.asm["tile"]
    x = np.arange(128, dtype=np.int32) * 7 - 300
    y = np.zeros_like(x)
    tilework.jit(k_guarded.fn, interpret=True)[(1,)](x, y)  # no target: the portable branch
    np.testing.assert_array_equal(y, x << 3)


def test_capability_arguments_are_checked():
    @tilework.jit
    def k(o):
        if tl.target_info.cuda_capability_geq(9.0):
            tl.store(o, 1)
    with pytest.raises(tilework.CompilationError,
                       match=r"cuda_capability_geq takes int constants, got 9\.0, 0"):
        compile(ASTSource(k, SIG, {}, {}), "sm_90a", cache=False)


@tilework.jit
def k_while(x, o, n):
    i = 0
    acc = 0.0
    while tl.condition(i < n, disable_licm=True):
        acc += tl.load(x + i)
        i += 1
    tl.store(o, acc)


def test_condition_is_the_condition():
    x = np.random.default_rng(0).standard_normal(37).astype(np.float32)
    want = np.float32(0)
    for v in x[:29]:
        want = np.float32(want + v)
    out = np.zeros(1, np.float32)
    tilework.jit(k_while.fn, interpret=True)[(1,)](x, out, 29)
    assert out[0] == want
    sig = {"x": tl.pointer_type(tl.float32), "o": tl.pointer_type(tl.float32), "n": tl.int32}
    ck = compile(ASTSource(k_while, sig, {}, {}), "sm_90a", cache=False)
    assert "scf.while" in ck.asm["tile"]
    out = np.zeros(1, np.float32)
    gpu_sim.run(ck, (1, 1, 1), x, out, 29)
    assert out[0] == want


def test_condition_hint_must_be_a_bool():
    @tilework.jit
    def k(o, n):
        i = 0
        while tl.condition(i < n, disable_licm=1):
            i += 1
        tl.store(o, i)
    sig = {"o": tl.pointer_type(tl.int32), "n": tl.int32}
    with pytest.raises(tilework.CompilationError,
                       match="tl.condition: disable_licm must be a constexpr bool, got 1"):
        compile(ASTSource(k, sig, {}, {}), "sm_90a", cache=False)
