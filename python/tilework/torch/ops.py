"""The custom ops (`torch.ops.tilework.*`): forward and backward of softmax, LayerNorm/RMSNorm,
the fused linear layer, and attention, each a `torch.library.custom_op` with a fake (meta)
implementation, the forward ones with `register_autograd`, so `torch.compile(fullgraph=True)`
traces them as single nodes and autograd differentiates them.

On CUDA tensors the example launchers run (`examples/*.py`); on CPU tensors the same kernels
run in the interpreter (`launch.py`), small sizes only.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from . import kernels as K
from .examples import load
from .launch import launch, on_cpu

ACTIVATIONS = ("gelu", "gelu_tanh", "silu", "none")


def next_pow2(n: int) -> int:
    return 1 << (max(1, n) - 1).bit_length()


def rows_of(x: Tensor) -> Tensor:
    """x as [rows, last dim] with unit stride along the last dim (a view where it can be)."""
    return x.reshape(-1, x.shape[-1]) if x.dim() != 2 else x


def unit_last(x: Tensor) -> Tensor:
    return x if x.stride(-1) == 1 else x.contiguous()


# ------------------------------------------------------------------------------------------
# softmax

ONLINE_ABOVE = 32768  # columns: longer rows stream in chunks (examples/softmax.py)


@torch.library.custom_op("tilework::softmax", mutates_args=())
def softmax_op(x: Tensor) -> Tensor:
    S = load("softmax")
    x2 = unit_last(rows_of(x))
    n_rows, n_cols = x2.shape
    out = torch.empty((n_rows, n_cols), device=x.device, dtype=x.dtype)
    if n_rows and n_cols:
        if not on_cpu(x2):
            S.softmax(x2, out, online_above=ONLINE_ABOVE)
        elif n_cols > ONLINE_ABOVE:
            launch(S.softmax_online_kernel, (n_rows,), out, x2, x2.stride(0), out.stride(0),
                   n_cols, BLOCK_N=4096)
        else:
            block_n, rows, warps = S.config(n_cols, x2.element_size())
            launch(S.softmax_kernel, ((n_rows + rows - 1) // rows,), out, x2, x2.stride(0),
                   out.stride(0), n_rows, n_cols, BLOCK_N=block_n, ROWS=rows, num_warps=warps)
    return out.reshape(x.shape)


@softmax_op.register_fake
def _(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("tilework::softmax_backward", mutates_args=())
def softmax_backward_op(y: Tensor, dy: Tensor) -> Tensor:
    y2 = rows_of(y).contiguous()
    dy2 = rows_of(dy).to(y.dtype).contiguous()
    n_rows, n_cols = y2.shape
    dx = torch.empty_like(y2)
    if n_rows and n_cols:
        if n_cols > ONLINE_ABOVE:
            launch(K.softmax_bwd_online_kernel, (n_rows,), dx, dy2, y2, n_cols, n_cols,
                   BLOCK_N=4096, num_warps=8)
        else:
            block_n = next_pow2(n_cols)
            rows = max(1, min(32, 4096 // block_n))
            launch(K.softmax_bwd_kernel, ((n_rows + rows - 1) // rows,), dx, dy2, y2, n_cols,
                   n_rows, n_cols, BLOCK_N=block_n, ROWS=rows,
                   num_warps=8 if block_n <= 8192 else 16)
    return dx.reshape(y.shape)


@softmax_backward_op.register_fake
def _(y, dy):
    return torch.empty_like(y, memory_format=torch.contiguous_format)


def _softmax_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _softmax_bwd(ctx, dy):
    (y,) = ctx.saved_tensors
    return softmax_backward_op(y, dy)


softmax_op.register_autograd(_softmax_bwd, setup_context=_softmax_setup)


# ------------------------------------------------------------------------------------------
# LayerNorm and RMSNorm

@torch.library.custom_op("tilework::layer_norm", mutates_args=())
def layer_norm_op(x: Tensor, weight: Tensor, bias: Optional[Tensor], eps: float,
                  rms: bool) -> tuple[Tensor, Tensor, Tensor]:
    """-> (y, mean, rstd); mean is zeros for RMSNorm.  Normalizes the last dimension."""
    L = load("layernorm")
    x2 = unit_last(rows_of(x))
    n_rows, n_cols = x2.shape
    weight = weight.contiguous()
    bias = bias.contiguous() if bias is not None else None
    if bias is None and not rms:  # the kernel adds b_ptr's row whenever RMS is off
        bias = torch.zeros_like(weight)
    if not on_cpu(x2) and n_rows:
        y, mean, rstd = L.layer_norm(x2, weight, bias, eps, rms=rms)
        if rms:
            mean = torch.zeros_like(rstd)
        return y.reshape(x.shape), mean, rstd
    y = torch.empty((n_rows, n_cols), device=x.device, dtype=x.dtype)
    mean = torch.zeros(n_rows, device=x.device, dtype=torch.float32)
    rstd = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    if n_rows:
        block_n, rows, warps = L.fwd_config(n_cols, x2.element_size())
        launch(L.layernorm_fwd, ((n_rows + rows - 1) // rows,), x2, y, weight,
               bias if bias is not None else weight, mean, rstd, x2.stride(0), n_rows, n_cols,
               eps, BLOCK_N=block_n, ROWS=rows, RMS=rms, num_warps=warps)
    return y.reshape(x.shape), mean, rstd


@layer_norm_op.register_fake
def _(x, weight, bias, eps, rms):
    n_rows = x.numel() // x.shape[-1] if x.shape[-1] else 0
    stats = x.new_empty((n_rows,), dtype=torch.float32)
    return (torch.empty_like(x, memory_format=torch.contiguous_format), stats,
            torch.empty_like(stats))


@torch.library.custom_op("tilework::layer_norm_backward", mutates_args=())
def layer_norm_backward_op(dy: Tensor, x: Tensor, weight: Tensor, mean: Tensor, rstd: Tensor,
                           rms: bool) -> tuple[Tensor, Tensor, Tensor]:
    """-> (dx, dweight, dbias); dbias is empty for RMSNorm."""
    L = load("layernorm")
    x2 = rows_of(x).contiguous()
    dy2 = rows_of(dy).to(x.dtype).contiguous()
    weight = weight.contiguous()
    n_rows, n_cols = x2.shape
    if n_rows == 0:
        db = torch.zeros_like(weight) if not rms else weight.new_empty((0,))
        return torch.empty_like(x), torch.zeros_like(weight), db
    n_progs = min(n_rows, 4) if on_cpu(x2) else None
    if not on_cpu(x2):
        dx, dw, db = L.layer_norm_bwd(dy2, x2, weight, mean, rstd, rms=rms, n_progs=n_progs)
    else:
        block_n = next_pow2(n_cols)
        rows = max(1, min(8, 4096 // block_n))
        per = (n_rows + n_progs - 1) // n_progs
        per = (per + rows - 1) // rows * rows
        n_progs = (n_rows + per - 1) // per
        dx = torch.empty_like(x2)
        dw_part = torch.empty(n_progs, n_cols, device=x.device, dtype=torch.float32)
        db_part = torch.empty(n_progs, n_cols, device=x.device, dtype=torch.float32)
        launch(L.layernorm_bwd, (n_progs,), dy2, x2, weight, mean, rstd, dx, dw_part, db_part,
               x2.stride(0), n_rows, n_cols, per, BLOCK_N=block_n, ROWS=rows, RMS=rms)
        dw = torch.empty(n_cols, device=x.device, dtype=weight.dtype)
        grid = ((n_cols + 31) // 32,)
        launch(L.column_sum, grid, dw_part, dw, n_progs, n_cols, BLOCK_P=64, BLOCK_N=32)
        db = None
        if not rms:
            db = torch.empty(n_cols, device=x.device, dtype=weight.dtype)
            launch(L.column_sum, grid, db_part, db, n_progs, n_cols, BLOCK_P=64, BLOCK_N=32)
    if db is None:
        db = weight.new_empty((0,))
    return dx.reshape(x.shape), dw, db


@layer_norm_backward_op.register_fake
def _(dy, x, weight, mean, rstd, rms):
    return (torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight),
            weight.new_empty((0,)) if rms else torch.empty_like(weight))


def _layer_norm_setup(ctx, inputs, output):
    x, weight, bias, eps, rms = inputs
    _, mean, rstd = output
    ctx.save_for_backward(x, weight, mean, rstd)
    ctx.rms = rms
    ctx.has_bias = bias is not None
    ctx.mark_non_differentiable(mean, rstd)


def _layer_norm_bwd(ctx, dy, dmean, drstd):
    x, weight, mean, rstd = ctx.saved_tensors
    dx, dw, db = layer_norm_backward_op(dy, x, weight, mean, rstd, ctx.rms)
    return dx, dw, (db if ctx.has_bias else None), None, None


layer_norm_op.register_autograd(_layer_norm_bwd, setup_context=_layer_norm_setup)


# ------------------------------------------------------------------------------------------
# linear + activation: y = act(x @ weight.T + bias), weight [N, K] as nn.Linear's

def _check_activation(activation: str):
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, "
                         f"got {activation!r}")


def matmul_act(x: Tensor, w: Tensor, bias: Optional[Tensor], activation: str) -> Tensor:
    """act(x [M, K] @ w [K, N] + bias) with the example's kernel (w may be a transposed
    view: the kernel takes strides)."""
    A = load("linear_activation")
    M, Kd = x.shape
    N = w.shape[1]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M == 0 or N == 0:
        return y
    if Kd == 0:
        return y.zero_()  # (not reached from the ops: they check K > 0)
    args = (x, w, bias, y, M, N, Kd, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
            y.stride(0), y.stride(1))
    if on_cpu(x):
        c = K.INTERPRETER_CONFIG
        grid = (((M + c["BLOCK_M"] - 1) // c["BLOCK_M"]) * ((N + c["BLOCK_N"] - 1) // c["BLOCK_N"]),)
        launch(A.linear_kernel, grid, *args, HAS_BIAS=bias is not None, ACTIVATION=activation,
               **c)
    else:
        A.linear_kernel[A.grid](*args, HAS_BIAS=bias is not None, ACTIVATION=activation)
    return y


def _linear_check(x, weight, bias, activation):
    _check_activation(activation)
    if x.shape[-1] != weight.shape[1] or weight.dim() != 2:
        raise ValueError(f"linear: x [..., {x.shape[-1]}] and weight {list(weight.shape)} "
                         f"(weight is [out_features, in_features])")
    if x.shape[-1] == 0:
        raise ValueError("linear: in_features must be positive")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"linear: bias {list(bias.shape)} for {weight.shape[0]} outputs")


@torch.library.custom_op("tilework::linear", mutates_args=())
def linear_op(x: Tensor, weight: Tensor, bias: Optional[Tensor], activation: str) -> Tensor:
    _linear_check(x, weight, bias, activation)
    y = matmul_act(rows_of(x), weight.t(), bias, activation)
    return y.reshape(*x.shape[:-1], weight.shape[0])


@linear_op.register_fake
def _(x, weight, bias, activation):
    _linear_check(x, weight, bias, activation)
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


@torch.library.custom_op("tilework::linear_backward", mutates_args=())
def linear_backward_op(dy: Tensor, x: Tensor, weight: Tensor, bias: Optional[Tensor],
                       activation: str) -> tuple[Tensor, Tensor, Tensor]:
    """-> (dx, dweight, dbias); dbias is empty without a bias.  dz = dy * act'(z) comes from
    the GEMM recomputed (linear_act_grad_kernel); dx = dz @ weight and dweight = dz.T @ x are
    the forward kernel with no activation on strided views; dbias sums dz's columns."""
    L = load("layernorm")
    x2 = rows_of(x)
    M, Kd = x2.shape
    N = weight.shape[0]
    dy2 = rows_of(dy).to(x.dtype).contiguous()
    dz = torch.empty((M, N), device=x.device, dtype=x.dtype)
    if M:
        wt = weight.t()
        args = (x2, wt, bias, dy2, dz, M, N, Kd, x2.stride(0), x2.stride(1), wt.stride(0),
                wt.stride(1), dz.stride(0), dz.stride(1))
        if on_cpu(x2):
            c = K.INTERPRETER_CONFIG
            grid = (((M + c["BLOCK_M"] - 1) // c["BLOCK_M"]) *
                    ((N + c["BLOCK_N"] - 1) // c["BLOCK_N"]),)
            launch(K.linear_act_grad_kernel, grid, *args, HAS_BIAS=bias is not None,
                   ACTIVATION=activation, **c)
        else:
            def grid(meta):
                return ((M + meta["BLOCK_M"] - 1) // meta["BLOCK_M"] *
                        ((N + meta["BLOCK_N"] - 1) // meta["BLOCK_N"]),)
            K.linear_act_grad_kernel[grid](*args, HAS_BIAS=bias is not None,
                                           ACTIVATION=activation)
    dx = matmul_act(dz, weight.to(x.dtype), None, "none")   # [M, N] @ [N, K]
    dw = matmul_act(dz.t(), x2, None, "none")               # [N, M] @ [M, K]
    if bias is None:
        db = weight.new_empty((0,))
    elif M == 0:
        db = torch.zeros_like(bias)
    else:
        db = torch.empty(N, device=x.device, dtype=bias.dtype)
        launch(L.column_sum, ((N + 31) // 32,), dz, db, M, N, BLOCK_P=64, BLOCK_N=32)
    return dx.reshape(x.shape), dw.to(weight.dtype), db


@linear_backward_op.register_fake
def _(dy, x, weight, bias, activation):
    return (torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight),
            torch.empty_like(bias) if bias is not None else weight.new_empty((0,)))


def _linear_setup(ctx, inputs, output):
    x, weight, bias, activation = inputs
    ctx.save_for_backward(x, weight, bias)
    ctx.activation = activation


def _linear_bwd(ctx, dy):
    x, weight, bias = ctx.saved_tensors
    dx, dw, db = linear_backward_op(dy, x, weight, bias, ctx.activation)
    return dx, dw, (db if bias is not None else None), None


linear_op.register_autograd(_linear_bwd, setup_context=_linear_setup)


# ------------------------------------------------------------------------------------------
# attention: examples/attention.py's attention_forward / attention_backward (imported lazily)

def attention_module():
    """The module giving `attention_forward(q, k, v, causal, sm_scale) -> (o, lse)` and
    `attention_backward(q, k, v, o, do, lse, causal, sm_scale) -> (dq, dk, dv)` (tests swap
    in a stub)."""
    return load("attention")


def _attention_check(q, k, v):
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("attention: q, k and v are [batch, heads, seq, head_dim]")
    if k.shape != v.shape or k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3] or \
            q.shape[1] % k.shape[1]:
        raise ValueError(f"attention: q {list(q.shape)}, k {list(k.shape)}, v {list(v.shape)} "
                         f"do not match (k and v alike; q's heads a multiple of k's)")


@torch.library.custom_op("tilework::attention", mutates_args=())
def attention_op(q: Tensor, k: Tensor, v: Tensor, causal: bool,
                 sm_scale: float) -> tuple[Tensor, Tensor]:
    """-> (o like q, lse float32 [batch, heads, seq])."""
    _attention_check(q, k, v)
    o, lse = attention_module().attention_forward(q, k, v, causal, sm_scale)
    return o, lse


@attention_op.register_fake
def _(q, k, v, causal, sm_scale):
    _attention_check(q, k, v)
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            q.new_empty(q.shape[:3], dtype=torch.float32))


@torch.library.custom_op("tilework::attention_backward", mutates_args=())
def attention_backward_op(q: Tensor, k: Tensor, v: Tensor, o: Tensor, do: Tensor, lse: Tensor,
                          causal: bool, sm_scale: float) -> tuple[Tensor, Tensor, Tensor]:
    dq, dk, dv = attention_module().attention_backward(q, k, v, o, do.contiguous(), lse,
                                                       causal, sm_scale)
    return dq, dk, dv


@attention_backward_op.register_fake
def _(q, k, v, o, do, lse, causal, sm_scale):
    return tuple(torch.empty_like(t, memory_format=torch.contiguous_format) for t in (q, k, v))


def _attention_setup(ctx, inputs, output):
    q, k, v, causal, sm_scale = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse)
    ctx.causal, ctx.sm_scale = causal, sm_scale
    ctx.mark_non_differentiable(lse)


def _attention_bwd(ctx, do, dlse):
    q, k, v, o, lse = ctx.saved_tensors
    dq, dk, dv = attention_backward_op(q, k, v, o, do, lse, ctx.causal, ctx.sm_scale)
    return dq, dk, dv, None, None


attention_op.register_autograd(_attention_bwd, setup_context=_attention_setup)
