"""Issue 14's added language features on the GPU, against torch/numpy on random inputs:
libdevice's bit intrinsics, `remainder`, `rsqrt_rn`, `tl.inline_asm_elementwise` (PTX: NVIDIA
only), `tl.target_info` and `tl.condition`.  The interpreter and compile-only halves are
test_libdevice_bits.py, test_libdevice_rn.py, test_inline_asm.py and test_target_info.py;
skipped without a GPU."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.language.extra import libdevice

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import test_libdevice_bits as bits  # noqa: E402
import test_libdevice_rn as rn  # noqa: E402
import test_target_info as ti  # noqa: E402
from test_inline_asm import MULTI_ASM as ASM_MULTI  # noqa: E402

HIP = getattr(torch.version, "hip", None) is not None
N = 1 << 14
TORCH = {np.int32: torch.int32, np.int64: torch.int64, np.float32: torch.float32,
         np.float64: torch.float64}


def dev(a):
    """A CUDA copy of `a`; uint32 travels as int32 and is viewed back (torch's uint32 has
    few kernels)."""
    a = np.ascontiguousarray(a)
    if a.dtype == np.uint32:
        return torch.from_numpy(a.view(np.int32)).cuda().view(torch.uint32)
    return torch.from_numpy(a).cuda()


def empty(n, dt):
    if np.dtype(dt) == np.uint32:
        return torch.zeros(n, dtype=torch.int32, device="cuda").view(torch.uint32)
    return torch.zeros(n, dtype=TORCH[np.dtype(dt).type], device="cuda")


def host(t):
    if t.dtype == torch.uint32:
        return t.view(torch.int32).cpu().numpy().view(np.uint32)
    return t.cpu().numpy()


@tilework.jit
def k1(x, o, FN: tl.constexpr, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i)))


@tilework.jit
def k2(x, y, o, FN: tl.constexpr, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i), tl.load(y + i)))


@tilework.jit
def k3(x, y, z, o, FN: tl.constexpr, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i), tl.load(y + i), tl.load(z + i)))


@pytest.mark.parametrize("name, dts, out_dt, ref", bits.CASES, ids=bits.IDS)
def test_bit_intrinsics(name, dts, out_dt, ref):
    xs = []
    for s in range(N // bits.N):  # the unit test's inputs, many seeds
        xs.append(bits._inputs(name, dts, s))
    xs = [np.concatenate([x[j] for x in xs]) for j in range(len(dts))]
    want = np.concatenate([ref(*[x[k * bits.N:(k + 1) * bits.N] for x in xs])
                           for k in range(N // bits.N)])
    out = empty(N, bits.NP[out_dt])
    kernel = {1: k1, 2: k2, 3: k3}[len(dts)]
    kernel[(N // 1024,)](*[dev(x) for x in xs], out, FN=name, B=1024)
    np.testing.assert_array_equal(host(out), want)


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
def test_remainder(dt):
    xs, ys = [], []
    for s in range(N // rn.N):
        x, y = rn.remainder_inputs(dt, np.random.default_rng(s))
        xs.append(x)
        ys.append(y)
    x, y = np.concatenate(xs), np.concatenate(ys)
    want = np.concatenate([rn.remainder_ref(x[k:k + rn.N], y[k:k + rn.N])
                           for k in range(0, N, rn.N)])
    out = empty(N, rn.NP[dt])
    k2[(N // 1024,)](dev(x), dev(y), out, FN="remainder", B=1024)
    got = host(out)
    np.testing.assert_array_equal(got, want)
    num = ~np.isnan(want)
    assert (np.signbit(got) == np.signbit(want))[num].all()


def test_rsqrt_rn():
    x = np.concatenate([rn.rsqrt_inputs(np.random.default_rng(s)) for s in range(N // rn.N)])
    u = np.random.default_rng(9).integers(0, 0x7F800000, N, dtype=np.uint32)  # all positives
    x = np.concatenate([x, u.view(np.float32)])
    with np.errstate(all="ignore"):
        want = (1.0 / np.sqrt(x.astype(np.float64))).astype(np.float32)
    out = torch.zeros(2 * N, dtype=torch.float32, device="cuda")
    k1[(2 * N // 1024,)](dev(x), out, FN="rsqrt_rn", B=1024)
    np.testing.assert_array_equal(host(out), want)


needs_ptx = pytest.mark.skipif(HIP, reason="the asm is PTX")


@tilework.jit
def k_pack4(X, Y, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F; shl.b32 $0, $0, 3;", "=r,r",
                                  [tl.load(X + o)], dtype=tl.int8, is_pure=True, pack=4)
    tl.store(Y + o, y)


@needs_ptx
@pytest.mark.parametrize("block", [2048, 256, 128])  # 16, 2 and 1 int8 a thread (padded)
def test_inline_asm_pack4(block):
    x = torch.randint(-128, 128, (8192,), dtype=torch.int8, device="cuda")
    y = torch.empty_like(x)
    k_pack4[(8192 // block,)](x, y, BLOCK=block)
    want = ((x.to(torch.int32) & 0x1F) << 3).to(torch.int8)
    torch.testing.assert_close(y, want, rtol=0, atol=0)


@tilework.jit
def k_multi(A, B, C, D, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    (c, d) = tl.inline_asm_elementwise(
        asm=ASM_MULTI, constraints="=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r",
        args=[tl.load(A + o), tl.load(B + o)], dtype=(tl.int32, tl.float32), is_pure=True,
        pack=4)
    tl.store(C + o, c)
    tl.store(D + o, d)


@needs_ptx
def test_inline_asm_several_outputs():
    a = torch.randint(0, 256, (4096,), dtype=torch.uint8, device="cuda")
    b = torch.randn(4096, device="cuda") * 200
    c = torch.empty(4096, dtype=torch.int32, device="cuda")
    d = torch.empty(4096, dtype=torch.float32, device="cuda")
    k_multi[(4,)](a, b, c, d, BLOCK=1024)
    torch.testing.assert_close(c, a.to(torch.int32), rtol=0, atol=0)
    torch.testing.assert_close(d, torch.maximum(a.to(torch.float32), b), rtol=0, atol=0)


@tilework.jit
def k_bcast(X, Y, Z, R: tl.constexpr, C: tl.constexpr):
    x = tl.load(X + tl.arange(0, R))[:, None]
    y = tl.load(Y + tl.arange(0, C))[None, :]
    z = tl.inline_asm_elementwise("mad.lo.s32 $0, $1, 3, $2;", "=r,r,r", [x, y],
                                  dtype=tl.int32, is_pure=False, pack=1)
    tl.store(Z + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], z)


@needs_ptx
def test_inline_asm_broadcast():
    x = torch.randint(-1000, 1000, (32,), dtype=torch.int32, device="cuda")
    y = torch.randint(-1000, 1000, (64,), dtype=torch.int32, device="cuda")
    z = torch.empty(32, 64, dtype=torch.int32, device="cuda")
    k_bcast[(1,)](x, y, z, R=32, C=64)
    torch.testing.assert_close(z, x[:, None] * 3 + y[None, :], rtol=0, atol=0)


def _device_target():
    from tilework.runtime.device import runtime_for
    return runtime_for(None).target()  # what kernels launched here are compiled for


def test_target_info_on_the_device():
    out = torch.full((1,), -1, dtype=torch.int32, device="cuda")
    ti.k_info[(1,)](out)
    arch = _device_target()
    want = ti.EXPECTED.get(arch)
    if want is None:
        pytest.skip(f"no expectation written for {arch}")
    assert int(out.item()) == want


def test_guarded_inline_asm_on_the_device():
    x = torch.randint(-1000, 1000, (128,), dtype=torch.int32, device="cuda")
    y = torch.empty_like(x)
    ti.k_guarded[(1,)](x, y)
    torch.testing.assert_close(y, x << 3, rtol=0, atol=0)


def test_condition_on_the_device():
    x = torch.randn(100, device="cuda")
    out = torch.zeros(1, device="cuda")
    ti.k_while[(1,)](x, out, 77)
    want = np.float32(0)
    for v in host(x)[:77]:
        want = np.float32(want + v)
    assert host(out)[0] == want


import test_map_elementwise as me  # noqa: E402


def test_map_elementwise_on_the_device():
    x = torch.randint(1, 10000, (128,), dtype=torch.int32, device="cuda")
    y = torch.empty_like(x)
    me.k_collatz[(1,)](x, y, BLOCK=128)
    np.testing.assert_array_equal(host(y), me.collatz_ref(host(x)))
    x = torch.randint(-1000, 1000, (16,), dtype=torch.int32, device="cuda")
    z = torch.randint(-1000, 1000, (32,), dtype=torch.int32, device="cuda")
    s = torch.empty(16, 32, dtype=torch.int32, device="cuda")
    m = torch.empty_like(s)
    me.k_pack2[(1,)](x, z, s, m, R=16, C=32)
    torch.testing.assert_close(s, x[:, None] + z[None, :], rtol=0, atol=0)
    torch.testing.assert_close(m, x[:, None] * z[None, :], rtol=0, atol=0)
    a = torch.randn(256, device="cuda")
    b = torch.empty_like(a)
    me.k_selu[(1,)](a, b, 1.5, BLOCK=256)
    torch.testing.assert_close(b, torch.where(a > 0, a, 1.5 * (torch.exp(a) - 1)),
                               rtol=1e-5, atol=1e-6)


import test_inline_asm as ia  # noqa: E402


@pytest.mark.skipif(not HIP, reason="the asm is AMDGCN")
def test_inline_asm_pack4_amdgcn():
    x = torch.randint(-128, 128, (8192,), dtype=torch.int8, device="cuda")
    y = torch.empty_like(x)
    ia.k_amd_pack4[(4,)](x, y, BLOCK=2048)
    torch.testing.assert_close(y, ((x.to(torch.int32) & 0x1F) << 3).to(torch.int8), rtol=0,
                               atol=0)
