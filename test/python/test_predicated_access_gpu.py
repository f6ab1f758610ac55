"""The predicated masked loads and stores of test_predicated_access.py launched on the GPU
(skipped without one): every access width, with a tail, against numpy; `other` where masked
off, and nothing written there."""
import numpy as np
import pytest

from test_predicated_access import BLOCK, DTYPES, scale_masked

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

TORCH = {np.float32: torch.float32, np.float16: torch.float16, np.int8: torch.int8,
         np.float64: torch.float64, np.int16: torch.int16}


@pytest.mark.parametrize("tail", [1008, 1005])  # (divisible by 16: 16-byte accesses; not: 1)
@pytest.mark.parametrize("name", list(DTYPES))
def test_predicated_masked_load_and_store_on_the_gpu(name, tail):
    _, dt = DTYPES[name]
    rng = np.random.default_rng(11)
    x = rng.standard_normal(2 * BLOCK).astype(dt) if np.dtype(dt).kind == "f" else \
        rng.integers(-50, 50, 2 * BLOCK).astype(dt)
    n = BLOCK + tail
    xd = torch.from_numpy(x).cuda()
    out = torch.full((2 * BLOCK,), 77, dtype=TORCH[dt], device="cuda")
    k = scale_masked[(2,)](xd, out, n, BLOCK=BLOCK, num_warps=1)
    torch.cuda.synchronize()
    want = np.where(np.arange(2 * BLOCK) < n, x + x, 77).astype(dt)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    assert "@%p" in k.asm["ptx"] and k.asm["ptx"].count("bra") <= 2
