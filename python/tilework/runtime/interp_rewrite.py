"""The interpreter runs a kernel's own Python function, where `and`, `or`, `not` and
`x if c else y` would ask a tile for one truth value; the compiler takes them elementwise
(Triton's rule: frontend/semantic.py `bool_op`, `logical_not`, `where`).  A kernel using them
is recompiled here from its source with those expressions turned into calls of the same
semantics, at the same file:line (breakpoints and tracebacks still work); other kernels keep
their code object.  Compile-time values keep Python's short-circuit in both.

Two more forms are the compiler's only through the source: a tuple or list literal is a
`tl.tuple` (the compiler's `visit_Tuple`; an index `x[None, :]` stays a plain tuple), and
`v.type` of a compile-time value (a constexpr parameter, passed as a plain Python value) is
its `tl.constexpr_type`, as `tl.constexpr(v).type`; `v.dtype` of a Python int, float or bool
(`value = 1; value.dtype`) is the dtype the compiler gives that constant (int32, ...), and its
`.to(...)` / `.cast(...)` those of that scalar (`acc = 0; acc = acc.to(tl.int64)`).  And
`assert c, msg` is `tl.device_assert(c, msg)`, as the compiler's (a no-op without debug).
An assigned number (`a = -7`; not `c: tl.constexpr = ...`) is `frontend/scalar_fold.py`'s scalar,
as the compiler's `assign`: its operators are Triton's int32/fp32 ones (so every kernel with an
assignment runs rewritten; the language's own @jit code keeps Python's numbers)."""
from __future__ import annotations

import ast
import copy
import itertools
import types
import warnings

from ..frontend import semantic as S
from ..frontend.codegen import SCALAR_CONSTANT_METHODS, comprehension_message, fstring_message
from ..frontend.kernel_forms import NOT_TUPLE_MESSAGE
from ..frontend.scalar_fold import as_scalar, is_number
from ..language import core
from ..language.core import tensor
from ..language.debug import device_assert
from ..language.tuples import tuple as tl_tuple

_PREFIX = "__tw_"  # names the rewrite adds to the kernel's globals and locals


def _builder():
    return core.active_builder()


def _stops(op, x):
    return S.bool_op_stops(op, x)


def _combine(op, x, y):
    if S.bool_op_on_tiles(x, y):  # (at the kernel's line, its caller's)
        warnings.warn(S.BOOL_OP_TILE_WARNING, UserWarning, stacklevel=2)
    return S.bool_op(_builder(), op, x, y)


def _not(x):
    if isinstance(x.value if isinstance(x, core.constexpr) else x, tuple):
        raise TypeError(NOT_TUPLE_MESSAGE)  # (as the compiler, and Triton)
    return S.logical_not(_builder(), x) if isinstance(x, tensor) else not x


def _is_tile(x):
    # a scalar (0-d) condition picks one side and evaluates only it, as the compiler's `if`
    # (its side effects, stores, happen only on that side); a tile's is elementwise `where`
    return isinstance(x, tensor) and bool(x.shape)


def _where(c, x, y):
    return S.where(_builder(), c, x, y)


def _tuple(values):
    return tl_tuple(values)


_NO_TYPE = object()


def _type(v):
    t = getattr(v, "type", _NO_TYPE)
    if t is not _NO_TYPE:
        return t
    if isinstance(v, (tensor, tuple)):
        raise AttributeError(f"{type(v).__name__!r} object has no attribute 'type'")
    return core.constexpr_type(v)  # a compile-time value: as the compiler's constexpr


def _dtype(v):
    if is_number(v):
        return S.python_scalar_dtype(v)  # as the compiler's `visit_Attribute`
    return v.dtype


def _method(v, name):
    if is_number(v):  # `acc = 0; acc.to(tl.int64)`: as the compiler's
        return getattr(S.to_tensor(_builder(), v), name)
    return getattr(v, name)


