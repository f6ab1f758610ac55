"""test_conform_aggregates.py's and test_conform_frontend.py's kernels on the GPU: aggregates
(members, operators, nested, through loops and `if`), `*args`, specialized recursion and
builtin `min`/`max`.  Skipped without a GPU (docs/conformance.md)."""
import numpy as np
import pytest

import tilework

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_conform_aggregates import k_aggregates, k_nested, k_varargs_and_box  # noqa: E402
from test_conform_frontend import k_min_max, k_recursion  # noqa: E402

DEV = "cuda"


def test_aggregates_on_the_gpu():
    x = np.random.default_rng(1).standard_normal(8).astype(np.float32)
    out = torch.zeros(8, device=DEV)
    tilework.jit(k_aggregates)[(1,)](torch.from_numpy(x).to(DEV), out, 3, N=8)
    ref = (x * 10 + 3) + x + 3 + 2 * x + (3 * 2 * x + 2 * 2 * x)
    np.testing.assert_allclose(out.cpu().numpy(), ref, rtol=1e-5, atol=1e-5)
    x = np.random.default_rng(2).standard_normal(16).astype(np.float32)
    out = torch.zeros(16, device=DEV)
    tilework.jit(k_nested)[(1,)](torch.from_numpy(x).to(DEV), out, 3, N=16)
    np.testing.assert_allclose(out.cpu().numpy(), 8 * x + 16 * x + np.arange(16) + 3, rtol=1e-5)
    out = torch.zeros(8, dtype=torch.int32, device=DEV)
    tilework.jit(k_varargs_and_box)[(1,)](out, N=8)
    r = np.arange(8)
    np.testing.assert_array_equal(out.cpu().numpy(), r + 14 + (r * 2 + 3))


def test_recursion_and_min_max_on_the_gpu():
    x = np.random.default_rng(3).standard_normal(16).astype(np.float32)
    out = torch.zeros(17, device=DEV)
    tilework.jit(k_recursion)[(1,)](torch.from_numpy(x).to(DEV), out, N=16)
    got = out.cpu().numpy()
    np.testing.assert_allclose(got[0], x.sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1:], x ** 3, rtol=1e-5)
    x = np.random.default_rng(4).standard_normal(8).astype(np.float32)
    out = torch.zeros(8, device=DEV)
    tilework.jit(k_min_max)[(1,)](torch.from_numpy(x).to(DEV), out, N=8)
    ref = np.minimum(np.minimum(x, 0.5), x * 2) + np.maximum(x, -3) * 5
    np.testing.assert_allclose(out.cpu().numpy(), ref, rtol=1e-6)
