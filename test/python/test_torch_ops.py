"""tilework.torch without a GPU: the custom ops on CPU tensors (their kernels interpreted)
against float64 torch, their schemas, fake implementations and autograd (`opcheck`,
`gradcheck`), and `torch.compile(fullgraph=True)` over them with no graph break.  Attention runs
against a stub of examples/attention.py's API (the real kernels: test_torch_ops_gpu.py)."""
import math
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import tilework.torch as twt  # noqa: E402
from tilework.torch import examples, ops  # noqa: E402

gen = torch.Generator().manual_seed(0)


def randn(*shape, dtype=torch.float32, grad=False):
    return torch.randn(*shape, generator=gen, dtype=dtype).requires_grad_(grad)


def test_import_tilework_does_not_import_torch():
    code = "import sys, tilework, tilework.language; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def grads(y, inputs, g):
    return torch.autograd.grad(y, inputs, g)


def close(a, b, atol, rtol=0.0):
    torch.testing.assert_close(a.double(), b.double(), atol=atol, rtol=rtol)


# --- softmax ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 12), (3, 2, 33), (2, 1)])
def test_softmax_forward_backward(shape):
    x = randn(*shape, grad=True)
    y = twt.softmax(x)
    x64 = x.detach().double().requires_grad_()
    ref = torch.softmax(x64, -1)
    close(y, ref, 1e-6)
    g = randn(*shape)
    close(grads(y, x, g)[0], grads(ref, x64, g.double())[0], 1e-6)


def test_softmax_other_dim():
    x = randn(4, 6, 3)
    close(twt.softmax(x, dim=1), torch.softmax(x, 1), 1e-6)


def test_softmax_backward_online_kernel():
    """Rows longer than ONLINE_ABOVE stream in chunks (forward and backward)."""
    x = randn(2, ops.ONLINE_ABOVE + 100, grad=True)
    y = twt.softmax(x)
    close(y, torch.softmax(x.double(), -1), 1e-7)
    g = randn(*x.shape)
    ref = torch.softmax(x.detach().double(), -1)
    dref = ref * (g.double() - (g.double() * ref).sum(-1, keepdim=True))
    close(grads(y, x, g)[0], dref, 1e-7)


def test_softmax_gradcheck():
    """float64 in and out (the kernels compute in float32, hence eps and the tolerances)."""
    x = randn(3, 7, dtype=torch.float64, grad=True)
    assert torch.autograd.gradcheck(twt.softmax, (x,), eps=1e-3, atol=1e-4, rtol=1e-3)


# --- LayerNorm / RMSNorm ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(6, 20), (2, 3, 9)])
def test_layer_norm_forward_backward(shape):
    n = shape[-1]
    x, w, b = randn(*shape, grad=True), randn(n, grad=True), randn(n, grad=True)
    y = twt.layer_norm(x, w, b, eps=1e-5)
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    ref = F.layer_norm(x64, (n,), w64, b64, 1e-5)
    close(y, ref, 2e-5)
    g = randn(*shape)
    for a, r in zip(grads(y, (x, w, b), g), grads(ref, (x64, w64, b64), g.double())):
        close(a, r, 5e-5)


def test_layer_norm_without_bias():
    x, w = randn(4, 10, grad=True), randn(10, grad=True)
    y = twt.layer_norm(x, w)
    ref = F.layer_norm(x.double(), (10,), w.double(), None, 1e-5)
    close(y, ref, 2e-5)
    dx, dw = grads(y, (x, w), torch.ones(4, 10))
    rx, rw = torch.autograd.grad(ref, (x, w), torch.ones(4, 10, dtype=torch.float64))
    close(dx, rx, 5e-5)
    close(dw, rw, 5e-5)


def test_rms_norm_forward_backward():
    x, w = randn(7, 24, grad=True), randn(24, grad=True)
    y = twt.rms_norm(x, w, eps=1e-6)
    x64, w64 = (t.detach().double().requires_grad_() for t in (x, w))
    ref = F.rms_norm(x64, (24,), w64, 1e-6)
    close(y, ref, 2e-5)
    g = randn(7, 24)
    for a, r in zip(grads(y, (x, w), g), grads(ref, (x64, w64), g.double())):
        close(a, r, 5e-5)


