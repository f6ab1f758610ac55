"""`tl.dot_scaled` (issue 14): microscaled operands (e2m1 packed two per byte, e4m3, e5m2, bf16,
fp16) with e8m0 scales or None, against a numpy decode of the formats in the interpreter;
compiled to a tensor-core dot; rejected forms with their messages."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile

interpreted = tilework.jit(interpret=True)
P = tl.pointer_type
U8 = P(tl.uint8)

E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])


def decode_fp8(bits, exp_bits):
    """Values of e4m3fn (exp_bits=4, bias 7) / e5m2 (5, bias 15) bytes."""
    man_bits = 7 - exp_bits
    bias = (1 << (exp_bits - 1)) - 1
    s = np.where(bits >> 7, -1.0, 1.0)
    e = (bits >> man_bits) & ((1 << exp_bits) - 1)
    m = (bits & ((1 << man_bits) - 1)) / (1 << man_bits)
    return s * np.where(e == 0, m * 2.0 ** (1 - bias), (1 + m) * 2.0 ** (e.astype(float) - bias))


def operand(fmt, rng, rows, cols, k_last):
    """(array to pass, its float64 values [rows, cols]) of one operand in `fmt`."""
    if fmt == "e2m1":
        codes = rng.integers(0, 16, (rows, cols)).astype(np.uint8)
        if k_last:
            packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
        else:
            packed = codes[0::2, :] | (codes[1::2, :] << 4)
        return packed.astype(np.uint8), E2M1[codes]
    if fmt in ("e4m3", "e5m2"):
        bits = rng.integers(0, 256, (rows, cols)).astype(np.uint8)
        if fmt == "e4m3":
            bits[(bits & 0x7F) == 0x7F] = 0x38  # no NaN
        else:
            bits[(bits & 0x7C) == 0x7C] = 0x3C  # no inf/NaN
        return bits, decode_fp8(bits, 4 if fmt == "e4m3" else 5)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    if fmt == "fp16":
        x = x.astype(np.float16)
        return x, x.astype(np.float64)
    bf = (x.view(np.uint32) >> 16).astype(np.uint16)  # bf16 bits (truncated)
    return bf, (bf.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


@tilework.jit
def k_dot_scaled(a, sa, b, sb, acc, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                 FA: tl.constexpr, FB: tl.constexpr, SCALED: tl.constexpr, ACC: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    KA: tl.constexpr = K // 2 if FA == "e2m1" else K
    KB: tl.constexpr = K // 2 if FB == "e2m1" else K
    A = tl.load(a + m[:, None] * KA + tl.arange(0, KA)[None, :])
    B = tl.load(b + tl.arange(0, KB)[:, None] * N + n[None, :])
    if FA == "bf16":
        A = A.to(tl.bfloat16, bitcast=True)
    if FB == "bf16":
        B = B.to(tl.bfloat16, bitcast=True)
    g = tl.arange(0, K // 32)
    if SCALED:
        SA = tl.load(sa + m[:, None] * (K // 32) + g[None, :])
        SB = tl.load(sb + n[:, None] * (K // 32) + g[None, :])
    else:
        SA = None
        SB = None
    C = tl.load(acc + m[:, None] * N + n[None, :]) if ACC else None
    tl.store(out + m[:, None] * N + n[None, :], tl.dot_scaled(A, SA, FA, B, SB, FB, C))


def run_interpreted(fa, fb, scaled, with_acc, M=16, N=16, K=64, seed=0):
    rng = np.random.default_rng(seed)
    a, av = operand(fa, rng, M, K, True)
    b, bv = operand(fb, rng, K, N, False)
    sa = rng.integers(118, 136, (M, K // 32)).astype(np.uint8)
    sb = rng.integers(118, 136, (N, K // 32)).astype(np.uint8)
    acc = rng.standard_normal((M, N)).astype(np.float32)
    out = np.zeros((M, N), np.float32)
    interpreted(k_dot_scaled.fn)[(1,)](a, sa, b, sb, acc, out, M=M, N=N, K=K, FA=fa, FB=fb,
                                       SCALED=scaled, ACC=with_acc)
    if scaled:
        av = av * np.repeat(2.0 ** (sa.astype(float) - 127), 32, axis=1)
        bv = bv * np.repeat(2.0 ** (sb.astype(float) - 127), 32, axis=1).T
    want = av @ bv + (acc if with_acc else 0)
    return out, want


@pytest.mark.parametrize("fa,fb", [("e2m1", "e2m1"), ("e2m1", "e4m3"), ("e4m3", "e5m2"),
                                   ("e5m2", "e2m1"), ("bf16", "e4m3"), ("e2m1", "bf16")])
@pytest.mark.parametrize("scaled", [True, False])
def test_dot_scaled_values(fa, fb, scaled):
    out, want = run_interpreted(fa, fb, scaled, with_acc=False)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())


def test_dot_scaled_accumulates_and_takes_fp16():
    out, want = run_interpreted("fp16", "fp16", False, with_acc=True, seed=3)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    out, want = run_interpreted("e4m3", "e2m1", True, with_acc=True, seed=4)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())


def test_dot_scaled_compiles_to_a_tensor_core_dot():
    sig = {"a": U8, "sa": U8, "b": U8, "sb": U8, "acc": P(tl.float32), "out": P(tl.float32)}
    ck = compile(ASTSource(k_dot_scaled, sig, {"M": 16, "N": 16, "K": 64, "FA": "e2m1",
                                               "FB": "e4m3", "SCALED": True, "ACC": False}, {}),
                 "sm_80")
    tile = ck.asm["tile"]
    assert '"tile.dot"' in tile and "bf16" in tile
    assert "mma.sync" in ck.asm["ptx"]
    assert ck.n_spills == 0


@tilework.jit
def k_bad(a, b, out, FA: tl.constexpr, WHAT: tl.constexpr):
    A = tl.load(a + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :])
    B = tl.load(b + tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :])
    if WHAT == "pack":
        c = tl.dot_scaled(A, None, FA, B, None, "e4m3", lhs_k_pack=False)
    elif WHAT == "scale":
        s = tl.load(a + tl.arange(0, 16)[:, None] * 2 + tl.arange(0, 2)[None, :])
        c = tl.dot_scaled(A, s, FA, B, None, "e4m3")
    else:
        c = tl.dot_scaled(A, None, FA, B, None, "e4m3")
    tl.store(out + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], c)


@pytest.mark.parametrize("fa,what,message", [
    ("e3m2", "", "dot_scaled formats are e2m1, e4m3, e5m2, bf16 and fp16"),
    ("e4m3", "pack", "dot_scaled supports K-packed operands only"),
    ("e4m3", "scale", "dot_scaled scales: one per 32 elements of K"),
])
def test_dot_scaled_rejections(fa, what, message):
    sig = {"a": U8, "b": U8, "out": P(tl.float32)}
    with pytest.raises(CompilationError) as e:
        compile(ASTSource(k_bad, sig, {"FA": fa, "WHAT": what}, {}), "sm_90a", cache=False)
    assert message in e.value.message
    a = np.zeros(16 * 32, np.uint8)
    with pytest.raises(Exception, match=message):
        interpreted(k_bad.fn)[(1,)](a, a.copy(), np.zeros(256, np.float32), FA=fa, WHAT=what)


@tilework.jit
def k_bad_e2m1(a, b, out):
    A = tl.load(a + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :])
    B = tl.load(b + tl.arange(0, 64)[:, None] * 16 + tl.arange(0, 16)[None, :])
    c = tl.dot_scaled(A, None, "e2m1", B, None, "e4m3")
    tl.store(out + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], c)


def test_dot_scaled_e2m1_must_be_bytes():
    with pytest.raises(CompilationError) as e:
        compile(ASTSource(k_bad_e2m1, {"a": P(tl.float16), "b": U8, "out": P(tl.float32)}, {}, {}),
                "sm_90a", cache=False)
    assert "an e2m1 operand holds two values per uint8" in e.value.message
