"""Axis analysis: per dimension, the contiguity, divisibility and constancy of integer and
pointer tiles.

* contiguity[d]: elements come in runs of this many consecutive values (+1 each) along d;
* divisibility[d]: the first element of each run is a multiple of this (bytes for pointers);
* constancy[d]: elements come in runs of this many equal values along d.

Seeds: function arguments carry `tile.divisibility` from specialization (divisible by 16),
`tl.multiple_of`/`tl.max_contiguous` put `tile.divisibility`/`tile.contiguity` on values.
The load/store vector width follows from these (see `vector_width`).  One rule per op,
registered in `RULES`; values with no rule get the pessimistic (1, 1, 1).

Besides, `AxisAnalysis.nonneg(v)`: whether an integer value (a scalar, or every element of a
tile) is provably >= 0, asked on demand of its definition (`NONNEG_RULES`; tile-tma-guard
asks it of a TMA store's coordinates).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import mlir.ir as ir

from tilework.dialects import tile as T

MAX_DIV = 1 << 30


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple
    divisibility: tuple
    constancy: tuple

    @staticmethod
    def unknown(rank):
        r = max(rank, 1)
        return AxisInfo((1,) * r, (1,) * r, (1,) * r)


def _pow2_div(v: int) -> int:
    v = abs(int(v))
    if v == 0:
        return MAX_DIV
    return min(v & -v, MAX_DIV)


def _shape(v: ir.Value):
    return T.shape_of(v.type) or (1,)


RULES = {}
# ops with regions: fn(analysis, op) sets the info of their block arguments (and may refine
# their results) before the walk enters the regions; see the scf rules at the end
REGION_RULES = {}


def rule(*names):
    def deco(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return deco


class AxisAnalysis:
    """Runs the rules forward over a function (ops are in dominance order)."""

    def __init__(self, func_op: ir.Operation):
        self.info: dict = {}
        self._nonneg: dict = {}
        f = func_op.operation
        entry = f.regions[0].blocks[0]
        arg_attrs = f.attributes["arg_attrs"] if "arg_attrs" in f.attributes else None
        for i, a in enumerate(entry.arguments):
            div = 1
            if arg_attrs is not None:
                d = ir.DictAttr(arg_attrs[i])
                if "tile.divisibility" in d:
                    div = ir.IntegerAttr(d["tile.divisibility"]).value
            r = max(1, len(T.shape_of(a.type)))
            self.info[self._key(a)] = AxisInfo((1,) * r, (div,) * r, (1,) * r)
        for op in T.walk_ops(f):
            if op.name == "func.func":
                continue
            self._visit(op)

    def _visit(self, op):
        fn = RULES.get(op.name)
        for i, r in enumerate(op.results):
            rank = len(_shape(r))
            ai = fn(self, op, i) if fn else None
            ai = ai or AxisInfo.unknown(rank)
            ai = self._apply_hints(op, ai)
            self.info[self._key(r)] = ai
        if op.name in REGION_RULES:  # before the walk reaches the op's regions
            REGION_RULES[op.name](self, op)

    def visit_block(self, block):
        """(Re)computes the info of every op in `block`, nested ops included."""
        for top in block.operations:
            for op in T.walk_ops(top):
                self._visit(op)

    @staticmethod
    def _key(v: ir.Value):
        return v  # ir.Value hashes by identity of the underlying value

    def get(self, v: ir.Value) -> AxisInfo:
        return self.info.get(self._key(v)) or AxisInfo.unknown(len(_shape(v)))

    def nonneg(self, v: ir.Value, depth: int = 0) -> bool:
        """Whether the integer value `v` is provably >= 0 (every element of a tile): asked of
        its definition by `NONNEG_RULES`; a block argument only as a loop's variable.  Kernel
        arguments are not (an int argument may be negative); wrapping past 2**31 is not
        considered (as for offsets elsewhere)."""
        if depth > 32:
            return False
        k = self._key(v)
        if k not in self._nonneg:  # (x + x is asked once: no exponential walk)
            self._nonneg[k] = _nonneg_of_def(self, v, depth)
        return self._nonneg[k]

    @staticmethod
    def _apply_hints(op, ai: AxisInfo, suffix: str = "") -> AxisInfo:
        """`op`'s hint attributes over `ai`; `suffix` (".region<r>.arg<n>") picks those an
        op with regions holds for one of its block arguments."""
        attrs = op.attributes
        if "tile.divisibility" + suffix in attrs:
            vals = list(ir.DenseI32ArrayAttr(attrs["tile.divisibility" + suffix]))
            ai = AxisInfo(ai.contiguity, tuple(max(a, b) for a, b in
                                               zip(ai.divisibility, _pad(vals, ai))), ai.constancy)
        if "tile.contiguity" + suffix in attrs:
            vals = list(ir.DenseI32ArrayAttr(attrs["tile.contiguity" + suffix]))
            ai = AxisInfo(tuple(max(a, b) for a, b in zip(ai.contiguity, _pad(vals, ai))),
                          ai.divisibility, ai.constancy)
        if "tile.constancy" + suffix in attrs:  # tl.max_constancy
            vals = list(ir.DenseI32ArrayAttr(attrs["tile.constancy" + suffix]))
            ai = AxisInfo(ai.contiguity, ai.divisibility,
                          tuple(max(a, b) for a, b in zip(ai.constancy, _pad(vals, ai))))
        return ai

    def hint_block_args(self, op, region: int = 0):
        """Applies the hints `op` holds for the arguments of its region's entry block (a loop's
        carried values: `tl.multiple_of` of one puts `tile.<hint>.region<r>.arg<n>` on the
        loop, since a block argument has no op of its own)."""
        if not any(".region" in getattr(a, "name", a) for a in op.attributes):
            return
        for a in op.regions[region].blocks[0].arguments:
            suffix = f".region{region}.arg{a.arg_number}"
            self.info[self._key(a)] = self._apply_hints(op, self.get(a), suffix)


def _pad(vals, ai):
    n = len(ai.contiguity)
    return (list(vals) + [vals[-1]] * n)[:n]


def _const_value(op):
    """The integer value of a splat/scalar arith.constant, else None."""
    if op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    try:
        return ir.IntegerAttr(attr).value
    except (ValueError, TypeError):
        pass
    try:
        d = ir.DenseIntElementsAttr(attr)
        if d.is_splat:
            return ir.IntegerAttr(d.get_splat_value()).value
    except (ValueError, TypeError):
        pass
    return None


@rule("arith.constant")
def _constant(an, op, i):
    shape = _shape(op.results[0])
    v = _const_value(op)
    div = _pow2_div(v) if v is not None else 1
    return AxisInfo((1,) * len(shape), (div,) * len(shape), tuple(shape))


@rule("tile.make_range")
def _make_range(an, op, i):
    start = ir.IntegerAttr(op.attributes["start"]).value
    n = _shape(op.results[0])[0]
    return AxisInfo((n,), (_pow2_div(start),), (1,))


@rule("tile.get_program_id", "tile.get_num_programs")
def _pid(an, op, i):
    return AxisInfo((1,), (1,), (1,))


@rule("tile.splat")
def _splat(an, op, i):
    src = an.get(op.operands[0])
    shape = _shape(op.results[0])
    return AxisInfo((1,) * len(shape), (src.divisibility[0],) * len(shape), tuple(shape))


@rule("tile.broadcast")
def _broadcast(an, op, i):
    src = an.get(op.operands[0])
    sshape, rshape = _shape(op.operands[0]), _shape(op.results[0])
    c, d, k = [], [], []
    for j, (a, b) in enumerate(zip(sshape, rshape)):
        if a == b:
            c.append(src.contiguity[j]), d.append(src.divisibility[j]), k.append(src.constancy[j])
        else:
            c.append(1), d.append(src.divisibility[j]), k.append(b)
    return AxisInfo(tuple(c), tuple(d), tuple(k))


def _binary(an, op):
    return an.get(op.operands[0]), an.get(op.operands[1]), len(_shape(op.results[0]))


@rule("arith.addi", "arith.subi", "tile.addptr")
def _add(an, op, i):
    a, b, n = _binary(an, op)
    scale = 1
    if op.name == "tile.addptr":
        et = T.pointee(T.element_type(op.operands[0].type))
        scale = max(1, _bitwidth(et) // 8)
    c, d, k = [], [], []
    for j in range(n):
        if op.name == "arith.subi":
            # x - const keeps x's runs; const - x does not
            c.append(min(a.contiguity[j], b.constancy[j]))
        else:
            c.append(max(min(a.contiguity[j], b.constancy[j]), min(b.contiguity[j], a.constancy[j])))
        d.append(math.gcd(a.divisibility[j], b.divisibility[j] * scale))
        k.append(math.gcd(a.constancy[j], b.constancy[j]))
    return AxisInfo(tuple(c), tuple(min(x, MAX_DIV) for x in d), tuple(k))


@rule("arith.muli")
def _mul(an, op, i):
    a, b, n = _binary(an, op)
    c, d, k = [], [], []
    ca, cb = (_const_value(o) if o is not None else None
              for o in (defining_op(op.operands[0]), defining_op(op.operands[1])))
    for j in range(n):
        cont = 1
        if cb == 1:
            cont = a.contiguity[j]
        elif ca == 1:
            cont = b.contiguity[j]
        c.append(cont)
        d.append(min(a.divisibility[j] * b.divisibility[j], MAX_DIV))
        k.append(math.gcd(a.constancy[j], b.constancy[j]))
    return AxisInfo(tuple(c), tuple(d), tuple(k))


@rule("arith.remsi", "arith.remui")
def _rem(an, op, i):
    """x % y with y the same along a run (`(pid * BN + arange(BN)) % N`, Triton's wrap-around
    offsets): a run of x whose first element is a multiple of D = gcd(run, div x, div y) wraps
    only at multiples of y, so it stays contiguous in aligned pieces of D; each piece starts at
    x - q*y, a multiple of gcd(div x, div y)."""
    a, b, n = _binary(an, op)
    c, d, k = [], [], []
    for j in range(n):
        cont = 1
        if b.constancy[j] >= a.contiguity[j] > 1:
            cont = math.gcd(math.gcd(a.contiguity[j], a.divisibility[j]), b.divisibility[j])
        c.append(cont)
        d.append(math.gcd(a.divisibility[j], b.divisibility[j]))
        k.append(math.gcd(a.constancy[j], b.constancy[j]))
    return AxisInfo(tuple(c), tuple(d), tuple(k))


def defining_op(v: ir.Value):
    """The operation producing `v`, or None for a block argument."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


