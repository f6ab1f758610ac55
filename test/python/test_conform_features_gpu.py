"""test_conform_features.py's kernels on the GPU: `triton.reinterpret`ed int8 tensors read and
written as fp8e4nv / e5m2 / e4b15, `.to(tl.float8e4b15)` bit for bit on every fp16 against
Triton 3.6's rule, and `assert` as `tl.device_assert` (a no-op without debug).  Skipped
without a GPU (docs/conformance.md)."""
import numpy as np
import pytest

import tilework
import tilework.language as tl

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from builtins_kernels import np_to_e4b15  # noqa: E402
from test_conform_features import (FP8, e4b15_inputs, k_asserts, k_copy,  # noqa: E402
                                   k_fp8_roundtrip, k_to_e4b15, np_fp8, np_fp8_from_f32)

DEV = "cuda"


@pytest.mark.parametrize("name", [n for n, _ in FP8])
def test_reinterpret_on_the_gpu(name):
    bits = np.arange(256, dtype=np.uint8)
    x = torch.from_numpy(bits.copy()).view(torch.int8).to(DEV)
    y = torch.zeros(256, device=DEV)
    z = torch.zeros(256, dtype=torch.uint8, device=DEV)
    k = tilework.jit(k_fp8_roundtrip)
    dt = getattr(tl, name)
    k[(1,)](tilework.reinterpret(x, dt), y, tilework.reinterpret(z, dt), N=256)
    want = np_fp8(bits, name)
    ok = ~np.isnan(want)
    got = y.cpu().numpy()
    np.testing.assert_array_equal(np.isnan(got), ~ok)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(z.cpu().numpy()[ok],
                                  np_fp8_from_f32((want * np.float32(0.5))[ok], name))
    # the int8 tensor itself is another variant; the wrapper's is the fp8 one
    assert len(k.cache) == 1
    u = torch.zeros(256, dtype=torch.uint8, device=DEV)
    tilework.jit(k_copy)[(1,)](tilework.reinterpret(x, torch.uint8), u, N=256)
    np.testing.assert_array_equal(u.cpu().numpy(), bits)


def test_to_e4b15_on_the_gpu():
    h, f = e4b15_inputs(65536)
    oh, of, ofz = (torch.zeros(65536, dtype=torch.uint8, device=DEV) for _ in range(3))
    # one program of 65536 elements would hold too much per thread: 64 programs of 1024
    k = tilework.jit(k_block_to_e4b15)
    k[(64,)](torch.from_numpy(h).to(DEV), torch.from_numpy(f).to(DEV), oh, of, ofz, N=1024)
    np.testing.assert_array_equal(oh.cpu().numpy(),
                                  np_to_e4b15(h.astype(np.float32), half=True))
    np.testing.assert_array_equal(of.cpu().numpy(), np_to_e4b15(f))
    np.testing.assert_array_equal(ofz.cpu().numpy(), of.cpu().numpy())


k_to_e4b15_at = tilework.jit(k_to_e4b15)


@tilework.jit
def k_block_to_e4b15(h, f, oh, of, ofz, N: tl.constexpr):
    o = tl.program_id(0) * N
    k_to_e4b15_at(h + o, f + o, oh + o, of + o, ofz + o, N)


def test_assert_without_debug_on_the_gpu():
    x = torch.arange(16, dtype=torch.float32, device=DEV) * 10  # `v < 100` false on 10
    tilework.jit(k_asserts)[(1,)](x, N=8)  # no debug: every assert a no-op (Triton's)
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(16, dtype=np.float32) * 10 + 1)
    y = torch.zeros(16, device=DEV)
    tilework.jit(k_asserts)[(1,)](y, N=16, debug=True)  # under debug, all conditions true
    np.testing.assert_array_equal(y.cpu().numpy(), np.ones(16, np.float32))
