"""`tl.inline_asm_elementwise` (frontend/ops_asm.py, `tile.inline_asm`, lowering/rules/asm.py):
the asm text in sm_90a's PTX with the right operands (pack=1, Triton's pack=4 int8 example,
several outputs, padding, broadcast arguments, side effects), gfx942's AMDGCN, the checked
constraint count, the interpreter's refusal.  Running it is test_language_extras_gpu.py's."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type


@tilework.jit
def k_shl(X, Y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [tl.load(X + o)],
                                  dtype=tl.int32, is_pure=True, pack=1)
    tl.store(Y + o, y)


@tilework.jit
def k_pack4(X, Y, BLOCK: tl.constexpr):
    """Triton's test_inline_asm_packed: four int8 in one register, shifted together."""
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F; \
                                   shl.b32 $0, $0, 3;",
                                  "=r,r", [x, ], dtype=tl.int8, is_pure=True, pack=4)
    tl.store(Y + tl.arange(0, BLOCK), y)


MULTI_ASM = tl.constexpr("""
{
    .reg .b8 tmp<4>;
    mov.b32 {tmp0, tmp1, tmp2, tmp3}, $8;
    cvt.u32.u8 $0, tmp0;
    cvt.u32.u8 $1, tmp1;
    cvt.u32.u8 $2, tmp2;
    cvt.u32.u8 $3, tmp3;
    cvt.rn.f32.s32 $4, $0;
    cvt.rn.f32.s32 $5, $1;
    cvt.rn.f32.s32 $6, $2;
    cvt.rn.f32.s32 $7, $3;
    max.f32 $4, $4, $9;
    max.f32 $5, $5, $10;
    max.f32 $6, $6, $11;
    max.f32 $7, $7, $12;
}
""")


@tilework.jit
def k_multi(A, B, C, D, BLOCK: tl.constexpr):
    """Triton's inline_asm_elementwise docstring example: uint8 and fp32 in, int32 and fp32
    out, four elements per statement."""
    a = tl.load(A + tl.arange(0, BLOCK))
    b = tl.load(B + tl.arange(0, BLOCK))
    (c, d) = tl.inline_asm_elementwise(
        asm=MULTI_ASM, constraints="=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r", args=[a, b],
        dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(C + tl.arange(0, BLOCK), c)
    tl.store(D + tl.arange(0, BLOCK), d)


@tilework.jit
def k_bcast(X, Y, Z, R: tl.constexpr, C: tl.constexpr, PURE: tl.constexpr):
    x = tl.load(X + tl.arange(0, R))[:, None]
    y = tl.load(Y + tl.arange(0, C))[None, :]
    z = tl.inline_asm_elementwise("add.s32 $0, $1, $2;", "=r,r,r", [x, y], dtype=tl.int32,
                                  is_pure=PURE, pack=1)
    tl.store(Z + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], z)


def _ptx(kernel, sig, consts, target="sm_90a"):
    return compile(ASTSource(kernel, sig, consts, {}), target, cache=False).asm


def _asm_blocks(ptx):
    return re.findall(r"// begin inline asm\n(.*?)// end inline asm", ptx, re.S)


def test_pack1_one_statement_per_element_on_its_loaded_register():
    asm = _ptx(k_shl, {"X": P(tl.int32), "Y": P(tl.int32)}, {"BLOCK": 1024})
    ptx = asm["ptx"]
    blocks = _asm_blocks(ptx)
    assert len(blocks) == 8  # 1024 elements over 128 threads
    loaded = re.findall(r"ld\.global\.b32\s+(%r\d+),", ptx)
    outs, ins = zip(*(re.fullmatch(r"\s*shl\.b32 (%r\d+), (%r\d+), 3;\s*", b).groups()
                      for b in blocks))
    assert sorted(ins) == sorted(loaded)  # $1 is each loaded element
    stored = re.findall(r"st\.global\.b32\s+\[[^]]+\], (%r\d+);", ptx)
    assert sorted(outs) == sorted(stored)  # $0 is what is stored
    assert "asm sideeffect" not in asm["llir"]  # is_pure=True


def test_pack4_int8_shares_a_register():
    asm = _ptx(k_pack4, {"X": P(tl.int8), "Y": P(tl.int8)}, {"BLOCK": 2048})
    blocks = _asm_blocks(asm["ptx"])
    assert len(blocks) == 4  # 16 int8 a thread, 4 per statement
    for b in blocks:
        assert re.fullmatch(r"\s*and\.b32 (%r\d+), %r\d+, 0x1F1F1F1F;\s+shl\.b32 \1, \1, 3;\s*",
                            b), b
    llir = asm["llir"]
    assert llir.count('"=r,r"(i32 ') == 4  # the packed operand is one i32
    assert "bitcast i32 %" in llir and "to <4 x i8>" in llir  # unpacked afterwards