def _comp_iter(seq):
    v = seq.value if isinstance(seq, core.constexpr) else seq
    if not isinstance(v, tuple):
        raise TypeError(comprehension_message(v))
    return v


def _assert(cond, msg=""):
    # `assert c, msg` is `tl.device_assert(c, msg)`, as the compiler's (Triton's code generator)
    device_assert(cond, msg)


def _fmt(v):
    if isinstance(v, tensor):
        raise TypeError(fstring_message(v))
    return v.value if isinstance(v, core.constexpr) else v


HELPERS = {f"{_PREFIX}comp_iter": _comp_iter, f"{_PREFIX}fmt": _fmt,
           f"{_PREFIX}stops": _stops, f"{_PREFIX}combine": _combine, f"{_PREFIX}not": _not,
           f"{_PREFIX}is_tile": _is_tile, f"{_PREFIX}where": _where,
           f"{_PREFIX}tuple": _tuple, f"{_PREFIX}type": _type, f"{_PREFIX}dtype": _dtype,
           f"{_PREFIX}method": _method, f"{_PREFIX}assert": _assert,
           f"{_PREFIX}scalar": as_scalar}


def _name(n, ctx=None):
    return ast.Name(n, ctx or ast.Load())


def _call(f, *args):
    return ast.Call(_name(_PREFIX + f), list(args), [])


