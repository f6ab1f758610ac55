"""Triton's language semantics (issue 14): `is`/`is not` folded at compile time, None arguments,
integer rules (signedness of `/ // %`, `>>` of a signed operand, Python ints out of a tile's
range), Triton's error phrases next to our location (and kept as `__cause__`), shapes equal to
lists, `.dtype` of an int specialized to 1, `x[None, None, :]`, int64 -> pointer casts and
`tl.randint` on int64 offsets.  Values against numpy in the interpreter; IR checked compiled."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile
from tilework.runtime.launcher import specialization
from located import assert_located, line_of
from test_random import philox4x32

interpreted = tilework.jit(interpret=True)
P = tl.pointer_type
F32, I32, U32 = P(tl.float32), P(tl.int32), P(tl.uint32)


def tile_ir(kernel, sig, consts=None, target="sm_90a"):
    return compile(ASTSource(kernel, sig, consts or {}, {}), target).asm["tile"]


def compile_error(kernel, sig, consts=None) -> CompilationError:
    with pytest.raises(CompilationError) as e:
        compile(ASTSource(kernel, sig, consts or {}, {}), "sm_90a", cache=False)
    return e.value


# ---- is / is not None ----------------------------------------------------------------------------

@tilework.jit
def k_optional(x, bias, out, n, B: tl.constexpr):
    o = tl.arange(0, B)
    v = tl.load(x + o, mask=o < n)
    if bias is not None:
        v += tl.load(bias + o, mask=o < n)
    if bias is None:
        v = v * 2
    same = v is v  # two runtime values: identity, folded
    tl.static_assert(same)
    tl.static_assert(not (v is None))
    tl.store(out + o, v, mask=o < n)


@pytest.mark.parametrize("with_bias", [True, False])
def test_is_none_values(with_bias):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(50).astype(np.float32)
    b = rng.standard_normal(50).astype(np.float32)
    out = np.zeros(50, np.float32)
    interpreted(k_optional.fn)[(1,)](x, b if with_bias else None, out, 50, B=64)
    np.testing.assert_array_equal(out, x + b if with_bias else x * 2)


def test_is_none_folds_in_the_ir():
    with_bias = tile_ir(k_optional, {"x": F32, "bias": F32, "out": F32, "n": tl.int32}, {"B": 64})
    without = tile_ir(k_optional, {"x": F32, "out": F32, "n": tl.int32}, {"B": 64, "bias": None})
    assert with_bias.count('"tile.load"') == 2 and "arith.mulf" not in with_bias
    assert without.count('"tile.load"') == 1 and "arith.mulf" in without
    assert "scf.if" not in with_bias + without  # folded, not a runtime branch


def test_none_argument_is_a_constant_of_the_specialization():
    sig, consts, _ = specialization(k_optional, ["*fp32", None, "*fp32", 50, 64], placeholders=True)
    assert consts["bias"] is None and "bias" not in sig
    sig2, consts2, _ = specialization(k_optional, ["*fp32", "*fp32", "*fp32", 50, 64],
                                      placeholders=True)
    assert "bias" in sig2 and "bias" not in consts2
    ck = k_optional.warmup("*fp32", None, "*fp32", "i32", B=64, grid=(1,), target="sm_90a")
    assert ck.asm["tile"].count('"tile.load"') == 1


# ---- integer rules -------------------------------------------------------------------------------

@tilework.jit
def k_intop(x, y, out, OP: tl.constexpr):
    a = tl.load(x + tl.arange(0, 16))
    b = tl.load(y + tl.arange(0, 16))
    if OP == "%":
        r = a % b  # ERR
    elif OP == "//":
        r = a // b  # ERR
    elif OP == "/":
        r = a / b  # ERR
    else:
        r = a >> b
    tl.store(out + tl.arange(0, 16), r)


@pytest.mark.parametrize("op", ["%", "//", "/"])
@pytest.mark.parametrize("types", [("int32", "uint32"), ("uint8", "int64"), ("int64", "uint64")])
def test_div_mod_of_mixed_signedness_rejected(op, types):
    a, b = (P(getattr(tl, t)) for t in types)
    e = compile_error(k_intop, {"x": a, "y": b, "out": a}, {"OP": op})
    assert_located(e, "different signedness", __file__)
    assert "Cast them to the same signedness" in e.message
    assert "different signedness" in str(e.__cause__)  # Triton's tests read the cause
    x = np.ones(16, getattr(np, types[0]))
    y = np.ones(16, getattr(np, types[1]))
    with pytest.raises(Exception, match="different signedness"):
        interpreted(k_intop.fn)[(1,)](x, y, x.copy(), OP=op)


@pytest.mark.parametrize("op", ["%", "//"])
def test_div_mod_same_signedness_matches_numpy(op):
    rng = np.random.default_rng(2)
    x = rng.integers(-1000, 1000, 16).astype(np.int32)
    y = rng.integers(1, 50, 16).astype(np.int64) * rng.choice([-1, 1], 16)
    out = np.zeros(16, np.int64)
    interpreted(k_intop.fn)[(1,)](x, y, out, OP=op)
    q = np.trunc(x.astype(np.float64) / y).astype(np.int64)  # C: truncating division
    np.testing.assert_array_equal(out, q if op == "//" else x - q * y)


def test_signed_shift_by_unsigned_is_arithmetic():
    rng = np.random.default_rng(3)
    x = rng.integers(-2**31, 2**31, 16).astype(np.int32)
    x[:4] = [-1, -2**31, -12345, 7]
    y = rng.integers(0, 32, 16).astype(np.uint32)
    out = np.zeros(16, np.uint32)
    interpreted(k_intop.fn)[(1,)](x, y, out, OP=">>")
    np.testing.assert_array_equal(out, (x >> y.astype(np.int32)).view(np.uint32))
    ir = tile_ir(k_intop, {"x": I32, "y": U32, "out": U32}, {"OP": ">>"})
    assert "arith.shrsi" in ir and "arith.shrui" not in ir
    ir = tile_ir(k_intop, {"x": U32, "y": I32, "out": U32}, {"OP": ">>"})
    assert "arith.shrui" in ir and "arith.shrsi" not in ir


@tilework.jit
def k_scalar(x, out, C: tl.constexpr):
    v = tl.load(x + tl.arange(0, 16))
    tl.store(out + tl.arange(0, 16), v + C)  # ERR


@pytest.mark.parametrize("elem,value,message", [
    ("int8", 300, "Scalar 300 is out of range for type int8"),
    ("int8", -129, "Scalar -129 is out of range for type int8"),
    ("int32", 2**31, "Scalar 2147483648 is out of range for type int32"),
    ("uint8", 256, "Scalar 256 is out of range for type uint8"),
    ("uint32", -1, "between an unsigned tensor (uint32) and a negative scalar"),
    ("int64", 2**70, "Nonrepresentable integer"),
])
def test_out_of_range_scalars_rejected(elem, value, message):
    t = P(getattr(tl, elem))
    e = compile_error(k_scalar, {"x": t, "out": t}, {"C": value})
    assert_located(e, message, __file__, line_of(k_scalar))
    assert message in str(e.__cause__)
    x = np.zeros(16, getattr(np, elem))
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
        interpreted(k_scalar.fn)[(1,)](x, x.copy(), C=value)


@pytest.mark.parametrize("elem,value", [("int8", 100), ("int8", -128), ("uint8", 255),
                                        ("int32", 2**31 - 1), ("uint32", 2**32 - 1)])
def test_in_range_scalars_take_the_tile_type(elem, value):
    dt = getattr(np, elem)
    x = np.random.default_rng(4).integers(np.iinfo(dt).min, np.iinfo(dt).max, 16).astype(dt)
    out = np.zeros(16, dt)
    interpreted(k_scalar.fn)[(1,)](x, out, C=value)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, x + np.array(value).astype(dt))  # wraps in elem
    ir = tile_ir(k_scalar, {"x": P(getattr(tl, elem)), "out": P(getattr(tl, elem))}, {"C": value})
    bits = np.dtype(dt).itemsize * 8
    assert "arith.addi" in ir and f"tensor<16xi{bits}>" in ir and "extsi" not in ir


# ---- Triton's wording for bitwise operators on floats ------------------------------------------

@tilework.jit
def k_bitwise(x, OP: tl.constexpr):
    v = tl.load(x + tl.arange(0, 16))
    if OP == "&":
        v = v & v  # ERR
    elif OP == "|":
        v = v | 1  # ERR
    elif OP == "^":
        v = v ^ v  # ERR
    elif OP == "<<":
        v = v << 2  # ERR
    else:
        v = v >> 2  # ERR
    tl.store(x + tl.arange(0, 16), v)


@pytest.mark.parametrize("op", ["&", "|", "^", "<<", ">>"])
@pytest.mark.parametrize("elem", ["float32", "float16", "float64"])
def test_bitwise_on_floats_says_invalid_operands(op, elem):
    t = P(getattr(tl, elem))
    e = compile_error(k_bitwise, {"x": t}, {"OP": op})
    assert_located(e, "invalid operands of type", __file__)
    assert f"`{op}` is not defined for" in e.message
    assert "invalid operands of type" in str(e.__cause__)
    with pytest.raises(Exception, match="invalid operands of type"):
        interpreted(k_bitwise.fn)[(1,)](np.zeros(16, getattr(np, elem)), OP=op)


# ---- shapes, specialization, indexing ------------------------------------------------------------

@tilework.jit
def k_shapes(x, out, n, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.static_assert(v.shape == [N])
    tl.static_assert(v.shape == (N,))
    tl.static_assert(v.shape != [N, 1])
    w = v[None, None, :]
    tl.static_assert(w.shape == [1, 1, N])
    u = v[:, None, None]
    tl.static_assert(u.shape == [N, 1, 1])
    tl.static_assert(n.dtype == tl.int32)
    s = tl.sum(tl.sum(w + u, axis=2), axis=1)  # [N]: N * v + sum(v)
    tl.store(out + tl.arange(0, N), s * n + n.dtype.primitive_bitwidth)


@pytest.mark.parametrize("n", [1, 3])
def test_shapes_specialized_one_and_none_indexing(n):
    x = np.random.default_rng(5).standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float32)
    interpreted(k_shapes.fn)[(1,)](x, out, n, N=16)
    np.testing.assert_allclose(out, (16 * x + x.sum()) * n + 32, rtol=1e-5, atol=1e-5)
    sig = {"x": F32, "out": F32} | ({} if n == 1 else {"n": tl.int32})
    ir = tile_ir(k_shapes, sig, {"N": 16} | ({"n": 1} if n == 1 else {}))
    assert "tensor<1x1x16xf32>" in ir and "tensor<16x1x1xf32>" in ir


@tilework.jit
def k_bad_static_shape(x, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.static_assert(v.shape == [N + 1], "shape")  # ERR


def test_static_assert_on_a_wrong_shape_fails():
    e = compile_error(k_bad_static_shape, {"x": F32}, {"N": 16})
    assert_located(e, "static_assert failed: shape", __file__, line_of(k_bad_static_shape))


# ---- int64 -> pointer (grouped GEMM's pointer arrays) --------------------------------------------

@tilework.jit
def k_pointer_array(ptrs, sizes, out, a, b, G: tl.constexpr, B: tl.constexpr):
    g = tl.program_id(0)
    base = tl.load(ptrs + g).to(tl.pointer_type(tl.float16))
    n = tl.load(sizes + g)
    o = tl.arange(0, B)
    v = tl.load(base + o, mask=o < n, other=0.0)
    tl.store(out + g * B + o, v.to(tl.float32) * 2, mask=o < n)
    # the pointer back to an integer, and to another element type
    addr = base.to(tl.int64)
    tl.store(out + G * B + g, (addr - tl.load(ptrs + g)).to(tl.float32))
    as_bytes = base.to(tl.pointer_type(tl.uint8))
    tl.store(out + G * B + G + g, tl.load(as_bytes + 1).to(tl.float32))


def test_int64_to_pointer_values():
    a = np.arange(10, dtype=np.float16) + 0.5
    b = np.arange(20, dtype=np.float16) * -1.5
    ptrs = np.array([a.ctypes.data, b.ctypes.data], np.int64)
    sizes = np.array([10, 20], np.int32)
    out = np.full(2 * 32 + 4, -7.0, np.float32)
    interpreted(k_pointer_array.fn)[(2,)](ptrs, sizes, out, a, b, G=2, B=32)
    np.testing.assert_array_equal(out[:10], a.astype(np.float32) * 2)
    np.testing.assert_array_equal(out[32:52], b.astype(np.float32) * 2)
    np.testing.assert_array_equal(out[64:66], 0)
    np.testing.assert_array_equal(out[66:68], [a.view(np.uint8)[1], b.view(np.uint8)[1]])


def test_int64_to_pointer_ir():
    sig = {"ptrs": P(tl.int64), "sizes": I32, "out": F32, "a": P(tl.float16),
           "b": P(tl.float16)}
    ir = tile_ir(k_pointer_array, sig, {"G": 2, "B": 32})
    assert ir.count('"tile.int_to_ptr"') == 2 and ir.count('"tile.ptr_to_int"') == 2
    compile(ASTSource(k_pointer_array, sig, {"G": 2, "B": 32}, {}), "gfx942")


@tilework.jit
def k_bad_pointer_cast(x, WHAT: tl.constexpr):
    if WHAT == "tile":  # (a tile of int64 addresses casts: test_conform_language.py)
        p = tl.load(x + tl.arange(0, 16)).to(tl.pointer_type(tl.float16)).to(tl.float32)  # ERR
    else:
        p = tl.load(x).to(tl.float32).to(tl.pointer_type(tl.float16))  # ERR


@pytest.mark.parametrize("what,message", [
    ("tile", "cannot cast *fp16 to fp32"),
    ("float", "cannot cast fp32 to *fp16"),
])
def test_bad_pointer_casts_rejected(what, message):
    e = compile_error(k_bad_pointer_cast, {"x": P(tl.int64)}, {"WHAT": what})
    assert_located(e, message, __file__)


# ---- tl.randint on int64 offsets -----------------------------------------------------------------

@tilework.jit
def k_randint(out, out4, seed, base, n, B: tl.constexpr, WIDE: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    if WIDE:
        offs = i.to(tl.int64) + base
    else:
        offs = i + base
    r = tl.randint(seed, offs)
    tl.static_assert(r.dtype == tl.uint32)
    tl.store(out + i, r, mask=i < n)
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(out4 + 4 * i, a, mask=i < n)
    tl.store(out4 + 4 * i + 1, b, mask=i < n)
    tl.store(out4 + 4 * i + 2, c, mask=i < n)
    tl.store(out4 + 4 * i + 3, d, mask=i < n)


@pytest.mark.parametrize("seed", [0, 42, 0xFFFFFFFF, 0x0000000FCAFEB0BA])
def test_randint_int64_offsets_give_triton_32_bit_values(seed):
    n = 300
    narrow, wide = np.zeros(n, np.int64), np.zeros(n, np.int64)
    n4, w4 = np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.uint32)
    interpreted(k_randint.fn)[(3,)](narrow, n4, seed, 0, n, B=128, WIDE=False)
    interpreted(k_randint.fn)[(3,)](wide, w4, seed, 0, n, B=128, WIDE=True)
    i = np.arange(n, dtype=np.uint32)
    z = np.zeros(n, np.uint32)
    want = philox4x32([i, z, z, z], (seed & 0xFFFFFFFF, seed >> 32))
    np.testing.assert_array_equal(wide, want[0].astype(np.int64))  # zero-extended uint32
    np.testing.assert_array_equal(wide, narrow)
    np.testing.assert_array_equal(w4.reshape(n, 4).T, np.stack(want))


def test_randint_offsets_beyond_32_bits_fill_the_second_counter_word():
    n, seed, base = 100, 7, 3 * 2**32 + 5
    out, out4 = np.zeros(n, np.int64), np.zeros(4 * n, np.uint32)
    interpreted(k_randint.fn)[(1,)](out, out4, seed, base, n, B=128, WIDE=True)
    offs = np.arange(n, dtype=np.uint64) + np.uint64(base)
    z = np.zeros(n, np.uint32)
    want = philox4x32([(offs & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                       (offs >> np.uint64(32)).astype(np.uint32), z, z], (seed, 0))
    np.testing.assert_array_equal(out4.reshape(n, 4).T, np.stack(want))
    ir = tile_ir(k_randint, {"out": P(tl.int64), "out4": U32, "seed": tl.int32,
                             "base": tl.int64, "n": tl.int32}, {"B": 128, "WIDE": True})
    assert "i64" in ir and "tile.store" in ir


@tilework.jit
def k_pointer_index(x, out, N: tl.constexpr):
    p = x + tl.arange(0, N)
    q = p[None, None, :] + tl.arange(0, 2)[:, None, None] * N  # pointers [2, 1, N]
    tl.static_assert(q.shape == [2, 1, N])
    o = out + tl.arange(0, 2)[:, None, None] * N + tl.arange(0, N)[None, None, :]
    tl.store(o, tl.load(q) * 2)


def test_none_indexing_of_a_pointer_tile():
    x = np.random.default_rng(8).standard_normal(32).astype(np.float32)
    out = np.zeros(32, np.float32)
    interpreted(k_pointer_index.fn)[(1,)](x, out, N=16)
    np.testing.assert_array_equal(out, x * 2)
    ir = tile_ir(k_pointer_index, {"x": F32, "out": F32}, {"N": 16})
    assert "tensor<1x1x16x!tile.ptr<f32>>" in ir