def test_pack4_pads_a_thread_with_fewer_elements():
    asm = _ptx(k_pack4, {"X": P(tl.int8), "Y": P(tl.int8)}, {"BLOCK": 256})
    assert len(_asm_blocks(asm["ptx"])) == 1  # two int8 a thread: one statement, padded


def test_several_outputs():
    asm = _ptx(k_multi, {"A": P(tl.uint8), "B": P(tl.float32), "C": P(tl.int32),
                         "D": P(tl.float32)}, {"BLOCK": 512})
    blocks = _asm_blocks(asm["ptx"])
    assert len(blocks) == 1  # 4 elements a thread
    b = blocks[0]
    regs = re.findall(r"cvt\.u32\.u8 (%r\d+), tmp\d;", b)
    assert len(set(regs)) == 4
    m = re.findall(r"max\.f32 (%r\d+), \1, (%r\d+);", b)
    assert len(m) == 4
    b_loaded = re.findall(r"ld\.global(?:\.v4)?\.b32\s+\{?([^;]+?)\}?, \[", asm["ptx"])
    assert {r for _, r in m} <= set(re.findall(r"%r\d+", " ".join(b_loaded)))
    assert re.search(r"mov\.b32 \{tmp0, tmp1, tmp2, tmp3\}, %r\d+;", b)
    assert "{ i32, i32, i32, i32, float, float, float, float }" in asm["llir"]


@pytest.mark.parametrize("pure", [True, False])
def test_broadcast_arguments_and_side_effects(pure):
    asm = _ptx(k_bcast, {"X": P(tl.int32), "Y": P(tl.int32), "Z": P(tl.int32)},
               {"R": 16, "C": 16, "PURE": pure})
    assert len(_asm_blocks(asm["ptx"])) == 2  # 256 elements over 128 threads
    assert ("asm sideeffect" in asm["llir"]) != pure
    assert '"=r,r,r"' in asm["llir"]


@tilework.jit
def k_amd(X, Y, BLOCK: tl.constexpr, PACK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.inline_asm_elementwise("v_lshlrev_b32 $0, 3, $1", "=v,v", [x], dtype=x.dtype,
                                  is_pure=True, pack=PACK)
    tl.store(Y + tl.arange(0, BLOCK), y)


@pytest.mark.parametrize("dt, pack, count", [(tl.int32, 1, 4), (tl.int8, 4, 1)])
def test_gfx942(dt, pack, count):
    asm = _ptx(k_amd, {"X": P(dt), "Y": P(dt)}, {"BLOCK": 1024, "PACK": pack}, "gfx942")
    found = re.findall(r"v_lshlrev_b32 v\d+, 3, v\d+", asm["amdgcn"])
    assert len(found) == count, asm["amdgcn"]  # 1024 over 256 lanes: 4 a lane


@pytest.mark.parametrize("cons, msg", [
    ("=r", r"the constraints '=r' name 1 outputs and 0 inputs, but with pack=1 the results "
           r"\(int32\) take 1 registers and the arguments \(int32\) 1"),
    ("=r,r,r", r"name 1 outputs and 2 inputs"),
])
def test_constraint_count_is_checked(cons, msg):
    @tilework.jit
    def k(X, Y, CONS: tl.constexpr):
        o = tl.arange(0, 16)
        tl.store(Y + o, tl.inline_asm_elementwise("mov.b32 $0, $1;", CONS, [tl.load(X + o)],
                                                  dtype=tl.int32, is_pure=True, pack=1))
    with pytest.raises(tilework.CompilationError, match=msg):
        compile(ASTSource(k, {"X": P(tl.int32), "Y": P(tl.int32)}, {"CONS": cons}, {}),
                "sm_90a", cache=False)


def test_pack4_of_int8_counts_one_register():
    @tilework.jit
    def k(X, Y):
        o = tl.arange(0, 16)
        tl.store(Y + o, tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r,r,r",
                                                  [tl.load(X + o)], dtype=tl.int8,
                                                  is_pure=True, pack=4))
    with pytest.raises(tilework.CompilationError,
                       match=r"name 1 outputs and 4 inputs, but with pack=4 the results "
                             r"\(int8\) take 1 registers and the arguments \(int8\) 1"):
        compile(ASTSource(k, {"X": P(tl.int8), "Y": P(tl.int8)}, {}, {}), "sm_90a",
                cache=False)


