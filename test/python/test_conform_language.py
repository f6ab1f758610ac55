"""The last language gaps of issue 14's audit: a tile's `.type` is its `tl.block_type` (Triton's),
libdevice called with Triton's parameter names (`arg0`, `arg1`, ...),
`tl.extra.cuda.convert_custom_float8_sm70/_sm80` (fp8e4b15 <-> fp16/fp32) and `tensordesc<...>`
entries in `tilework.compile`'s signature strings.  Values against numpy in the interpreter
and compiled (sm_90a and gfx942 run by the SIMT emulator); each rejected form with its
message.  On the GPU: test_conform_language_gpu.py."""
import math

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.language.extra import cuda as tlc
from tilework.language.extra import libdevice
from simt_emulator import Emulator

TARGETS = ["sm_90a", "gfx942"]
P = tl.pointer_type


def run(fn, where, sig, consts, *args):
    """`fn` on one program: interpreted, or compiled for `where` and emulated."""
    if where == "interpreter":
        tilework.jit(fn, interpret=True)[(1,)](*args, **consts)
    else:
        Emulator.from_kernel(tilework.jit(fn), sig, consts, where, 4).run((1,), *args)


# ---- a tile's .type ---------------------------------------------------------------------------

def k_block_type(x, y, out, N: tl.constexpr, M: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    w = tl.load(y + r[:, None] * M + tl.arange(0, M)[None, :])  # int16 [N, M]
    t = v.type
    tl.static_assert(t == tl.block_type(tl.float32, [N]) and t != tl.block_type(tl.float32, [M]))
    tl.static_assert(t.is_block() and t.scalar == tl.float32 and t.element_ty == v.dtype)
    tl.static_assert(t.shape == (N,) and t.get_block_shapes() == (N,) and t.numel == N)
    tl.static_assert(t.nbytes == 4 * N and t.primitive_bitwidth == 32)
    tl.static_assert(w.type.shape == (N, M) and w.type.scalar.is_int16())
    tl.static_assert(w.type.with_element_ty(tl.float32) == tl.block_type(tl.float32, [N, M]))
    tl.static_assert(w.type.mangle() == "i16S" + str(N) + "_" + str(M) + "S")
    s = tl.sum(v, axis=0)
    tl.static_assert(s.type == tl.float32 and not s.type.is_block())  # a scalar: its dtype
    pt = (x + r).type
    tl.static_assert(pt.is_block() and pt.scalar == tl.pointer_type(tl.float32))
    tl.static_assert(pt.element_ty.element_ty == tl.float32)
    wf = w.to(v.type)  # a block type casts to its element type (Triton's `cast`)
    tl.static_assert(wf.dtype == tl.float32 and wf.type == tl.block_type(tl.float32, [N, M]))
    if v.type.scalar.is_floating():  # folded: a compile-time branch
        tl.store(out + r, tl.sum(wf, axis=1) + v * s)
    else:
        tl.store(out + r, v)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_tile_type_is_a_block_type(where):
    rng = np.random.default_rng(81)
    x = rng.standard_normal(16).astype(np.float32)
    y = rng.integers(-300, 300, (16, 8)).astype(np.int16)
    out = np.zeros(16, np.float32)
    run(k_block_type, where, {"x": P(tl.float32), "y": P(tl.int16), "out": P(tl.float32)},
        {"N": 16, "M": 8}, x, y, out)
    want = y.astype(np.float32).sum(1) + x * x.sum(dtype=np.float32)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)


def test_block_type_on_the_host():
    t = tl.block_type(tl.float16, [4, 8])
    assert t == tl.block_type(tl.float16, (4, 8)) and hash(t) == hash(tl.block_type(tl.float16,
                                                                                     [4, 8]))
    assert t != tl.float16 and tl.float16 != t and t != tl.block_type(tl.float32, [4, 8])
    assert str(t) == "<(4, 8), fp16>" and t.numel == 32 and t.nbytes == 64
    assert isinstance(t, tl.dtype) and not t.is_ptr() and t.scalar is tl.float16
    # a descriptor's block type is the same class (Triton's `desc.block_type`)
    from tilework.language.descriptor import block_type
    assert block_type is tl.block_type
    with pytest.raises(TypeError, match="0d block_type is forbidden"):
        tl.block_type(tl.float32, [])


