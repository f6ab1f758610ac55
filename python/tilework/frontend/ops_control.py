"""Control flow in kernels: `if`, `for`, `while`, `return` (and the rejected `break` and
`continue`), as a mixin of the code generator (`codegen.CodeGenerator`).

Runtime control flow becomes upstream `scf` ops in the tile IR, as in Triton:

* `if` on a runtime scalar -> `scf.if` whose results are the names either branch assigns;
  a constexpr condition compiles only the live branch.
* `for` over `range`/`tl.range` -> `scf.for` (never unrolled); `tl.static_range` is unrolled.
  A negative constexpr step runs the loop upward and mirrors the variable; a runtime step
  runs over the trip count (scf.for needs a positive step).
* `while` -> `scf.while`.
* Loop-carried values are the names a loop body assigns that exist before the loop.  They
  are found by visiting the body once into a scratch block that is thrown away (a "dry run",
  as Triton does); a Python number assigned in the loop becomes a runtime scalar first, which
  can change what the body computes, so dry runs repeat until nothing more is promoted.
* `return` inside a runtime `if` (in a kernel or an inlined @jit function): the statements
  after the `if` move into each branch that does not return, and the `if` yields the
  returned value.  `return` inside loops, `break` and `continue` are rejected, as in Triton.

A value here is a tensor, a constexpr (or plain Python value), or a tuple/list of those;
its tensors ("runtime leaves") are what regions carry.  Python numbers are weakly typed
(semantic.py): merged with a runtime scalar they take its dtype.
"""
from __future__ import annotations

import ast
import builtins
import functools

import mlir.ir as ir
from mlir.dialects import scf

from ..language import control, core
from ..language.aggregate import fields, is_aggregate, rebuilt
from ..language.core import constexpr, tensor
from . import semantic as S
from .ops_core import impl  # noqa: F401  (control builtins would register here)
from .types import tensor_ir_type, to_ir

# messages the interpreter's static check (static_check.py) raises too, at the same node
BREAK_MESSAGE = ("`break` is not supported (as in Triton): make the exit condition part of a "
                 "`while` loop's condition")
CONTINUE_MESSAGE = ("`continue` is not supported (as in Triton): put the rest of the loop body "
                    "under an `if`")
RETURN_IN_LOOP_MESSAGE = ("Cannot have `return` statements inside `while` or `for` statements "
                          "in triton: keep a flag in the loop and test it after")
KERNEL_RETURN_MESSAGE = "a kernel cannot return a value"
FOR_ITER_MESSAGE = "for loops iterate over range(), tl.range() or tl.static_range()"
WHILE_TRUE_MESSAGE = ("this `while` condition is always true and kernels have no `break`: the "
                      "loop would never end")
LOOP_ELSE_MESSAGE = {"For": "`for ... else` is not supported",
                     "While": "`while ... else` is not supported"}
# a value whose type differs between the paths merging it (Triton's words; then, else types)
MISMATCH_MESSAGE = "Mismatched type for {name} between then block ({{}}) and else block ({{}})"
TERNARY_MESSAGE = "Ternary expression with dynamic condition has inconsistent types {} and {}"
RETURN_TYPES_MESSAGE = "Inconsistent return types: {} and {}"


class ReturnSignal(Exception):
    """Raised by `return`: unwinds to the inlined call or the kernel (value: `gen.returned`)."""


class Undefined:
    """The value of a name not defined on every path to here: reading it is an error."""

    def __init__(self, message: str):
        self.message = message


_MISSING = object()

# tl.range hints: recorded on the scf.for as `tile.<name>` (ints as i32, flags as units)
_LOOP_HINTS = ("num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer", "flatten",
               "warp_specialize", "disable_licm")


# --------------------------------------------------------------------------------------------
# values: leaves, structure, weak typing

def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


