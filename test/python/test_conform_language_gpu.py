"""test_conform_language.py's kernels on the GPU: a tile's `.type` (block_type), libdevice by
Triton's parameter names, `convert_custom_float8_sm70/_sm80` bit for bit against numpy, and a
descriptor kernel launched with host descriptors whose variant is the one a
`tensordesc<...>` signature string compiles, tuple comprehensions with f-strings, and pointer
tiles to and from integer tiles.  Skipped without a GPU (docs/conformance.md)."""
import math

import numpy as np
import pytest

import tilework
import tilework.language as tl

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_conform_language import (custom_fp8_inputs, k_block_type, k_comprehension,  # noqa
                                   k_custom_fp8, k_desc_copy, k_libdevice_names,
                                   k_pointer_tiles, np_e4b15_to_f16, np_f16_to_e4b15,
                                   np_f32_to_f16_rtz)

DEV = "cuda"


def dev(a):
    return torch.from_numpy(np.ascontiguousarray(a)).to(DEV)


def test_tile_type_on_the_gpu():
    rng = np.random.default_rng(91)
    x = rng.standard_normal(16).astype(np.float32)
    y = rng.integers(-300, 300, (16, 8)).astype(np.int16)
    out = torch.zeros(16, dtype=torch.float32, device=DEV)
    tilework.jit(k_block_type)[(1,)](dev(x), dev(y), out, N=16, M=8)
    want = y.astype(np.float32).sum(1) + x * x.sum(dtype=np.float32)
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-5, atol=1e-4)


def test_libdevice_names_on_the_gpu():
    rng = np.random.default_rng(92)
    n = 32
    a = rng.uniform(0.2, 3.0, n).astype(np.float32)
    b = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    out = torch.zeros(8 * n, dtype=torch.float32, device=DEV)
    tilework.jit(k_libdevice_names)[(1,)](dev(a), dev(b), dev(c), out, N=n)
    got = out.cpu().numpy().reshape(8, n)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    refs = {0: np.power(a64, b), 1: np.exp(b64), 2: a64 * b + c, 3: np.maximum(a, c),
            4: np.arctan2(b64, c), 6: np.hypot(a64, b64), 7: np.ldexp(a, (b * 4).astype(np.int32))}
    for i, ref in refs.items():
        np.testing.assert_allclose(got[i], ref.astype(np.float32), rtol=3e-6, atol=1e-7)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(erf(got[5].astype(np.float64)), b64 * 0.25, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("sm80", [True, False])
def test_convert_custom_float8_on_the_gpu(sm80):
    e, h, f = custom_fp8_inputs(seed=93)
    n = len(e)
    up16 = torch.zeros(n, dtype=torch.float16, device=DEV)
    up32 = torch.zeros(n, dtype=torch.float32, device=DEV)
    down16 = torch.zeros(n, dtype=torch.uint8, device=DEV)
    down32 = torch.zeros(n, dtype=torch.uint8, device=DEV)
    tilework.jit(k_custom_fp8)[(1,)](dev(e), dev(h), dev(f), up16, up32, down16, down32, N=n,
                                     SM80=sm80)
    want = np_e4b15_to_f16(e)
    np.testing.assert_array_equal(up16.cpu().numpy().view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(up32.cpu().numpy(), want.astype(np.float32))
    np.testing.assert_array_equal(down16.cpu().numpy(), np_f16_to_e4b15(h))
    # (the reference's fp32 -> fp16 step makes a NaN positive, as the GPU's cvt.rz.f16.f32
    # does: index 3 is -NaN)
    np.testing.assert_array_equal(down32.cpu().numpy(), np_f16_to_e4b15(np_f32_to_f16_rtz(f)))


def test_tensordesc_variant_on_the_gpu():
    from tilework.tools.tensor_descriptor import TensorDescriptor
    a = torch.randn(256, 64, device=DEV).to(torch.float16)
    o = torch.zeros_like(a)
    ad = TensorDescriptor(a, list(a.shape), list(a.stride()), [64, 64])
    od = TensorDescriptor(o, list(o.shape), list(o.stride()), [64, 64])
    k = tilework.jit(k_desc_copy)
    k[(4,)](ad, od, 256, BM=64, BN=64)
    torch.testing.assert_close(o, a * 2)
    aot = tilework.compile(k, target=f"sm_{''.join(map(str, torch.cuda.get_device_capability()))}"
                           + ("a" if torch.cuda.get_device_capability()[0] == 9 else ""),
                           signature="tensordesc<fp16[64, 64]>, tensordesc<fp16[64, 64]>, i32",
                           constexprs={"BM": 64, "BN": 64})
    assert aot.metadata["signature"]["a_desc"] == "tensordesc<fp16[64, 64]>"


def test_comprehensions_and_pointer_tiles_on_the_gpu():
    rng = np.random.default_rng(94)
    x = rng.standard_normal(16).astype(np.float32)
    out = torch.zeros(16, dtype=torch.float32, device=DEV)
    tilework.jit(k_comprehension)[(1,)](dev(x), out, N=16, NAME="ab")
    np.testing.assert_allclose(out.cpu().numpy(), (x + 1) ** 2 + (2 * x + 1) ** 2 + 16 + x,
                               rtol=1e-5)
    n = 32
    c = rng.integers(0, 2, n).astype(np.int32)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    res = torch.zeros(n, dtype=torch.float32, device=DEV)
    addr = torch.zeros(n, dtype=torch.int64, device=DEV)
    ad = dev(a)
    tilework.jit(k_pointer_tiles)[(1,)](dev(c), ad, dev(b), res, addr, N=n)
    np.testing.assert_array_equal(res.cpu().numpy(),
                                  np.where(c != 0, a, b) + np.float32(1) + np.float32(1))
    assert addr.cpu().numpy().tolist() == [ad.data_ptr() + 4 * i for i in range(n)]
