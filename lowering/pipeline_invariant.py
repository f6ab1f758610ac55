"""Part of `tilegpu-pipeline` (NVIDIA sm_80+, before the loops are pipelined): a loop-invariant
16-bit tile converted in a loop to a dot operand through shared memory (mma.sync's A or B,
read by ldmatrix) is written once, before the outermost loop it is invariant in, into a buffer
in the swizzle the conversion would use, and each conversion becomes a `local_load` of it:

    %x = ...                               %x = ...
    scf.for {                              %buf = local_alloc %x : swizzled_shared
      %a = convert_layout %x : A     ->    scf.for {
      tile.dot %a, ...                       %a = local_load %buf : A
    }                                        tile.dot %a, ...
                                           }
                                           local_dealloc %buf

The attention backward's k and v (dK/dV on mma.sync: the key block's operands in every query
loop) and the forward's q on sm_80 were stored to scratch, synchronized and read back in every
iteration, and their registers stayed live across the loops; now the loop only reads (no
stores, one barrier fewer per conversion) and the registers die at the write.  Conversions of
one value to one layout share the buffer.  The buffers' bytes are returned, for the
pipeliner's shared-memory budget.

Off by default (`ENABLED`) until timed on a GPU (`benchmarks/tools/ab_attention.py --on
invariant-operands`): dK/dV D=128 (32 x 32, mma.sync) on sm_90a goes from 250 to 242
registers and 22 to 14 barriers for 10 KiB more shared memory, but the 32 x 32 dK/dV config
at D=64 causal (not the default there) gets 4 bytes of ptxas spills and some sm_80 dQ configs
a few more registers."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T
from tilework.dialects.layout import layout_of
from tilework.dialects.layout_nvidia import SwizzledShared

from .pipeline_common import enclosing_loop, invariant_in, next_op, outermost_invariant
from .rules.layout import conversion_plan, ldmatrix_plan
from .shared_memory import buffer_bytes

ENABLED = False


def _feeds_dot(v) -> bool:
    uses = list(v.uses)
    return bool(uses) and all(u.owner.name == "tile.dot" and u.operand_number in (0, 1)
                              for u in uses)


def _buffer_type(conv):
    """The memdesc type of the buffer replacing `conv` (an ldmatrix-read swizzle), or None."""
    x, rt = conv.operands[0], conv.results[0].type
    shape, elem = tuple(T.shape_of(rt)), T.element_type(rt)
    if len(shape) != 2 or str(elem) not in ("f16", "bf16"):
        return None
    src, dst = layout_of(x.type), layout_of(rt)
    plan = conversion_plan(src, dst, shape, elem)
    if plan is None or plan.kind != "shared" or \
            ldmatrix_plan(dst.linear(shape), plan.swizzle, 2) is None:
        return None
    sw = plan.swizzle
    lay = SwizzledShared(sw.vec, sw.per_phase, sw.max_phase, tuple(sw.order)).text()
    return T.memdesc_type(list(shape), elem, lay, 1)


def hoist_invariant_operands(f) -> int:
    """Rewrites the kernel `f`'s invariant operand conversions (see above); -> the bytes of
    the buffers made."""
    if not ENABLED:
        return 0
    made, total = {}, 0
    for conv in [op for op in T.walk_ops(f) if op.name == "tilegpu.convert_layout"]:
        loop = enclosing_loop(conv)
        x = conv.operands[0]
        if loop is None or not invariant_in(x, loop) or not _feeds_dot(conv.results[0]):
            continue
        mt = _buffer_type(conv)
        if mt is None:
            continue
        outer = outermost_invariant(loop, x)
        key = (x, str(mt), outer)
        if key not in made:
            after = next_op(outer)
            with ir.InsertionPoint(outer), outer.location:
                made[key] = B.build_local_alloc(None, x, result_type=mt)
            with ir.InsertionPoint(after), outer.location:
                B.build_local_dealloc(None, made[key])
            total += buffer_bytes(T.memdesc_of(mt))
        with ir.InsertionPoint(conv), conv.location:
            val = B.build_local_load(None, made[key], result_type=conv.results[0].type)
        conv.results[0].replace_all_uses_with(val)
        conv.erase()
    return total
