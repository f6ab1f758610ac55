"""CUDA graphs: tilework kernels launched on torch's current stream are captured by
`torch.cuda.graph` and replay on new data in the captured buffers (native and Python launch
paths); an autotuned kernel whose first call (the tuning) ran outside capture is captured
with the chosen config."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402


@tilework.jit
def axpy(x, y, out, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, a * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@tilework.jit
def square_sum(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.atomic_add(out, tl.sum(v * v, axis=0))


@tilework.autotune(configs=[tilework.Config({"BLOCK": 128}, num_warps=4),
                            tilework.Config({"BLOCK": 512}, num_warps=4),
                            tilework.Config({"BLOCK": 1024}, num_warps=8)], key=["n"])
@tilework.jit
def tuned_axpy(x, y, out, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, a * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def _cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("path", ["native", "python"])
def test_graph_replays_on_new_data(path, monkeypatch):
    n = 10_000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out, acc = torch.empty_like(x), torch.zeros(1, device="cuda")
    run = lambda: (axpy[(_cdiv(n, 1024),)](x, y, out, n, 3.0, BLOCK=1024),  # noqa: E731
                   square_sum[(_cdiv(n, 256),)](out, acc, n, BLOCK=256))
    run()  # compiles and loads outside capture
    if path == "python":
        monkeypatch.setattr(axpy, "_native_launch", False)
        monkeypatch.setattr(square_sum, "_native_launch", False)
    else:
        assert axpy._native_launch, "the native launch path is off on this machine"
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        acc.zero_()
        run()
    for _ in range(3):
        x.copy_(torch.randn(n, device="cuda"))
        y.copy_(torch.randn(n, device="cuda"))
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        ref = 3.0 * x + y
        torch.testing.assert_close(out, ref)
        torch.testing.assert_close(acc, (ref * ref).sum().reshape(1), rtol=1e-4, atol=1e-2)


def test_graph_of_autotuned_kernel_tuned_outside_capture():
    n = 1 << 16
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = lambda meta: (_cdiv(n, meta["BLOCK"]),)  # noqa: E731
    tuned_axpy[grid](x, y, out, n, 0.5)  # tunes (benchmarks every config) outside capture
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 0.5 * x + y)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        tuned_axpy[grid](x, y, out, n, 0.5)
    x.copy_(torch.randn(n, device="cuda"))
    out.zero_()
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 0.5 * x + y)


def test_capture_on_a_side_stream_orders_with_it():
    """Launches follow torch's current stream (a side stream's work is ordered with them)."""
    n = 4096
    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(50):  # each launch reads the previous one's output
            axpy[(_cdiv(n, 1024),)](out if i else x, y, out, n, 1.0, BLOCK=1024)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x + 50 * y, rtol=1e-4, atol=1e-4)
