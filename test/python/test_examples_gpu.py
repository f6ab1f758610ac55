"""The memory-bound examples on the GPU against torch (fp16, bf16, fp32; row lengths that are
not powers of two; a tail row count), outputs poisoned before each run."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from fused_epilogue import bias_gelu_sum  # noqa: E402
from layernorm import layer_norm, layer_norm_bwd  # noqa: E402
from softmax import softmax  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16, torch.float32]
TOL = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-5}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rows, cols", [(1823, 781), (16384, 1024), (7, 5000), (33, 1),
                                        (5, 40000), (1024, 32768), (3, 20000),
                                        (1000, 16385)])
def test_softmax(dtype, rows, cols):
    x = torch.randn(rows, cols, device="cuda", dtype=dtype) * 4
    out = torch.full_like(x, float("nan"))
    softmax(x, out)
    ref = torch.softmax(x.float(), dim=-1)
    torch.testing.assert_close(out.float(), ref, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rows, cols", [(8192, 4096), (1000, 999), (3, 5120), (257, 64)])
@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_norm_forward_backward(dtype, rows, cols, rms):
    x = torch.randn(rows, cols, device="cuda", dtype=dtype)
    w = torch.randn(cols, device="cuda", dtype=dtype)
    b = None if rms else torch.randn(cols, device="cuda", dtype=dtype)
    dy = torch.randn_like(x)
    y, mean, rstd = layer_norm(x, w, b, eps=1e-5, rms=rms)
    xr = x.float().requires_grad_()
    wr = w.float().requires_grad_()
    br = None if rms else b.float().requires_grad_()
    if rms:
        ref = xr * torch.rsqrt(xr.pow(2).mean(-1, keepdim=True) + 1e-5) * wr
    else:
        ref = torch.nn.functional.layer_norm(xr, (cols,), wr, br, eps=1e-5)
    tol = TOL[dtype] * 4
    torch.testing.assert_close(y.float(), ref, rtol=tol, atol=tol)
    ref.backward(dy.float())
    dx, dw, db = layer_norm_bwd(dy, x, w, mean, rstd, rms=rms)
    torch.testing.assert_close(dx.float(), xr.grad, rtol=tol, atol=tol * 4)
    scale = max(1.0, rows / 64)  # dW and dB sum over rows: absolute error grows with them
    torch.testing.assert_close(dw.float(), wr.grad, rtol=tol * 4, atol=tol * scale)
    if not rms:
        torch.testing.assert_close(db.float(), br.grad, rtol=tol * 4, atol=tol * scale)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rows, cols", [(4096, 4096), (333, 1000)])
def test_bias_gelu_rowsum(dtype, rows, cols):
    x = torch.randn(rows, cols, device="cuda", dtype=dtype)
    bias = torch.randn(cols, device="cuda", dtype=dtype)
    y, s = bias_gelu_sum(x, bias)
    ref = torch.nn.functional.gelu(x.float() + bias.float())
    torch.testing.assert_close(y.float(), ref, rtol=TOL[dtype] * 2, atol=TOL[dtype] * 2)
    torch.testing.assert_close(s, ref.to(dtype).float().sum(-1), rtol=1e-2,
                               atol=TOL[dtype] * cols ** 0.5 * 4)