@pytest.mark.parametrize("rms", [False, True])
def test_norm_gradcheck(rms):
    x = randn(3, 8, dtype=torch.float64, grad=True)
    w = randn(8, dtype=torch.float64, grad=True)
    if rms:
        f, args = (lambda x, w: twt.rms_norm(x, w)), (x, w)
    else:
        f, args = (lambda x, w, b: twt.layer_norm(x, w, b)), \
            (x, w, randn(8, dtype=torch.float64, grad=True))
    assert torch.autograd.gradcheck(f, args, eps=1e-3, atol=1e-3, rtol=1e-3)


# --- linear + activation ---------------------------------------------------------------------

REF_ACT = {"gelu": F.gelu, "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
           "silu": F.silu, "none": lambda z: z}


@pytest.mark.parametrize("activation", twt.ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_backward(activation, bias):
    """fp32 in; the interpreter's fp32 dot rounds its inputs to tf32 as the GPU's does, so the
    tolerance against float64 is tf32's (about 1e-3 relative over K = 19)."""
    x, w = randn(2, 5, 19, grad=True), randn(7, 19, grad=True)
    b = randn(7, grad=True) if bias else None
    y = twt.linear(x, w, b, activation)
    x64, w64 = (t.detach().double().requires_grad_() for t in (x, w))
    b64 = b.detach().double().requires_grad_() if bias else None
    ref = REF_ACT[activation](F.linear(x64, w64, b64))
    assert y.shape == (2, 5, 7)
    close(y, ref, 1e-2, 1e-2)
    g = randn(2, 5, 7)
    inputs = (x, w, b) if bias else (x, w)
    inputs64 = (x64, w64, b64) if bias else (x64, w64)
    for a, r in zip(grads(y, inputs, g), grads(ref, inputs64, g.double())):
        close(a, r, 2e-2, 1e-2)


def test_activation_gradients_exact():
    """The activation gradients alone, K = 1 and w = 1 with x on a grid tf32 holds exactly, so
    z = x and dz = dy * act'(x); a wrong formula is off by far more than dz's tf32 rounding."""
    x = torch.linspace(-4, 4, 33).reshape(33, 1).requires_grad_()
    w = torch.ones(1, 1)
    for act in twt.ACTIVATIONS:
        y = twt.linear(x, w, None, act)
        dx, = torch.autograd.grad(y, x, torch.ones(33, 1))
        x64 = x.detach().double().requires_grad_()
        rx, = torch.autograd.grad(REF_ACT[act](x64), x64, torch.ones(33, 1, dtype=torch.float64))
        close(dx, rx, 1e-5, 2e-3)  # dx = dz @ w rounds dz to tf32 (10-bit mantissa)


def test_linear_rejects():
    x, w = randn(3, 4), randn(5, 4)
    with pytest.raises(ValueError, match="activation must be one of gelu, gelu_tanh, silu, none"
                                          ", got 'relu'"):
        twt.linear(x, w, None, "relu")
    with pytest.raises(ValueError, match=r"linear: x \[\.\.\., 4\] and weight \[4, 5\]"):
        twt.linear(x, w.t().contiguous())
    with pytest.raises(ValueError, match=r"linear: bias \[4\] for 5 outputs"):
        twt.linear(x, w, randn(4))


# --- attention (a stub of examples/attention.py) ---------------------------------------------

def ref_attention(q, k, v, causal, sm_scale):
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = (q @ k.transpose(-1, -2)) * sm_scale
    if causal:
        n = q.shape[2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


class StubAttention:
    """attention_forward / attention_backward as examples/attention.py declares them."""
    calls = []

    @classmethod
    def attention_forward(cls, q, k, v, causal, sm_scale):
        cls.calls.append("forward")
        o, lse = ref_attention(q.double(), k.double(), v.double(), causal, sm_scale)
        return o.to(q.dtype), lse.float()

    @classmethod
    def attention_backward(cls, q, k, v, o, do, lse, causal, sm_scale):
        """By the formulas (autograd does not record inside a custom op's kernel)."""
        cls.calls.append("backward")
        rep = q.shape[1] // k.shape[1]
        q2, k2, v2, do2 = (t.double() for t in (q, k, v, do))
        kr, vr = k2.repeat_interleave(rep, 1), v2.repeat_interleave(rep, 1)
        s = (q2 @ kr.transpose(-1, -2)) * sm_scale
        if causal:
            n = q.shape[2]
            s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
        p = torch.softmax(s, -1)
        dv = p.transpose(-1, -2) @ do2
        dp = do2 @ vr.transpose(-1, -2)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * sm_scale
        dq = ds @ kr
        dk = ds.transpose(-1, -2) @ q2

        def fold(t):  # the query heads sharing one K/V head add up
            return t.unflatten(1, (k.shape[1], rep)).sum(2)
        return dq.to(q.dtype), fold(dk).to(k.dtype), fold(dv).to(v.dtype)


@pytest.fixture
def stub(monkeypatch):
    StubAttention.calls = []
    monkeypatch.setattr(ops, "attention_module", lambda: StubAttention)
    return StubAttention


@pytest.mark.parametrize("causal", [False, True])
def test_attention_wrapper_against_stub(stub, causal):
    q = randn(1, 4, 6, 8, grad=True)
    k, v = randn(1, 2, 6, 8, grad=True), randn(1, 2, 6, 8, grad=True)
    o = twt.attention(q, k, v, causal=causal)
    ref, _ = ref_attention(q.double(), k.double(), v.double(), causal, 1 / math.sqrt(8))
    close(o, ref, 1e-6)
    g = randn(1, 4, 6, 8)
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    ref, _ = ref_attention(q64, k64, v64, causal, 1 / math.sqrt(8))
    for a, r in zip(grads(o, (q, k, v), g), grads(ref, (q64, k64, v64), g.double())):
        close(a, r, 1e-5)
    assert stub.calls == ["forward", "backward"]


def test_attention_rejects(stub):
    q, k = randn(1, 3, 4, 8), randn(1, 2, 4, 8)
    with pytest.raises(ValueError, match=r"attention: q \[1, 3, 4, 8\], k \[1, 2, 4, 8\], v "
                                          r"\[1, 2, 4, 8\] do not match"):
        twt.attention(q, k, k)
    with pytest.raises(ValueError, match=r"attention: q, k and v are \[batch, heads, seq, "
                                          r"head_dim\]"):
        twt.attention(q[0], k[0], k[0])


# --- schema, fake tensors, opcheck -----------------------------------------------------------

def test_schemas():
    assert str(torch.ops.tilework.softmax.default._schema) == \
        "tilework::softmax(Tensor x) -> Tensor"
    assert str(torch.ops.tilework.layer_norm.default._schema) == \
        ("tilework::layer_norm(Tensor x, Tensor weight, Tensor? bias, float eps, bool rms) -> "
         "(Tensor, Tensor, Tensor)")
    assert str(torch.ops.tilework.linear.default._schema) == \
        "tilework::linear(Tensor x, Tensor weight, Tensor? bias, str activation) -> Tensor"
    assert str(torch.ops.tilework.attention.default._schema) == \
        ("tilework::attention(Tensor q, Tensor k, Tensor v, bool causal, float sm_scale) -> "
         "(Tensor, Tensor)")


def test_fake_implementations_give_shapes_without_running_kernels():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(8, 3, 64, dtype=torch.float16)
        w, b = torch.empty(64, dtype=torch.float16), torch.empty(64, dtype=torch.float16)
        assert twt.softmax(x).shape == (8, 3, 64)
        y, mean, rstd = torch.ops.tilework.layer_norm(x, w, b, 1e-5, False)
        assert (y.shape, mean.shape, rstd.dtype) == ((8, 3, 64), (24,), torch.float32)
        lin = twt.linear(x, torch.empty(32, 64, dtype=torch.float16), None, "silu")
        assert lin.shape == (8, 3, 32) and lin.dtype == torch.float16
        q = torch.empty(2, 8, 128, 64, dtype=torch.float16)
        kv = torch.empty(2, 2, 128, 64, dtype=torch.float16)
        o, lse = torch.ops.tilework.attention(q, kv, kv, True, 0.125)
        assert (o.shape, lse.shape, lse.dtype) == ((2, 8, 128, 64), (2, 8, 128), torch.float32)


OPCHECK_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor",
                 "test_aot_dispatch_dynamic")


def _opcheck(op, args):
    torch.library.opcheck(op, args, test_utils=OPCHECK_TESTS)


def test_opcheck_softmax():
    _opcheck(torch.ops.tilework.softmax.default, (randn(3, 10, grad=True),))
    _opcheck(torch.ops.tilework.softmax_backward.default, (randn(3, 10), randn(3, 10)))


@pytest.mark.parametrize("rms", [False, True])
def test_opcheck_layer_norm(rms):
    x, w = randn(4, 16, grad=True), randn(16, grad=True)
    b = None if rms else randn(16, grad=True)
    _opcheck(torch.ops.tilework.layer_norm.default, (x, w, b, 1e-5, rms))
    y, mean, rstd = torch.ops.tilework.layer_norm(x, w, b, 1e-5, rms)
    _opcheck(torch.ops.tilework.layer_norm_backward.default,
             (randn(4, 16), x.detach(), w.detach(), mean, rstd, rms))


def test_opcheck_linear():
    x, w, b = randn(5, 8, grad=True), randn(6, 8, grad=True), randn(6, grad=True)
    _opcheck(torch.ops.tilework.linear.default, (x, w, b, "gelu"))
    _opcheck(torch.ops.tilework.linear_backward.default,
             (randn(5, 6), x.detach(), w.detach(), b.detach(), "gelu"))


def test_opcheck_attention(stub):
    q, k, v = (randn(1, 2, 5, 4, grad=True) for _ in range(3))
    _opcheck(torch.ops.tilework.attention.default, (q, k, v, True, 0.5))


# --- torch.compile ---------------------------------------------------------------------------

class Block(torch.nn.Module):
    """A small transformer-ish block made of the custom ops only."""

    def __init__(self, d=16, h=2):
        super().__init__()
        self.h = h
        self.norm1 = torch.nn.Parameter(torch.randn(d, generator=gen))
        self.qkv = torch.nn.Parameter(torch.randn(3 * d, d, generator=gen) / d ** 0.5)
        self.norm2_w = torch.nn.Parameter(torch.randn(d, generator=gen))
        self.norm2_b = torch.nn.Parameter(torch.randn(d, generator=gen))
        self.up = torch.nn.Parameter(torch.randn(2 * d, d, generator=gen) / d ** 0.5)
        self.up_b = torch.nn.Parameter(torch.randn(2 * d, generator=gen))

    def forward(self, x):
        b, n, d = x.shape
        qkv = twt.linear(twt.rms_norm(x, self.norm1), self.qkv)
        q, k, v = qkv.view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4).unbind(0)
        a = twt.attention(q.contiguous(), k.contiguous(), v.contiguous(), causal=True)
        x = x + a.transpose(1, 2).reshape(b, n, d)
        y = twt.linear(twt.layer_norm(x, self.norm2_w, self.norm2_b), self.up, self.up_b, "gelu")
        return twt.softmax(y).sum(-1, keepdim=True) * x


