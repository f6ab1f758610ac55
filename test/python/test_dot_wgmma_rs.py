"""wgmma with A from registers (FlashAttention-3's P): which dots keep A in registers
(tilegpu-warpgroup-dot), the conversion from the accumulator layout planned as a no-op, the
chained dots run on the SIMT emulator (whose register-A wgmma follows the PTX ISA's fragment
table) against numpy, and the PTX (no st.shared of P, ptxas, no spills)."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.dialects.layout import DotOperand, NvidiaMma
from tilework.dialects.linear_layout import packed_shuffles, plan_conversion, shuffle_map
from tilework.dialects.word_exchange import exchange_tables, min_word_shuffles

from simt_emulator import Emulator

SM90A = "sm_90a"


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


@tilework.jit
def chain_dot(a_ptr, b_ptr, v_ptr, o_ptr, M: tl.constexpr, K: tl.constexpr, J: tl.constexpr,
              N: tl.constexpr, ITERS: tl.constexpr, A_LOADED: tl.constexpr):
    """o = sum over it of f16(scale * (a @ b[it])) @ v[it]: the second dot's A is computed in
    the first's accumulator layout (A_LOADED: a loaded tile instead, which stays in shared
    memory)."""
    rm = tl.arange(0, M)
    rk = tl.arange(0, K)
    rj = tl.arange(0, J)
    rn = tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    acc = tl.zeros((M, N), dtype=tl.float32)
    for it in range(ITERS):
        b = tl.load(b_ptr + it * K * J + rk[:, None] * J + rj[None, :])
        v = tl.load(v_ptr + it * J * N + rj[:, None] * N + rn[None, :])
        if A_LOADED:
            p = tl.load(v_ptr + it * J * N + rm[:, None] * J + rj[None, :])  # (M <= N)
        else:
            s = tl.dot(a, b)
            p = (s * 0.25).to(a.dtype)
        acc = tl.dot(p, v, acc)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc)


def _emulate(rng, m, k, j, n, iters, nw, dt=np.float16, a_loaded=False):
    tdt = {np.float16: tl.float16, "bf16": tl.bfloat16}[dt]
    sig = dict(a_ptr=tl.pointer_type(tdt), b_ptr=tl.pointer_type(tdt),
               v_ptr=tl.pointer_type(tdt), o_ptr=tl.pointer_type(tl.float32))
    emu = Emulator.from_kernel(chain_dot, sig, dict(M=m, K=k, J=j, N=n, ITERS=iters,
                                                    A_LOADED=a_loaded), SM90A, num_warps=nw)

    def make(shape):
        x = rng.standard_normal(shape).astype(np.float32)
        if dt == "bf16":
            bits = (x.view(np.uint32) >> 16).astype(np.uint16)
            return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        x = x.astype(np.float16)
        return x, x.astype(np.float64)
    a, av = make((m, k))
    b, bv = make((iters, k, j))
    v, vv = make((iters, j, n))
    o = np.zeros((m, n), np.float32)
    emu.run((1,), a, b, v, o)
    ref = np.zeros((m, n))
    bound = np.zeros((m, n))  # a P element may round the other way (its fp32 sum's order)
    for it in range(iters):
        if a_loaded:
            p = vv[it].reshape(-1)[:m * j].reshape(m, j)
        else:
            s = (av @ bv[it]).astype(np.float32) * np.float32(0.25)
            if dt == "bf16":
                p = (s.view(np.uint32) + 0x8000 >> 16 << 16).view(np.float32).astype(np.float64)
            else:
                p = s.astype(np.float16).astype(np.float64)
        ref += p @ vv[it]
        bound += np.abs(p) @ np.abs(vv[it]) * (2.0**-7 if dt == "bf16" else 2.0**-10)
    return emu, o, ref, bound


def _register_a_dots(tilegpu: str) -> int:
    return len(re.findall(r'"tilegpu\.warpgroup_dot"\(%\w+, %\w+, %\w+\)[^\n]*: \(tensor<', tilegpu))


@pytest.mark.parametrize("m, k, j, n, iters, nw, dt", [
    (64, 32, 64, 64, 1, 4, np.float16),
    (128, 64, 64, 64, 2, 8, np.float16),   # two warpgroups along M, a loop
    (64, 16, 32, 128, 1, 4, "bf16"),
    (128, 32, 128, 32, 1, 8, np.float16),  # K of the second dot 128: 8 steps of A registers
])
def test_register_a_emulated(m, k, j, n, iters, nw, dt, rng):
    emu, o, ref, bound = _emulate(rng, m, k, j, n, iters, nw, dt)
    tg = emu.compiled.asm["tilegpu"]
    assert _register_a_dots(tg) == 1, tg
    ptx = emu.compiled.asm["ptx"]
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.(f16|bf16)\.(f16|bf16)"
                     r"\s+\{[^}]*\},\s*\{%r\d+, %r\d+, %r\d+, %r\d+\}", ptx), \
        "a wgmma with A in registers"
    err = np.abs(o - ref)
    tol = bound + 1e-4 * (np.abs(ref) + 1)  # (fp32 accumulation)
    assert (err <= tol).all(), (err - tol).max()


def test_loaded_a_stays_in_shared_memory(rng):
    """A loaded tile (the pipeliner copies it into shared memory) is not an A in registers."""
    emu, o, ref, _ = _emulate(rng, 64, 32, 64, 64, 1, 4, a_loaded=True)
    assert _register_a_dots(emu.compiled.asm["tilegpu"]) == 0
    np.testing.assert_allclose(o, ref, rtol=2e-3, atol=2e-3)


def test_warps_along_n_keep_shared_a(rng):
    """64 rows, 8 warps: the first dot's warps split N, so its accumulator is not the second
    dot's A fragment (a real conversion): A goes through shared memory as before."""
    emu, o, ref, bound = _emulate(rng, 64, 32, 64, 64, 1, 8)
    assert _register_a_dots(emu.compiled.asm["tilegpu"]) == 0
    assert (np.abs(o - ref) <= bound + 1e-4 * (np.abs(ref) + 1)).all()


