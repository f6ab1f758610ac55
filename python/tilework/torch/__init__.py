"""PyTorch integration: tilework kernels as `torch.library` custom ops with autograd.

    import tilework.torch as twt
    y = twt.softmax(x)                                  # last dimension
    y = twt.layer_norm(x, weight, bias, eps=1e-5)       # last dimension
    y = twt.rms_norm(x, weight, eps=1e-6)
    y = twt.linear(x, weight, bias, activation="gelu")  # weight [out, in], as nn.Linear's
    o = twt.attention(q, k, v, causal=True)             # [batch, heads, seq, head_dim]

Each is an op of the `tilework` namespace (`torch.ops.tilework.softmax`, ...) with a fake
implementation and a registered backward (itself an op: `softmax_backward`, ...), so
`torch.compile(fullgraph=True)` keeps them in one graph and autograd differentiates them.
CUDA tensors run the compiled kernels; CPU tensors run them in the interpreter (slow: tests).

This package imports torch; `import tilework` does not import it (install torch yourself, or
`pip install 'tilework[torch]'`).  The kernels are the examples' (`examples/softmax.py`,
`layernorm.py`, `linear_activation.py`, `attention.py`: see `tilework.torch.examples` for how
they are found) plus the backward kernels in `tilework.torch.kernels`.
"""
from __future__ import annotations

import math

_OPS = ("ACTIVATIONS", "attention_backward_op", "attention_op", "layer_norm_backward_op",
        "layer_norm_op", "linear_backward_op", "linear_op", "softmax_backward_op", "softmax_op")


def __getattr__(name):
    """The ops (and torch) load on first use, so `tilework.torch.kernels` imports without
    torch (the kernels are plain tilework)."""
    if name in _OPS:
        from . import ops
        return getattr(ops, name)
    raise AttributeError(f"module 'tilework.torch' has no attribute {name!r}")

__all__ = ["softmax", "layer_norm", "rms_norm", "linear", "attention"]


def softmax(x, dim: int = -1):
    """Softmax over `dim` (the kernels work on the last dimension; another is moved there)."""
    from .ops import softmax_op
    if dim in (-1, x.dim() - 1):
        return softmax_op(x)
    return softmax_op(x.transpose(dim, -1)).transpose(dim, -1)


def layer_norm(x, weight, bias=None, eps: float = 1e-5):
    """LayerNorm over the last dimension (weight and bias of its size)."""
    from .ops import layer_norm_op
    return layer_norm_op(x, weight, bias, float(eps), False)[0]


def rms_norm(x, weight, eps: float = 1e-6):
    """RMSNorm over the last dimension: x / sqrt(mean(x^2) + eps) * weight."""
    from .ops import layer_norm_op
    return layer_norm_op(x, weight, None, float(eps), True)[0]


def linear(x, weight, bias=None, activation: str = "none"):
    """act(x @ weight.T + bias), activation in ACTIVATIONS ("gelu" is exact, with erf)."""
    from .ops import linear_op
    return linear_op(x, weight, bias, activation)


def attention(q, k, v, causal: bool = False, sm_scale: float | None = None):
    """softmax(q k^T * sm_scale [causal mask]) v over [batch, heads, seq, head_dim]; k and v
    may have fewer heads (grouped-query).  sm_scale defaults to 1/sqrt(head_dim)."""
    from .ops import attention_op
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(q.shape[-1])
    return attention_op(q, k, v, bool(causal), float(sm_scale))[0]