# arith.cmpi predicates whose result switches exactly at the constant (x < c, x >= c), with
# the contiguous operand on the left; the mirrored ones (c > x, c <= x) with it on the right
_SWITCH_AT_C_LEFT = {2, 5, 6, 9}    # slt, sge, ult, uge
_SWITCH_AT_C_RIGHT = {4, 3, 8, 7}   # sgt, sle, ugt, ule


@rule("arith.cmpi")
def _cmp(an, op, i):
    """Contiguous x (runs starting at multiples of D) against a constant divisible by M: the
    result of x < c / x >= c is constant on aligned groups of gcd(run, D, M); <=, >, == and !=
    switch inside such a group, so they only keep the operands' common constancy."""
    a, b, n = _binary(an, op)
    pred = ir.IntegerAttr(op.attributes["predicate"]).value
    k = []
    for j in range(n):
        kk = math.gcd(a.constancy[j], b.constancy[j])
        if pred in _SWITCH_AT_C_LEFT and b.constancy[j] > 1 and a.contiguity[j] > 1:
            kk = max(kk, math.gcd(math.gcd(a.contiguity[j], a.divisibility[j]),
                                  math.gcd(b.divisibility[j], b.constancy[j])))
        if pred in _SWITCH_AT_C_RIGHT and a.constancy[j] > 1 and b.contiguity[j] > 1:
            kk = max(kk, math.gcd(math.gcd(b.contiguity[j], b.divisibility[j]),
                                  math.gcd(a.divisibility[j], a.constancy[j])))
        k.append(kk)
    return AxisInfo((1,) * n, (1,) * n, tuple(k))


