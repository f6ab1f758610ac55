"""The kernels of test_control_flow.py compiled and run on a GPU (torch CUDA tensors), against
the same numpy references the interpreter tests use (skipped without a GPU)."""
import numpy as np
import pytest

from test_control_flow import (
    SENTINEL, SEQ_CASES, branches_ref, collatz_ref, k_branches, k_collatz, k_early_exit,
    k_misc, k_mixed, k_nested, k_online_max_sum, k_pointer_walk, k_rowsum, k_rowsum_2d, k_seq,
    k_seq64, k_while_tile, misc_ref, mixed_ref, rowsum_ref,
)

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def dev(a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def host(t):
    torch.cuda.synchronize()
    return t.cpu().numpy()


def poisoned(n, dtype):
    return dev(np.full(n, np.nan if np.dtype(dtype).kind == "f" else SENTINEL, dtype))


@pytest.mark.parametrize("mode, start, end, step, STEP", SEQ_CASES + [(3, -3, 9, 0, 1)])
def test_range_sequences(mode, start, end, step, STEP):
    out = poisoned(64, np.int32)
    k_seq[(1,)](out, start, end, step, MODE=mode, STEP=STEP)
    lo, hi = {0: (0, end), 5: (3, 11)}.get(mode, (start, end))
    st = step if mode == 3 else (1 if mode in (0, 1) else STEP)
    seq = list(range(lo, hi, st)) if st else []  # a zero runtime step runs no iteration
    want = np.array([len(seq)] + seq + [SENTINEL] * (63 - len(seq)), np.int32)
    np.testing.assert_array_equal(host(out), want)


def test_int64_loop_variable():
    out = poisoned(8, np.int64)
    k_seq64[(1,)](out, 2**33 + 1, 2**33 + 4)
    np.testing.assert_array_equal(host(out)[:5], [3, 2**33 + 1, 2**33 + 2, 2**33 + 3, SENTINEL])


@pytest.mark.parametrize("block, warps", [(32, 1), (256, 4), (1024, 4)])
@pytest.mark.parametrize("n_cols", [0, 1, 100, 1024, 3333])
def test_rowsum(rng, n_cols, block, warps):
    rows = 6
    x = (rng.standard_normal((rows, max(n_cols, 1))) * 10).astype(np.float32)
    out = poisoned(rows * block, np.float32)
    k_rowsum[(rows,)](dev(x), out, n_cols, x.shape[1], BLOCK=block, num_warps=warps)
    np.testing.assert_allclose(host(out).reshape(rows, block), rowsum_ref(x, n_cols, block),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n", [0, 1, 13])
def test_pointer_walk(rng, n):
    x = rng.standard_normal((13, 512)).astype(np.float32)
    out = poisoned(512, np.float32)
    k_pointer_walk[(1,)](dev(x), out, n, BLOCK=512)
    np.testing.assert_allclose(host(out), x[:n].sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n_cols", [1, 300, 1024])
def test_loops_with_reductions(rng, n_cols):
    x = rng.standard_normal((32, n_cols)).astype(np.float32)
    out = poisoned(64, np.float32)
    k_online_max_sum[(32,)](dev(x), out, n_cols, n_cols, BLOCK=128)
    out = host(out)
    m = x.max(1)
    np.testing.assert_array_equal(out[0::2], m)
    np.testing.assert_allclose(out[1::2], np.exp(x - m[:, None]).sum(1), rtol=1e-5)
    out = poisoned(32, np.float32)
    k_rowsum_2d[(2,)](dev(x), out, n_cols, n_cols, BM=16, BN=64)
    np.testing.assert_allclose(host(out), x.sum(1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n, m", [(0, 5), (6, 0), (7, 11), (13, 4)])
def test_nested_loops(n, m):
    out = poisoned(2, np.int32)
    k_nested[(1,)](out, n, m)
    want = sum(i * j + 1 for i in range(n) for j in range(i, m))
    np.testing.assert_array_equal(host(out), [want, n])


def test_branches(rng):
    block, progs = 64, 40
    x = (rng.standard_normal(block * progs) * 10).astype(np.float32)
    sel = rng.integers(0, 9, progs).astype(np.int32)
    sel[:3] = [0, 1, 7]
    out, s = poisoned(block * progs, np.float32), poisoned(progs, np.float32)
    k_branches[(progs,)](dev(x), dev(sel), out, s, BLOCK=block)
    want_y, want_s = branches_ref(x, sel, block)
    np.testing.assert_allclose(host(out), want_y, rtol=1e-6)
    np.testing.assert_array_equal(host(s), want_s)


@pytest.mark.parametrize("n", [0, 1, 5, 9])
def test_mixed(rng, n):
    x = (rng.standard_normal((9, 128)) * 10).astype(np.float32)
    out = poisoned(129, np.float32)
    k_mixed[(1,)](dev(x), out, n, BLOCK=128)
    np.testing.assert_allclose(host(out), mixed_ref(x, n, 128), rtol=1e-5, atol=1e-5)


def test_while_collatz(rng):
    x = rng.integers(1, 100_000, 300).astype(np.int32)
    x[0] = 1
    out = poisoned(300, np.int32)
    k_collatz[(300,)](dev(x), out)
    np.testing.assert_array_equal(host(out), [collatz_ref(int(v)) for v in x])


@pytest.mark.parametrize("n", [0, 1, 6])
def test_while_tile(rng, n):
    x = (rng.standard_normal(256) * 10).astype(np.float32)
    out = poisoned(256, np.float32)
    k_while_tile[(1,)](dev(x), out, n, BLOCK=256)
    want = x.copy()
    for _ in range(n):
        want = want * np.float32(0.5) + np.float32(1)
    np.testing.assert_allclose(host(out), want, rtol=1e-6, atol=1e-6)


def test_early_returns(rng):
    block, progs, live = 128, 50, 37
    x = (rng.standard_normal(block * progs) * 10).astype(np.float32)
    lim = (rng.standard_normal(progs) * 3).astype(np.float32)
    lim[:2] = [0.0, -1.5]
    out, sign = poisoned(block * progs, np.float32), poisoned(progs, np.int32)
    k_early_exit[(progs,)](dev(x), dev(lim), out, sign, live, BLOCK=block)
    out, sign = host(out).reshape(progs, block), host(sign)
    xs = x.reshape(progs, block)
    assert np.isnan(out[live:]).all() and (sign[live:] == SENTINEL).all()
    want = np.where(lim[:live, None] < 0, -1.0,
                    np.where(lim[:live, None] == 0, xs[:live], xs[:live] * lim[:live, None]))
    np.testing.assert_array_equal(out[:live], want.astype(np.float32))
    np.testing.assert_array_equal(sign[:live], np.sign(lim[:live]).astype(np.int32))


@pytest.mark.parametrize("n, m", [(10, 4), (0, 3), (3, -1)])
def test_misc(n, m):
    out = poisoned(18, np.int32)
    k_misc[(2,)](out, n, m, EXIT=True)
    out = host(out)
    np.testing.assert_array_equal(out[:9], misc_ref(n, m))
    assert (out[9:] == SENTINEL).all()
