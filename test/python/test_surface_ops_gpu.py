"""The cases of test_surface_ops.py (creation builtins, casts between every pair of dtypes,
integer and float operators, float `%`, load/store options, 3-D grids, hints, shape builtins,
join/split/interleave/cat on masked data, reductions with indices and keep_dims, constexpr
branches) compiled and run on a GPU, checked against the same numpy references as the
interpreter runs.  Skipped without a GPU."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_surface_ops import CASES, PARAMS, rng_for  # noqa: E402


def run_on_gpu(kernel, run):
    """Launches `run` with its numpy arrays copied to the GPU; returns its outputs (numpy)."""
    args = [torch.from_numpy(np.ascontiguousarray(a)).cuda() if isinstance(a, np.ndarray) else a
            for a in run.args]
    kernel[run.grid](*args, **run.constexprs)
    torch.cuda.synchronize()
    return [args[i].cpu().numpy() for i in run.outputs]


@pytest.mark.parametrize("name, param", PARAMS)
def test_compiled(name, param):
    case = CASES[name]
    run = case.make(rng_for(name, param), param)
    run.check(run_on_gpu(case.kernel, run))
