"""examples/attention.py's `attention_forward` on an sm_90 GPU routes to examples/
attention_tma.py's descriptor (TMA) forward, and its o and lse feed the pointer backward:
forward and forward+backward against SDPA in fp32 (test_attention_gpu.py's reference and
tolerances), fp16, grouped-query heads, D 64 and 128, N 1000 and 1024, causal and not; the
opt-outs (`tma=False`, TILEWORK_ATTENTION_TMA=0) run the pointer forward; the torch custom op
(`tilework.torch.attention`) takes the route too.  The autotuners are pinned to their default
configs here (tuning is tested by the kernels' own GPU tests): this file checks the route.
The routing rules without a GPU: test_attention_route.py."""
import pytest

torch = pytest.importorskip("torch")

import attention as A  # noqa: E402
import attention_tma as T  # noqa: E402
from test_attention_gpu import BWD_TOL, FWD_TOL, inputs, maxerr, reference  # noqa: E402

pytestmark = pytest.mark.gpu


class _Calls(list):
    """A list that also carries `pin` (a plain list takes no attributes)."""


@pytest.fixture
def tma_calls(sm90, monkeypatch):
    """The calls attention_tma.attention_forward receives; autotuners pinned per head dim
    (call pin(d) before launching).  Needs an sm_90 GPU (conftest's `sm90`)."""
    monkeypatch.delenv(A.TMA_ENV, raising=False)
    calls = _Calls()
    real = T.attention_forward

    def spy(*args, **kw):
        calls.append(args[0].shape)
        return real(*args, **kw)
    monkeypatch.setattr(T, "attention_forward", spy)

    def pin(d):
        first_tma = next(c for c in T.FWD_TMA_CONFIGS if T.config_fits(c, d))
        dkdv, dq = A.default_bwd_configs(d)
        for tuner, configs in [(T.attn_fwd_tma, [first_tma]),
                               (A.attn_fwd, [A.default_fwd_config(d)]),
                               (A.attn_bwd_dkdv_tuned, [dkdv]), (A.attn_bwd_dq_tuned, [dq])]:
            monkeypatch.setattr(tuner, "configs", configs)
            monkeypatch.setattr(tuner, "cache", {})
    calls.pin = pin
    return calls


def check(q, k, v, do, causal, scale, o, lse, grads=None):
    ro, rl, rdq, rdk, rdv = reference(q, k, v, do, causal, scale)
    assert not torch.isnan(o).any()
    assert maxerr(o, ro) < FWD_TOL["fp16"]
    if lse is not None:
        assert maxerr(lse, rl) < 1e-3
    if grads is not None:
        for g, r in zip(grads, (rdq, rdk, rdv)):
            assert maxerr(g, r) < BWD_TOL["fp16"]


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("causal", [False, True])
def test_forward_and_backward_through_tma(tma_calls, d, n, causal):
    tma_calls.pin(d)
    q, k, v, do = inputs(2, 4, 2, n, d, torch.float16)
    scale = d ** -0.5
    assert A.forward_kernel(q, k, v) == "tma"
    o, lse = A.attention_forward(q, k, v, causal, scale)
    assert tma_calls == [q.shape]
    grads = A.attention_backward(q, k, v, o, do, lse, causal, scale)
    torch.cuda.synchronize()
    check(q, k, v, do, causal, scale, o, lse, grads)


@pytest.mark.parametrize("z, h, hk, n, d", [(3, 2, 2, 17, 64),     # below one block
                                             (1, 6, 3, 511, 128)])  # GQA 2:1
@pytest.mark.parametrize("causal", [False, True])
def test_short_and_odd_sequences_through_tma(tma_calls, z, h, hk, n, d, causal):
    """Fewer rows than a TMA box in the whole tensor (Z * H * N = 102), an odd N."""
    tma_calls.pin(d)
    q, k, v, do = inputs(z, h, hk, n, d, torch.float16)
    o, lse = A.attention_forward(q, k, v, causal, 0.3)
    assert tma_calls == [q.shape]
    torch.cuda.synchronize()
    check(q, k, v, do, causal, 0.3, o, lse)


@pytest.mark.parametrize("how", ["argument", "env"])
def test_opt_out_runs_the_pointer_forward(tma_calls, monkeypatch, how):
    tma_calls.pin(64)
    q, k, v, do = inputs(2, 4, 2, 1000, 64, torch.float16)
    kw = {}
    if how == "argument":
        kw = {"tma": False}
    else:
        monkeypatch.setenv(A.TMA_ENV, "0")
    assert A.forward_kernel(q, k, v, **kw) == "pointer"
    o, lse = A.attention_forward(q, k, v, True, 0.125, **kw)
    assert tma_calls == []
    grads = A.attention_backward(q, k, v, o, do, lse, True, 0.125)
    torch.cuda.synchronize()
    check(q, k, v, do, True, 0.125, o, lse, grads)


def test_non_contiguous_inputs_run_the_pointer_forward(tma_calls):
    tma_calls.pin(64)
    q, k, v, do = inputs(1, 4, 4, 1024, 64, torch.float16)
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)  # (Z, N, H, D) storage
    assert A.forward_kernel(qt, k, v) == "pointer"
    o, lse = A.attention_forward(qt, k, v, False, 0.125)
    assert tma_calls == []
    check(q, k, v, do, False, 0.125, o, lse)


@pytest.mark.parametrize("d", [64, 128])
def test_torch_op_routes_to_tma(tma_calls, d):
    """tilework.torch.attention (the custom op with autograd) forward and backward."""
    import tilework.torch as twt
    tma_calls.pin(d)
    q, k, v, do = inputs(1, 4, 2, 1000, d, torch.float16)
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    o = twt.attention(qg, kg, vg, causal=True)
    assert tma_calls == [q.shape]
    grads = torch.autograd.grad(o, (qg, kg, vg), do)
    torch.cuda.synchronize()
    check(q, k, v, do, True, d ** -0.5, o.detach(), None, grads)
