"""examples/attention.py on the GPU against torch's SDPA on fp32 inputs (the reference: the
fp16/bf16 inputs upcast, math backend, K/V heads repeated for grouped-query attention).

Tolerances (max abs error; inputs ~ N(0, 0.5^2), so |o| < ~2 and the gradients ~ 1):
  forward o:          fp16 1e-2, bf16 2e-2 (one rounding of o, P rounded to 16 bits)
  forward lse:        1e-3 (fp32 statistics; scores from 16-bit products, fp32 sums)
  backward dq/dk/dv:  fp16 2e-2, bf16 6e-2 (dS and P rounded to 16 bits before their dots;
                      dk/dv summed over the group's query heads under GQA)
"""
import math

import pytest

torch = pytest.importorskip("torch")

import attention as A  # noqa: E402

pytestmark = pytest.mark.gpu

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
FWD_TOL = {"fp16": 1e-2, "bf16": 2e-2}
BWD_TOL = {"fp16": 2e-2, "bf16": 6e-2}


def inputs(z, h, hk, n, d, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(z, h, n, d, device="cuda", generator=g).mul_(0.5).to(dtype)
    k = torch.randn(z, hk, n, d, device="cuda", generator=g).mul_(0.5).to(dtype)
    v = torch.randn(z, hk, n, d, device="cuda", generator=g).mul_(0.5).to(dtype)
    do = torch.randn(z, h, n, d, device="cuda", generator=g).mul_(0.5).to(dtype)
    return q, k, v, do


def reference(q, k, v, do, causal, scale):
    """(o, lse, dq, dk, dv) in fp32 through SDPA's math path."""
    g = q.shape[1] // k.shape[1]
    qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
    ke, ve = kf.repeat_interleave(g, 1), vf.repeat_interleave(g, 1)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        o = torch.nn.functional.scaled_dot_product_attention(qf, ke, ve, is_causal=causal,
                                                             scale=scale)
    s = (qf @ ke.transpose(-1, -2)).detach() * scale
    if causal:
        n = q.shape[2]
        s.masked_fill_(~torch.ones(n, n, dtype=torch.bool, device="cuda").tril(), -math.inf)
    lse = torch.logsumexp(s, -1)
    dq, dk, dv = torch.autograd.grad(o, (qf, kf, vf), do.float())
    return o.detach(), lse, dq, dk, dv


def maxerr(a, b):
    return (a.float() - b.float()).abs().max().item()


VARIANTS = [  # z, h, hk, n, d
    (2, 4, 4, 1024, 64),
    (2, 4, 4, 1000, 64),
    (1, 4, 4, 1023, 128),
    (1, 8, 2, 1000, 128),   # GQA 4:1
    (1, 6, 3, 511, 64),     # GQA 2:1
    (1, 2, 2, 1023, 256),
    (1, 2, 1, 384, 256),
    (3, 2, 2, 17, 64),      # below one block
]


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("z, h, hk, n, d", VARIANTS)
def test_forward_vs_sdpa(z, h, hk, n, d, causal, dt):
    q, k, v, do = inputs(z, h, hk, n, d, DTYPES[dt])
    scale = 1 / math.sqrt(d)
    o, lse = A.attention_forward(q, k, v, causal, scale)
    ro, rlse, *_ = reference(q, k, v, do, causal, scale)
    assert o.dtype == q.dtype and o.shape == q.shape and lse.dtype == torch.float32
    assert maxerr(o, ro) < FWD_TOL[dt], maxerr(o, ro)
    assert maxerr(lse, rlse) < 1e-3, maxerr(lse, rlse)


# D=256 once: its backward kernels spill (kilobytes) and compile slowly
BWD_VARIANTS = [v for v in VARIANTS if v[4] != 256] + [(1, 2, 1, 384, 256)]


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("z, h, hk, n, d", BWD_VARIANTS)
def test_backward_vs_sdpa(z, h, hk, n, d, causal, dt):
    q, k, v, do = inputs(z, h, hk, n, d, DTYPES[dt], seed=1)
    scale = 1 / math.sqrt(d)
    o, lse = A.attention_forward(q, k, v, causal, scale)
    dq, dk, dv = A.attention_backward(q, k, v, o, do, lse, causal, scale)
    _, _, rdq, rdk, rdv = reference(q, k, v, do, causal, scale)
    for name, got, want in (("dq", dq, rdq), ("dk", dk, rdk), ("dv", dv, rdv)):
        assert got.shape == want.shape and got.dtype == q.dtype, name
        assert maxerr(got, want) < BWD_TOL[dt], (name, maxerr(got, want))


def test_forward_noncontiguous_heads():
    """q, k, v as (Z, N, H, D) buffers viewed as (Z, H, N, D): strided heads, as a model's
    projections give them."""
    z, n, h, d = 2, 777, 4, 64
    g = torch.Generator(device="cuda").manual_seed(3)
    q, k, v = (torch.randn(z, n, h, d, device="cuda", generator=g).half().transpose(1, 2)
               for _ in range(3))
    o, lse = A.attention_forward(q, k, v, True, 0.125)
    ro, rlse, *_ = reference(q, k, v, torch.zeros_like(q), True, 0.125)
    assert maxerr(o, ro) < 1e-2 and maxerr(lse, rlse) < 1e-3


def every_forward_config(z, h, n, d, causal, even_n):
    """(config, compiled kernel) of each forward config that fits d, run untuned on the same
    inputs (the autotuner times them all), its outputs checked against the reference."""
    q, k, v, do = inputs(z, h, h, n, d, torch.float16)
    ro, rlse, *_ = reference(q, k, v, do, causal, 0.125)
    for cfg in A.FWD_CONFIGS:
        if not A.fwd_config_fits(cfg, d):
            continue
        o = torch.empty_like(q)
        lse = torch.empty(z, h, n, device="cuda")
        st = [q.stride(i) for i in range(3)]
        ck = A.attn_fwd_kernel[(A.cdiv(n, cfg.kwargs["BLOCK_M"]), z * h)](
            q, k, v, o, lse, 0.125, *st, *st, *st, *st, h, 1, n, HEAD_DIM=d, CAUSAL=causal,
            EVEN_N=even_n, num_warps=cfg.num_warps, num_stages=cfg.num_stages, **cfg.kwargs)
        assert maxerr(o, ro) < 1e-2, cfg
        assert maxerr(lse, rlse) < 1e-3, cfg
        yield cfg, ck


@pytest.mark.parametrize("causal", [False, True])
def test_every_forward_config(causal):
    """Each autotune config, run untuned on the same inputs."""
    for _ in every_forward_config(1, 2, 1000, 64, causal, even_n=False):
        pass


@pytest.mark.parametrize("d", [64, 128])
def test_every_backward_config(d):
    z, h, n = 1, 2, 1000
    q, k, v, do = inputs(z, h, h, n, d, torch.float16, seed=2)
    o, lse = A.attention_forward(q, k, v, True, 0.1)
    _, _, rdq, rdk, rdv = reference(q, k, v, do, True, 0.1)
    for c1 in A.prune_bwd(A.DKDV_CONFIGS, {"HEAD_DIM": d}):
        for c2 in A.prune_bwd(A.DQ_CONFIGS, {"HEAD_DIM": d}):
            blocks = (c1.kwargs["BLOCK_M"], c1.kwargs["BLOCK_N"], c2.kwargs["BLOCK_M"],
                      c2.kwargs["BLOCK_N"])
            dq, dk, dv = A.attention_backward(q, k, v, o, do, lse, True, 0.1, blocks=blocks)
            for name, got, want in (("dq", dq, rdq), ("dk", dk, rdk), ("dv", dv, rdv)):
                assert maxerr(got, want) < 2e-2, (blocks, name, maxerr(got, want))