class _Rewriter(ast.NodeTransformer):
    def __init__(self, scalars=True):
        self.temps = itertools.count()
        self.scalars = scalars  # assigned numbers as Triton's scalars (not the language's own)

    def _temp(self):
        return f"{_PREFIX}t{next(self.temps)}"

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        op = ast.Constant("and" if isinstance(node.op, ast.And) else "or")
        acc = node.values[0]
        for v in node.values[1:]:
            # (combine(t, v) if not stops(t := acc) else t): v is evaluated only if needed
            t = self._temp()
            acc = ast.IfExp(
                test=ast.UnaryOp(ast.Not(), _call("stops", op, ast.NamedExpr(
                    _name(t, ast.Store()), acc))),
                body=_call("combine", op, _name(t), v), orelse=_name(t))
        return ast.copy_location(acc, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("not", node.operand), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        # (where(t, a, b) if is_tile(t := c) else (a if t else b)): a runtime scalar `t` is
        # taken by its truth value, so only the chosen side runs
        t = self._temp()
        return ast.copy_location(ast.IfExp(
            test=_call("is_tile", ast.NamedExpr(_name(t, ast.Store()), node.test)),
            body=_call("where", _name(t), node.body, node.orelse),
            orelse=ast.IfExp(_name(t), copy.deepcopy(node.body), copy.deepcopy(node.orelse))),
            node)

    def visit_Tuple(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(_call("tuple", ast.List(node.elts, ast.Load())), node)

    visit_List = visit_Tuple

    def visit_ListComp(self, node):
        # a tuple comprehension, as the compiler's: over a tuple, giving a tl.tuple
        self.generic_visit(node)
        node.generators[0].iter = _call("comp_iter", node.generators[0].iter)
        return ast.copy_location(_call("tuple", node), node)

    def visit_FormattedValue(self, node):
        self.generic_visit(node)
        node.value = _call("fmt", node.value)  # compile-time values only, as the compiler's
        return node

    def visit_Subscript(self, node):
        if isinstance(node.slice, ast.Tuple):  # an index stays a plain tuple
            node.value = self.visit(node.value)
            node.slice.elts = [self.visit(e) for e in node.slice.elts]
            return node
        return self.generic_visit(node)

    def visit_Assign(self, node):
        # an assigned number is Triton's scalar: its operators are those (the compiler's
        # `assign`); `c: tl.constexpr = ...` stays Python's
        self.generic_visit(node)
        if self.scalars:
            node.value = ast.copy_location(_call("scalar", node.value), node.value)
        return node

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        if self.scalars and node.value is not None and \
                not _constexpr_annotation(node.annotation):
            node.value = ast.copy_location(_call("scalar", node.value), node.value)
        return node

    def visit_Assert(self, node):
        self.generic_visit(node)
        args = [node.test] + ([node.msg] if node.msg is not None else [])
        return ast.copy_location(ast.Expr(_call("assert", *args)), node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr in ("type", "dtype") and isinstance(node.ctx, ast.Load):
            return ast.copy_location(_call(node.attr, node.value), node)
        if node.attr in SCALAR_CONSTANT_METHODS and isinstance(node.ctx, ast.Load):
            return ast.copy_location(_call("method", node.value, ast.Constant(node.attr)), node)
        return node


def _constexpr_annotation(ann) -> bool:
    return getattr(ann, "attr", getattr(ann, "id", None)) == "constexpr"


def _needs_rewrite(fdef, scalars: bool) -> bool:
    slices = {id(n.slice) for n in ast.walk(fdef) if isinstance(n, ast.Subscript)}
    return any(isinstance(n, (ast.BoolOp, ast.IfExp, ast.ListComp, ast.FormattedValue,
                              ast.Assert)) or
               (scalars and (isinstance(n, ast.Assign) or (
                   isinstance(n, ast.AnnAssign) and not _constexpr_annotation(n.annotation)))) or
               (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)) or
               (isinstance(n, (ast.Tuple, ast.List)) and isinstance(n.ctx, ast.Load)
                and id(n) not in slices) or
               (isinstance(n, ast.Attribute) and
                n.attr in ("type", "dtype", *SCALAR_CONSTANT_METHODS))
               for n in ast.walk(fdef))


def rewritten_code(jfn) -> types.CodeType | None:
    """`jfn`'s code object with `and`/`or`/`not`/`if`-expressions, tuple literals and `.type`
    rewritten, or None when it has none of them (or no source)."""
    key = jfn.fn.__code__
    if key not in _CODES:
        _CODES[key] = None if getattr(jfn, "_no_source", None) else _rewrite(jfn)
    return _CODES[key]


_CODES: dict = {}  # the kernel's code object -> its rewritten one (None: none needed)


def _rewrite(jfn):
    tree = copy.deepcopy(jfn.parse())
    fdef = tree.body[0]
    scalars = not jfn.__module__.startswith("tilework.language.")  # (as the compiler's)
    if not _needs_rewrite(fdef, scalars):
        return None
    fdef = _Rewriter(scalars).visit(fdef)
    name = fdef.name
    fdef.name = f"{_PREFIX}def"  # (its own name stays a global: a recursive call)
    free = jfn.fn.__code__.co_freevars
    # the free variables stay free: the def is nested in a function binding them
    outer = ast.FunctionDef(
        name=f"{_PREFIX}outer", args=ast.arguments([], [], None, [], [], None, []),
        body=[*(ast.Assign([_name(v, ast.Store())], ast.Constant(None)) for v in free),
              fdef, ast.Return(_name(fdef.name))], decorator_list=[], returns=None)
    module = ast.Module([outer], [])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, jfn.first_line - 1)
    compiled = compile(module, jfn.filename, "exec")
    outer_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    code = next(c for c in outer_code.co_consts
                if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    return code.replace(co_name=name, co_qualname=jfn.fn.__code__.co_qualname)


def closure_for(code: types.CodeType, fn: types.FunctionType):
    """`fn`'s closure cells in the order `code` names its free variables."""
    if not code.co_freevars:
        return None
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    return tuple(cells[v] for v in code.co_freevars)


def code_to_run(jfn, g: dict):
    """The code object and closure the interpreter runs for `jfn`: its own, or the rewritten
    ones (then the helpers are added to `g`, the globals it will run with)."""
    f = jfn.fn
    code = rewritten_code(jfn)
    if code is None:
        return f.__code__, f.__closure__
    g.update(HELPERS)
    return code, closure_for(code, f)