def test_compile_fullgraph_has_no_graph_breaks(stub):
    torch._dynamo.reset()
    model = Block()
    x = randn(2, 4, 16)
    explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0
    assert explained.graph_count == 1
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(model, fullgraph=True, backend=counting)
    y = compiled(x)
    close(y, model(x), 1e-6)
    assert len(graphs) == 1
    targets = {str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"}
    for op in ("softmax", "layer_norm", "linear", "attention"):
        assert f"tilework.{op}.default" in targets, targets


def test_compile_aot_eager_forward_and_backward(stub):
    """aot_eager traces the registered backward ops too (the joint graph) with fullgraph."""
    torch._dynamo.reset()
    model = Block()
    x = randn(2, 4, 16, grad=True)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    y = compiled(x)
    g = randn(*y.shape)
    got = grads(y, (x, *model.parameters()), g)
    want = grads(model(x), (x, *model.parameters()), g)
    for a, r in zip(got, want):
        close(a, r, 1e-5, 1e-5)


def test_examples_folder_missing_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("TILEWORK_EXAMPLES", str(tmp_path))
    monkeypatch.delitem(sys.modules, "no_such_example", raising=False)
    with pytest.raises(ImportError, match="tilework.torch needs examples/no_such_example.py; "
                                          "not found in"):
        examples.load("no_such_example")
