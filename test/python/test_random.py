"""tl.randint/randint4x/rand/rand4x/randn/randn4x and tl.random.philox: the streams against an
independent numpy Philox written here (checked against Random123's published known-answer
vectors), in the interpreter and compiled for sm_80, sm_90a and gfx942."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

TARGETS = ["sm_80", "sm_90a", "gfx942"]
interpreted = tilework.jit(interpret=True)
M32 = 0xFFFFFFFF


# ---- the reference: Philox-4x32 and 4x64 in numpy / Python ints -------------------------------

def philox4x32(counters, key, rounds=10):
    """Philox-4x32-`rounds` of uint32 counter arrays c0..c3 with the key (k0, k1)."""
    c = [np.asarray(x, np.uint64) & np.uint64(M32) for x in counters]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    ma, mb = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(rounds):
        p0 = c[0] * ma  # < 2**64: exact in uint64
        p1 = c[2] * mb
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & np.uint64(M32), p1 & np.uint64(M32),
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & np.uint64(M32), p0 & np.uint64(M32)]
        k0 = (k0 + np.uint64(0x9E3779B9)) & np.uint64(M32)
        k1 = (k1 + np.uint64(0xBB67AE85)) & np.uint64(M32)
    return [x.astype(np.uint32) for x in c]


def philox4x64(counters, key, rounds=10):
    """Philox-4x64 with Python integers (128-bit products)."""
    m64 = (1 << 64) - 1
    out = []
    for ctr in zip(*[list(map(int, x)) for x in counters]):
        c, k0, k1 = list(ctr), key[0], key[1]
        for _ in range(rounds):
            p0 = 0xD2E7470EE14C6C93 * c[0]
            p1 = 0xCA5A826395121157 * c[2]
            c = [(p1 >> 64) ^ c[1] ^ k0, p1 & m64, (p0 >> 64) ^ c[3] ^ k1, p0 & m64]
            k0 = (k0 + 0x9E3779B97F4A7C15) & m64
            k1 = (k1 + 0xBB67AE8584CAA73B) & m64
        out.append(c)
    return [np.array([o[i] for o in out], np.uint64) for i in range(4)]


def ref_randint4x(seed, offsets, rounds=10):
    """Triton's layout: counter (offset, 0, 0, 0), key (low, high 32 bits of the seed)."""
    s = int(seed) & ((1 << 64) - 1)
    z = np.zeros_like(offsets)
    if np.asarray(offsets).dtype.itemsize == 8:
        return philox4x64([np.asarray(offsets).view(np.uint64), z, z, z], (s, 0), rounds)
    return philox4x32([np.asarray(offsets).view(np.uint32), z, z, z], (s & M32, s >> 32), rounds)


def ref_uniform(x):
    x = np.asarray(x)
    if x.dtype.itemsize == 4:
        i = x.view(np.int32).astype(np.int64)
        i = np.where(i < 0, -i - 1, i).astype(np.int32)
        return i.astype(np.float32) * np.float32(4.6566127342e-10)
    i = x.view(np.int64)
    i = np.where(i < 0, -(i + 1), i)
    return i.astype(np.float32) * np.float32(1.0842020432385337e-19)


def ref_normal(u1, u2):
    u1 = np.maximum(np.float32(1e-7), u1).astype(np.float64)
    th = np.float64(np.float32(6.283185307179586)) * u2.astype(np.float64)
    r = np.sqrt(-2.0 * np.log(u1))
    return r * np.cos(th), r * np.sin(th)


