"""The compat kernels run by tilework and by Triton on the same inputs, on a GPU (skipped
without a GPU, torch or Triton).

The Triton twin of compat_kernels.py is built from its source text with only the imports and
decorators replaced (`import tilework` -> `import triton`, `import tilework.language as tl`
-> `import triton.language as tl`, `@tilework.jit` -> `@triton.jit`), written to a file (Triton
reads kernel sources) and imported: every kernel body is literally the same text.  Results
must agree bit for bit where Triton's semantics make them exact (integer results, selections,
tl.rand's stream, element-wise ops), else within each case's tolerance; both are also checked
against numpy."""
import importlib.util
import inspect
import os
import tempfile

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

from compat import cases as C  # noqa: E402
from compat import compat_kernels as K  # noqa: E402


def triton_source() -> str:
    text = inspect.getsource(K)
    for old, new in (("import tilework.language as tl", "import triton.language as tl"),
                     ("import tilework\n", "import triton\n"), ("@tilework.jit", "@triton.jit")):
        assert old in text
        text = text.replace(old, new)
    assert "tilework" not in text.split('"""', 2)[2], "a tilework name outside the imports"
    return text


@pytest.fixture(scope="module")
def twin():
    path = os.path.join(tempfile.mkdtemp(prefix="tilework_compat_"), "compat_kernels_triton.py")
    with open(path, "w") as f:
        f.write(triton_source())
    spec = importlib.util.spec_from_file_location("compat_kernels_triton", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _device(args):
    return [torch.from_numpy(np.array(a)).cuda() if isinstance(a, np.ndarray) else a
            for a in args]


@pytest.mark.parametrize("name", C.NAMES)
def test_tilework_matches_triton(name, twin):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    case = next(c for c in C.make_cases(rng) if c.name == name)
    ours, theirs = _device(case.args), _device(case.args)
    getattr(K, case.kernel)[case.grid](*ours, **case.constexprs)
    getattr(twin, case.kernel)[case.grid](*theirs, **case.constexprs)
    torch.cuda.synchronize()
    ours = [ours[i].cpu().numpy() for i in case.outputs]
    theirs = [theirs[i].cpu().numpy() for i in case.outputs]
    case.check(theirs)  # the reference holds for Triton ...
    case.check(ours)    # ... and for tilework
    for a, b in zip(ours, theirs):
        if case.exact:
            np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8),
                                          np.ascontiguousarray(b).view(np.uint8))
        else:
            rtol, atol = case.tol
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                       atol=atol)


def test_twin_source_differs_only_in_imports():
    ours = inspect.getsource(K).splitlines()
    theirs = triton_source().splitlines()
    assert len(ours) == len(theirs)
    changed = [(a, b) for a, b in zip(ours, theirs) if a != b]
    assert all(a.startswith(("import tilework", "@tilework.jit")) for a, _ in changed)
