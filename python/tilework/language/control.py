"""tl builtins of the control family: the loop iterators `tl.range` and `tl.static_range`.

The code generator reads them in `for` statements (`frontend/ops_control.py`): `tl.range`
becomes an `scf.for` (like Python's `range` in a kernel), `tl.static_range` is unrolled at
compile time.  The CPU interpreter runs the kernel's Python, where both iterate like Python's
`range` over the (scalar) bounds.
"""
from __future__ import annotations

import builtins
import operator

from .core import builtin, constexpr

__all__ = ["range", "static_range", "condition"]


def _index(x) -> int:
    """A bound as a Python int: constexprs unwrap, interpreter scalars convert."""
    if isinstance(x, constexpr):
        x = x.value
    return operator.index(x)


class range:  # noqa: A001  (shadows the builtin on purpose, as triton.language.range does)
    """A runtime loop: `for i in tl.range(start, end, step, num_stages=...)`.

    Like Python's `range` inside a kernel (one argument: the end), it compiles to a real loop
    (`scf.for`) whose variable is int32, or int64 when a bound is.  The other arguments are
    compiler hints, accepted as in Triton and recorded on the loop as `tile.<name>`
    attributes (num_stages is acted on, by tilegpu-pipeline on NVIDIA sm_80+, and
    warp_specialize, by tilegpu-warp-specialize on sm_90a):

    * num_stages: software-pipeline the loop into this many stages (the loads feeding a dot;
      in a loop without dots, any load: cp.async copies issued iterations ahead, so the
      loop must not store what a later iteration loads);
    * loop_unroll_factor: unroll the loop this many times (< 2: no unrolling);
    * warp_specialize: a loop whose tensor-descriptor loads (`desc.load`, TMA) feed a dot,
      or the loop over tiles holding such a K loop (the persistent form), gets a producer
      warp group of its own that only issues the copies, num_stages ahead, while the
      kernel's num_warps run the dots (num_warps + 4 warps are launched); elsewhere it is
      ignored, as in Triton, with a note on the loop in the tilegpu IR saying why;
    * disallow_acc_multi_buffer, flatten, disable_licm: flags.
    """

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False,
                 disable_licm=False):
        if arg2 is None:
            self.start, self.end = constexpr(0), arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = constexpr(1) if step is None else step
        self.num_stages = num_stages
        self.loop_unroll_factor = loop_unroll_factor
        self.disallow_acc_multi_buffer = disallow_acc_multi_buffer
        self.flatten = flatten
        self.warp_specialize = warp_specialize
        self.disable_licm = disable_licm

    def __iter__(self):
        # only the interpreter iterates (the compiler reads the bounds)
        return iter(builtins.range(_index(self.start), _index(self.end), _index(self.step)))


class static_range:
    """A loop unrolled at compile time: `for i in tl.static_range(start, end, step)`.

    The bounds must be constexpr; the body is compiled once per value and `i` is a constexpr
    in each copy (so it can index tuples or size tiles)."""

    def __init__(self, arg1, arg2=None, step=None):
        if arg2 is None:
            self.start, self.end = constexpr(0), arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = constexpr(1) if step is None else step

    def __iter__(self):
        # (the interpreter's loop: runtime bounds refused with the compiler's message)
        bounds = [v.value if isinstance(v, constexpr) else v
                  for v in (self.start, self.end, self.step)]
        if not all(isinstance(v, int) for v in bounds):
            raise TypeError("tl.static_range bounds must be constexpr ints (use tl.range for "
                            "runtime bounds)")
        return iter(builtins.range(*bounds))


@builtin
def condition(arg1, disable_licm=False):
    """`while tl.condition(c, disable_licm=False):` is `while c:` (Triton's loop-hint wrapper).
    `disable_licm` (keep loop invariants in the loop) is accepted and ignored: no tilework pass
    reads loop hints."""