@pytest.mark.parametrize("wm, m, k", [(4, 64, 64), (8, 128, 64), (8, 128, 128), (4, 256, 32)])
def test_accumulator_to_a_fragment_is_no_conversion(wm, m, k):
    """The planner finds nothing to move from a [m, k] accumulator (N = k, warps along M) to
    the A fragment of the next dot (FlashAttention-3's observation)."""
    acc = NvidiaMma(3, (wm, 1), (64, k, 16))
    nxt = NvidiaMma(3, (wm, 1), (64, 64, 16))
    a = DotOperand(0, nxt, 2)
    plan = plan_conversion(acc.linear((m, k)), a.linear((m, k)), (m, k), 2)
    assert plan.kind == "none", plan.kind


def test_a_fragment_with_copies_is_a_real_conversion():
    acc = NvidiaMma(3, (4, 2), (64, 32, 16))  # the first dot's warps split its N
    a = DotOperand(0, NvidiaMma(3, (4, 2), (64, 32, 16)), 2)
    assert plan_conversion(acc.linear((64, 64)), a.linear((64, 64)), (64, 64), 2).kind \
        not in ("none", "registers")



@pytest.mark.parametrize("wm, m, k", [(4, 64, 64), (4, 64, 128), (8, 128, 128)])
def test_fp8_accumulator_to_a_fragment_is_word_shuffles(wm, m, k):
    """8-bit: the k32 accumulator to the k32 A fragment moves within quads as 32-bit words,
    one shuffle a dst word (a thread's m * k / (32 wm) bytes, 4 a word), the fewest any plan
    can take (lanes holding none of their bytes), by a word exchange (word_exchange.py): the
    sender's lane picks which src bytes it sends; registers 0 and 1 (columns +1 and +8) packed
    into a src word.  (`packed_shuffles`, the fallback, takes two a word.)"""
    acc = NvidiaMma(3, (wm, 1), (64, k, 32))
    a = DotOperand(0, NvidiaMma(3, (wm, 1), (64, 64, 32)), 4)
    src, dst = acc.linear((m, k)), a.linear((m, k))
    plan = plan_conversion(src, dst, (m, k), 1)
    words = m * k // (32 * wm) // 4
    assert plan.kind == "shuffle" and plan.word_bits == (0, 1), plan
    assert plan.exchange is not None and plan.shuffles == words
    assert min_word_shuffles(plan.source) == words
    tabs = exchange_tables(plan.source, plan.exchange)
    assert len(tabs.rounds) == len(tabs.words) == words
    assert all(len(ws) == 2 for ws, _, _ in tabs.rounds)  # one prmt a sent word
    assert packed_shuffles(shuffle_map(src, dst)[0], 1) == ((0, 1), 2 * words)


