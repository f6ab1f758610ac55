"""Issue 14's language semantics and host API on the GPU, against torch/numpy on random inputs
(the interpreter and compile-only halves are test_conform_semantics.py / test_conform_host.py);
skipped without a GPU."""
import math
import zlib

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.language.extra import libdevice
from tilework.runtime import driver

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

from test_random import philox4x32  # noqa: E402


@tilework.jit
def k_optional(x, bias, out, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + o, mask=o < n)
    if bias is not None:
        v += tl.load(bias + o, mask=o < n)
    else:
        v = v * 2
    tl.store(out + o, v, mask=o < n)


@pytest.mark.parametrize("with_bias", [True, False])
def test_is_none_on_the_gpu(with_bias):
    x = torch.randn(3000, device="cuda")
    b = torch.randn(3000, device="cuda")
    out = torch.empty_like(x)
    k_optional[(3,)](x, b if with_bias else None, out, 3000, B=1024)
    torch.testing.assert_close(out, x + b if with_bias else x * 2, rtol=0, atol=0)
    k_optional[(3,)](x, None if with_bias else b, out, 3000, B=1024)
    torch.testing.assert_close(out, x * 2 if with_bias else x + b, rtol=0, atol=0)
    assert len(k_optional.cache) == 2  # None and a tensor are two variants


@tilework.jit
def k_shift(x, y, out, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out + o, tl.load(x + o, mask=o < n) >> tl.load(y + o, mask=o < n), mask=o < n)


def test_signed_shift_by_unsigned_on_the_gpu():
    rng = np.random.default_rng(0)
    x = rng.integers(-2**31, 2**31, 5000).astype(np.int32)
    y = rng.integers(0, 32, 5000).astype(np.uint32)
    out = torch.empty(5000, dtype=torch.int32, device="cuda")  # the uint32 result's bits
    yt = torch.from_numpy(y.view(np.int32)).cuda().view(torch.uint32)
    k_shift[(5,)](torch.from_numpy(x).cuda(), yt, out, 5000, B=1024)
    np.testing.assert_array_equal(out.cpu().numpy(), x >> y.astype(np.int32))


@tilework.jit
def k_grouped(ptrs, sizes, out, B: tl.constexpr):
    g = tl.program_id(0)
    base = tl.load(ptrs + g).to(tl.pointer_type(tl.float16))
    n = tl.load(sizes + g)
    o = tl.arange(0, B)
    v = tl.load(base + o, mask=o < n, other=0.0)
    tl.store(out + g * B + o, v.to(tl.float32) * 2, mask=o < n)


def test_pointer_arrays_on_the_gpu():
    tensors = [torch.randn(n, device="cuda", dtype=torch.float16) for n in (100, 1000, 7)]
    ptrs = torch.tensor([t.data_ptr() for t in tensors], dtype=torch.int64, device="cuda")
    sizes = torch.tensor([t.numel() for t in tensors], dtype=torch.int32, device="cuda")
    out = torch.zeros(3 * 1024, device="cuda")
    k_grouped[(3,)](ptrs, sizes, out, B=1024)
    for g, t in enumerate(tensors):
        torch.testing.assert_close(out[g * 1024:g * 1024 + t.numel()], t.float() * 2)


