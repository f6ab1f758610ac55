"""Several GPUs (marker gpu2: skipped with fewer than two): a launch runs on its tensors'
device (that device's context and current stream) whatever the current device is, mixing
devices is an error, and two torch.distributed ranks (NCCL, spawned) run tilework kernels
around an all-reduce, sharing one cache folder, matching a single-process reference."""
import os
import socket

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.gpu2,
              pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2,
                                 reason="needs two GPUs")]

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402

N = 10_000


@tilework.jit
def axpy(x, y, out, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, a * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def _launch(x, y, out, a):
    axpy[((N + 1023) // 1024,)](x, y, out, N, a, BLOCK=1024)


def test_launch_runs_on_the_tensors_device():
    torch.cuda.set_device(0)
    for dev in (1, 0, 1):  # the variant loads on each device once, then is reused
        x, y = (torch.randn(N, device=f"cuda:{dev}") for _ in range(2))
        out = torch.full_like(x, float("nan"))
        _launch(x, y, out, 2.0)
        torch.cuda.synchronize(dev)
        torch.testing.assert_close(out, 2.0 * x + y)
        assert torch.cuda.current_device() == 0  # the switch is undone


def test_launch_follows_the_devices_current_stream():
    torch.cuda.set_device(0)
    x, y = (torch.randn(N, device="cuda:1") for _ in range(2))
    out = x.clone()
    s = torch.cuda.Stream(device=1)
    with torch.cuda.stream(s):  # device 1's current stream
        s.wait_stream(torch.cuda.default_stream(1))
        for _ in range(40):  # each launch reads the previous one's output
            _launch(out, y, out, 1.0)
    torch.cuda.default_stream(1).wait_stream(s)
    torch.cuda.synchronize(1)
    torch.testing.assert_close(out, x + 40 * y, rtol=1e-4, atol=1e-4)


def test_mixing_devices_is_an_error():
    x = torch.randn(N, device="cuda:0")
    y = torch.randn(N, device="cuda:1")
    with pytest.raises(ValueError, match=r"axpy: arguments on different devices: `x` is on "
                                         r"cuda:0 and `y` on cuda:1"):
        _launch(x, y, torch.empty_like(x), 1.0)


def _inputs(rank):
    g = torch.Generator().manual_seed(1234 + rank)
    return torch.randn(N, generator=g), torch.randn(N, generator=g)


def _rank_main(rank, world, port, cache, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), TILEWORK_CACHE_DIR=cache)
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    try:
        x, y = (t.cuda() for t in _inputs(rank))
        out, res = torch.empty_like(x), torch.empty_like(x)
        _launch(x, y, out, 2.0)      # before the all-reduce
        dist.all_reduce(out)
        _launch(out, x, res, 0.5)    # after it
        torch.cuda.synchronize()
        torch.save(res.cpu(), os.path.join(results, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def test_two_ranks_around_an_all_reduce(tmp_path):
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_nccl_available():
        pytest.skip("no NCCL")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cache = str(tmp_path / "shared-cache")  # both ranks compile into one folder
    mp.spawn(_rank_main, args=(2, port, cache, str(tmp_path)), nprocs=2, join=True)
    inputs = [_inputs(r) for r in range(2)]
    total = sum(2.0 * x + y for x, y in inputs)
    for r, (x, _) in enumerate(inputs):
        torch.testing.assert_close(torch.load(tmp_path / f"rank{r}.pt"), 0.5 * total + x)
    # the shared folder after the race: every entry whole (its manifest checks), no
    # temporary folder or file left, one native launcher built
    from tilework.compiler.cache import FileCache
    keys = [k for d in os.listdir(cache) if len(d) == 2 for k in os.listdir(os.path.join(cache, d))]
    assert keys, "nothing was cached"
    assert not [k for k in keys if k.startswith(".")], keys
    assert all(FileCache(cache).get(k) is not None for k in keys)
    native = os.path.join(cache, "native")
    if os.path.isdir(native):
        assert [f.endswith(".so") and not f.startswith("tmp") for f in os.listdir(native)] \
            == [True], os.listdir(native)