def _parts(v):
    """The values a tuple or an aggregate is made of (an aggregate: its fields), or None."""
    if isinstance(v, (tuple, list)):
        return list(v)
    if is_aggregate(v):
        return [getattr(v, n) for n in fields(v)]
    return None


def _leaves(v) -> list:
    parts = _parts(v)
    if parts is not None:
        return [x for e in parts for x in _leaves(e)]
    return [v]


def _structure(v):
    parts = _parts(v)
    if parts is not None:
        return type(v), tuple(_structure(e) for e in parts)
    return None


def _rebuild(v, leaves):
    """`v` with its leaves replaced, in order, from the iterator `leaves`."""
    if is_aggregate(v):
        return rebuilt(v, [_rebuild(getattr(v, n), leaves) for n in fields(v)])
    if isinstance(v, (tuple, list)):
        return type(v)(_rebuild(e, leaves) for e in v)
    return next(leaves)


def _runtime_leaves(values) -> list:
    return [leaf for v in values for leaf in _leaves(v) if isinstance(leaf, tensor)]


def _bind(values: dict, args) -> dict:
    """`values` with their runtime leaves replaced, in order, by the IR values `args`."""
    it = iter(args)
    out = {}
    for name, v in values.items():
        new = [tensor(next(it), x.dtype, x.shape) if isinstance(x, tensor) else x
               for x in _leaves(v)]
        out[name] = _rebuild(v, iter(new))
    return out


def _number(v):
    """The Python number a leaf holds, or None."""
    v = _unwrap(v)
    return v if isinstance(v, (bool, int, float)) else None


def _same_static(a, b) -> bool:
    a, b = _unwrap(a), _unwrap(b)
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - objects without a usable ==
        return False


def _fits(x, dt: core.dtype) -> bool:
    """Whether the Python number `x` may become a scalar of `dt` (weak typing)."""
    if dt.is_ptr():
        return False
    if isinstance(x, bool):
        return dt.is_bool()
    if isinstance(x, int):
        return dt.is_floating() or (dt.is_int() and S.fits(x, dt))
    return dt.is_floating()


def _number_dtype(*xs) -> core.dtype:
    """The dtype Python numbers get as one runtime scalar (int32, int64, fp32, int1...)."""
    out = S.python_scalar_dtype(xs[0])
    for x in xs[1:]:
        out = S.computation_type(out, S.python_scalar_dtype(x), "add")
    return out


def _describe(v) -> str:
    if isinstance(v, Undefined):
        return "undefined"
    if isinstance(v, tensor):
        return f"{v.dtype}{list(v.shape)}" if v.shape else str(v.dtype)
    if _parts(v) is not None:
        return (type(v).__name__ if is_aggregate(v) else "") + \
            "(" + ", ".join(_describe(e) for e in _parts(v)) + ")"
    x = _number(v)
    if x is not None:
        return str(S.python_scalar_dtype(x))
    u = _unwrap(v)
    return f"the constexpr {u}" if isinstance(u, core.dtype) else f"the constexpr {u!r}"


_STATIC = "static"


def _merge_leaf(a, b):
    """The type of a value that is `a` on one path and `b` on another: `_STATIC` when both are
    the same compile-time value, else (dtype, shape) of the runtime value; None if none fits."""
    ta, tb = isinstance(a, tensor), isinstance(b, tensor)
    if ta and tb:
        return (a.dtype, a.shape) if a.dtype == b.dtype and a.shape == b.shape else None
    if ta or tb:
        t, c = (a, b) if ta else (b, a)
        x = _number(c)
        return (t.dtype, ()) if x is not None and not t.shape and _fits(x, t.dtype) else None
    xa, xb = _number(a), _number(b)
    if xa is not None and xb is not None:
        return _STATIC if _same_static(xa, xb) else (_number_dtype(xa, xb), ())
    return _STATIC if _same_static(a, b) else None


def _first_return(stmts):
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Return):
                return n
    return None


