"""Layout passes of the tilegpu stage.

* `tilegpu-assign-layouts` (tile -> tilegpu): gives every tile a layout.  Anchors (ranges,
  splats, constants, and through them loads and stores) get the coalescing layout of their
  rank; other ops derive theirs from their operands (a reduction gives a slice of its
  operand's layout, expand_dims undoes a slice, trans permutes a blocked layout).  Where an op
  needs its operands in another layout, a `tilegpu.convert_layout` is inserted.
* `tilegpu-remove-converts`: drops conversions that change nothing, folds chains, and
  rematerializes cheap producers (splats, constants, ranges) in the wanted layout instead of
  moving data through shared memory.
"""
from __future__ import annotations

import math

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import (Blocked, DotOperand, Slice, default_blocked, layout_of,
                                     with_layout)

from .axis_info import AxisAnalysis, defining_op, elem_bytes
from .dot_layouts import choose_dot_layouts
from .layout_choice import cat_in_registers, join_layout, split_layout
from . import layout_hints
from .layout_hints import CONFLICT, access_hints
from .module_info import kernels, memory_ops, module_config  # noqa: F401  (to_llvm's import)
from .pass_base import Pass, register, replace_with


def _i32(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


def choose_defaults(f, num_warps, warp_size) -> dict[int, Blocked]:
    """The coalescing layout per rank: the fastest dimension gets as many elements per thread
    as the widest contiguous access of that rank allows (16 bytes at most), and no more than a
    16-byte store of wide elements takes (`layout_hints.store_run_cap`)."""
    an = AxisAnalysis(f)
    shapes: dict[int, tuple] = {}
    for op in T.walk_ops(f):
        for v in list(op.results) + [a for r in op.regions for bl in r.blocks
                                     for a in bl.arguments]:
            s = T.shape_of(v.type)
            if s and (len(s) not in shapes or math.prod(s) > math.prod(shapes[len(s)])):
                shapes[len(s)] = s
    vec: dict[int, int] = {}
    cap: dict[int, int] = {}
    for op in memory_ops(f):
        ptr = op.operands[0]
        s = T.shape_of(ptr.type)
        if not s:
            continue
        elem = T.pointee(T.element_type(ptr.type))
        v = min(an.get(ptr).contiguity[-1], max(1, 16 // elem_bytes(elem)))
        vec[len(s)] = max(vec.get(len(s), 1), v)
        c = layout_hints.store_run_cap(an, op)
        if c is not None:
            cap[len(s)] = min(cap.get(len(s), c), c)
    vec = {r: min(v, cap.get(r, v)) for r, v in vec.items()}
    return {r: default_blocked(s, num_warps, warp_size, vec.get(r, 1)) for r, s in shapes.items()}


def _first_use(v, op) -> bool:
    """Whether `op` is, in program order, the first user of the block argument `v` (every
    other user, or the op holding it in `v`'s block, comes after `op`)."""
    block = v.owner
    mine = T.ancestor_in(op, block)
    if mine is None:
        return False
    pos = {o.operation: i for i, o in enumerate(block.operations)}
    at = pos[mine]
    for u in v.uses:
        t = T.ancestor_in(u.owner, block)
        if t is None or (t != mine and pos[t] <= at):
            return False
    return True


def _reaches(v, arg, body, depth: int) -> bool:
    """`v` is `arg` or computed from it in `body` by elementwise ops of its shape."""
    if v == arg:
        return True
    op = defining_op(v)
    if op is None or op.block != body or op.regions or len(op.results) != 1 or depth > 8 or \
            not op.name.startswith(("arith.", "math.")) or \
            T.shape_of(v.type) != T.shape_of(arg.type):
        return False
    return any(_reaches(o, arg, body, depth + 1) for o in op.operands if T.is_tensor(o.type))


class _Assigner:
    def __init__(self, f, num_warps, warp_size, target=None, options=None):
        self.defaults = choose_defaults(f, num_warps, warp_size)
        self.num_warps, self.warp_size = num_warps, warp_size
        self.target, self.options = target, options
        self.hints = access_hints(f, self.defaults, num_warps, warp_size)
        self.anchored = set()  # carried accumulators given their dot's layout (`dot_carried`)

    def hint(self, v):
        """The layout a load's address computation asks `v` to take (layout_hints), or None."""
        h = self.hints.get(v)
        return None if h is None or h is CONFLICT else h

    def default(self, shape) -> Blocked:
        r = len(shape)
        if r not in self.defaults:
            self.defaults[r] = default_blocked(shape, self.num_warps, self.warp_size, 1)
        return self.defaults[r]

    @staticmethod
    def set(v: ir.Value, layout):
        if T.is_tensor(v.type) and layout_of(v.type) != layout:
            v.set_type(with_layout(v.type, layout))

    @staticmethod
    def convert(op, i: int, layout):
        """Makes operand `i` of `op` arrive in `layout` (a conversion op before `op`)."""
        v = op.operands[i]
        if not T.is_tensor(v.type) or layout_of(v.type) == layout:
            return
        with ir.InsertionPoint(op), op.location:
            c = ir.Operation.create("tilegpu.convert_layout",
                                    results=[with_layout(v.type, layout)], operands=[v])
        op.operands[i] = c.results[0]

    def tensor_operands(self, op):
        return [i for i, v in enumerate(op.operands) if T.is_tensor(v.type)]

    def visit(self, op):
        name = op.name
        tens = self.tensor_operands(op)
        rule = getattr(self, "op_" + name.replace(".", "_"), None)
        if rule is not None:
            rule(op, tens)
        elif op.regions and name.startswith("scf."):
            self.region_op(op)
        elif name in ("scf.yield", "scf.condition"):
            self.terminator(op)
        elif tens and len(op.results) == 1 and self.hint(op.results[0]) is not None:
            lay = self.hint(op.results[0])  # part of a load's address or mask computation
            for i in tens:
                self.convert(op, i, lay)
            self.set(op.results[0], lay)
        elif tens:
            # elementwise and memory ops: everything in the first tile operand's layout, unless
            # it is a loop-carried accumulator that can adopt another operand's layout
            fixed = [i for i in tens if not self.flexible(op.operands[i], op)]
            lead = fixed[0] if fixed else tens[0]
            lay = layout_of(op.operands[lead].type)
            for i in tens:
                if i != lead and self.flexible(op.operands[i], op):
                    self.retarget_iter_arg(op.operands[i], lay)
            tens = [lead] + [i for i in tens if i != lead]
            for i in tens[1:]:
                self.convert(op, i, lay)
            for r in op.results:
                self.set(r, lay if T.shape_of(r.type) == T.shape_of(op.operands[tens[0]].type)
                         else self.default(T.shape_of(r.type)))
        else:
            for r in op.results:
                if T.is_tensor(r.type):
                    self.set(r, self.hint(r) or self.default(T.shape_of(r.type)))
        if name == "arith.constant" and T.is_tensor(op.results[0].type):
            attr = ir.DenseElementsAttr(op.attributes["value"])
            if not attr.is_splat:
                raise NotImplementedError("non-splat tile constants are not supported yet")
            op.attributes["value"] = ir.DenseElementsAttr.get_splat(
                op.results[0].type, attr.get_splat_value())

    # ---- ops whose result layout derives from the operand's --------------------------------
    def op_tile_reduce(self, op, tens):
        src = layout_of(op.operands[0].type)
        for i in tens[1:]:
            self.convert(op, i, src)
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        for r in op.results:
            if T.is_tensor(r.type):
                self.set(r, Slice(axis, src))

    def op_tile_scan(self, op, tens):
        src = layout_of(op.operands[0].type)
        for i in tens[1:]:
            self.convert(op, i, src)
        for r in op.results:
            self.set(r, src)

    def op_tile_expand_dims(self, op, tens):
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        src = layout_of(op.operands[0].type)
        out = self.hint(op.results[0])
        if isinstance(src, Slice) and src.dim == axis and out in (None, src.parent):
            self.set(op.results[0], src.parent)
            return
        out = out or self.default(T.shape_of(op.results[0].type))
        self.convert(op, 0, Slice(axis, out))
        self.set(op.results[0], out)

    def op_tile_broadcast(self, op, tens):
        h = self.hint(op.results[0])
        if h is not None:
            self.convert(op, 0, h)
        self.set(op.results[0], h or layout_of(op.operands[0].type))

    def op_tile_trans(self, op, tens):
        perm = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
        src = layout_of(op.operands[0].type)
        if not isinstance(src, Blocked):
            src = self.default(T.shape_of(op.operands[0].type))
            self.convert(op, 0, src)
        self.set(op.results[0], permute(src, perm))

    def op_tile_gather(self, op, tens):
        """The result in the index's layout; src stays where it is (the rule reads it back
        from shared memory)."""
        self.set(op.results[0], layout_of(op.operands[1].type))

    def op_tile_reshape(self, op, tens):
        if T.is_tensor(op.results[0].type):  # (a [1] tile reshaped to a scalar has no layout)
            self.set(op.results[0], self.default(T.shape_of(op.results[0].type)))

    # ---- join/split/cat and dot (lowering/layout_choice.py, rules/dot.py) -----------------
    def op_tile_join(self, op, tens):
        """Each thread holds both halves: the operand layout plus a last dimension of 2 held
        in registers (relabelling only)."""
        src = layout_of(op.operands[0].type)
        if not isinstance(src, Blocked):
            src = self.default(T.shape_of(op.operands[0].type))
            self.convert(op, 0, src)
        self.convert(op, 1, src)
        self.set(op.results[0], join_layout(src))

    def op_tile_split(self, op, tens):
        """The operand's layout without its last dimension, once each thread holds both
        halves (else the operand is converted to such a layout first)."""
        src = layout_of(op.operands[0].type)
        out = split_layout(src)
        if out is None:
            out = self.default(T.shape_of(op.results[0].type))
            self.convert(op, 0, join_layout(out))
        for r in op.results:
            self.set(r, out)

    def op_tile_cat(self, op, tens):
        """The operands' layout when each thread's registers of the two halves make the
        result's (tiles at least one CTA tile long); else the default (through shared memory)."""
        src = layout_of(op.operands[0].type)
        self.convert(op, 1, src)
        shape = T.shape_of(op.results[0].type)
        self.set(op.results[0], src if cat_in_registers(src, shape) else self.default(shape))

    def op_tile_dot(self, op, tens):
        """On tensor cores (`dot_layouts.choose_dot_layouts`): the result and the accumulator in
        the mma layout (a loop-carried accumulator started from a constant adopts it, so the
        loop converts nothing); a and b converted to its dot operand layouts (mma v2), or, for
        wgmma (v3: tilegpu-warpgroup-dot puts them in shared memory), kept in a layout without
        copies.  Else the result takes the accumulator's layout; a and b may stay in any layout
        (the FMA lowering moves them through shared memory)."""
        choice = choose_dot_layouts(self.target, op, self.num_warps, self.options)
        if choice is None:
            self.set(op.results[0], layout_of(op.operands[2].type))
            return
        acc, la, lb = choice
        for i, lay in ((0, la), (1, lb)):
            if lay is None:  # a shared-memory operand: loaded once, with no copies
                lay = _own_layout(op.operands[i], self.num_warps, self.warp_size)
            if lay is not None:
                self.convert(op, i, lay)
        if self.flexible(op.operands[2], op):
            self.retarget_iter_arg(op.operands[2], acc)
        else:
            self.convert(op, 2, acc)
        self.set(op.results[0], acc)

    def op_tilegpu_convert_layout(self, op, tens):
        pass  # already carries its result layout

    def op_tile_store(self, op, tens):
        """The value keeps its layout when the pointers (and mask) are cheap to recompute in
        it; else the value moves to the pointers' layout."""
        lay = layout_of(op.operands[0].type)
        val = layout_of(op.operands[1].type)
        if val != lay and all(_can_remat(op.operands[i], 0) for i in tens if i != 1):
            lay = val
        for i in tens:
            self.convert(op, i, lay)

    # ---- loop-carried accumulators ----------------------------------------------------------
    @staticmethod
    def _iter_arg(v):
        """(the scf.for, iter index) if `v` is a loop-carried block argument of an scf.for."""
        owner = v.owner
        if not isinstance(owner, ir.Block):
            return None
        parent = owner.owner
        parent = parent.operation if hasattr(parent, "operation") else parent
        if parent is None or parent.name != "scf.for":
            return None
        idx = list(owner.arguments).index(v) if v in list(owner.arguments) else -1
        return (parent, idx - 1) if idx >= 1 else None

    def flexible(self, v, op=None) -> bool:
        """A loop-carried tile started from a constant or splat and used once in the body, or
        first by `op` (attention's running max, read by the max and by the rescale: the uses
        after `op`, not yet assigned, see the layout it adopts): its layout may follow what the
        loop body computes (no conversion per iteration)."""
        it = self._iter_arg(v)
        if it is None or v in self.anchored:
            return False
        if sum(1 for _ in v.uses) != 1 and (op is None or not _first_use(v, op)):
            return False
        return self.flexible_init(*it)

    def dot_carried(self, loop, i: int):
        """The accumulator layout of the tensor-core dot whose result `loop` yields at `i`,
        when the carried tile starts from a constant and reaches the dot's accumulator only
        through elementwise ops (attention's `acc * alpha`, before `dot(p, v, acc)`); else None.
        Adopting it at its first reader instead (the rescale, in the layout of S's mma, whose
        instruction N differs) would carry it in another layout than the dot's, with a
        conversion (equal maps, no instruction) before the dot and one before the yield: the
        dot's result would not be the yielded value, which tilegpu-overlap-dots needs."""
        body = loop.regions[0].blocks[0]
        arg = body.arguments[i + 1]
        # (wgmma targets only: elsewhere nothing needs it, and the conversion it moves to the
        # factor is not free between other layouts' accumulators)
        if self.target is None or not self.target.has("wgmma") or \
                not T.is_tensor(arg.type) or not self.flexible_init(loop, i):
            return None
        yld = body.operations[len(body.operations) - 1].operation
        dot = defining_op(yld.operands[i])
        if dot is None or dot.name != "tile.dot" or dot.block != body or \
                not _reaches(dot.operands[2], arg, body, 0):
            return None
        choice = choose_dot_layouts(self.target, dot, self.num_warps, self.options)
        return None if choice is None else choice[0]

    @staticmethod
    def flexible_init(loop, i: int) -> bool:
        src = defining_op(loop.operands[3 + i])
        while src is not None and src.name == "tilegpu.convert_layout":
            src = defining_op(src.operands[0])
        return src is not None and src.name in ("arith.constant", "tile.splat")

    def retarget_iter_arg(self, v, layout):
        loop, i = self._iter_arg(v)
        self.set(v, layout)
        self.set(loop.results[i], layout)
        self.convert(loop, 3 + i, layout)

    # ---- regions: loop-carried tiles keep the layout of their initial value --------------
    def region_op(self, op):
        inits = []
        if op.name == "scf.for":
            inits = list(op.operands)[3:]
        elif op.name == "scf.while":
            inits = list(op.operands)
        layouts = [layout_of(v.type) if T.is_tensor(v.type) else None for v in inits]
        if op.name == "scf.for":
            body = op.regions[0].blocks[0]
            for i, a in enumerate(list(body.arguments)[1:]):
                h = self.hint(a)  # a pointer the loop advances: in its load's layout from the start
                if h is not None:
                    self.convert(op, 3 + i, h)
                    layouts[i] = h
            for i, a in enumerate(list(body.arguments)[1:]):
                acc = self.dot_carried(op, i)
                if acc is not None:
                    self.convert(op, 3 + i, acc)
                    layouts[i] = acc
                    self.anchored.add(a)
            for a, lay in zip(list(body.arguments)[1:], layouts):
                if lay is not None:
                    self.set(a, lay)
            for r, lay in zip(op.results, layouts):
                if lay is not None:
                    self.set(r, lay)
        elif op.name == "scf.while":
            before = op.regions[0].blocks[0]
            for a, lay in zip(before.arguments, layouts):
                if lay is not None:
                    self.set(a, lay)
            after = op.regions[1].blocks[0]
            for v in list(after.arguments) + list(op.results):
                if T.is_tensor(v.type):
                    self.set(v, self.default(T.shape_of(v.type)))
        else:  # scf.if and others: results in the default layout of their rank
            for r in op.results:
                if T.is_tensor(r.type):
                    self.set(r, self.default(T.shape_of(r.type)))

    def terminator(self, op):
        parent = op.parent.operation if hasattr(op.parent, "operation") else op.parent
        if op.name == "scf.condition":  # forwards to the after-region and the results
            for i, v in enumerate(list(op.operands)[1:], start=1):
                if T.is_tensor(v.type):
                    self.convert(op, i, layout_of(parent.results[i - 1].type))
            return
        if parent.name == "scf.while":  # yield of the after-region feeds the before-region
            targets = list(parent.regions[0].blocks[0].arguments)
        else:
            targets = list(parent.results)
        for i, (v, t) in enumerate(zip(op.operands, targets)):
            if T.is_tensor(v.type):
                self.convert(op, i, layout_of(t.type))


def _own_layout(v, num_warps, warp_size):
    """A blocked layout made for `v`'s own shape (same vector width) when its layout, made for
    a larger tile of its rank, holds copies of its elements and its producers can be
    recomputed (tilegpu-remove-converts then loads it once); else None."""
    lay, shape = layout_of(v.type), T.shape_of(v.type)
    if not isinstance(lay, Blocked) or not _remat_later(v, 0):
        return None
    if math.prod(lay.elems_per_thread(shape)) * num_warps * warp_size <= math.prod(shape):
        return None
    own = default_blocked(shape, num_warps, warp_size, lay.size_per_thread[lay.order[0]])
    return own if own != lay else None


def _remat_later(v, depth: int) -> bool:
    """`_can_remat` once tilegpu-remove-converts has folded the conversions assign-layouts
    put in the chain (it rematerializes those first)."""
    op = defining_op(v)
    if op is not None and op.name == "tilegpu.convert_layout" and depth <= _REMAT_DEPTH:
        return _remat_later(op.operands[0], depth + 1)
    if op is None or depth > _REMAT_DEPTH or op.regions or len(op.results) != 1:
        return False
    if not (op.name in _REMAT or op.name.startswith(_REMAT_PREFIXES)):
        return False
    if op.name == "tile.load" and ("volatile" in op.attributes or
                                   sum(1 for _ in v.uses) != 1):
        return False
    return all(_remat_later(o, depth + 1) for o in op.operands if T.is_tensor(o.type))


def permute(layout: Blocked, perm) -> Blocked:
    """The layout of trans(x, perm) for x in `layout`: the same threads hold the same
    elements, with the dimensions renamed."""
    return Blocked(tuple(layout.size_per_thread[p] for p in perm),
                   tuple(layout.threads_per_warp[p] for p in perm),
                   tuple(layout.warps_per_cta[p] for p in perm),
                   tuple(perm.index(o) for o in layout.order))


def _assign_layouts(module_op, pctx):
    nw, ws = module_config(module_op, pctx)
    module_op.attributes["tilegpu.num_warps"] = _i32(nw)
    module_op.attributes["tilegpu.warp_size"] = _i32(ws)
    for f in kernels(module_op):
        a = _Assigner(f, nw, ws, pctx.target, pctx.options)
        entry = f.regions[0].blocks[0]
        for arg in entry.arguments:  # tile arguments (functions in lit tests) start in the default
            if T.is_tensor(arg.type):
                a.set(arg, a.default(T.shape_of(arg.type)))
        for op in T.walk_ops(f):
            if op.name != "func.func":
                a.visit(op)
        _update_function_type(f)


def _update_function_type(f):
    """The function type again agrees with the (retyped) arguments and returned values."""
    entry = f.regions[0].blocks[0]
    rets = [op.operation for op in entry.operations if op.operation.name == "func.return"]
    results = [v.type for v in rets[0].operands] if rets else []
    f.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in entry.arguments], results))


