"""Issue 14's features that had interpreter (or emulator) tests but no run on the GPU: integer
division/remainder of one signedness and mixed widths, in-range Python ints taking the tile's
type, float8e4b15 conversions and arithmetic, `None` indexing of a pointer tile, a parameter
named like a launch option, `tl.pi32_t` as a cast target, a 4-D tl.make_tensor_descriptor block permuted, and
`tl.tuple` values (tuple literals among them).  Against
numpy/torch on random inputs; skipped without a GPU (docs/conformance.md lists the rows)."""
import numpy as np
import pytest

import tilework
import tilework.language as tl

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from builtins_kernels import e4b15_k, np_from_e4b15, np_to_e4b15  # noqa: E402
from test_conform_semantics import k_intop, k_pointer_index, k_scalar  # noqa: E402
from test_conformance_gaps import SHAPE4, k_pi32, k_trans4d  # noqa: E402
from test_tuple_values import k_literals, k_tuple_ret, np_literals, np_tuple_ret  # noqa: E402

DEV = "cuda"


@pytest.mark.parametrize("op", ["%", "//"])
def test_div_mod_same_signedness_on_the_gpu(op):
    rng = np.random.default_rng(12)
    x = rng.integers(-1000, 1000, 16).astype(np.int32)
    y = rng.integers(1, 50, 16).astype(np.int64) * rng.choice([-1, 1], 16)
    out = torch.zeros(16, dtype=torch.int64, device=DEV)
    k_intop[(1,)](torch.from_numpy(x).to(DEV), torch.from_numpy(y).to(DEV), out, OP=op)
    q = np.trunc(x.astype(np.float64) / y).astype(np.int64)  # C: truncating division
    np.testing.assert_array_equal(out.cpu().numpy(), q if op == "//" else x - q * y)


@pytest.mark.parametrize("elem,value", [("int8", 100), ("int8", -128), ("uint8", 255),
                                        ("int32", 2**31 - 1)])
def test_in_range_scalars_on_the_gpu(elem, value):
    dt = getattr(np, elem)
    x = np.random.default_rng(13).integers(np.iinfo(dt).min, np.iinfo(dt).max, 16).astype(dt)
    xt = torch.from_numpy(x).to(DEV)
    out = torch.zeros_like(xt)
    k_scalar[(1,)](xt, out, C=value)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out.cpu().numpy(), x + np.array(value).astype(dt))


def test_float8e4b15_on_the_gpu():
    x = torch.arange(256, dtype=torch.uint8, device=DEV)
    y = torch.zeros(256, dtype=torch.float32, device=DEV)
    z = torch.zeros(256, dtype=torch.uint8, device=DEV)
    w = torch.zeros(256, dtype=torch.uint8, device=DEV)
    tilework.jit(e4b15_k)[(1,)](x, y, z, w, N=256)
    d = np_from_e4b15(np.arange(256, dtype=np.uint8))
    np.testing.assert_array_equal(y.cpu().numpy(), d)
    np.testing.assert_array_equal(z.cpu().numpy(), np_to_e4b15(d))  # (1.875 saturates)
    prod = np_from_e4b15(np_to_e4b15(d * d))
    np.testing.assert_array_equal(w.cpu().numpy(), np_to_e4b15(prod + np.float32(0.5)))


def test_none_indexing_of_a_pointer_tile_on_the_gpu():
    x = torch.randn(32, device=DEV)
    out = torch.zeros_like(x)
    k_pointer_index[(1,)](x, out, N=16)
    torch.testing.assert_close(out, x * 2, rtol=0, atol=0)


@tilework.jit
def k_staged(x, y, n, num_stages: tl.constexpr, num_warps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m) * num_stages + num_warps, mask=m)


def test_parameters_named_like_launch_options_on_the_gpu():
    x = torch.randn(100, device=DEV)
    y = torch.zeros_like(x)
    k_staged[(1,)](x, y, 100, 5, 2.5, BLOCK=128)
    torch.testing.assert_close(y, x * 5 + 2.5)
    k_staged[(1,)](x, y, 100, num_stages=3, num_warps=-1.0, BLOCK=128)
    torch.testing.assert_close(y, x * 3 - 1)


def test_pi32_t_cast_on_the_gpu():
    ts = [torch.randint(-1000, 1000, (64,), dtype=torch.int32, device=DEV) for _ in range(3)]
    ptrs = torch.tensor([t.data_ptr() for t in ts], dtype=torch.int64, device=DEV)
    out = torch.zeros(3 * 64, dtype=torch.int32, device=DEV)
    tilework.jit(k_pi32)[(3,)](ptrs, out, B=64)
    torch.testing.assert_close(out, torch.cat([t + g for g, t in enumerate(ts)]))


def test_tuple_values_on_the_gpu():
    x = torch.randn(64, device=DEV)
    out = torch.zeros(3 * 64, device=DEV)
    tilework.jit(k_tuple_ret)[(1,)](x, out, 3, N=64)
    np.testing.assert_allclose(out.cpu().numpy(), np_tuple_ret(x.cpu().numpy()), rtol=1e-6)


def test_tuple_literals_on_the_gpu():
    x = torch.randn(32, device=DEV)
    out = torch.zeros(32, device=DEV)
    tilework.jit(k_literals)[(1,)](x, out, N=32, S=3)
    # the GPU contracts `... + (v + S) * S` into an fma (as Triton does): one rounding fewer
    # than numpy's, so the result may differ by an ulp of the terms (up to ~16: 1e-6), which
    # is large against a sum that cancels to ~0.1; the reference in float64
    want = np_literals(x.cpu().numpy().astype(np.float64), 3)
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-6, atol=2e-6)


def test_make_tensor_descriptor_4d_on_the_gpu():
    a = torch.randn(SHAPE4, device=DEV)
    out = torch.zeros(a.numel(), device=DEV)
    tilework.jit(k_trans4d)[(1,)](a, out, *SHAPE4, B0=2, B1=4, B2=8, B3=8)
    torch.testing.assert_close(out, a.permute(2, 0, 3, 1).reshape(-1), rtol=0, atol=0)
