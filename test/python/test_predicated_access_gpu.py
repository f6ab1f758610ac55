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


@pytest.mark.parametrize("name", ["f32", "f16", "bf16", "f64", "i8", "u8", "i16", "i32", "i64"])
def test_other_of_every_dtype_few_accesses_on_the_gpu(name):
    """256 elements, 4 warps (one or two accesses a thread): `other` bit for bit where masked
    off (test_predicated_access.FILLS)."""
    from test_predicated_access import FILLS, copy_fill
    _, dt, other, bits = FILLS[name]
    tdt = {np.uint16: torch.bfloat16, np.uint8: torch.uint8, np.int32: torch.int32,
           np.int64: torch.int64}.get(dt) or TORCH[dt]
    rng = np.random.default_rng(5)
    x = rng.standard_normal(512).astype(dt) if np.dtype(dt).kind == "f" else \
        rng.integers(0, 100, 512).astype(dt)
    xd = torch.from_numpy(x.view(np.int16) if dt == np.uint16 else x).cuda()
    xd = xd.view(torch.bfloat16) if dt == np.uint16 else xd
    out = torch.zeros(512, dtype=tdt, device="cuda")
    n = 256 + 77
    copy_fill[(2,)](xd, out, n, OTHER=other, BLOCK=256, num_warps=4)
    torch.cuda.synchronize()
    got = out.cpu()
    got = got.view(torch.int16).numpy().view(np.uint16) if dt == np.uint16 else got.numpy()
    fill = np.array(bits if bits is not None else other).astype(dt)
    np.testing.assert_array_equal(got, np.where(np.arange(512) < n, x, fill))


def test_loop_invariant_mask_on_the_gpu():
    """test_predicated_access.rows_loop: the pinned compares in a loop over rows."""
    from test_predicated_access import _rows_want, rows_loop
    rng = np.random.default_rng(6)
    n_rows, n_cols = 7, 2048 - 48
    x = rng.standard_normal((n_rows, 2048)).astype(np.float32)
    out = torch.full((n_rows, 2048), 77.0, device="cuda")
    rows_loop[(3,)](torch.from_numpy(x).cuda(), out, n_rows, n_cols, BLOCK=2048, num_warps=4)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), _rows_want(x, n_rows, n_cols, 2048))
