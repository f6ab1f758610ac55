"""`tilegpu.warpgroup_dot`: Hopper's warpgroup MMA (wgmma.mma_async) on operands in shared
memory.  `tilegpu-warpgroup-dot` (lowering/dot_wgmma.py) makes it from a `tile.dot` whose
result has an mma v3 layout; its rule is lowering/rules/dot_wgmma.py.

result = acc + a @ b with a [M, K] and b [K, N] one-buffer memdescs in `#tilegpu.nvmma_shared`
layouts (swizzled: 32, 64 or 128 bytes), acc and result [M, N] tiles in `#tilegpu.mma<3, ...>`.
a is K-major (not transposed); b is K-major (transposed) or N-major (not transposed), and
wgmma transposes only 16-bit operands, so tf32, fp8 and int8 b must be K-major.  a may instead
be a tile of f16/bf16 in registers (wgmma's A fragment: `#tilegpu.dot_operand<0, acc's layout,
2>`, the accumulator's own pattern over K, so a tile computed in the accumulator layout of a
dot with N = this K feeds it unchanged: FlashAttention's P).

`tilegpu.warpgroup_wait %acc {num}` makes a warpgroup_dot asynchronous (Triton's "WGMMA
pipelining"): a warpgroup_dot whose only user is a warpgroup_wait commits its wgmma group and
does not wait; the wait (`wgmma.wait_group num`: all but the `num` newest groups done) returns
the accumulator.  Its operand is that dot's result, or the result of a loop whose body yields
such a wait (the loop carries the pending accumulator into the next iteration's dot; a wait
with num 0 after the loop completes it).  Until its group is done the dot still reads its
operand buffers (tilegpu-insert-barriers counts the reads at the wait) and its accumulator
registers must not be touched."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from ..layout import DotOperand, layout_of, parse_layout
from ..layout_nvidia import NvidiaMma, NvmmaShared
from .base import EFFECT, INT, READS, STRING, Attr, any_type, operand, result, tensor
from .checks import int_attr
from .shape import DOT_PRECISIONS
from .shared import memdesc
from .tilegpu import TILEGPU

# operand element type -> accumulator types wgmma has for it
_ACC = {"f16": ("f32", "f16"), "bf16": ("f32",), "f32": ("f32",),
        "f8E4M3FN": ("f32", "f16"), "f8E5M2": ("f32", "f16"), "i8": ("i32",)}


def _operand(md, what):
    """The operand's nvmma_shared layout, or an error message."""
    if md.buffers != 1:
        return None, f"warpgroup_dot {what} is a memdesc of {md.buffers} buffers: select " \
                     f"one with memdesc_index"
    if not md.layout.startswith("#tilegpu.nvmma_shared<"):
        return None, f"warpgroup_dot {what} must be in #tilegpu.nvmma_shared, got {md.layout}"
    try:
        lay = parse_layout(md.layout)
        lay.verify(md.shape)
    except ValueError as e:
        return None, f"warpgroup_dot {what}: {e}"
    if lay.swizzle_bytes == 0:
        return None, f"warpgroup_dot {what} needs a swizzled nvmma_shared layout (32, 64 or " \
                     f"128 bytes)"
    if str(md.elem) not in _ACC:
        return None, f"warpgroup_dot {what} of {md.elem}: wgmma takes f16, bf16, f32 (tf32), " \
                     f"f8E4M3FN, f8E5M2 or i8"
    return lay, None


def _register_a(op):
    """The checks of a register a (a tile): None, or an error message."""
    at, acc_t = op.operands[0].type, op.operands[2].type
    ea = str(T.element_type(at))
    kw = {"f16": 2, "bf16": 2, "f8E4M3FN": 4, "f8E5M2": 4}.get(ea)  # (32 bits a register)
    if kw is None:
        return f"warpgroup_dot a in registers must be f16, bf16, f8E4M3FN or f8E5M2, not {ea}"
    want = DotOperand(0, layout_of(acc_t), kw)
    if layout_of(at) != want:
        return f"warpgroup_dot a in registers must be in {want.text()}, got " \
               f"{layout_of(at).text()}"
    return None


