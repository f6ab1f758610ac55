"""`launch_cooperative_grid=True` on the GPU: a grid barrier (test_cooperative_launch.py's
`grid_sync_shift`: every program arrives on a counter and spins until all have) over as many
programs as the device holds at once, values checked; a grid past that refused before the
driver is called.  Skipped without a GPU."""
import numpy as np
import pytest

from tilework.runtime import driver

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_cooperative_launch import grid_sync_shift, scale  # noqa: E402

DEV = "cuda"


def _resident(k):
    """The programs of loaded kernel `k` resident at once (the runtime's own count)."""
    assert k.cooperative is not None
    return k.cooperative[0]


def test_grid_barrier_across_all_resident_programs():
    block = 128
    probe = torch.zeros(1, dtype=torch.int32, device=DEV)
    k = grid_sync_shift.warmup(probe, probe, probe, BLOCK=block, launch_cooperative_grid=True)
    sms = driver.active.utils.get_device_properties(0)["multiprocessor_count"]
    limit = _resident(k)
    assert limit >= sms  # a 128-thread kernel fits at least once per multiprocessor
    for programs in (1, 2, sms, limit):
        x = torch.zeros(programs * block, dtype=torch.int32, device=DEV)
        y = torch.full_like(x, -1)
        count = torch.zeros(1, dtype=torch.int32, device=DEV)
        grid_sync_shift[(programs,)](x, y, count, BLOCK=block, launch_cooperative_grid=True)
        torch.cuda.synchronize()
        want = np.arange(programs * block, dtype=np.int32) * 3 + 1
        np.testing.assert_array_equal(x.cpu().numpy(), want)
        np.testing.assert_array_equal(y.cpu().numpy(), np.roll(want, -block))
        assert int(count.item()) == programs


def test_a_grid_past_the_resident_limit_is_refused():
    block = 128
    probe = torch.zeros(1, dtype=torch.int32, device=DEV)
    k = grid_sync_shift.warmup(probe, probe, probe, BLOCK=block, launch_cooperative_grid=True)
    limit = _resident(k)
    x = torch.zeros((limit + 1) * block, dtype=torch.int32, device=DEV)
    count = torch.zeros(1, dtype=torch.int32, device=DEV)
    with pytest.raises(ValueError, match=rf"grid_sync_shift: launch_cooperative_grid needs "
                                         rf"every program of the grid resident at once; this "
                                         rf"device holds at most {limit} .*the grid has "
                                         rf"{limit + 1}: launch at most {limit} programs"):
        grid_sync_shift[(limit + 1,)](x, x, count, BLOCK=block, launch_cooperative_grid=True)
    torch.cuda.synchronize()
    assert int(count.item()) == 0  # nothing ran


@pytest.mark.parametrize("coop", [True, False])
def test_a_plain_kernel_launched_cooperatively(coop):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1000, generator=g).to(DEV)
    y = torch.zeros_like(x)
    scale[(8,)](x, y, 1000, 1.5, BLOCK=128, launch_cooperative_grid=coop)
    torch.testing.assert_close(y, x * 1.5, rtol=0, atol=0)
