"""Warp specialization (NVIDIA sm_90a; lowering/warp_specialize.py): the ops that split a
kernel's warps into a producer warp group, which issues the TMA copies of a loop, and the
consumer warp groups (the kernel's num_warps), which run the loop's dots and the rest.

`tilegpu.warp_group_id` is the warp group (128 threads) the thread belongs to; the pass
branches on it with an `scf.if` marked `tilegpu.warp_specialize` (then: the producer, else:
the consumers).  `tilegpu.setmaxnreg` hands registers between the groups
(`setmaxnreg.{inc,dec}.sync.aligned.u32`: every thread of a warp group executes it): the
producer gives its own back (`dec`), the consumers take them (`inc`).  The slots' release
is `tilegpu.mbarrier_arrive` (dialects/opdefs/tma.py)."""
from __future__ import annotations

import mlir.ir as ir

from .base import EFFECT, INT, PURE, STRING, Attr, is_type, result
from .tilegpu import TILEGPU

MIN_REGS, MAX_REGS = 24, 256  # setmaxnreg's range (multiples of 8)


def _setmaxnreg(op):
    n = ir.IntegerAttr(op.attributes["count"]).value
    if not (MIN_REGS <= n <= MAX_REGS and n % 8 == 0):
        return f"setmaxnreg count must be a multiple of 8 in {MIN_REGS}..{MAX_REGS}, got {n}"


TILEGPU.op("warp_group_id", "the warp group (4 warps, 128 threads) of the thread",
           results=[result("result", is_type("i32"))], traits={PURE}, interp=None,
           unsupported={"amd": "warp groups are NVIDIA's (sm_90+)"})
TILEGPU.op("setmaxnreg", "every thread of the warp group sets its register count to `count` "
                         "(`inc`: takes registers freed by another group's `dec`)",
           attrs=[Attr("count", INT), Attr("mode", STRING, choices=("inc", "dec"))],
           traits={EFFECT}, verify=_setmaxnreg, interp=None,
           unsupported={"amd": "setmaxnreg is NVIDIA's (sm_90a)"})
