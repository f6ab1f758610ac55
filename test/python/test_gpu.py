"""Kernels on the GPU against torch (skipped without a GPU)."""
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

from vector_add import add_kernel  # noqa: E402

DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [2**28, 98_432 + 7, 1, 17, 4096])
def test_vector_add_matches_torch(dtype, n):
    x = torch.randn(n, device="cuda", dtype=dtype)
    y = torch.randn(n, device="cuda", dtype=dtype)
    out = torch.full_like(x, float("nan"))  # poisoned: every element must be written
    add_kernel[(cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


@pytest.mark.parametrize("block, warps", [(128, 1), (512, 2), (2048, 8), (4096, 16)])
def test_vector_add_tile_shapes(block, warps):
    n = 3 * block + 5
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    add_kernel[(cdiv(n, block),)](x, y, out, n, BLOCK_SIZE=block, num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_grid_callable_and_asm():
    n = 10_000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    k = add_kernel[lambda meta: (cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)](
        x, y, out, n, BLOCK_SIZE=256)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
    for stage in ("tile", "tilegpu", "llvm", "llir", "ptx"):
        assert stage in k.asm


def test_offset_views_and_unaligned_pointers():
    """A view starting one element in is not 16-byte aligned: the variant must not assume
    it is, and results stay exact."""
    n = 5000
    base = torch.randn(n + 1, device="cuda")
    x, y = base[1:], torch.randn(n, device="cuda")
    out = torch.full((n + 1,), float("nan"), device="cuda")[1:]
    add_kernel[(cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_runs_on_the_current_torch_stream():
    n = 1 << 20
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        add_kernel[(cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
        ref = x + y
    s.synchronize()
    assert torch.equal(out, ref)


class _CAI:
    """A non-torch GPU array: only __cuda_array_interface__."""

    def __init__(self, t):
        self.t = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


def test_cuda_array_interface_arguments():
    n = 3000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    add_kernel[(cdiv(n, 1024),)](_CAI(x), _CAI(y), _CAI(out), n, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_disk_cache_is_reused_by_a_new_process(tmp_path):
    code = (
        "import sys, time, torch; sys.path.insert(0, 'examples');"
        "from vector_add import add_kernel;"
        "x = torch.randn(4096, device='cuda'); o = torch.empty_like(x);"
        "t = time.perf_counter(); add_kernel[(4,)](x, x, o, 4096, BLOCK_SIZE=1024);"
        "torch.cuda.synchronize(); assert torch.equal(o, x + x);"
        "print(time.perf_counter() - t)")
    env = {"TILEWORK_CACHE_DIR": str(tmp_path)}
    import os
    env = dict(os.environ, **env)
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    first = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True,
                           text=True)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, "-c", code], env=env, cwd=root,
                            capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert float(second.stdout) < float(first.stdout)