def test_reference_matches_random123_known_answers():
    """Philox4x32-10 known-answer vectors of Random123 (kat_vectors)."""
    cases = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
             ((M32,) * 4, (M32, M32), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
             ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
              (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    for ctr, key, want in cases:
        got = philox4x32([np.array([c]) for c in ctr], key)
        assert [int(g[0]) for g in got] == list(want)


# ---- kernels -----------------------------------------------------------------------------------

def k_randint4x(out, seed, n, BLOCK: tl.constexpr, ROUNDS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a, b, c, d = tl.randint4x(seed, offs, ROUNDS)
    tl.store(out + offs, a, mask=m)
    tl.store(out + n + offs, b, mask=m)
    tl.store(out + 2 * n + offs, c, mask=m)
    tl.store(out + 3 * n + offs, d, mask=m)


def k_streams(ri, u, u4, nrm, n4, seed, base, n, BLOCK: tl.constexpr):
    """Every entry point on offsets base + i (base may push them past 2**31)."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    offs = base + i
    tl.store(ri + i, tl.randint(seed, offs), mask=m)
    tl.store(u + i, tl.rand(seed, offs), mask=m)
    a, b, c, d = tl.rand4x(seed, offs)
    tl.store(u4 + 4 * i, a, mask=m)
    tl.store(u4 + 4 * i + 1, b, mask=m)
    tl.store(u4 + 4 * i + 2, c, mask=m)
    tl.store(u4 + 4 * i + 3, d, mask=m)
    tl.store(nrm + i, tl.randn(seed, offs), mask=m)
    e, f, g, h = tl.randn4x(seed, offs)
    tl.store(n4 + 4 * i, e, mask=m)
    tl.store(n4 + 4 * i + 1, f, mask=m)
    tl.store(n4 + 4 * i + 2, g, mask=m)
    tl.store(n4 + 4 * i + 3, h, mask=m)


def k_const_seed(out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.randint(0x1234_5678_9ABC, offs), mask=offs < n)


def k_offsets64(out, u, seed, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    offs = i.to(tl.int64) * 0x1_0000_0001 + 5
    a, b, c, d = tl.random.philox(seed, offs, offs * 0, offs * 0, offs * 0)
    tl.store(out + 4 * i, a, mask=i < n)
    tl.store(out + 4 * i + 1, b, mask=i < n)
    tl.store(out + 4 * i + 2, c, mask=i < n)
    tl.store(out + 4 * i + 3, d, mask=i < n)
    tl.store(u + i, tl.uint_to_uniform_float(a), mask=i < n)


def k_philox(out, seed, n, BLOCK: tl.constexpr):
    """tl.random.philox on a whole counter: (i, i * 3, 7, pid)."""
    i = tl.arange(0, BLOCK)
    a, b, c, d = tl.random.philox(seed, i, i * 3, 7, tl.program_id(0))
    tl.store(out + 4 * i, a, mask=i < n)
    tl.store(out + 4 * i + 1, b, mask=i < n)
    tl.store(out + 4 * i + 2, c, mask=i < n)
    tl.store(out + 4 * i + 3, d, mask=i < n)


# ---- interpreted ---------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 42, -7, 2**31 + 5, 0x1234_5678_9ABC_DEF0, -2**40 - 3])
@pytest.mark.parametrize("rounds", [10, 7])
def test_randint4x_stream(seed, rounds):
    n = 1000
    out = np.full(4 * n, 0xDEADBEEF, np.uint32)
    interpreted(k_randint4x)[(4,)](out, seed, n, BLOCK=256, ROUNDS=rounds)
    want = ref_randint4x(seed, np.arange(n, dtype=np.int32), rounds)
    np.testing.assert_array_equal(out.reshape(4, n), np.stack(want))


@pytest.mark.parametrize("base", [0, 2**31 - 100])
def test_every_entry_point(base):
    n, seed = 300, 0xC0FFEE
    ri = np.zeros(n, np.uint32)
    u, nrm = (np.full(n, np.nan, np.float32) for _ in range(2))
    u4, n4 = (np.full(4 * n, np.nan, np.float32) for _ in range(2))
    interpreted(k_streams)[(3,)](ri, u, u4, nrm, n4, seed, base, n, BLOCK=128)
    offs = (base + np.arange(n)).astype(np.int32)  # int32 wraps past 2**31, as on the GPU
    w = ref_randint4x(seed, offs)
    np.testing.assert_array_equal(ri, w[0])
    uw = [ref_uniform(x) for x in w]
    np.testing.assert_array_equal(u, uw[0])
    np.testing.assert_array_equal(u4.reshape(n, 4).T, np.stack(uw))
    assert (u >= 0).all() and (u < 1).all()
    n1, n2 = ref_normal(uw[0], uw[1])
    n3, n4w = ref_normal(uw[2], uw[3])
    np.testing.assert_allclose(nrm, n1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(n4.reshape(n, 4).T, np.stack([n1, n2, n3, n4w]),
                               rtol=1e-5, atol=1e-5)


def test_constant_seed_and_tail():
    out = np.full(64, 7, np.uint32)
    interpreted(k_const_seed)[(1,)](out, 50, BLOCK=64)
    want = ref_randint4x(0x1234_5678_9ABC, np.arange(50, dtype=np.int32))[0]
    np.testing.assert_array_equal(out[:50], want)
    assert (out[50:] == 7).all()


def test_64_bit_counters_use_philox4x64():
    n, seed = 40, 0x0123_4567_89AB_CDEF
    out = np.zeros(4 * n, np.uint64)
    u = np.full(n, np.nan, np.float32)
    interpreted(k_offsets64)[(1,)](out, u, seed, n, BLOCK=64)
    offs = np.arange(n, dtype=np.int64) * 0x1_0000_0001 + 5
    want = ref_randint4x(seed, offs)
    np.testing.assert_array_equal(out.reshape(n, 4).T, np.stack(want))
    np.testing.assert_array_equal(u, ref_uniform(want[0]))
    assert (u >= 0).all() and (u < 1).all()


def test_philox_whole_counter():
    n, seed = 30, 99
    out = np.zeros(4 * n, np.uint32)
    interpreted(k_philox)[(3,)](out, seed, n, BLOCK=32)  # the last program's values stay
    i = np.arange(n, dtype=np.uint32)
    want = philox4x32([i, i * 3, np.full(n, 7), np.full(n, 2)], (seed, 0))
    np.testing.assert_array_equal(out.reshape(n, 4).T, np.stack(want))


def test_statistics():
    n = 1 << 16
    ri = np.zeros(n, np.uint32)
    u, nrm = np.zeros(n, np.float32), np.zeros(n, np.float32)
    u4, n4 = np.zeros(4 * n, np.float32), np.zeros(4 * n, np.float32)
    interpreted(k_streams)[(n // 1024,)](ri, u, u4, nrm, n4, 2024, 0, n, BLOCK=1024)
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    assert abs(n4.mean()) < 0.01 and abs(n4.std() - 1) < 0.01
    assert len(np.unique(ri)) > n * 0.99


# ---- compiled ----------------------------------------------------------------------------------

U32, F32 = tl.pointer_type(tl.uint32), tl.pointer_type(tl.float32)


@pytest.mark.parametrize("target", TARGETS)
def test_streams_compile(target):
    sig = {"ri": U32, "u": F32, "u4": F32, "nrm": F32, "n4": F32, "seed": tl.int64,
           "base": tl.int32, "n": tl.int32}
    ck = compile(ASTSource(tilework.jit(k_streams), sig, {"BLOCK": 256}, {}), target,
                 cache=False)
    if target.startswith("sm"):
        # umulhi through a 64-bit product becomes the hardware's high multiply
        assert "mul.hi.u32" in ck.asm["ptx"]
    else:
        assert "v_mul_hi_u32" in ck.asm["amdgcn"] or "v_mad_u64_u32" in ck.asm["amdgcn"]


@pytest.mark.parametrize("target", TARGETS)
def test_64_bit_and_philox_compile(target):
    ck = compile(ASTSource(tilework.jit(k_offsets64), {"out": tl.pointer_type(tl.uint64),
                                                       "u": F32, "seed": tl.int64,
                                                       "n": tl.int32}, {"BLOCK": 64}, {}),
                 target, cache=False)
    assert ck.asm.get("ptx") or ck.asm.get("amdgcn")
    ck = compile(ASTSource(tilework.jit(k_philox), {"out": U32, "seed": tl.int32, "n": tl.int32},
                           {"BLOCK": 64}, {}), target, cache=False)
    assert ck.asm.get("ptx") or ck.asm.get("amdgcn")


def test_bad_offset_dtype_is_rejected():
    from tilework import CompilationError

    @tilework.jit
    def k(out, seed):
        tl.store(out, tl.randint(seed, tl.arange(0, 16).to(tl.int16)))

    with pytest.raises(CompilationError, match="philox takes 32- or 64-bit integer counters"):
        compile(ASTSource(k, {"out": U32, "seed": tl.int32}, {}, {}), "sm_90a", cache=False)
