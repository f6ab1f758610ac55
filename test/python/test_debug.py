"""tl.device_print, tl.device_assert and the hints tl.assume / tl.max_constancy: output format
in the interpreter, what the compiled code calls (vprintf, __assertfail, llvm.assume) for
sm_80, sm_90a and gfx942, the debug option, and the rejections with their lines.  AMD's
print buffer: test_print_amd.py."""
import os

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile
from tilework.compiler.options import CompileOptions
from located import assert_located, line_of  # noqa: E402

THIS = os.path.abspath(__file__)
TARGETS = ["sm_80", "sm_90a", "gfx942"]
interpreted = tilework.jit(interpret=True)




# ---- device_print --------------------------------------------------------------------------------

def printer(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0)
    tl.device_print("v", v)


def test_print_format_in_the_interpreter(capsys):
    x = np.array([1.5, -2.25, 3.0, 4.0], np.float32)
    interpreted(printer)[(2,)](x, 3, BLOCK=4)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "pid (0, 0, 0) idx (0) v: 1.500000", "pid (0, 0, 0) idx (1) v: -2.250000",
        "pid (0, 0, 0) idx (2) v: 3.000000", "pid (0, 0, 0) idx (3) v: 0.000000",
        "pid (1, 0, 0) idx (0) v: 1.500000", "pid (1, 0, 0) idx (1) v: -2.250000",
        "pid (1, 0, 0) idx (2) v: 3.000000", "pid (1, 0, 0) idx (3) v: 0.000000"]


def test_print_several_values_hex_scalars_and_2d(capsys):
    @interpreted
    def k(n, u, BLOCK: tl.constexpr):
        r = tl.arange(0, BLOCK)
        tl.device_print("n=", n, r - 1, hex=True)
        tl.device_print("grid", r[:, None] * 10 + r[None, :])
        tl.device_print("u ", u)
        tl.device_print("just text")

    k[(1, 2)](-5, 7, BLOCK=2)
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["pid (0, 0, 0) idx () n=: (operand 0) 0xfffffffb",
                       "pid (0, 0, 0) idx (0) n=: (operand 1) 0xffffffff",
                       "pid (0, 0, 0) idx (1) n=: (operand 1) 0x00000000"]
    assert out[3:7] == ["pid (0, 0, 0) idx (0, 0) grid: 0", "pid (0, 0, 0) idx (0, 1) grid: 1",
                        "pid (0, 0, 0) idx (1, 0) grid: 10", "pid (0, 0, 0) idx (1, 1) grid: 11"]
    assert out[7:9] == ["pid (0, 0, 0) idx () u: 7", "pid (0, 0, 0) just text"]
    assert out[9] == "pid (0, 1, 0) idx () n=: (operand 0) 0xfffffffb"


def test_print_wide_index_padding_and_unsigned(capsys):
    @interpreted
    def k(x):
        r = tl.arange(0, 16)
        tl.device_print("r", r.to(tl.uint8) + 250)

    k[(1,)](np.zeros(1, np.int32))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "pid (0, 0, 0) idx ( 0) r: 250" and out[6] == "pid (0, 0, 0) idx ( 6) r: 0"
    assert out[15] == "pid (0, 0, 0) idx (15) r: 9"


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_print_calls_vprintf(target):
    sig = {"x": tl.pointer_type(tl.float32), "n": tl.int32}
    ck = compile(ASTSource(tilework.jit(printer), sig, {"BLOCK": 256}, {}), target, cache=False)
    llir = ck.asm["llir"]
    assert 'c"pid (%u, %u, %u) idx (%3u) v: %f\\0A\\00"' in llir
    assert "declare i32 @vprintf(ptr, ptr)" in llir
    assert "call.uni (retval0), vprintf" in ck.asm["ptx"]
    # floats go as double (C varargs)
    assert "fpext float" in llir


def test_print_escapes_percent_and_prints_once_per_element():
    @tilework.jit
    def k(x, n):
        tl.device_print("100% ", n)
        r = tl.arange(0, 32)  # 32 elements on 128 threads: only owners print
        tl.device_print("r", r)

    ck = compile(ASTSource(k, {"x": tl.pointer_type(tl.int32), "n": tl.int32}, {}, {}),
                 "sm_90a", cache=False)
    llir = ck.asm["llir"]
    assert 'c"pid (%u, %u, %u) idx () 100%%: %i\\0A\\00"' in llir
    assert 'idx (%2u) r: %i' in llir
    assert llir.count("call i32 @vprintf") == 2  # one per op: each thread prints its element


# ---- device_assert -------------------------------------------------------------------------------

def checker(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=1)
    tl.device_assert(v > 0, "v must be positive")  # ASSERT


@pytest.mark.parametrize("target", TARGETS)
def test_assert_only_with_debug(target):
    sig = {"x": tl.pointer_type(tl.int32), "n": tl.int32}
    fn = tilework.jit(checker)
    off = compile(ASTSource(fn, sig, {"BLOCK": 128}, {}), target, cache=False)
    assert "tile.assert" not in off.asm["tile"]
    on = compile(ASTSource(fn, sig, {"BLOCK": 128}, {}), target, CompileOptions(debug=True),
                 cache=False)
    assert '"tile.assert"' in on.asm["tile"] and 'msg = "v must be positive"' in on.asm["tile"]
    llir = on.asm["llir"]
    if target == "gfx942":
        assert "llvm.trap" in llir and "s_trap" in on.asm["amdgcn"]
    else:
        line = line_of(checker, "# ASSERT")
        assert "call void @__assertfail(" in llir and f"i32 {line}," in llir
        assert 'c"v must be positive\\00"' in llir and f'c"{THIS}\\00"' in llir
        assert 'c"checker\\00"' in llir
        assert "call.uni __assertfail" in on.asm["ptx"]


