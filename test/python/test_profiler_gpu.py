"""The profiler on the GPU: CUDA-event times, launch_metadata rates against the card's peak."""
import pytest

torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402
from tilework.runtime import profiler  # noqa: E402

pytestmark = pytest.mark.gpu


def meta(grid, kernel, args):
    n = args["n"]
    return {"name": "copy", "bytes": 2 * 4 * n, "flops32": n}


@tilework.jit(launch_metadata=meta)
def copy(x, o, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + offs, tl.load(x + offs, mask=offs < n) * 1.0, mask=offs < n)


def test_gpu_launches_are_timed_with_events():
    n = 1 << 24
    x = torch.randn(n, device="cuda")
    o = torch.empty_like(x)
    copy[(n // 1024,)](x, o, n, B=1024)  # compiled before recording
    with tilework.profile(print_table=False) as prof:
        for _ in range(5):
            copy[(n // 1024,)](x, o, n, B=1024)
    assert torch.equal(o, x)
    assert all(r.host_ms is None and r.start is not None for r in prof.records)
    s = prof.stats()["copy"]
    assert s["launches"] == 5 and s["bytes"] == 5 * 8 * n
    # a copy moves 8 bytes an element: between 10 GB/s and the card's peak (known cards)
    assert 10 < s["gbps"]
    key, bw, _ = profiler.card_peaks(torch.cuda.get_device_name())
    if key is not None:
        assert 0 < s["bw_peak"] <= 1.0
        assert s["bw_peak"] == pytest.approx(s["gbps"] * 1e9 / bw)
    assert torch.cuda.get_device_name() in prof.table().splitlines()[0]
