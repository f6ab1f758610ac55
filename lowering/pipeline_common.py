"""What the three software pipeliners share (`pipeline.py`: cp.async, `pipeline_amd.py`: AMD's
stream pipelining, `pipeline_tma.py`: TMA rings): the loop attributes, finding the loops and
the kernel's scratch, a loop's depth, small op builders, and the asynchronous wgmma checks."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T

from .module_info import kernels
from .shared_memory import buffer_bytes, scratch_bytes

STAGES_ATTR = "tile.num_stages"
NOTE_ATTR = "tilegpu.pipeline_note"


def loops(op):
    """The scf.for ops nested in `op`, innermost first."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                yield from loops(inner)
                if inner.name == "scf.for":
                    yield inner


def enclosing_loop(op):
    """The innermost scf.for around `op` (within the function), else None."""
    p = op.parent
    while p is not None and p.name != "func.func":
        if p.name == "scf.for":
            return p
        p = p.parent
    return None


def inside(op, loop) -> bool:
    """Whether `op` is `loop` or nested in it (within the function)."""
    while op is not None and op.name != "func.func":
        if op == loop:
            return True
        op = op.parent
    return False


def invariant_in(v, loop) -> bool:
    """Whether value `v` is defined outside `loop`."""
    owner = v.owner.owner if isinstance(v.owner, ir.Block) else v.owner
    return not inside(owner, loop)


def outermost_invariant(loop, v, kinds=("scf.for",)):
    """The outermost loop around (and including) `loop` in which `v` is invariant, going out
    through directly nested loops of `kinds` only."""
    p = loop.parent
    while p is not None and p.name in kinds and invariant_in(v, p):
        loop, p = p, p.parent
    return loop


def reserve_bytes(op) -> int:
    """Shared bytes needed beside a loop's pipeline buffers: the largest scratch of the ops in
    it.  The buffers live from just before the loop to just after it (tilegpu-allocate-shared
    places by liveness), so the scratch of an op before or after it (a GEMM's epilogue
    conversion) takes the same bytes."""
    return max([scratch_bytes(o) for o in T.walk_ops(op)] + [0])


def kernel_loops(module_op):
    """(kernel, the loop's reserve_bytes, loop) for each scf.for of each kernel, innermost
    first (the loops listed before any is rewritten)."""
    for f in kernels(module_op):
        for loop in list(loops(f)):
            yield f, reserve_bytes(loop), loop


def loop_depth(loop, pctx, default: int) -> int:
    """The loop's `tile.num_stages`, else the `num_stages` option (`default` without one)."""
    if STAGES_ATTR in loop.attributes:
        return ir.IntegerAttr(loop.attributes[STAGES_ATTR]).value
    return pctx.options.num_stages if pctx else default


def stage_bytes(loads, layouts) -> int:
    """Shared bytes of one stage: a buffer per load, in its layout."""
    return sum(buffer_bytes(T.MemDesc(T.shape_of(load.results[0].type),
                                      T.element_type(load.results[0].type), lay, 1))
               for load, lay in zip(loads, layouts))


def next_op(op):
    """The op after `op` in its block."""
    op = getattr(op, "operation", op)
    found = False
    for o in op.block.operations:
        if found:
            return o.operation
        if o.operation == op:
            found = True
    raise ValueError("an scf.for is its block's last op")


def arith(name, a, b, t=None):
    return ir.Operation.create(name, results=[t or a.type], operands=[a, b]).results[0]


def int_const(t, v: int):
    """An integer (scalar) `arith.constant` of type `t`."""
    return ir.Operation.create("arith.constant", results=[t],
                               attributes={"value": ir.IntegerAttr.get(t, v)}).results[0]


CMPI = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5}  # arith.cmpi's predicates


def cmpi(pred: str, a, b):
    return ir.Operation.create("arith.cmpi", results=[ir.IntegerType.get_signless(1)],
                               operands=[a, b],
                               attributes={"predicate": ir.IntegerAttr.get(
                                   ir.IntegerType.get_signless(64), CMPI[pred])}).results[0]


def cmp_lt(a, b):
    return cmpi("slt", a, b)


def clone_slice(ops, env):
    """Clones `ops` at the insertion point with operands mapped through `env` (updated)."""
    for op in ops:
        new = op.clone()
        for i, x in enumerate(op.operands):
            if x in env:
                new.operands[i] = env[x]
        for a, b in zip(op.results, new.results):
            env[a] = b


def in_flight_acc(dot, carried, yield_op):
    """The carried index of `dot`'s accumulator if the dot can stay in flight across
    iterations (an f32/i32 accumulator carried for it alone, its result yielded in the same
    place, no fp8 partial accumulation the rule adds after the wait), else None."""
    acc = dot.operands[2]
    if acc not in carried or len(list(acc.uses)) != 1:
        return None
    c = carried.index(acc)
    uses = list(dot.results[0].uses)
    if len(uses) != 1 or uses[0].owner != yield_op or uses[0].operand_number != c:
        return None
    ec = str(T.element_type(dot.results[0].type))
    md = T.memdesc_of(dot.operands[0].type)
    mnia = ir.IntegerAttr(dot.attributes["max_num_imprecise_acc"]).value
    if ec not in ("f32", "i32") or (str(md.elem).startswith("f8") and 0 < mnia < md.shape[1]):
        return None  # the rule converts or adds after the wait
    return c


def wait_result(r):
    """`warpgroup_wait {num = 0}` on the loop result `r` at the insertion point, its users
    reading the waited value (the last wgmma reads its slots until done)."""
    users = [(u.owner, u.operand_number) for u in r.uses]
    done = B.build_warpgroup_wait(None, r, num=0, result_type=r.type)
    for owner, i in users:
        owner.operands[i] = done