@rule("arith.andi", "arith.ori", "arith.xori", "arith.select", "arith.extui", "arith.extsi",
      "arith.trunci")
def _logical(an, op, i):
    infos = [an.get(v) for v in op.operands]
    shape = _shape(op.results[0])
    n = len(shape)
    k = []
    for j in range(n):
        kk = shape[j]
        for x in infos:  # (a scalar operand, arith.select's i1 condition, is constant)
            if len(x.constancy) == n:
                kk = math.gcd(kk, x.constancy[j])
        k.append(kk)
    if op.name in ("arith.extui", "arith.extsi"):
        return AxisInfo(infos[0].contiguity, infos[0].divisibility, tuple(k))
    return AxisInfo((1,) * n, (1,) * n, tuple(k))


@rule("tile.expand_dims")
def _expand_dims(an, op, i):
    """The new size-1 dimension: each element is its own run, so its divisibility is that of
    every element (the source's when the source has no runs longer than 1)."""
    src = an.get(op.operands[0])
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    every = src.divisibility[0] if all(c == 1 for c in src.contiguity) else 1
    if not T.shape_of(op.operands[0].type):
        every = src.divisibility[0]
    c, d, k = list(src.contiguity), list(src.divisibility), list(src.constancy)
    if not T.shape_of(op.operands[0].type):
        c, d, k = [], [], []
    c.insert(axis, 1)
    d.insert(axis, every)
    k.insert(axis, 1)
    return AxisInfo(tuple(c), tuple(d), tuple(k))


