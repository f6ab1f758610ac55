"""tilework.torch on the GPU: each op and its backward against a float64 torch reference
(tolerances stated per dtype), gradcheck where the kernels take float64, and a small model
under torch.compile(fullgraph=True) (inductor) with no graph break, forward and backward."""
import math

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import tilework.torch as twt  # noqa: E402

pytestmark = pytest.mark.gpu

# dtype -> (atol, rtol) of outputs and gradients against float64 (fp32: the kernels compute in
# fp32, dots in tf32; 16-bit: one rounding of each input and output)
TOL = {torch.float32: (2e-3, 2e-3), torch.float16: (2e-2, 2e-2), torch.bfloat16: (8e-2, 5e-2)}


def rand(*shape, dtype=torch.float32, grad=True):
    return torch.randn(*shape, device="cuda", dtype=dtype).requires_grad_(grad)


def check(got, want, dtype, scale=1.0):
    atol, rtol = TOL[dtype]
    torch.testing.assert_close(got.double(), want.double(), atol=atol * scale, rtol=rtol)


def run_both(f, ref, inputs, dtype, scale=1.0):
    y = f(*inputs)
    inputs64 = [t.detach().double().requires_grad_() for t in inputs]
    want = ref(*inputs64)
    check(y, want, dtype, scale)
    g = torch.randn_like(y)
    for a, r in zip(torch.autograd.grad(y, inputs, g),
                    torch.autograd.grad(want, inputs64, g.double())):
        check(a, r, dtype, scale)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("n", [1, 781, 4096, 40000])
def test_softmax(dtype, n):
    run_both(twt.softmax, lambda x: torch.softmax(x, -1), [rand(37, n, dtype=dtype)], dtype)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("n", [64, 781, 4096])
def test_layer_norm(dtype, n):
    inputs = [rand(300, n, dtype=dtype), rand(n, dtype=dtype), rand(n, dtype=dtype)]
    run_both(lambda x, w, b: twt.layer_norm(x, w, b),
             lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5), inputs, dtype, scale=8)


@pytest.mark.parametrize("dtype", list(TOL))
def test_rms_norm(dtype):
    inputs = [rand(300, 1000, dtype=dtype), rand(1000, dtype=dtype)]
    run_both(lambda x, w: twt.rms_norm(x, w), lambda x, w: F.rms_norm(x, (1000,), w, 1e-6),
             inputs, dtype, scale=8)


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("activation", twt.ACTIVATIONS)
def test_linear(dtype, activation):
    ref_act = {"gelu": F.gelu, "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
               "silu": F.silu, "none": lambda z: z}[activation]
    inputs = [rand(200, 136, dtype=dtype), rand(72, 136, dtype=dtype) / 12,
              rand(72, dtype=dtype)]
    run_both(lambda x, w, b: twt.linear(x, w, b, activation),
             lambda x, w, b: ref_act(F.linear(x, w, b)), inputs, dtype, scale=10)


@pytest.mark.parametrize("rms", [False, True])
def test_norm_gradcheck_float64(rms):
    """The norm and softmax kernels load and store float64 (computing in float32)."""
    x, w = rand(4, 33, dtype=torch.float64), rand(33, dtype=torch.float64)
    if rms:
        assert torch.autograd.gradcheck(twt.rms_norm, (x, w), eps=1e-3, atol=1e-3, rtol=1e-3)
    else:
        b = rand(33, dtype=torch.float64)
        assert torch.autograd.gradcheck(twt.layer_norm, (x, w, b), eps=1e-3, atol=1e-3,
                                        rtol=1e-3)
    assert torch.autograd.gradcheck(twt.softmax, (x,), eps=1e-3, atol=1e-4, rtol=1e-3)


def sdpa64(q, k, v, causal):
    rep = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1),
                                          v.repeat_interleave(rep, 1), is_causal=causal)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,d,kv_heads", [(128, 64, 4), (1000, 128, 2), (256, 64, 1)])
def test_attention(dtype, causal, n, d, kv_heads):
    pytest.importorskip("attention", reason="examples/attention.py has not landed")
    q = rand(2, 4, n, d, dtype=dtype)
    k, v = rand(2, kv_heads, n, d, dtype=dtype), rand(2, kv_heads, n, d, dtype=dtype)
    run_both(lambda q, k, v: twt.attention(q, k, v, causal=causal),
             lambda q, k, v: sdpa64(q, k, v, causal), [q, k, v], dtype, scale=2)


class MLPBlock(torch.nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(4 * d, d) / math.sqrt(d))
        self.b1 = torch.nn.Parameter(torch.zeros(4 * d))
        self.w2 = torch.nn.Parameter(torch.randn(d, 4 * d) / math.sqrt(4 * d))
        self.ln_w = torch.nn.Parameter(torch.ones(d))
        self.ln_b = torch.nn.Parameter(torch.zeros(d))
        self.rms_w = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        h = twt.linear(twt.layer_norm(x, self.ln_w, self.ln_b), self.w1, self.b1, "gelu")
        x = x + twt.linear(h, self.w2)
        return twt.softmax(twt.rms_norm(x, self.rms_w))


def test_compile_fullgraph_inductor_no_graph_breaks():
    torch._dynamo.reset()
    model = MLPBlock().cuda()
    x = rand(4, 64, 256, grad=False)
    explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    compiled = torch.compile(model, fullgraph=True)
    x = x.requires_grad_()
    y = compiled(x)
    want = model(x)
    torch.testing.assert_close(y, want, atol=1e-4, rtol=1e-4)
    g = torch.randn_like(y)
    got = torch.autograd.grad(y, (x, *model.parameters()), g)
    ref = torch.autograd.grad(want, (x, *model.parameters()), g)
    for a, r in zip(got, ref):
        torch.testing.assert_close(a, r, atol=1e-3, rtol=1e-3)
