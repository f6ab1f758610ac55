"""tl builtins of the math family (stubs documented here; implementations in
tilework.frontend.ops_math).

`tl.math` is this module, so every name here is both `tl.<name>` and `tl.math.<name>`, as in
Triton (`tl.math.exp`, `tl.math.fma`, ...).  Dtypes follow Triton 3.6: the transcendental
functions take fp32 and fp64 only (an fp16/bf16 tile is rejected with Triton's message
"Expected dtype ['fp32', 'fp64'] but got fp16"; convert with `x.to(tl.float32)`).

Accuracy (max ulp against the exact result) per target is tabulated in docs/language.md;
functions marked *approximate* below trade accuracy for speed where Triton does on NVIDIA.
"""
from enum import Enum

from . import core
from .core import active_builder, builtin, constexpr

__all__ = ["PropagateNan", "umulhi", "exp", "exp2", "log", "log2", "cos", "sin", "sqrt",
           "sqrt_rn", "rsqrt", "abs", "erf", "floor", "ceil", "fma", "fdiv", "div_rn", "clamp",
           "sigmoid", "cdiv"]


class PropagateNan(Enum):
    """How `clamp` treats a NaN in `x`: NONE returns a bound, ALL returns NaN (as in Triton)."""
    NONE = 0x0000
    ALL = 0xFFFF


@builtin
def umulhi(x, y):
    """The most significant N bits of the 2N-bit product of `x` and `y` (unsigned).
    int32, int64, uint32, uint64; the operands are promoted to a common type first."""


@builtin
def exp(x):
    """Elementwise e**x (fp32, fp64).  fp32 on NVIDIA is *approximate*, exactly as in Triton:
    `ex2.approx.f32(x * log2(e))`, whose error grows with |x| (within 2.5 + 1.25 |x| ulp and
    64 at most: ~2 near 0).  fp32 on AMD and fp64 everywhere: within 1 ulp."""


@builtin
def exp2(x):
    """Elementwise 2**x (fp32, fp64).  fp32 on NVIDIA is `ex2.approx.ftz.f32`, as Triton's
    lowering: within 2.5 ulp, results below 2**-126 flushed to 0.  Elsewhere within 1."""


@builtin
def log(x):
    """Elementwise natural logarithm (fp32, fp64), within 1 ulp; log(0) = -inf,
    log(x < 0) = nan."""


@builtin
def log2(x):
    """Elementwise base-2 logarithm (fp32, fp64), within 1 ulp."""


@builtin
def cos(x):
    """Elementwise cosine (fp32, fp64), within 2 ulp, with full range reduction (Payne-Hanek;
    fp64 beyond |x| = 2**27: 2 ulp plus 2**-62 absolute)."""


@builtin
def sin(x):
    """Elementwise sine (fp32, fp64), within 2 ulp, with full range reduction (Payne-Hanek;
    fp64 beyond |x| = 2**27: 2 ulp plus 2**-62 absolute)."""


@builtin
def sqrt(x):
    """Elementwise *fast* square root (fp32, fp64).  fp32 is *approximate* as in Triton:
    `sqrt.approx.f32` on NVIDIA (within 2 ulp), `v_sqrt_f32` on AMD (1 ulp); fp64 is
    correctly rounded.  `sqrt_rn` is the correctly rounded fp32 one."""


@builtin
def sqrt_rn(x):
    """Elementwise square root rounded to nearest (IEEE), fp32 only."""


@builtin
def rsqrt(x):
    """Elementwise 1 / sqrt(x) (fp32, fp64).  fp32 is *approximate* as in Triton:
    `rsqrt.approx.f32` on NVIDIA (within 3 ulp), `v_rsq_f32` on AMD (1 ulp); fp64 is
    1 / sqrt(x) (within 2 ulp)."""


@builtin
def abs(x):
    """Elementwise absolute value: floats (fp8 too) clear the sign bit, signed ints wrap
    (abs of the minimum is the minimum), unsigned ints and bools are returned unchanged."""


@builtin
def erf(x):
    """Elementwise error function (fp32, fp64), within 2 ulp."""


@builtin
def floor(x):
    """Elementwise floor (fp32, fp64); exact."""


@builtin
def ceil(x):
    """Elementwise ceiling (fp32, fp64); exact."""


@builtin
def fma(x, y, z):
    """Elementwise fused multiply-add x * y + z with one rounding (floating point operands,
    promoted to a common type)."""


@builtin
def fdiv(x, y, ieee_rounding=False):
    """Elementwise floating-point division x / y (both operands floating; fp16/bf16 compute
    in fp32, as Triton's division does).  As in Triton 3.6 `ieee_rounding` is accepted and
    ignored: this is the division of the `/` operator, which on this compiler is IEEE
    rounded on both targets."""


@builtin
def div_rn(x, y):
    """Elementwise division x / y rounded to nearest (IEEE), fp32 only."""


@builtin
def clamp(x, min, max, propagate_nan=PropagateNan.NONE):
    """Elementwise `min(max(x, min), max)` for floating `x`.  As in Triton, bf16 operands
    compute in fp32, and Python float bounds are fp32 (`clamp(fp16 tile, 0.0, 1.0)` is fp32).  A NaN in `x` gives `min` with `PropagateNan.NONE`, NaN with
    `PropagateNan.ALL`; NaN bounds, or min > max, give an undefined result."""


@builtin
def sigmoid(x):
    """Elementwise 1 / (1 + exp(-x)) (fp32, fp64), as Triton's: `exp`'s accuracy (fp32 on
    NVIDIA within 3.5 + 1.25 |x| ulp), and 0 where exp(-x) overflows (x below about -88.7 in fp32,
    -709.8 in fp64)."""


def cdiv_host(x, div):
    x = x.value if isinstance(x, constexpr) else x
    div = div.value if isinstance(div, constexpr) else div
    return (x + div - 1) // div


def cdiv(x, div):
    """Ceiling division `(x + div - 1) // div`: on Python ints (host side or constexprs in a
    kernel) it is computed at once; on runtime integer values it computes in the promoted
    integer type with `//` (truncating, as in Triton)."""
    if not isinstance(x, core.tensor) and not isinstance(div, core.tensor):
        return cdiv_host(x, div)  # Python ints stay Python ints (host, interpreter)
    if active_builder() is None:
        raise RuntimeError("tl.cdiv on tiles can only be called inside a @tilework.jit kernel")
    b = active_builder()
    return b.impls["cdiv"](b, x, div)


cdiv.__tilework_builtin__ = "cdiv"

# tensor member functions, as Triton's @_tensor_member_fn (`x.exp()`, `x.cdiv(4)`, ...)
core.MEMBER_BUILTINS = getattr(core, "MEMBER_BUILTINS", frozenset()) | frozenset({
    "exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "sqrt_rn", "rsqrt", "abs", "erf",
    "floor", "ceil", "sigmoid", "cdiv"})