def test_16_bit_conversions_keep_element_shuffles():
    """Only 8-bit elements move as words (16-bit plans, and so their PTX, are unchanged)."""
    src = NvidiaMma(3, (4, 1), (64, 64, 16)).linear((64, 64))
    dst = DotOperand(0, NvidiaMma(3, (4, 1), (64, 64, 32)), 4).linear((64, 64))
    assert not plan_conversion(src, dst, (64, 64), 2).word_bits


# ---- fp8: P converted within quads (word shuffles + prmt) ----------------------------------

@tilework.jit
def fp8_scores(q_ptr, k_ptr, v_ptr, M: tl.constexpr, D: tl.constexpr, J: tl.constexpr,
               N: tl.constexpr):
    """(exp2(q k - rowmax) in f32, v) of the fp8 chains' operands."""
    rm = tl.arange(0, M)
    rd = tl.arange(0, D)
    rj = tl.arange(0, J)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    k = tl.load(k_ptr + rd[:, None] * J + rj[None, :])
    v = tl.load(v_ptr + rj[:, None] * N + tl.arange(0, N)[None, :])
    s = tl.dot(q, k)
    return tl.math.exp2(s - tl.max(s, 1)[:, None]), v


@tilework.jit
def fp8_chain(q_ptr, k_ptr, v_ptr, o_ptr, p_ptr, M: tl.constexpr, D: tl.constexpr,
              J: tl.constexpr, N: tl.constexpr):
    """Attention's shape in fp8: p = exp2(q k - rowmax) to fp8 (stored), o = p v."""
    e, v = fp8_scores(q_ptr, k_ptr, v_ptr, M, D, J, N)
    rm, rj, rn = tl.arange(0, M), tl.arange(0, J), tl.arange(0, N)
    p = e.to(v.dtype)
    tl.store(p_ptr + rm[:, None] * J + rj[None, :], p)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], tl.dot(p, v))