register(Pass("tilegpu-assign-layouts",
              "Give every tile a layout (coalesced anchors, derived layouts, conversions)",
              run=_assign_layouts))


# ---------------------------------------------------------------------------------------------
# tilegpu-remove-converts

# ops cheap enough to recompute in another layout instead of moving their results through
# shared memory (a load only when nothing else uses its result: no memory is read twice)
_REMAT = {"tile.splat", "arith.constant", "tile.make_range", "tile.addptr", "tile.broadcast",
          "tile.expand_dims", "tile.load"}
_REMAT_PREFIXES = ("arith.", "math.")
_REMAT_DEPTH = 16


def _identity_convert(op, rewriter):
    """convert_layout(x) with x already in the wanted layout -> x."""
    if op.operands[0].type != op.results[0].type:
        return True
    rewriter.replace_op(op, [op.operands[0]])


def _convert_of_convert(op, rewriter):
    """convert(convert(x)) -> convert(x)."""
    src = defining_op(op.operands[0])
    if src is None or src.name != "tilegpu.convert_layout":
        return True
    replace_with(rewriter, op, "tilegpu.convert_layout", [src.operands[0]])


def _can_remat(v: ir.Value, depth: int, loads: bool = True) -> bool:
    op = defining_op(v)
    if op is None or depth > _REMAT_DEPTH or op.regions or len(op.results) != 1:
        return False
    if not (op.name in _REMAT or op.name.startswith(_REMAT_PREFIXES)):
        return False
    if op.name == "tile.load":
        if not loads or "volatile" in op.attributes or sum(1 for _ in v.uses) != 1:
            return False
    return all(_can_remat(o, depth + 1, loads) for o in op.operands if T.is_tensor(o.type))