def test_assert_in_the_interpreter():
    x = np.array([3, 1, -2, 5], np.int32)
    fn = interpreted(checker)
    fn[(1,)](x, 2, BLOCK=4)  # the bad element is masked off: other=1
    fn[(1,)](x, 4, BLOCK=4)  # debug off: nothing checked
    with pytest.raises(AssertionError) as ei:
        fn[(1,)](x, 4, BLOCK=4, debug=True)
    msg = str(ei.value)
    assert f"{THIS}:{line_of(checker, '# ASSERT')}" in msg
    assert "device_assert failed in program (0, 0, 0) (element (2,)): v must be positive" in msg


def test_assert_debug_from_the_environment(monkeypatch):
    monkeypatch.setenv("TILEWORK_DEBUG", "1")
    with pytest.raises(AssertionError, match="v must be positive"):
        interpreted(checker)[(1,)](np.array([-1], np.int32), 1, BLOCK=1)


def test_assert_mask():
    @interpreted
    def k(x, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n)
        tl.device_assert(v < 10, "big", mask=offs < n)

    k[(1,)](np.array([1, 2, 3], np.int32), 3, BLOCK=4, debug=True)  # lane 3 is masked off
    with pytest.raises(AssertionError, match="big"):
        k[(1,)](np.array([1, 20, 3], np.int32), 3, BLOCK=4, debug=True)


# ---- hints -------------------------------------------------------------------------------------

def hinted(x, m, out, n, BLOCK: tl.constexpr, HINT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = tl.load(m + offs // 4) != 0  # constant on groups of 4, which the analysis can't see
    if HINT:
        keep = tl.max_constancy(keep, 4)
    tl.assume(n > 0)
    tl.store(out + offs, tl.load(x + offs, mask=keep, other=0.0), mask=keep)


@pytest.mark.parametrize("target", TARGETS)
def test_max_constancy_widens_accesses_and_assume_reaches_llvm(target):
    sig = {"x": tl.pointer_type(tl.float32), "m": tl.pointer_type(tl.int8),
           "out": tl.pointer_type(tl.float32), "n": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in ("x", "out")}
    plain = compile(ASTSource(tilework.jit(hinted), sig, {"BLOCK": 1024, "HINT": False}, attrs),
                    target, cache=False)
    hint = compile(ASTSource(tilework.jit(hinted), sig, {"BLOCK": 1024, "HINT": True}, attrs),
                   target, cache=False)
    assert "tile.constancy = array<i32: 4>" in hint.asm["tile"]
    assert "llvm.assume" in hint.asm["llir"]
    if target.startswith("sm"):
        assert "ld.global.v4.b32" not in plain.asm["ptx"]
        assert "ld.global.v4.b32" in hint.asm["ptx"] and "st.global.v4.b32" in hint.asm["ptx"]
    else:
        assert "global_load_dwordx4" not in plain.asm["amdgcn"]
        assert "global_load_dwordx4" in hint.asm["amdgcn"]


def test_hints_run_in_the_interpreter():
    x = np.arange(1, 9, dtype=np.float32)
    m = np.array([1, 0], np.int8)
    out = np.full(8, np.nan, np.float32)
    interpreted(hinted)[(1,)](x, m, out, 8, BLOCK=8, HINT=True)
    np.testing.assert_array_equal(out, np.where(np.arange(8) < 4, x, np.nan))


# ---- rejections ------------------------------------------------------------------------------

@tilework.jit
def k_prefix_not_str(x, n):
    tl.device_print(n, n)  # ERR


@tilework.jit
def k_prefix_not_ascii(x, n):
    tl.device_print("größe", n)  # ERR


@tilework.jit
def k_two_strings(x, n):
    tl.device_print("a", "b")  # ERR


@tilework.jit
def k_hex_runtime(x, n):
    tl.device_print("a", n, hex=n)  # ERR


@tilework.jit
def k_assert_msg(x, n):
    tl.device_assert(n > 0, n)  # ERR


@tilework.jit
def k_constancy_rank(x, n):
    tl.max_constancy(tl.arange(0, 16), (4, 4))  # ERR


@pytest.mark.parametrize("fn, message", [
    (k_prefix_not_str, "device_print prefix must be a constexpr string"),
    (k_prefix_not_ascii, "device_print prefix 'größe' is not printable ASCII"),
    (k_two_strings, "device_print takes one string (the prefix) and then values"),
    (k_hex_runtime, "device_print hex must be a constexpr bool"),
    (k_assert_msg, "device_assert message must be a constexpr string"),
    (k_constancy_rank, "max_constancy of a tile of rank 1 needs one value per dimension, got 2"),
])
def test_rejections(fn, message):
    with pytest.raises(CompilationError) as ei:
        compile(ASTSource(fn, {"x": tl.pointer_type(tl.float32), "n": tl.int32}, {}, {}),
                "sm_90a", cache=False)
    assert_located(ei.value, message, THIS, line_of(fn, "# ERR"))