@tilework.jit
def k_shapes(x, out, n, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.static_assert(v.shape == [N])
    w = v[None, None, :]
    u = v[:, None, None]
    s = tl.sum(tl.sum(w + u, axis=2), axis=1)
    tl.store(out + tl.arange(0, N), s * n + n.dtype.primitive_bitwidth)


@pytest.mark.parametrize("n", [1, 3])
def test_shapes_and_specialized_one_on_the_gpu(n):
    x = torch.randn(16, device="cuda")
    out = torch.empty_like(x)
    k_shapes[(1,)](x, out, n, N=16)
    torch.testing.assert_close(out, (16 * x + x.sum()) * n + 32, rtol=1e-5, atol=1e-4)


@tilework.jit
def k_randint(out, seed, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out + i, tl.randint(seed, i.to(tl.int64)), mask=i < n)


@pytest.mark.parametrize("seed", [0, 124, 0xFFFFFFFF, 0x0000000FCAFEB0BA])
def test_randint_int64_offsets_on_the_gpu(seed):
    out = torch.empty(2000, dtype=torch.int64, device="cuda")
    k_randint[(2,)](out, seed, 2000, B=1024)
    i = np.arange(2000, dtype=np.uint32)
    z = np.zeros(2000, np.uint32)
    want = philox4x32([i, z, z, z], (seed & 0xFFFFFFFF, seed >> 32))[0].astype(np.int64)
    np.testing.assert_array_equal(out.cpu().numpy(), want)


@tilework.jit
def k_libdevice(x, y, out, n, NAME: tl.constexpr, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    m = o < n
    if NAME in ("pow", "atan2", "hypot", "fmod", "copysign"):
        r = getattr(libdevice, NAME)(tl.load(x + o, mask=m), tl.load(y + o, mask=m))
    else:
        r = getattr(libdevice, NAME)(tl.load(x + o, mask=m))
    tl.store(out + o, r, mask=m)


TORCH = {
    "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "tan": torch.tan,
    "sinh": torch.sinh, "cosh": torch.cosh, "tanh": torch.tanh, "asinh": torch.asinh,
    "acosh": torch.acosh, "atanh": torch.atanh, "expm1": torch.expm1, "log1p": torch.log1p,
    "log10": torch.log10, "erfc": torch.erfc, "trunc": torch.trunc, "rint": torch.round,
    "cbrt": lambda x: torch.sign(x) * torch.abs(x) ** (1 / 3), "exp10": lambda x: 10.0 ** x,
    "pow": torch.pow, "atan2": torch.atan2, "hypot": torch.hypot, "fmod": torch.fmod,
    "copysign": torch.copysign,
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(TORCH))
def test_libdevice_on_the_gpu(name, dtype):
    g = torch.Generator(device="cuda").manual_seed(zlib.crc32(name.encode()))
    x = torch.randn(4000, device="cuda", dtype=dtype, generator=g) * 3
    y = torch.randn(4000, device="cuda", dtype=dtype, generator=g) * 3
    if name in ("asin", "acos", "atanh"):
        x = x.clamp(-3, 3) / 3.0001
    if name == "acosh":
        x = 1 + x.abs()
    if name in ("log10", "pow"):
        x = x.abs() + 1e-3
    if name == "log1p":  # (its domain: x > -1; below it both sides give NaN)
        x = x.clamp(min=-0.999)
    out = torch.empty_like(x)
    k_libdevice[(4,)](x, y, out, 4000, NAME=name, B=1024, extern_libs={"libdevice": "unused"})
    want = TORCH[name](*((x, y) if name in ("pow", "atan2", "hypot", "fmod", "copysign")
                         else (x,)))
    rtol = 1e-6 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(out, want, rtol=rtol, atol=1e-6 if name == "erfc" else 1e-30)


@tilework.jit
def k_softmax(x, out, n, B: tl.constexpr):
    row = tl.program_id(0)
    o = tl.arange(0, B)
    v = tl.load(x + row * n + o, mask=o < n, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + row * n + o, e / tl.sum(e, axis=0), mask=o < n)


def test_warmup_handle_and_device_properties_on_the_gpu():
    """The fused-softmax tutorial's occupancy computation runs as written for Triton."""
    dev = driver.active.get_active_torch_device()
    assert dev.type == "cuda"
    props = driver.active.utils.get_device_properties(dev.index)
    assert props["multiprocessor_count"] == torch.cuda.get_device_properties(dev).multi_processor_count
    assert props["warpSize"] in (32, 64)
    assert props["max_num_regs"] >= 32768 and props["max_shared_mem"] >= 48 * 1024
    x = torch.randn(64, 1000, device="cuda")
    out = torch.empty_like(x)
    k = k_softmax.warmup(x, out, 1000, B=1024, num_warps=8, grid=(1,))
    assert 0 < k.n_regs <= 255 and k.n_spills == 0
    assert k.metadata.shared >= 0
    occupancy = props["max_num_regs"] // (k.n_regs * props["warpSize"] * 8)
    occupancy = min(occupancy, props["max_shared_mem"] // max(k.metadata.shared, 1))
    assert occupancy >= 1
    k_softmax[(64,)](x, out, 1000, B=1024, num_warps=8)
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
    assert driver.active.get_current_target().warp_size == props["warpSize"]
    assert math.isfinite(float(out.sum()))


@pytest.mark.parametrize("fa,fb", [("e2m1", "e4m3"), ("e4m3", "e5m2"), ("e2m1", "e2m1")])
def test_dot_scaled_on_the_gpu(fa, fb):
    from test_conform_dot_scaled import k_dot_scaled, operand
    rng = np.random.default_rng(7)
    M = N = 64
    K = 128
    a, av = operand(fa, rng, M, K, True)
    b, bv = operand(fb, rng, K, N, False)
    sa = rng.integers(118, 136, (M, K // 32)).astype(np.uint8)
    sb = rng.integers(118, 136, (N, K // 32)).astype(np.uint8)
    acc = torch.zeros(M, N, device="cuda")
    out = torch.empty(M, N, device="cuda")
    k_dot_scaled[(1,)](*(torch.from_numpy(t).cuda() for t in (a, sa, b, sb)), acc, out, M=M,
                       N=N, K=K, FA=fa, FB=fb, SCALED=True, ACC=True)
    av = av * np.repeat(2.0 ** (sa.astype(float) - 127), 32, axis=1)
    bv = bv * np.repeat(2.0 ** (sb.astype(float) - 127), 32, axis=1).T
    want = av @ bv
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-5,
                               atol=1e-6 * np.abs(want).max())