def _steps_f32(a, b, k_step=32):
    """a @ b as the emulated wgmma sums it: each K step exact, added to the fp32 accumulator."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k0 in range(0, a.shape[1], k_step):
        acc = (acc.astype(np.float64) + a[:, k0:k0 + k_step] @ b[k0:k0 + k_step]) \
            .astype(np.float32)
    return acc


@pytest.mark.parametrize("kind, m, d, j, n, nw", [
    ("e4m3", 64, 32, 64, 64, 4),
    ("e5m2", 64, 32, 128, 32, 4),
    ("e4m3", 128, 64, 128, 64, 8),  # two warpgroups along M
])
def test_fp8_register_a_emulated(kind, m, d, j, n, nw, rng):
    """The second dot reads P from registers (k32 e4m3/e5m2 fragments), after a word exchange
    (a prmt, a shuffle and a prmt a 32-bit word); o bit-exact against numpy from the P the
    kernel stored (the wgmma's per-K-step fp32 sums), P against torch's fp8 rounding."""
    torch = pytest.importorskip("torch")
    from test_dot_wgmma import KINDS
    tdt, make = KINDS[kind]
    P8 = tl.pointer_type(tdt)
    emu = Emulator.from_kernel(fp8_chain, dict(q_ptr=P8, k_ptr=P8, v_ptr=P8,
                                               o_ptr=tl.pointer_type(tl.float32), p_ptr=P8),
                               dict(M=m, D=d, J=j, N=n), SM90A, num_warps=nw)
    q, qv = make(rng, (m, d))
    k, kv = make(rng, (d, j))
    v, vv = make(rng, (j, n))
    qv, kv = qv / 16, kv / 16  # (scaled inputs: keep s within exp2's useful range)
    q, k = (torch.from_numpy(x).to({"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
                                   [kind]).view(torch.uint8).numpy() for x in (qv, kv))
    o = np.zeros((m, n), np.float32)
    p = np.zeros((m, j), np.uint8)
    emu.run((1,), q, k, v, o, p)
    ptx = emu.compiled.asm["ptx"]
    assert _register_a_dots(emu.compiled.asm["tilegpu"]) == 1
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n{n}k32\.f32\.{kind}\.{kind}"
                     r"\s+\{[^}]*\},\s*\{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1;", ptx)
    assert "prmt.b32" in ptx and "shfl.sync.idx.b32" in ptx
    s = _steps_f32(qv, kv)
    e = np.exp2((s - s.max(1, keepdims=True)).astype(np.float64)).astype(np.float32)
    t8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[kind]
    pb = torch.from_numpy(e).to(t8).view(torch.uint8).numpy()
    # (P's bytes: a value next to a rounding tie may round the other way, exp2's emulation
    # against numpy's; o is checked bit-exactly from the bytes the kernel stored)
    assert (np.abs(p.astype(np.int64) - pb) <= 1).all() and (p != pb).mean() < 0.01
    pv = torch.from_numpy(p).view(t8).to(torch.float64).numpy()
    np.testing.assert_array_equal(o, _steps_f32(pv, vv))


@tilework.jit
def fp8_chain_scaled(q_ptr, k_ptr, v_ptr, o_ptr, e_ptr, p_ptr, sc, M: tl.constexpr,
                     D: tl.constexpr, J: tl.constexpr, N: tl.constexpr):
    """fp8_chain with e = exp2(q k - rowmax) * sc stored too (sc: overflow, inf, NaN)."""
    e, v = fp8_scores(q_ptr, k_ptr, v_ptr, M, D, J, N)
    e = e * sc
    rm, rj, rn = tl.arange(0, M), tl.arange(0, J), tl.arange(0, N)
    tl.store(e_ptr + rm[:, None] * J + rj[None, :], e)
    p = e.to(v.dtype)
    tl.store(p_ptr + rm[:, None] * J + rj[None, :], p)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], tl.dot(p, v))


@pytest.mark.parametrize("kind, sc", [("e4m3", 1.0), ("e4m3", 600.0), ("e4m3", -np.inf),
                                      ("e5m2", 1.0), ("e5m2", 6e4), ("e5m2", np.inf)])
def test_fp8_exchange_bit_exact_with_interpreter(kind, sc, rng):
    """dot -> exp2 -> fp8 -> dot on the SIMT emulator: the packed conversion (cvt x2 into a
    word, fix-ups on packed bytes) and the word exchange give P's bytes the interpreter's
    conversion of the same f32 values gives (the kernel stores both), bit for bit, specials
    included (sc: saturation, inf, and NaN where exp2 underflows to 0 times inf); o from
    those bytes as numpy sums the wgmma's K steps."""
    torch = pytest.importorskip("torch")
    from test_dot_wgmma import KINDS
    from test_fp8 import interp, k_f32_to_bits
    tdt, make = KINDS[kind]
    m, d, j, n = 64, 32, 64, 64
    P8, F32 = tl.pointer_type(tdt), tl.pointer_type(tl.float32)
    emu = Emulator.from_kernel(fp8_chain_scaled, dict(q_ptr=P8, k_ptr=P8, v_ptr=P8, o_ptr=F32,
                                                      e_ptr=F32, p_ptr=P8, sc=tl.float32),
                               dict(M=m, D=d, J=j, N=n), SM90A, num_warps=4)
    words = m * j // 128 // 4  # (P's words a thread; the other idx shuffles: a reduction's)
    assert words <= len(re.findall(r"shfl\.sync\.idx\.b32", emu.compiled.asm["ptx"])) < 2 * words
    v, vv = make(rng, (j, n))
    t8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[kind]
    # q, k normal (exp2 of moderate values), q's rows 32-63 64 times wider (many exp2 underflow
    # to 0; 0 * inf is NaN)
    qn = rng.standard_normal((m, d)) * np.where(np.arange(m) < 32, 0.5, 32.0)[:, None]
    q, k = (torch.from_numpy(x.astype(np.float32)).to(t8).view(torch.uint8).numpy()
            for x in (qn, rng.standard_normal((d, j)) * 0.5))
    o = np.zeros((m, n), np.float32)
    e = np.zeros((m, j), np.float32)
    p = np.zeros((m, j), np.uint8)
    emu.run((1,), q, k, v, o, e, p, np.float32(sc))
    ref = np.zeros(m * j, np.uint8)
    interp(k_f32_to_bits, (m * j // 256,), e.ravel(), ref, m * j,
           KIND=tl.float8e4nv if kind == "e4m3" else tl.float8e5, BLOCK=256)
    np.testing.assert_array_equal(p.ravel(), ref)
    assert np.isnan(e).any() == np.isinf(sc) and len(np.unique(p[:32])) > (16 if sc == 1 else 0)
    if np.isfinite(sc):
        assert (p[32:] == 0).any() and (np.abs(e) > {"e4m3": 448, "e5m2": 57344}[kind]).any() \
            == (sc > 1)
        pv = torch.from_numpy(p).view(t8).to(torch.float64).numpy()
        np.testing.assert_array_equal(o, _steps_f32(pv, vv))