def k_type_as_dtype(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    tl.store(out + r, tl.zeros([N], v.type))


def k_type_attr(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    tl.store(out + r, v + v.type.width)


def test_tile_type_rejections():
    x, out = np.ones(16, np.float32), np.zeros(16, np.float32)
    msg = r"expected an element dtype, got the tile type <\(16,\), fp32>: use its `.element_ty`"
    with pytest.raises(CompilationError, match=msg):
        tilework.compile(tilework.jit(k_type_as_dtype), target="sm_90a",
                         signature="*fp32,*fp32", constexprs={"N": 16})
    with pytest.raises(Exception, match=msg):
        tilework.jit(k_type_as_dtype, interpret=True)[(1,)](x, out, N=16)
    with pytest.raises(CompilationError, match=r"<\(16,\), fp32> has no attribute `width`"):
        tilework.compile(tilework.jit(k_type_attr), target="sm_90a",
                         signature="*fp32,*fp32", constexprs={"N": 16})
    with pytest.raises(AttributeError, match="'block_type' object has no attribute 'width'"):
        tilework.jit(k_type_attr, interpret=True)[(1,)](x, out, N=16)


# ---- libdevice by Triton's parameter names ---------------------------------------------------

def k_libdevice_names(x, y, z, out, N: tl.constexpr):
    r = tl.arange(0, N)
    a, b, c = tl.load(x + r), tl.load(y + r), tl.load(z + r)
    tl.store(out + r, libdevice.pow(arg0=a, arg1=b))                 # a jit function
    tl.store(out + N + r, libdevice.exp(arg0=b))                     # a tl.math builtin
    tl.store(out + 2 * N + r, libdevice.fma(a, arg1=b, arg2=c))      # mixed
    tl.store(out + 3 * N + r, libdevice.fmax(arg1=c, arg0=a))        # any order
    tl.store(out + 4 * N + r, libdevice.atan2(b, c))                 # positional, as before
    tl.store(out + 5 * N + r, libdevice.erfinv(arg0=b * 0.25))       # (libdevice_special)
    tl.store(out + 6 * N + r, libdevice.hypot(arg0=a, arg1=b))
    tl.store(out + 7 * N + r, libdevice.ldexp(arg0=a, arg1=(b * 4).to(tl.int32)))


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_libdevice_by_triton_parameter_names(where):
    rng = np.random.default_rng(82)
    n = 32
    a = rng.uniform(0.2, 3.0, n).astype(np.float32)
    b = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(8 * n, np.float32)
    run(k_libdevice_names, where, {"x": P(tl.float32), "y": P(tl.float32), "z": P(tl.float32),
                                   "out": P(tl.float32)}, {"N": n}, a, b, c, out)
    got = out.reshape(8, n)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    refs = {0: np.power(a64, b), 1: np.exp(b64), 2: a64 * b + c, 3: np.maximum(a, c),
            4: np.arctan2(b64, c), 7: np.ldexp(a, (b * 4).astype(np.int32))}
    for i, ref in refs.items():
        np.testing.assert_allclose(got[i], ref.astype(np.float32), rtol=3e-6, atol=1e-7,
                                   err_msg=f"row {i}")
    erf = np.vectorize(math.erf)  # erfinv checked through erf
    np.testing.assert_allclose(erf(got[5].astype(np.float64)), b64 * 0.25, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[6], np.hypot(a64, b64).astype(np.float32), rtol=3e-6)


def k_ld_two_arg1(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out + r, libdevice.pow(tl.load(x + r), arg0=tl.load(x + r), arg1=2.0))


def k_ld_arg2(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out + r, libdevice.pow(arg0=tl.load(x + r), arg1=2.0, arg2=1.0))


def k_ld_gap(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out + r, libdevice.pow(arg1=tl.load(x + r)))


@pytest.mark.parametrize("fn, msg", [
    (k_ld_two_arg1, "pow() got multiple values for argument 'arg0'"),
    (k_ld_arg2, "pow() got an unexpected keyword argument 'arg2'"),
    (k_ld_gap, "pow() missing required argument 'arg0'"),
])
def test_libdevice_parameter_names_rejected(fn, msg):
    with pytest.raises(CompilationError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        tilework.compile(tilework.jit(fn), target="sm_90a", signature="*fp32,*fp32",
                         constexprs={"N": 16})
    with pytest.raises(TypeError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        tilework.jit(fn, interpret=True)[(1,)](np.ones(16, np.float32), np.zeros(16, np.float32),
                                               N=16)


def test_every_libdevice_function_takes_triton_parameter_names():
    """Each of Triton 3.6's libdevice functions (all named `arg0`.. `argK`) is here with
    the same number of them."""
    for name in libdevice.__all__:
        f = getattr(libdevice, name)
        assert isinstance(f, tilework.language.function.extern_names), name
        assert 1 <= f.arity <= 4, name
    assert libdevice.pow.arity == 2 and libdevice.fma.arity == 3 and libdevice.exp.arity == 1
    assert libdevice.byte_perm.arity == 3 and libdevice.sad.arity == 3


# ---- convert_custom_float8_sm70 / _sm80 ------------------------------------------------------

def np_e4b15_to_f16(u8):
    """fp8e4b15 bits -> fp16 (exact: the sign to bit 15, the rest to bits 13..7)."""
    u = u8.astype(np.uint16)
    return (((u & 0x80) << 8) | ((u & 0x7F) << 7)).view(np.float16)


def np_f16_to_e4b15(h):
    """Triton's fp16 -> fp8e4b15: magnitude saturated to 1.75 (NaN and inf too), rounded to 3
    mantissa bits with ties away from zero, sign kept."""
    bits = h.astype(np.float16).view(np.uint16).astype(np.uint32)
    mag = np.minimum(bits & 0x7FFF, 0x3F00)
    return ((((mag << 1) + 0x80) >> 8) | ((bits >> 8) & 0x80)).astype(np.uint8)


def np_f32_to_f16_rtz(x):
    """fp32 -> fp16 toward zero, as the GPU's `cvt.rz.f16.f32`: a NaN comes out the canonical
    +NaN whatever its sign (numpy keeps the sign), and so does tilework's (and Triton's) cast."""
    x = np.where(np.isnan(x), np.float32(np.nan), x)
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)
    back = h.astype(np.float32)
    with np.errstate(invalid="ignore"):
        away = np.isfinite(x) & (np.abs(back) > np.abs(x))
    h[away] = np.nextafter(h[away], np.float16(0))
    return h


def k_custom_fp8(e, h, f, up16, up32, down16, down32, N: tl.constexpr, SM80: tl.constexpr):
    r = tl.arange(0, N)
    conv = tlc.convert_custom_float8_sm80 if SM80 else tlc.convert_custom_float8_sm70
    x8 = tl.load(e + r).to(tl.float8e4b15, bitcast=True)
    a = conv(x8, tl.float16)
    b = conv(x8, tl.block_type(tl.float32, [N]), "rtne")  # (the rounding is not used)
    tl.static_assert(a.dtype == tl.float16 and b.dtype == tl.float32)
    c = conv(x8, tl.bfloat16)  # any other target: fp16, as Triton's
    tl.static_assert(c.dtype == tl.float16)
    tl.store(up16 + r, a)
    tl.store(up32 + r, b)
    d16 = conv(tl.load(h + r), tl.float8e4b15)
    d32 = conv(tl.load(f + r), tl.float8e4b15)
    tl.static_assert(d16.dtype == tl.float8e4b15 and d32.dtype == tl.float8e4b15)
    tl.store(down16 + r, d16.to(tl.uint8, bitcast=True))
    tl.store(down32 + r, d32.to(tl.uint8, bitcast=True))


def custom_fp8_inputs(n=256, seed=83):
    rng = np.random.default_rng(seed)
    f = (rng.standard_normal(n) * np.exp2(rng.uniform(-20, 2, n))).astype(np.float32)
    f[:14] = [np.inf, -np.inf, np.nan, -np.nan, 1.75, 1.8125, 1.8125001, -1.874, 2.0 ** -17,
              2.0 ** -18, 2.0 ** -19, -0.0, 0.0, 1e30]
    f[14] = np.float32(1.0) + np.float32(2.0 ** -4)           # a tie: away from zero
    f[15] = -(np.float32(1.0) + np.float32(3 * 2.0 ** -4))    # another tie, negative
    f[16] = np.float32(1.0) + np.float32(2.0 ** -4) - np.float32(2.0 ** -11)  # rtz keeps below
    with np.errstate(over="ignore"):
        h = f.astype(np.float16)
    h[-1] = np.float16(6.1e-5)  # a subnormal boundary
    return np.arange(n, dtype=np.uint8), h, f


@pytest.mark.parametrize("sm80", [True, False])
@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_convert_custom_float8(where, sm80):
    e, h, f = custom_fp8_inputs()
    n = len(e)
    up16, up32 = np.zeros(n, np.float16), np.zeros(n, np.float32)
    down16, down32 = np.zeros(n, np.uint8), np.zeros(n, np.uint8)
    sig = {"e": P(tl.uint8), "h": P(tl.float16), "f": P(tl.float32), "up16": P(tl.float16),
           "up32": P(tl.float32), "down16": P(tl.uint8), "down32": P(tl.uint8)}
    run(k_custom_fp8, where, sig, {"N": n, "SM80": sm80}, e, h, f, up16, up32, down16, down32)
    want = np_e4b15_to_f16(e)
    np.testing.assert_array_equal(up16.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(up32, want.astype(np.float32))
    assert up16.max() == 1.875 and up16[1] == 2.0 ** -17  # every code point, exactly
    np.testing.assert_array_equal(down16, np_f16_to_e4b15(h))
    np.testing.assert_array_equal(down32, np_f16_to_e4b15(np_f32_to_f16_rtz(f)))
    # saturation, NaN, the ties and the fp32 -> fp16 step toward zero, spelled out
    assert list(down32[:8]) == [0x7E, 0xFE, 0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE]  # -NaN: +1.75
    assert list(down32[11:17]) == [0x80, 0x00, 0x7E, 0x79, 0xFA, 0x78]


def k_custom_fp8_int(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    d = tlc.convert_custom_float8_sm80(tl.load(x + r), tl.float8e4b15)
    tl.store(out + r, d.to(tl.uint8, bitcast=True))


def test_convert_custom_float8_rejects_other_types():
    msg = "convert_custom_float8 converts fp8e4b15 to fp16/fp32, or fp16/fp32 to fp8e4b15"
    with pytest.raises(CompilationError, match=msg):
        tilework.compile(tilework.jit(k_custom_fp8_int), target="sm_90a",
                         signature="*i32,*u8", constexprs={"N": 16})
    with pytest.raises(Exception, match=msg):
        tilework.jit(k_custom_fp8_int, interpret=True)[(1,)](
            np.arange(16, dtype=np.int32), np.zeros(16, np.uint8), N=16)


# ---- tensordesc<...> in signature strings ----------------------------------------------------

def k_desc_copy(a_desc, o_desc, n, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.program_id(0)
    o_desc.store([p * BM, 0], a_desc.load([p * BM, 0]) * 2)


def k_desc_pair(descs, n, BM: tl.constexpr):
    p = tl.program_id(0)
    descs[1].store([p * BM, 0], descs[0].load([p * BM, 0]))


def test_tensordesc_in_signature_strings():
    from tilework.compiler.api import split_signature
    assert split_signature("tensordesc<fp16[64, 64]>, *fp32:16, (tensordesc<fp32[8, 16], nan>,"
                           " i32), i32") == [
        "tensordesc<fp16[64, 64]>", "*fp32:16", ("tensordesc<fp32[8, 16], nan>", "i32"), "i32"]
    ck = tilework.compile(tilework.jit(k_desc_copy), target="sm_90a",
                          signature="tensordesc<fp16[64, 64]>, tensordesc<fp16[64, 64]>, i32",
                          constexprs={"BM": 64, "BN": 64})
    assert ck.metadata["signature"] == {"a_desc": "tensordesc<fp16[64, 64]>",
                                        "o_desc": "tensordesc<fp16[64, 64]>", "n": "int32"}
    assert "cp.async.bulk.tensor" in ck.asm["ptx"]  # the load is a TMA copy
    # the same kernel from the ASTSource form (a tensor_descriptor_type) is the same PTX
    from tilework.language.descriptor import tensor_descriptor_type
    T = tensor_descriptor_type(tl.float16, [64, 64])
    ck2 = tilework.compile(tilework.jit(k_desc_copy), target="sm_90a", signature=[T, T, "i32"],
                           constexprs={"BM": 64, "BN": 64})
    assert ck2.asm["ptx"] == ck.asm["ptx"]
    # list form, NaN padding (our spelling), a 1-D block, and as a tuple's members
    ck3 = tilework.compile(tilework.jit(k_desc_copy), target="gfx942",
                           signature=["tensordesc<fp32[16, 8], nan>"] * 2 + ["i32"],
                           constexprs={"BM": 16, "BN": 8})
    assert ck3.metadata["signature"]["a_desc"] == "tensordesc<fp32[16, 8], nan>"
    ck4 = tilework.compile(tilework.jit(k_desc_pair), target="sm_90a",
                           signature="(tensordesc<bf16[32, 64]>, tensordesc<bf16[32, 64]>), i32",
                           constexprs={"BM": 32})
    assert "tensordesc<bf16[32, 64]>" in str(ck4.metadata["signature"])


@pytest.mark.parametrize("entry, msg", [
    ("tensordesc<fp16[64, 48]>", "Shape element 1 must be a power of 2"),
    ("tensordesc<fp16>", "the block shape is missing"),
    ("tensordesc<fp16[64, 64]", "is not a descriptor type"),
    ("tensordesc<*fp16[64, 64]>", "a descriptor's elements are scalars, not \\*fp16"),
    ("tensordesc<fp17[64, 64]>", "unknown type 'fp17'"),
    ("tensordesc<fp16[a, 64]>", "the block shape must be integers"),
    ("tensordesc<fp16[2, 2, 2, 2, 2, 2]>", "a descriptor has rank 1 to 5"),
    ("tensordesc<fp16[64, 64], NVMMASharedLayout(128)>", "unknown padding or layout"),
])
def test_bad_tensordesc_entries(entry, msg):
    with pytest.raises(ValueError, match=f"signature entry for `a_desc`: .*{msg}"):
        tilework.compile(tilework.jit(k_desc_copy), target="sm_90a",
                         signature=[entry, "tensordesc<fp16[64, 64]>", "i32"],
                         constexprs={"BM": 64, "BN": 64})


# ---- tuple comprehensions and f-strings (found by Triton's test_tuple.py) ---------------------

@tilework.jit
def _incremented(values):
    return [v + 1 for v in values]  # a tl.tuple, unrolled


def k_comprehension(x, out, N: tl.constexpr, NAME: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    t = _incremented((v, v * 2, 3))
    tl.static_assert(isinstance(t, tl.tuple) and len(t) == 3)
    sq = [w * w for w in t]
    v = [(a, b) for a, b in ((1, 2), (3, 4))]  # a target tuple; `v` is the kernel's again below
    tl.static_assert(v == ((1, 2), (3, 4)))
    v = tl.load(x + r)
    tl.static_assert(f"{NAME}-{N:04d}{N!r}" == "ab-0016" + str(N), f"{NAME!r} at {N}")
    tl.store(out + r, sq[0] + sq[1] + sq[2] + v)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_tuple_comprehensions_and_fstrings(where):
    x = np.random.default_rng(84).standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float32)
    run(k_comprehension, where, {"x": P(tl.float32), "out": P(tl.float32)},
        {"N": 16, "NAME": "ab"}, x, out)
    np.testing.assert_allclose(out, (x + 1) ** 2 + (2 * x + 1) ** 2 + 16 + x, rtol=1e-5)


def k_float_seed(out, seed, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out + r, tl.rand(seed, r))


def test_random_seed_must_be_an_integer():
    """(found by Triton's test_random.py) a float seed is refused, as Triton's static_assert."""
    msg = "the seed of tl.random is an integer"
    with pytest.raises(CompilationError, match=msg):
        tilework.compile(tilework.jit(k_float_seed), target="sm_90a", signature="*fp32,fp32",
                         constexprs={"N": 16})
    with pytest.raises(Exception, match=msg):
        tilework.jit(k_float_seed, interpret=True)[(1,)](np.zeros(16, np.float32), 2.3, N=16)
    out = np.zeros(16, np.float32)  # an integer seed still runs
    tilework.jit(k_float_seed, interpret=True)[(1,)](out, 7, N=16)
    assert ((out >= 0) & (out < 1)).all() and len(set(out.tolist())) == 16


# ---- pointer tiles <-> integer tiles (found by Triton's test_core.py test_where) ---------------

def k_pointer_tiles(c, a, b, out, addr, N: tl.constexpr):
    r = tl.arange(0, N)
    pa, pb = a + r, b + r
    ia = pa.to(tl.int64)  # a tile of addresses
    tl.static_assert(ia.dtype == tl.int64 and ia.type == tl.block_type(tl.int64, [N]))
    back = ia.to(tl.pointer_type(tl.float32))  # and pointers again
    sel = tl.where(tl.load(c + r) != 0, back, pb.to(tl.uint64).to(tl.pi32_t).to(
        tl.pointer_type(tl.float32)))
    tl.store(out + r, tl.load(sel) + (pa < pa + 1).to(tl.float32) + (pb == b + r).to(tl.float32))
    tl.store(addr + r, pa)  # pointers stored as their addresses (int64 memory)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_pointer_tiles_to_and_from_integers(where):
    rng = np.random.default_rng(85)
    n = 32
    c = rng.integers(0, 2, n).astype(np.int32)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out, addr = np.zeros(n, np.float32), np.zeros(n, np.int64)
    run(k_pointer_tiles, where, {"c": P(tl.int32), "a": P(tl.float32), "b": P(tl.float32),
                                 "out": P(tl.float32), "addr": P(tl.int64)}, {"N": n},
        c, a, b, out, addr)
    np.testing.assert_array_equal(out, np.where(c != 0, a, b) + np.float32(1) + np.float32(1))
    np.testing.assert_array_equal(np.diff(addr), np.full(n - 1, 4))  # consecutive fp32 addresses


def k_store_pointers_to_floats(a, out, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out + r, a + r)


def test_storing_pointers_needs_integer_memory():
    msg = "storing pointers takes integer memory \\(their addresses\\), got pointers to fp32"
    with pytest.raises(CompilationError, match=msg):
        tilework.compile(tilework.jit(k_store_pointers_to_floats), target="sm_90a",
                         signature="*fp32,*fp32", constexprs={"N": 16})
    with pytest.raises(Exception, match=msg):
        tilework.jit(k_store_pointers_to_floats, interpret=True)[(1,)](
            np.zeros(16, np.float32), np.zeros(16, np.float32), N=16)


# ---- Triton's error wording (found by Triton's test_core.py) ----------------------------------

def k_bad_axes(x, WHAT: tl.constexpr):
    r = tl.arange(0, 16)
    if WHAT == "range":
        t = tl.expand_dims(r, -3)
    elif WHAT == "dup":
        t = tl.expand_dims(r, (0, -3))
    elif WHAT == "pid":
        t = tl.program_id(20)
    else:
        t = r[3:]
    tl.store(x + r, r)


@pytest.mark.parametrize("what, msg", [
    ("range", "invalid axis -3: axis -3 is out of range for a tile of rank 2"),
    ("dup", "duplicate axes, normalized axes = [0, 0]: expand_dims axes repeat"),
    ("pid", "program_id axis must be 0, 1, or 2 but got 20"),
    ("slice", "unsupported tensor index: tiles are indexed only with None and `:`, got "
              "slice(3, None, None)"),
])
def test_triton_error_wording(what, msg):
    from located import assert_located
    from tilework.compiler.driver import ASTSource, compile
    with pytest.raises(CompilationError) as e:
        compile(ASTSource(tilework.jit(k_bad_axes), {"x": P(tl.int32)}, {"WHAT": what}, {}),
                "sm_90a", cache=False)
    assert_located(e.value, msg, __file__)
    assert msg in str(e.value.__cause__)  # (Triton's tests read the cause)
    with pytest.raises(Exception) as ie:
        tilework.jit(k_bad_axes, interpret=True)[(1,)](np.zeros(16, np.int32), WHAT=what)
    assert msg in str(ie.value)
