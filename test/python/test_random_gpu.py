"""Random streams on the GPU: against the numpy Philox of test_random.py and against Triton
itself (the same kernel source under `triton.language`); skipped without a GPU."""
import importlib.util
import os
import sys
import tempfile

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

from test_random import ref_randint4x, ref_uniform  # noqa: E402

SRC = '''
@jit
def streams(ri, u, nrm, r4, seed, base, n, BLOCK: tl.constexpr, ROUNDS: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    offs = base + i
    tl.store(ri + i, tl.randint(seed, offs, ROUNDS), mask=m)
    tl.store(u + i, tl.rand(seed, offs, ROUNDS), mask=m)
    tl.store(nrm + i, tl.randn(seed, offs, ROUNDS), mask=m)
    a, b, c, d = tl.randint4x(seed, offs, ROUNDS)
    tl.store(r4 + 4 * i, a, mask=m)
    tl.store(r4 + 4 * i + 1, b, mask=m)
    tl.store(r4 + 4 * i + 2, c, mask=m)
    tl.store(r4 + 4 * i + 3, d, mask=m)


@jit
def normals4(o, seed, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a, b, c, d = tl.randn4x(seed, i)
    tl.store(o + 4 * i, a, mask=i < n)
    tl.store(o + 4 * i + 1, b, mask=i < n)
    tl.store(o + 4 * i + 2, c, mask=i < n)
    tl.store(o + 4 * i + 3, d, mask=i < n)
'''


def _module(header, name):
    d = tempfile.mkdtemp()
    path = os.path.join(d, f"{name}.py")
    with open(path, "w") as f:
        f.write(header + SRC)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


OURS = _module("import tilework.language as tl\nfrom tilework import jit\n", "tw_random_k")


def run(mod, seed, base, n, rounds=10):
    ri = torch.zeros(n, device="cuda", dtype=torch.int32)
    u = torch.full((n,), float("nan"), device="cuda")
    nrm = torch.full((n,), float("nan"), device="cuda")
    r4 = torch.zeros(4 * n, device="cuda", dtype=torch.int32)
    mod.streams[((n + 255) // 256,)](ri, u, nrm, r4, seed, base, n, BLOCK=256, ROUNDS=rounds)
    torch.cuda.synchronize()
    return [t.cpu().numpy() for t in (ri, u, nrm, r4)]


@pytest.mark.parametrize("seed", [0, 42, -7, 2**31 + 5, 0x1234_5678_9ABC])
@pytest.mark.parametrize("rounds", [10, 6])
def test_against_numpy(seed, rounds):
    n, base = 100_003, 12345
    ri, u, nrm, r4 = run(OURS, seed, base, n, rounds)
    want = ref_randint4x(seed, (base + np.arange(n)).astype(np.int32), rounds)
    np.testing.assert_array_equal(ri.view(np.uint32), want[0])
    np.testing.assert_array_equal(r4.view(np.uint32).reshape(n, 4).T, np.stack(want))
    np.testing.assert_array_equal(u, ref_uniform(want[0]))
    assert np.isfinite(nrm).all() and abs(nrm.mean()) < 0.02 and abs(nrm.std() - 1) < 0.02


@pytest.mark.parametrize("seed", [0, 42, -7, 2**31 + 5, 0x1234_5678_9ABC])
def test_same_streams_as_triton(seed):
    pytest.importorskip("triton")
    theirs = _module("import triton.language as tl\nfrom triton import jit\n", "triton_random_k")
    n, base = 65_537, 2**31 - 1000  # offsets wrap past 2**31 in int32
    ours_out, their_out = run(OURS, seed, base, n), run(theirs, seed, base, n)
    for name, a, b in zip(("randint", "rand", "randn", "randint4x"), ours_out, their_out):
        if name == "randn":  # Box-Muller through log/sqrt/cos/sin: a few ulp apart at most
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)
    o1 = torch.zeros(4 * n, device="cuda")
    o2 = torch.zeros(4 * n, device="cuda")
    OURS.normals4[((n + 255) // 256,)](o1, seed, n, BLOCK=256)
    theirs.normals4[((n + 255) // 256,)](o2, seed, n, BLOCK=256)
    torch.testing.assert_close(o1, o2, rtol=2e-5, atol=2e-5)
