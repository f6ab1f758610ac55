"""Linear algebra (`dot`) and `softmax`, as in `triton.language`."""
from .core import builtin, float32

__all__ = ["dot", "softmax"]


@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=float32):
    """The matrix product `input @ other` (+ `acc`) of two 2-D tiles `[M, K] x [K, N]`, or of
    two 3-D tiles `[B, M, K] x [B, K, N]` (batched), as Triton's `tl.dot`.

    Inputs: fp16, bf16, fp32, fp64, int8 (accumulated in int32) or fp8 (any two fp8 kinds); both
    of one dtype.  The result is fp32 for fp32/bf16 inputs, fp64 for fp64, int32 for int8, and
    `out_dtype` (fp32 or fp16) for fp16/fp8.  `acc`, when given, must have the result's shape
    and the dtype `out_dtype`.  `input_precision` ("tf32" by default, "tf32x3", "ieee",
    "bf16x3", "bf16x6"; or the deprecated `allow_tf32`) is accepted; the portable (FMA) path
    multiplies and accumulates in fp32 (fp64 for fp64, int32 for int8) whatever it says."""


@builtin
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """`exp(x - max(x, dim)) / sum(exp(...), dim)` along `dim` (0 by default, as in Triton; the
    last and only axis of a 1-D tile), from `tl.max`, `tl.exp`, `tl.sum` and `tl.fdiv`.  As in
    Triton, fp16/bf16 inputs compute and return fp32 (the maximum is taken in fp32)."""