def _move_ops(src: ir.Block, dst: ir.Block):
    for op in list(src.operations):
        op.detach_from_parent()
        ir.InsertionPoint(dst).insert(op)


# --------------------------------------------------------------------------------------------
# the code generator's statements

class ControlFlow:
    """Mixed into CodeGenerator, which provides `scope` (name -> value), `b` (the builder),
    `visit`, `visit_body`, `error`, and the bookkeeping used here: `assigned` (name -> the
    last assignment node, for the current region), `cont` (the statements following each
    enclosing statement list, for `return` inside runtime `if`s) and `loop_depth`."""

    # ---- regions ---------------------------------------------------------------------------
    def _define(self, name, value, node):
        self.scope[name] = value
        self.assigned[name] = node

    def _scratch(self, regions: int) -> ir.Operation:
        """An op whose regions hold code that is thrown away or moved into the real op."""
        return ir.Operation.create("scf.execute_region", results=[], regions=regions,
                                   loc=self.b.loc)

    def _visit_region(self, block, scope, stmts, loop=False):
        """Visits `stmts` into `block` from `scope`; returns (scope after, assigned names)."""
        saved = self.scope, self.assigned, self.cont, self.b.loc
        self.scope, self.assigned, self.cont = dict(scope), {}, []
        self.loop_depth += loop
        try:
            with ir.InsertionPoint(block):
                self.visit_body(stmts)
            return self.scope, self.assigned
        finally:
            self.loop_depth -= loop
            self.scope, self.assigned, self.cont, self.b.loc = saved

    def _condition(self, cond: tensor, node) -> tensor:
        if cond.shape:
            raise self.error(node, core.truth_value_message(cond.shape))  # (interpreter's too)
        return cond if cond.dtype.is_bool() else S.cast(self.b, cond, core.int1)

    def _materialize(self, v, spec) -> ir.Value:
        """The IR value of leaf `v` as a runtime value of type `spec` (dtype, shape)."""
        if isinstance(v, tensor):
            return v.handle
        return self.b.constant(_number(v), spec[0]).handle

    # ---- if --------------------------------------------------------------------------------
    def visit_If(self, node):
        cond = self.visit(node.test)
        if not isinstance(cond, tensor):  # constexpr: the dead branch is never compiled
            self.visit_body(node.body if _unwrap(cond) else node.orelse)
            return
        cond = self._condition(cond, node.test)
        if _first_return(node.body + node.orelse) is not None:
            return self._returning_if(node, cond)
        live = self.scope
        tmp = self._scratch(2)
        branches = []
        for i, stmts in enumerate((node.body, node.orelse)):
            block = tmp.regions[i].blocks.append()
            branches.append((block, *self._visit_region(block, live, stmts)))
        names = list(dict.fromkeys([*branches[0][2], *branches[1][2]]))
        merged = {}  # name -> (specs per leaf, then value, else value) or Undefined
        for name in names:
            tv, ev = (br[1].get(name, _MISSING) for br in branches)
            where = branches[1][2].get(name) or branches[0][2].get(name)
            bad = [v for v in (tv, ev) if v is _MISSING or isinstance(v, Undefined)]
            if bad:
                merged[name] = bad[0] if len(bad) == 2 and bad[0] is not _MISSING else \
                    Undefined(f"`{name}` is defined in only one branch of the `if`")
                continue
            # (a runtime-scalar `x if c else y` is this `if`, assigning a temporary: visit_IfExp)
            message = TERNARY_MESSAGE if getattr(node, "tw_ternary", False) else \
                MISMATCH_MESSAGE.format(name=name)
            specs = self._merge(tv, ev, where, message)
            merged[name] = (specs, tv, ev)
        results = self._build_if(node, cond, tmp, branches, [m for m in merged.values()
                                                             if not isinstance(m, Undefined)])
        for name, m in merged.items():
            where = branches[1][2].get(name) or branches[0][2].get(name)
            self._define(name, m if isinstance(m, Undefined) else results.pop(0), where)

    def _merge(self, a, b, where, message) -> list:
        """The per-leaf types (see _merge_leaf) of a value that is `a` or `b`."""
        if _structure(a) != _structure(b):
            raise self.error(where, message.format(_describe(a), _describe(b)))
        specs = []
        for x, y in zip(_leaves(a), _leaves(b)):
            s = _merge_leaf(x, y)
            if s is None:
                raise self.error(where, message.format(_describe(x), _describe(y)))
            specs.append(s)
        return specs

    def _build_if(self, node, cond, tmp, branches, merged) -> list:
        """The scf.if yielding the runtime leaves of `merged` ([(specs, then value, else
        value)]), with the branches' code moved in from `tmp`; returns the merged values."""
        specs = [s for m in merged for s in m[0] if s is not _STATIC]
        types = [tensor_ir_type(dt, shape) for dt, shape in specs]
        has_else = bool(types) or any(True for _ in branches[1][0].operations)
        if_op = scf.IfOp(cond.handle, types, has_else=has_else, loc=self.b.loc)
        targets = [if_op.then_block] + ([if_op.else_block] if has_else else [])
        for k, (block, target) in enumerate(zip([br[0] for br in branches], targets)):
            with ir.InsertionPoint(block):
                yields = [self._materialize(v, s) for m in merged
                          for v, s in zip(_leaves(m[1 + k]), m[0]) if s is not _STATIC]
                scf.YieldOp(yields, loc=self.b.loc)
            _move_ops(block, target)
        tmp.erase()
        it = iter(if_op.results)
        out = []
        for m_specs, tv, _ in merged:
            leaves = [x if s is _STATIC else tensor(next(it), *s)
                      for x, s in zip(_leaves(tv), m_specs)]
            out.append(_rebuild(tv, iter(leaves)))
        return out

    def _returning_if(self, node, cond):
        """A runtime `if` containing `return`: the rest of the function runs in each branch
        that does not return, and the `if` yields the returned value."""
        if self.loop_depth:
            raise self.error(_first_return(node.body + node.orelse), RETURN_IN_LOOP_MESSAGE)
        rest = [s for frame in reversed(self.cont) for s in frame]
        tmp = self._scratch(2)
        branches, values = [], []
        for i, stmts in enumerate((node.body, node.orelse)):
            block = tmp.regions[i].blocks.append()
            self.returned, self.return_node = None, None
            try:
                self._visit_region(block, self.scope, stmts + rest)
            except ReturnSignal:
                pass  # self.returned holds the value; falling off the end returns None
            branches.append((block, {}, {}))
            values.append((self.returned, self.return_node or node))
        (tv, tnode), (ev, enode) = values
        if (tv is None) != (ev is None):
            raise self.error(tnode if tv is not None else enode,
                             "this function returns a value on some paths and nothing on "
                             "others")
        merged = []
        if tv is not None:
            merged = [(self._merge(tv, ev, enode, RETURN_TYPES_MESSAGE),
                       tv, ev)]
        results = self._build_if(node, cond, tmp, branches, merged)
        self.returned = results[0] if results else None
        self.return_node = tnode if tv is not None else node
        raise ReturnSignal()

    def visit_Return(self, node):
        if self.loop_depth:
            raise self.error(node, RETURN_IN_LOOP_MESSAGE)
        value = self.visit(node.value) if node.value is not None else None
        self.returned = None if _unwrap(value) is None else value  # `return None` too
        self.return_node = node
        if not self.call_chain and self.returned is not None:
            raise self.error(node, KERNEL_RETURN_MESSAGE)
        raise ReturnSignal()

    def visit_Break(self, node):
        raise self.error(node, BREAK_MESSAGE)

    def visit_Continue(self, node):
        raise self.error(node, CONTINUE_MESSAGE)

    # ---- loops -----------------------------------------------------------------------------
    def visit_For(self, node):
        it = node.iter
        fn = _unwrap(self.visit(it.func)) if isinstance(it, ast.Call) else None
        if fn not in (builtins.range, control.range, control.static_range):
            raise self.error(node, FOR_ITER_MESSAGE)
        if node.orelse:
            raise self.error(node, LOOP_ELSE_MESSAGE["For"])
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a single name")
        args = [self.visit(a) for a in it.args]
        kwargs = {k.arg: self.visit(k.value) for k in it.keywords}
        if fn is builtins.range:
            if kwargs or not 1 <= len(args) <= 3:
                raise self.error(node, "range() takes 1 to 3 positional arguments")
            fn = control.range
        r = fn(*args, **kwargs)  # a TypeError (bad arguments) becomes a CompilationError
        if isinstance(r, control.static_range):
            return self._static_for(node, r)
        return self._runtime_for(node, r)

    def _static_for(self, node, r):
        bounds = []
        for v in (r.start, r.end, r.step):
            x = _unwrap(v)
            if isinstance(x, tensor) or not isinstance(x, int):
                raise self.error(node, "tl.static_range bounds must be constexpr ints (use "
                                       "tl.range for runtime bounds)")
            bounds.append(x)
        if bounds[2] == 0:
            raise self.error(node, "tl.static_range() step must not be zero")
        for i in builtins.range(*bounds):
            self.assign(node.target, constexpr(i), node, scalar=False)  # (a constexpr: Triton's)
            self.visit_body(node.body)

    def _runtime_for(self, node, r):
        b, loc = self.b, self.b.loc
        hints = {}
        for name in _LOOP_HINTS:
            v = _unwrap(getattr(r, name))
            if isinstance(v, tensor):
                raise self.error(node, f"tl.range {name} must be a constexpr")
            if v is not None and v is not False:
                hints[f"tile.{name}"] = ir.UnitAttr.get() if v is True else \
                    ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))
        dts = []
        for what, v in (("start", r.start), ("end", r.end), ("step", r.step)):
            x = _unwrap(v)
            if isinstance(x, tensor):
                if x.shape or not x.dtype.is_int() or x.dtype.is_bool():
                    raise self.error(node, f"range() {what} must be an integer scalar, got "
                                           f"{_describe(x)}")
                dts.append(x.dtype)
            elif isinstance(x, int) and not isinstance(x, bool):
                dts.append(S.python_scalar_dtype(x))
            else:
                raise self.error(node, f"range() {what} must be an integer, got {x!r}")
        # the loop variable's type: the bounds' promoted type (int32 unless one is wider)
        dt = functools.reduce(S.integer_promote, dts)

        def as_dt(v):
            x = _unwrap(v)
            return S.cast(b, x, dt) if isinstance(x, tensor) else b.constant(x, dt)
        start, end = as_dt(r.start), as_dt(r.end)
        step = _unwrap(r.step)
        if not isinstance(step, tensor):
            if step == 0:
                raise self.error(node, "range() step must not be zero")
            if step > 0:
                return self._emit_for(node, start, end, b.constant(step, dt), dt, hints,
                                      lambda iv: iv)
            # run upward from `end` and mirror: start + end - iv takes start, start+step, ...
            both = S.binary(b, "add", start, end)
            return self._emit_for(node, end, start, b.constant(-step, dt), dt, hints,
                                  lambda iv: S.binary(b, "sub", both, iv))
        step = S.cast(b, step, dt)
        if dt.is_int_unsigned():
            return self._emit_for(node, start, end, step, dt, hints, lambda iv: iv)
        # a step of unknown sign: iterate k over the trip count, i = start + k * step
        zero, one = b.constant(0, dt), b.constant(1, dt)
        up = S.compare(b, "gt", step, zero)
        dist = S.where(b, up, S.binary(b, "sub", end, start), S.binary(b, "sub", start, end))
        nonzero = S.compare(b, "ne", step, zero)
        size = S.where(b, nonzero, S.where(b, up, step, S.minus(b, step)), one)
        trips = S.binary(b, "add", S.binary(b, "floordiv", S.binary(b, "sub", dist, one),
                                            size), one)
        ok = S.binary(b, "and", S.compare(b, "gt", dist, zero), nonzero)
        trips = S.where(b, ok, trips, zero)
        self.b.loc = loc
        return self._emit_for(node, zero, trips, one, dt, hints,
                              lambda k: S.binary(b, "add", start, S.binary(b, "mul", k, step)))

    def _emit_for(self, node, lb, ub, step, dt, hints, var_of):
        var = node.target.id
        carried = self._carried(node, node.body, var, dt)
        flat = _runtime_leaves(carried.values())
        for_op = scf.ForOp(lb.handle, ub.handle, step.handle, [t.handle for t in flat],
                           loc=self.b.loc)
        for k, v in hints.items():
            for_op.operation.attributes[k] = v
        body = for_op.body
        args = list(body.arguments)
        scope = {**self.scope, **_bind(carried, args[1:])}
        with ir.InsertionPoint(body):
            scope[var] = var_of(tensor(args[0], dt))
        after, assigned = self._visit_region(body, scope, node.body, loop=True)
        with ir.InsertionPoint(body):
            scf.YieldOp(self._yields(carried, after, assigned, node), loc=self.b.loc)
        self._after_loop(node, carried, _bind(carried, for_op.results), after, assigned, var)

    def visit_While(self, node):
        if node.orelse:
            raise self.error(node, LOOP_ELSE_MESSAGE["While"])
        loc = self.b.loc
        carried = self._carried(node, node.body)
        flat = _runtime_leaves(carried.values())
        types = [t.handle.type for t in flat]
        w = scf.WhileOp(types, [t.handle for t in flat], loc=loc)
        before = w.before.blocks.append(*types, arg_locs=[loc] * len(types))
        saved = self.scope
        self.scope = {**saved, **_bind(carried, before.arguments)}
        try:
            with ir.InsertionPoint(before):
                cond = self.visit(node.test)
                if isinstance(cond, tensor):
                    cond = self._condition(cond, node.test)
                elif _unwrap(cond):
                    raise self.error(node.test, WHILE_TRUE_MESSAGE)
                else:
                    cond = self.b.constant(False, core.int1)
                scf.ConditionOp(cond.handle, list(before.arguments), loc=loc)
        finally:
            self.scope, self.b.loc = saved, loc
        after_block = w.after.blocks.append(*types, arg_locs=[loc] * len(types))
        scope = {**self.scope, **_bind(carried, after_block.arguments)}
        after, assigned = self._visit_region(after_block, scope, node.body, loop=True)
        with ir.InsertionPoint(after_block):
            scf.YieldOp(self._yields(carried, after, assigned, node), loc=loc)
        self._after_loop(node, carried, _bind(carried, w.results), after, assigned, None)

    def _dry_run(self, stmts, bind):
        """Visits a loop body into a scratch block that is then erased; returns (name -> value
        after the body, name -> assignment node) for the names the body assigns."""
        scratch = self._scratch(1)
        block = scratch.regions[0].blocks.append()
        after, assigned = self._visit_region(block, {**self.scope, **bind(block)}, stmts,
                                             loop=True)
        scratch.erase()
        return {n: after[n] for n in assigned}, assigned

    def _carried(self, node, stmts, var=None, var_dt=None) -> dict:
        """The loop-carried names of a loop body -> their value entering the loop."""
        carried = {}
        loc = self.b.loc
        while True:
            def bind(block):
                args = [block.add_argument(t.handle.type, loc)
                        for t in _runtime_leaves(carried.values())]
                over = _bind(carried, args)
                if var is not None:
                    over[var] = tensor(block.add_argument(to_ir(var_dt), loc), var_dt)
                return over
            after, assigned = self._dry_run(stmts, bind)
            promoted = False
            for name, val in after.items():
                # a carried tuple may have compile-time leaves still to promote
                live = carried.get(name, self.scope.get(name, _MISSING))
                if name == var or live is _MISSING or isinstance(live, Undefined) or \
                        isinstance(val, Undefined):
                    continue
                init = self._loop_init(name, live, val, assigned[name])
                if init is not None:
                    carried[name] = init
                    promoted |= any(isinstance(n, tensor) and not isinstance(o, tensor)
                                    for o, n in zip(_leaves(live), _leaves(init)))
            self.b.loc = loc
            if not promoted:
                return carried

    def _loop_init(self, name, live, val, where):
        """The value `name` enters the loop with (its Python numbers made runtime scalars),
        or None when it stays one compile-time value."""
        if _structure(live) != _structure(val):
            raise self.error(where, f"loop-carried value `{name}` changes type from "
                                    f"{_describe(live)} to {_describe(val)}")
        out, runtime = [], False
        for old, new in zip(_leaves(live), _leaves(val)):
            x = _number(old)
            if isinstance(old, tensor) or (x is None and _same_static(old, new)):
                out.append(old)
                runtime |= isinstance(old, tensor)
                continue
            if x is None:
                raise self.error(where, f"`{name}` holds a compile-time value "
                                        f"({_describe(old)}) that cannot change in a runtime "
                                        f"loop")
            y = _number(new)
            if y is not None and _same_static(x, y):
                out.append(old)
                continue
            # a Python number assigned in the loop enters it as a runtime scalar of its own
            # weak type (int32, int64, fp32, int1), as in Triton: `acc = 0.0` accumulates
            # fp16 values in fp32, and `acc = 0` summing floats is a type change
            dt = _number_dtype(x, y) if y is not None else S.python_scalar_dtype(x)
            out.append(self.b.constant(x, dt))
            runtime = True
        return _rebuild(live, iter(out)) if runtime else None

    def _yields(self, carried, after, assigned, node) -> list:
        out = []
        for name, init in carried.items():
            val, where = after[name], assigned.get(name, node)
            if isinstance(val, Undefined) or _structure(val) != _structure(init):
                raise self.error(where, f"loop-carried value `{name}` changes type from "
                                        f"{_describe(init)} to {_describe(val)}")
            for old, new in zip(_leaves(init), _leaves(val)):
                if not isinstance(old, tensor):
                    if not _same_static(old, new):
                        raise self.error(where, f"`{name}` holds a compile-time value "
                                                f"({_describe(old)}) that cannot change in a "
                                                f"runtime loop")
                    continue
                if isinstance(new, tensor) and new.dtype == old.dtype and new.shape == old.shape:
                    out.append(new.handle)
                elif not isinstance(new, tensor) and _number(new) is not None and \
                        not old.shape and _fits(_number(new), old.dtype):
                    out.append(self.b.constant(_number(new), old.dtype).handle)
                else:
                    raise self.error(where, f"loop-carried value `{name}` changes type from "
                                            f"{_describe(old)} to {_describe(new)}")
        return out

    def _after_loop(self, node, carried, results, after, assigned, var):
        for name, where in assigned.items():
            if name in results:
                self._define(name, results[name], where)
            elif name == var:
                continue
            elif isinstance(after[name], Undefined):
                self._define(name, after[name], where)
            elif name in self.scope and not isinstance(self.scope[name], Undefined):
                self.assigned[name] = where  # a compile-time value the loop leaves unchanged
            else:
                self._define(name, Undefined(
                    f"`{name}` is assigned in a loop but not before it: define it before the "
                    f"loop to use it after"), where)
        if var is not None:
            self._define(var, Undefined(f"the loop variable `{var}` is not defined after its "
                                         f"loop (the loop runs at run time)"), node)