@rule("tile.trans")
def _trans(an, op, i):
    src = an.get(op.operands[0])
    perm = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    return AxisInfo(tuple(src.contiguity[p] for p in perm), tuple(src.divisibility[p] for p in perm),
                    tuple(src.constancy[p] for p in perm))


@rule("tilegpu.convert_layout")
def _convert(an, op, i):
    return an.get(op.operands[0])


def _meet(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """What holds of both (as for a value that is either: `_join` below)."""
    return _join(a, b)


@rule("tile.join")
def _join_rule(an, op, i):
    """Along the old dimensions what holds of both operands; the new one: nothing known."""
    m = _meet(an.get(op.operands[0]), an.get(op.operands[1]))
    return AxisInfo(m.contiguity + (1,), m.divisibility + (1,), m.constancy + (1,))


@rule("tile.split")
def _split_rule(an, op, i):
    src = an.get(op.operands[0])
    return AxisInfo(src.contiguity[:-1], src.divisibility[:-1], src.constancy[:-1])


@rule("tile.cat")
def _cat_rule(an, op, i):
    """Each operand fills whole aligned runs of the result (its length is a power of two)."""
    return _meet(an.get(op.operands[0]), an.get(op.operands[1]))


def _bitwidth(t: ir.Type) -> int:
    s = str(t)
    if s.startswith("!tile.ptr"):
        return 64
    if s == "bf16":
        return 16
    if s.startswith("f8"):
        return 8
    return int("".join(ch for ch in s if ch.isdigit()) or 64)


def elem_bytes(t: ir.Type) -> int:
    return max(1, _bitwidth(t) // 8)


def vector_width(an: AxisAnalysis, ptr: ir.Value, mask: ir.Value | None, dim: int,
                 limit: int) -> int:
    """Elements per access along `dim` for a load/store through `ptr`: contiguous, aligned,
    with a uniform mask, at most 16 bytes and at most `limit` (the thread's run)."""
    elem = T.pointee(T.element_type(ptr.type))
    nbytes = elem_bytes(elem)
    p = an.get(ptr)
    vec = min(p.contiguity[dim], max(1, p.divisibility[dim] // nbytes), max(1, 16 // nbytes), limit)
    if mask is not None:
        vec = min(vec, an.get(mask).constancy[dim])
    vec = max(1, vec)
    return 1 << (vec.bit_length() - 1)


# ---- signs: x >= 0 -----------------------------------------------------------------------------

def _nonneg_of_def(an, v, depth) -> bool:
    op = defining_op(v)
    if op is None:  # a block argument: an scf.for's induction variable, if anything
        parent = v.owner.owner
        parent = parent.operation if parent is not None else None
        if parent is None or parent.name != "scf.for" or ir.BlockArgument(v).arg_number != 0:
            return False
        lb, step = parent.operands[0], parent.operands[2]
        return an.nonneg(lb, depth + 1) and _positive_constant(step)
    fn = NONNEG_RULES.get(op.name)
    return bool(fn and fn(an, op, depth + 1))


def _positive_constant(v) -> bool:
    op = defining_op(v)
    c = _const_value(op) if op is not None else None
    return c is not None and c > 0


NONNEG_RULES = {}


def nonneg_rule(*names):
    def deco(fn):
        for n in names:
            NONNEG_RULES[n] = fn
        return fn
    return deco


@nonneg_rule("arith.constant")
def _nonneg_constant(an, op, depth):
    c = _const_value(op)
    return c is not None and c >= 0


@nonneg_rule("tile.get_program_id", "tile.get_num_programs", "arith.extui")
def _nonneg_always(an, op, depth):
    return True


@nonneg_rule("tile.make_range")
def _nonneg_range(an, op, depth):
    return ir.IntegerAttr(op.attributes["start"]).value >= 0


@nonneg_rule("arith.addi", "arith.muli", "arith.divsi", "arith.minsi", "arith.extsi",
             "arith.trunci", "arith.index_cast", "arith.andi", "arith.shrsi", "arith.shli",
             "tile.splat", "tile.broadcast", "tile.expand_dims")
def _nonneg_all_operands(an, op, depth):
    """Sums, products, quotients, minima, shifts and casts of values >= 0, and their tiles."""
    return all(an.nonneg(x, depth) for x in op.operands)


@nonneg_rule("arith.remsi", "arith.remui", "arith.divui", "arith.shrui")
def _nonneg_first_operand(an, op, depth):
    """x % y, x // y (unsigned) and x >> y: x >= 0 suffices."""
    return an.nonneg(op.operands[0], depth)


@nonneg_rule("arith.maxsi")
def _nonneg_max(an, op, depth):
    return any(an.nonneg(x, depth) for x in op.operands)


@nonneg_rule("arith.select")
def _nonneg_select(an, op, depth):
    return all(an.nonneg(x, depth) for x in list(op.operands)[1:])


# ---- control flow (scf) ---------------------------------------------------------------------

def _join(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """What holds of a value that is either `a` or `b`."""
    return AxisInfo(*(tuple(math.gcd(x, y) for x, y in zip(p, q))
                      for p, q in ((a.contiguity, b.contiguity), (a.divisibility, b.divisibility),
                                   (a.constancy, b.constancy))))


def _region_rule(name):
    def deco(fn):
        REGION_RULES[name] = fn
        return fn
    return deco


@_region_rule("scf.for")
def _for(an, op):
    """The induction variable takes the values lb + k*step: divisible by what divides both.
    A carried value is its initial value or what the body yields: iterate from the initial
    values to a fixed point (the joins only lose facts, so this ends)."""
    body = op.regions[0].blocks[0]
    lb, step = an.get(op.operands[0]), an.get(op.operands[2])
    an.info[body.arguments[0]] = AxisInfo((1,), (math.gcd(lb.divisibility[0],
                                                           step.divisibility[0]),), (1,))
    carried = list(body.arguments)[1:]
    yielded = list(list(body.operations)[-1].operands)
    guess = [an.get(v) for v in list(op.operands)[3:]]
    for _ in range(8):
        for a, g in zip(carried, guess):
            an.info[a] = g
        an.hint_block_args(op)
        an.visit_block(body)
        new = [_join(g, an.get(y)) for g, y in zip(guess, yielded)]
        if new == guess:
            break
        guess = new
    else:  # no fixed point soon: claim nothing
        guess = [AxisInfo.unknown(len(_shape(a))) for a in carried]
    for a, r, g in zip(carried, op.results, guess):
        an.info[a] = an.info[r] = g
    an.hint_block_args(op)


@_region_rule("scf.if")
def _if(an, op):
    """A result is what one branch or the other yields."""
    if not op.results:
        return
    ys = []
    for region in op.regions:
        block = region.blocks[0]
        an.visit_block(block)
        ys.append(list(list(block.operations)[-1].operands))
    for r, a, b in zip(op.results, *ys):
        an.info[r] = _join(an.get(a), an.get(b))


@_region_rule("scf.while")
def _while(an, op):
    """Nothing is claimed of a while loop's carried values but their hints."""
    an.hint_block_args(op, 0)
    an.hint_block_args(op, 1)
