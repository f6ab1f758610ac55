"""test_conform_surface.py's kernels on the GPU: `fp_downcast_rounding` against numpy's
rounding (bit for bit), and `tl.extra.cuda`'s registers (`%globaltimer` advancing, `%smid`
of several SMs, `num_threads`, the `griddepcontrol` no-ops of a plain launch).
Skipped without a GPU (docs/conformance.md's rows)."""
import numpy as np
import pytest

import tilework

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_conform_surface import (NANS, _check_round, k_extra_cuda, k_round,  # noqa: E402
                                  np_round, round_inputs)

DEV = "cuda"


@pytest.mark.parametrize("mode", ["rtne", "rtz"])
def test_fp_downcast_rounding_on_the_gpu(mode):
    x, xd = round_inputs(seed=43)
    outs = [torch.zeros(256, dtype=dt, device=DEV)
            for dt in (torch.int16, torch.int16, torch.int32)]
    tilework.jit(k_round)[(1,)](torch.from_numpy(x).to(DEV), torch.from_numpy(xd).to(DEV),
                                *outs, N=256, MODE=mode)
    got = [o.cpu().numpy().view(w) for o, w in zip(outs, (np.uint16, np.uint16, np.uint32))]
    _check_round(got, np_round(x, xd, mode), NANS)


def test_extra_cuda_on_the_gpu():
    out = torch.zeros(3 * 64, dtype=torch.int64, device=DEV)
    tilework.jit(k_extra_cuda)[(64,)](out, NW=4, num_warps=4)
    o = out.view(64, 3).cpu().numpy()
    assert (o[:, 0] >= 0).all()  # the timer does not go back
    # (SM ids need not be contiguous: PTX's %smid; 64 programs spread over several SMs)
    assert (o[:, 1] >= 0).all() and len(set(o[:, 1].tolist())) > 1
    assert (o[:, 2] == 128).all()