def _operand_layout(op, operand: ir.Value, layout):
    """The layout an operand must have for `op` to produce `layout`."""
    if op.name == "tile.expand_dims":
        return Slice(ir.IntegerAttr(op.attributes["axis"]).value, layout)
    return layout


def _remat(v: ir.Value, layout, memo: dict) -> ir.Value:
    key = (v, layout)
    if key in memo:
        return memo[key]
    op = defining_op(v)
    operands = [(_remat(o, _operand_layout(op, o, layout), memo) if T.is_tensor(o.type) else o)
                for o in op.operands]
    attrs = {n: op.attributes[n] for n in op.attributes}
    rt = with_layout(v.type, layout)
    if op.name == "arith.constant":
        attrs["value"] = ir.DenseElementsAttr.get_splat(
            rt, ir.DenseElementsAttr(attrs["value"]).get_splat_value())
    with op.location:
        new = ir.Operation.create(op.name, results=[rt], operands=operands, attributes=attrs)
    memo[key] = new.results[0]
    return new.results[0]


def _rematerialize(op, rewriter):
    """convert(f(g(...))) of cheap producers (ranges, splats, constants, address arithmetic, a
    load used only here, elementwise math) -> the same chain computed in the wanted layout."""
    src = op.operands[0]
    # tensor-core operands are loaded coalesced and go through shared memory (ldmatrix), not
    # loaded from global memory in the fragment layout (every warp along the other dim again)
    loads = not isinstance(layout_of(op.results[0].type), DotOperand)
    if not _can_remat(src, 0, loads):
        return True
    with rewriter.ip:
        new = _remat(src, layout_of(op.results[0].type), {})
    rewriter.replace_op(op, [new])


register(Pass("tilegpu-remove-converts",
              "Drop no-op layout conversions, fold chains, rematerialize cheap producers",
              patterns=(("tilegpu.convert_layout", _identity_convert),
                        ("tilegpu.convert_layout", _convert_of_convert),
                        ("tilegpu.convert_layout", _rematerialize))))