def test_interpreter_refuses_naming_the_op():
    x = np.arange(16, dtype=np.int32)
    with pytest.raises(Exception, match=r"tl\.inline_asm_elementwise \(tile\.inline_asm\) "
                                        r"cannot run in the interpreter"):
        tilework.jit(k_shl.fn, interpret=True)[(1,)](x, np.zeros_like(x), BLOCK=16)


@tilework.jit
def k_bad(X, Y, ASM: tl.constexpr, PACK: tl.constexpr, WHAT: tl.constexpr):
    o = tl.arange(0, 16)
    x = tl.load(X + o)
    if WHAT == "dtype":
        y = tl.inline_asm_elementwise(ASM, "=r,r", [x], dtype=tl.pointer_type(tl.int32),
                                      is_pure=True, pack=PACK)
    elif WHAT == "nine":
        y = tl.inline_asm_elementwise(ASM, "=r" + ",r" * 9, [x] * 9, dtype=tl.int32,
                                      is_pure=True, pack=PACK)
    else:
        y = tl.inline_asm_elementwise(ASM, "=r,r", [x], dtype=tl.int32, is_pure=True,
                                      pack=PACK)
    tl.store(Y + o, y)


@pytest.mark.parametrize("asm, pack, what, msg", [
    (3, 1, "", "tl.inline_asm_elementwise: asm and constraints must be strings"),
    ("mov.b32 $0, $1;", 0, "", "tl.inline_asm_elementwise: pack must be a positive int, got 0"),
    ("mov.b32 $0, $1;", 1, "dtype", "dtype must be a scalar dtype or a tuple of them"),
    ("mov.b32 $0, $1;", 1, "nine", "tl.inline_asm_elementwise takes at most 8 arguments and 8 "
                                   "result dtypes, got 9 and 1"),
], ids=["asm", "pack", "dtype", "nine"])
def test_rejects(asm, pack, what, msg):
    sig = {"X": P(tl.int32), "Y": P(tl.int32)}
    with pytest.raises(tilework.CompilationError, match=re.escape(msg)):
        compile(ASTSource(k_bad, sig, {"ASM": asm, "PACK": pack, "WHAT": what}, {}), "sm_90a",
                cache=False)


@tilework.jit
def k_noargs(Y):
    """Without arguments (Triton's `%globaltimer`, `%smid`): one asm, scalar results."""
    t, s = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;\nmov.u32 $1, %smid;", "=l,=r",
                                     [], dtype=(tl.int64, tl.int32), is_pure=False, pack=1)
    tl.static_assert(t.shape == [] and s.dtype == tl.int32)
    tl.store(Y + tl.arange(0, 2), tl.join(t, s.to(tl.int64)))


def test_no_arguments_give_scalar_results():
    ptx = _ptx(k_noargs, {"Y": P(tl.int64)}, {}, "sm_90a")["ptx"]
    assert len(re.findall(r"mov\.u64 %rd\d+, %globaltimer;", ptx)) == 1
    assert len(re.findall(r"mov\.u32 %r\d+, %smid;", ptx)) == 1


@tilework.jit
def k_amd_pack4(X, Y, BLOCK: tl.constexpr):
    """test_inline_asm_packed's kernel in AMDGCN."""
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("v_and_b32 $0, 0x1f1f1f1f, $1\nv_lshlrev_b32 $0, 3, $0",
                                  "=v,v", [tl.load(X + o)], dtype=tl.int8, is_pure=True,
                                  pack=4)
    tl.store(Y + o, y)


def test_gfx942_pack4_amdgcn():
    asm = _ptx(k_amd_pack4, {"X": P(tl.int8), "Y": P(tl.int8)}, {"BLOCK": 2048}, "gfx942")
    text = asm["amdgcn"]
    ands = re.findall(r"v_and_b32 (v\d+), 0x1f1f1f1f, (v\d+)", text)
    shifts = re.findall(r"v_lshlrev_b32 (v\d+), 3, (v\d+)", text)
    assert len(ands) == len(shifts) == 2  # 8 int8 a lane (2048 over 256 lanes), 4 a statement
    assert all(a[0] == s[0] == s[1] for a, s in zip(ands, shifts))
    assert "hsaco" in asm  # assembled


@tilework.jit
def k_unused(X, Y, PURE: tl.constexpr):
    o = tl.arange(0, 128)
    x = tl.load(X + o)
    tl.inline_asm_elementwise("shl.b32 $0, $1, 7;", "=r,r", [x], dtype=tl.int32, is_pure=PURE,
                              pack=1)
    tl.store(Y + o, x)


@pytest.mark.parametrize("pure", [True, False])
def test_unused_results_erase_only_pure_asm(pure):
    asm = _ptx(k_unused, {"X": P(tl.int32), "Y": P(tl.int32)}, {"PURE": pure})
    assert ("shl.b32" in asm["ptx"]) != pure