def _warpgroup_dot(op):
    acc_t = op.operands[2].type  # (the result's type: IRDL checks they are one)
    lc = layout_of(acc_t)
    if not isinstance(lc, NvidiaMma) or lc.version != 3:
        return "warpgroup_dot accumulator must have a #tilegpu.mma<3, ...> layout"
    reg_a = not T.is_memdesc(op.operands[0].type)
    if reg_a and not T.is_tensor(op.operands[0].type):
        return f"warpgroup_dot a must be a memdesc or a tile, got {op.operands[0].type}"
    if reg_a:
        err = _register_a(op)
        if err:
            return err
        ma = T.MemDesc(T.shape_of(op.operands[0].type), T.element_type(op.operands[0].type),
                       "", 1)
        la = None
    else:
        ma = T.memdesc_of(op.operands[0].type)
        la, err = _operand(ma, "a")
        if err:
            return err
    mb = T.memdesc_of(op.operands[1].type)
    lb, err = _operand(mb, "b")
    if err:
        return err
    (M, K), (K2, N) = ma.shape, mb.shape  # (2-D: nvmma_shared layouts are)
    if K != K2 or T.shape_of(acc_t) != (M, N):
        return f"warpgroup_dot shapes do not agree: {list(ma.shape)} x {list(mb.shape)} -> " \
               f"{list(T.shape_of(acc_t))}"
    ea, eb, ec = str(ma.elem), str(mb.elem), str(T.element_type(acc_t))
    if ea != eb and not (ea.startswith("f8") and eb.startswith("f8")):
        return f"warpgroup_dot operands must have one element type, got {ea} and {eb}"
    if ec not in _ACC[ea]:
        return f"warpgroup_dot of {ea} accumulates in {' or '.join(_ACC[ea])}, not {ec}"
    wm, wn = lc.warps_per_cta
    n, k = lc.instr_shape[1], lc.instr_shape[2]
    if M % (16 * wm) or N % (n * wn):
        return f"warpgroup_dot tile [{M}, {N}] is not a whole number of the layout's " \
               f"[{16 * wm}, {n * wn}] warp tiles"
    bits = _bits(ea)
    if k * bits != 256 or K % k:
        return f"warpgroup_dot instruction K {k} must be 32 bytes of {ea} and divide K {K}"
    if la is not None and la.transposed:
        return "warpgroup_dot a must be K-major (nvmma_shared not transposed)"
    if bits != 16 and not lb.transposed:
        return f"warpgroup_dot b of {eb} must be K-major (nvmma_shared transposed): wgmma " \
               f"transposes only 16-bit operands"
    mnia = int_attr(op, "max_num_imprecise_acc")
    if mnia < 0:
        return "warpgroup_dot max_num_imprecise_acc must be >= 0"
    if is_async(op):
        if ec not in ("f32", "i32"):
            return f"an asynchronous warpgroup_dot (waited by warpgroup_wait) must accumulate " \
                   f"in f32 or i32, not {ec} (converted after the wait)"
        if bits == 8 and ea.startswith("f8") and 0 < mnia < K:
            return "an asynchronous warpgroup_dot cannot split fp8 accumulation " \
                   "(max_num_imprecise_acc < K adds partial sums after the wait)"


def is_async(op) -> bool:
    """The warpgroup_dot's only user is a warpgroup_wait: it commits and does not wait."""
    users = [u.owner for u in op.results[0].uses]
    return len(users) == 1 and users[0].name == "tilegpu.warpgroup_wait"


def _bits(elem: str) -> int:
    return 16 if elem in ("f16", "bf16") else 32 if elem == "f32" else 8


_c = tensor()
TILEGPU.op("warpgroup_dot", "acc + a @ b by the warpgroups' wgmma.mma_async, with a and b in "
                            "shared memory (#tilegpu.nvmma_shared), acc in #tilegpu.mma<3>",
           operands=[operand("a", any_type()), operand("b", memdesc()), operand("acc", _c)],
           results=[result("result", _c)],
           attrs=[Attr("input_precision", STRING, DOT_PRECISIONS),
                  Attr("max_num_imprecise_acc", INT, default=0)],
           traits={READS}, verify=_warpgroup_dot, interp=None,
           unsupported={"amd": "wgmma is NVIDIA Hopper's (sm_90a)"})


def _warpgroup_wait(op):
    if int_attr(op, "num") < 0:
        return "warpgroup_wait num must be >= 0"
    v = op.operands[0]
    owner = v.owner
    if isinstance(owner, ir.Block):  # a loop's carried value (a wgmma of the last iteration)
        if owner.owner.name != "scf.for":
            return "warpgroup_wait operand must be a warpgroup_dot's result, the result of a " \
                   "loop that carries one or its carried value"
    elif owner.name not in ("tilegpu.warpgroup_dot", "scf.for"):
        return "warpgroup_wait operand must be a warpgroup_dot's result, the result of a " \
               "loop that carries one or its carried value"
    if not isinstance(owner, ir.Block) and owner.name == "tilegpu.warpgroup_dot" \
            and not is_async(owner):
        return "warpgroup_wait must be the only user of the warpgroup_dot it waits for"
    lc = layout_of(v.type)
    if not isinstance(lc, NvidiaMma) or lc.version != 3:
        return "warpgroup_wait operand must have a #tilegpu.mma<3, ...> layout"


TILEGPU.op("warpgroup_wait", "wgmma.wait_group num: the accumulator of an asynchronous "
                             "warpgroup_dot, once all but the num newest wgmma groups are done",
           operands=[operand("acc", _c)], results=[result("result", _c)],
           attrs=[Attr("num", INT)], traits={EFFECT}, verify=_warpgroup_wait, interp=None,
           unsupported={"amd": "wgmma is NVIDIA Hopper's (sm_90a)"})
