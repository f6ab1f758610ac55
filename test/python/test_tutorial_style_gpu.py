"""The kernels of benchmarks/tutorial_style.py on the GPU, launched by the benchmark's own host
code (the tutorials' warp heuristics, the occupancy grid, the pointer arrays), against torch;
dropout also against Triton's stream when Triton is installed.  Skipped without a GPU."""
import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

from test_tutorial_style import tutorial_style as ts  # noqa: E402  (loaded by its path)


@pytest.fixture(scope="module")
def mod():
    return ts.build("tilework")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.mark.parametrize("M, N", [(4096, 1024), (1823, 781), (64, 8192), (3, 4096)])
def test_layer_norm_forward_and_backward(mod, M, N):
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    dy = 0.1 * torch.randn(M, N, device="cuda", dtype=torch.float16)
    w = torch.rand(N, device="cuda", dtype=torch.float16)
    b = torch.randn(N, device="cuda", dtype=torch.float16)
    xr, wr, br = (t.float().requires_grad_() for t in (x, w, b))
    y_ref = torch.nn.functional.layer_norm(xr, (N,), wr, br)
    y_ref.backward(dy.float())
    fwd, y, mean, rstd = ts.ln_fwd(mod, x, w, b)
    fwd()
    torch.testing.assert_close(y.float(), y_ref.detach(), atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(mean, x.float().mean(1), atol=1e-3, rtol=1e-3)
    for _ in range(2):  # the locks and partial sums start afresh each call
        bwd, dx, dw, db = ts.ln_bwd(mod, dy, x, w, mean, rstd)
        bwd()
        torch.cuda.synchronize()
        torch.testing.assert_close(dx.float(), xr.grad, atol=1e-2, rtol=1e-2)
        torch.testing.assert_close(dw.float(), wr.grad, atol=0.5, rtol=1e-2)
        torch.testing.assert_close(db.float(), br.grad, atol=0.5, rtol=1e-2)


@pytest.mark.parametrize("N", [1024, 781, 8192, 32768])
def test_softmax_with_the_occupancy_grid(mod, N):
    sm = ts.Softmax(mod, ts.api("tilework"))
    x = torch.randn(4096, N, device="cuda", dtype=torch.float32) * 3
    run, y = sm(x)
    run()
    torch.testing.assert_close(y, torch.softmax(x, -1), atol=1e-6, rtol=1e-4)
    occupancy, spills = next(iter(sm.kernels.values()))
    assert occupancy >= 1 and spills == 0


@pytest.mark.parametrize("n", [1 << 20, 1000003])
def test_seeded_dropout(mod, n):
    x = torch.randn(n, device="cuda", dtype=torch.float32)
    x[x == 0] = 1.0
    run, out = ts.dropout(mod, x, 0.5, 1234)
    run()
    kept = out != 0
    assert abs(kept.float().mean().item() - 0.5) < 0.01
    torch.testing.assert_close(out[kept], x[kept] / 0.5, atol=0, rtol=1e-6)
    try:
        tri = ts.build("triton")
    except ImportError:
        return
    run_t, out_t = ts.dropout(tri, x, 0.5, 1234)
    run_t()
    assert torch.equal(out, out_t)  # one Philox stream


@pytest.mark.parametrize("block, warps", [((128, 128, 64), 8), ((128, 128, 32), 4),
                                          ((64, 64, 32), 4)])
def test_grouped_gemm_over_pointer_arrays(mod, block, warps):
    dims = [(1024, 512, 256), (256, 1024, 512), (128, 128, 128), (512, 256, 1024)]
    pairs = [(torch.randn(m, k, device="cuda", dtype=torch.float16),
              torch.randn(k, n, device="cuda", dtype=torch.float16)) for m, n, k in dims]
    g = ts.Grouped(pairs)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    g.launch(mod, sms, block=block, warps=warps)()
    for (a, b), c in zip(pairs, g.cs):
        torch.testing.assert_close(c.float(), a.float() @ b.float(), atol=0.1, rtol=1e-2)


def test_grouped_gemm_without_copy_fence_with_ring_k_step(monkeypatch):
    """The K loop as Triton's (issue 14): CompileOptions.wgmma_cp_async_fence off and
    wgmma_ring_k_step on (through their environment variables, in a module built afresh: a
    JIT function's variants are keyed by its launch arguments only)."""
    monkeypatch.setenv("TILEWORK_WGMMA_CP_ASYNC_FENCE", "0")
    monkeypatch.setenv("TILEWORK_WGMMA_RING_K_STEP", "1")
    test_grouped_gemm_over_pointer_arrays(ts.build("tilework"), (128, 128, 64), 8)


def test_benchmark_runs_and_writes_json(tmp_path):
    """The benchmark end to end on its smallest shapes (both compilers when Triton is
    installed): every check passes."""
    pytest.importorskip("triton")
    out = tmp_path / "r.json"
    assert ts.main(["--only", "dropout", "--json", str(out)]) == 0
    import json
    rows = json.loads(out.read_text())["rows"]
    assert {r["kernel"] for r in rows} == {"seeded dropout"} and all(r["ratio"] > 0 for r in rows)
