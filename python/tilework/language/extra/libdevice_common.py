"""The working-precision helpers the libdevice modules share: an fp32 (or narrower) argument
is computed in fp64 and rounded once at the end.  The modules import these under their
private names (`from .libdevice_common import wide as _wide`)."""
from ..core import float32, float64, static_assert
from ..function import jit


@jit
def check_float(x, msg):
    """Fails compilation with `msg` unless x is fp32 or fp64."""
    static_assert(x.dtype == float32 or x.dtype == float64, msg)


@jit
def wide(x):
    """x in fp64."""
    if x.dtype == float64:
        return x
    return x.to(float64)


@jit
def narrow(r, x):
    """r (fp64) rounded to x's dtype."""
    if x.dtype == float64:
        return r
    return r.to(x.dtype)
