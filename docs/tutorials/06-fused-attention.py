"""06 - Fused attention (FlashAttention forward and backward).

    O = softmax(Q K^T * sm_scale) V        (per batch and head; optionally causal)

The N x N score matrix never exists in memory.  A program owns BLOCK_M query rows and walks
K and V in BLOCK_N blocks, keeping for each row a running maximum m, a running sum l of
exp(s - m) and the unnormalized output acc (the online softmax of tutorial 02):

    s = tl.dot(q, k) * sm_scale                  # [BLOCK_M, BLOCK_N] scores, fp32
    m_new = tl.maximum(m, tl.max(s, 1))
    p = tl.exp2((s - m_new[:, None]) * log2(e))  # exp2: one MUFU instruction
    alpha = tl.exp2((m - m_new) * log2(e))
    l = l * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    m = m_new
    ...
    o = acc / l[:, None];  lse = m + log(l)      # lse kept for the backward pass

Causal attention skips the key blocks past the diagonal and masks the diagonal block.  The
backward pass recomputes P from Q, K and the saved lse: a preprocessing kernel computes
delta = rowsum(dO * O), one kernel accumulates dK and dV over query blocks, another dQ over key
blocks.  The kernels are examples/attention.py (`attention_forward`, `attention_backward`);
`tilework.torch.attention` wraps them as a custom op with autograd.  The benchmark reports
TFLOP/s (4 N^2 D per head forward, 2.5x that backward, halved when causal) against Triton
(the same source) and torch's scaled_dot_product_attention.  On an sm_90 GPU tilework's
forward is examples/attention_tma.py's descriptor (TMA) kernel, which `attention_forward`
takes there, while Triton runs the same file's pointer forward (TILEWORK_ATTENTION_TMA=0 gives
tilework the pointer forward too, for a like-for-like comparison).

    python docs/tutorials/06-fused-attention.py
"""
import math
import sys

import common
import torch
import torch.nn.functional as F

import tilework.torch as twt


def attention_module():
    try:
        import attention  # examples/attention.py
    except ImportError:
        print("06-fused-attention: examples/attention.py is not there yet: skipped")
        return None
    return attention


def reference(q, k, v, causal):
    rep = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1),
                                          v.repeat_interleave(rep, 1), is_causal=causal)


def check(dev, shape, kv_heads, dtype, tol):
    b, h, n, d = shape
    q = torch.randn(b, h, n, d, device=dev, dtype=dtype, requires_grad=True)
    k = torch.randn(b, kv_heads, n, d, device=dev, dtype=dtype, requires_grad=True)
    v = torch.randn(b, kv_heads, n, d, device=dev, dtype=dtype, requires_grad=True)
    for causal in (False, True):
        o = twt.attention(q, k, v, causal=causal)
        q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
        ref = reference(q64, k64, v64, causal)
        torch.testing.assert_close(o.double(), ref, atol=tol, rtol=tol)
        do = torch.randn_like(o)
        for g, r in zip(torch.autograd.grad(o, (q, k, v), do),
                        torch.autograd.grad(ref, (q64, k64, v64), do.double())):
            torch.testing.assert_close(g.double(), r, atol=4 * tol, rtol=tol)


def check_cpu():
    mod = attention_module()
    if mod is None:
        return False
    common.interpret(mod)
    check("cpu", (1, 2, 40, 16), 1, torch.float16, 2e-2)


def check_gpu():
    if attention_module() is None:
        return False
    check("cuda", (2, 4, 1000, 64), 2, torch.float16, 2e-2)
    check("cuda", (1, 2, 512, 128), 2, torch.bfloat16, 6e-2)


def benchmark():
    mod = attention_module()
    if mod is None:
        return
    tri = common.triton_module("attention")
    B, H, D = 4, 32, 128
    ns = [1024, 2048, 4096, 8192]
    data = {}

    def qkv(n):
        if n not in data:
            data[n] = [torch.randn(B, H, n, D, device="cuda", dtype=torch.float16,
                                   requires_grad=True) for _ in range(3)]
        return data[n]

    scale = 1 / math.sqrt(D)
    for causal in (False, True):
        c = " causal" if causal else ""
        fwd = {
            "tilework": lambda n: (lambda t=qkv(n): mod.attention_forward(*t, causal, scale)),
            "Triton": (lambda n: (lambda t=qkv(n): tri.attention_forward(*t, causal, scale)))
            if tri else None,
            "torch SDPA": lambda n: (lambda t=qkv(n): F.scaled_dot_product_attention(
                *t, is_causal=causal)),
        }
        flops = lambda ms, n: 4 * B * H * n * n * D * (0.5 if causal else 1) / ms / 1e9  # noqa
        series = common.sweep(ns, fwd, flops)
        common.plot(f"06-fused-attention-forward{c.replace(' ', '-')}",
                    f"Attention forward{c} (B={B}, H={H}, D={D}, fp16)", ns, series,
                    "sequence length", "TFLOP/s")

        def backward(make_fwd):
            def make(n):
                q, k, v = qkv(n)
                o = make_fwd(q, k, v)
                do = torch.randn_like(o)
                return lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
            return make

        def tri_bwd(n):
            q, k, v = (t.detach() for t in qkv(n))
            o, lse = tri.attention_forward(q, k, v, causal, scale)
            do = torch.randn_like(o)
            return lambda: tri.attention_backward(q, k, v, o, do, lse, causal, scale)

        bwd = {
            "tilework": backward(lambda q, k, v: twt.attention(q, k, v, causal, scale)),
            "Triton": tri_bwd if tri else None,
            "torch SDPA": backward(lambda q, k, v: F.scaled_dot_product_attention(
                q, k, v, is_causal=causal)),
        }
        series = common.sweep(ns, bwd, lambda ms, n: 2.5 * flops(ms, n))
        common.plot(f"06-fused-attention-backward{c.replace(' ', '-')}",
                    f"Attention backward{c} (B={B}, H={H}, D={D}, fp16)", ns, series,
                    "sequence length", "TFLOP/s")


if __name__ == "__main__":
    common.main(sys.modules[__name__])
