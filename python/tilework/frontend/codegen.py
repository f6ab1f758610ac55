"""The AST visitor: a @jit function's Python AST -> a `func.func` of tile IR.

Python operators map to `semantic` through the tables below; `tl.*` builtins map to
`ops.IMPLS`; nested @jit functions are inlined.  Every error becomes a `CompilationError`
pointing at the kernel's source line (with the chain of nested calls).
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
import types
import warnings

import mlir.ir as ir
from mlir.dialects import func as func_d
from tilework.dialects.tensor_maps import drop_unused_tensor_maps, settle_global_scratch

from ..errors import CompilationError, CompileTimeAssertionFailure
from ..language import core
from ..language.aggregate import (BoundMember, is_aggregate, is_aggregate_class,
                                  scalar_conversion)
from ..language.core import constexpr, tensor
from ..language.function import JITFunction, extern_names, is_constexpr_global
from ..language.tuples import (is_namedtuple_class, is_tuple_spec, named_tuple,
                               runtime_params, tuple_value)
from ..language.tuples import tuple as tl_tuple
from . import semantic as S
from .ops import IMPLS
from .ops_control import KERNEL_RETURN_MESSAGE, ControlFlow, ReturnSignal, Undefined
from .ops_descriptor import (SCRATCH_ATTR, TMA_ATTR, descriptor_from_args, descriptor_params,
                             is_descriptor_type, scratch_param, tma_param)
from .ops_shape import subscript
from .kernel_forms import (MAX_RECURSION, NOT_TUPLE_MESSAGE, def_source, min_max,
                           recursion_message, undefined_message)
from .scalar_fold import as_scalar, fold, is_number, is_scalar_operation
from .semantic import SemanticError, StaticAssertionError
from .types import to_ir

# Python operator -> semantic op name
BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.BitAnd: "and", ast.BitOr: "or",
    ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift",
}
CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}

# the same operators on compile-time values
PY_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow,
}
PY_CMPOPS = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
PY_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
            ast.Not: operator.not_}

# Python builtins usable on compile-time values inside kernels
PY_BUILTINS = {"range", "min", "max", "int", "float", "bool", "len", "abs", "print", "isinstance",
               "tuple", "list", "getattr", "hasattr", "enumerate", "zip", "str"}

LANGUAGE = "tilework.language."


# the methods a Python constant takes as the scalar Triton makes of it (`0 .to(tl.int64)`)
SCALAR_CONSTANT_METHODS = ("to", "cast")


def readable_global(v) -> bool:
    """Whether a kernel may read global `v` (Triton's rule): the kernel's cache key holds the
    values of constexpr and dtype globals; modules, @jit functions, builtins and other
    callables are code, not data."""
    return (isinstance(v, (constexpr, core.dtype, JITFunction, types.ModuleType)) or
            hasattr(v, "__tilework_builtin__") or callable(v))


_UNSUPPORTED_STMT = {
    ast.With: "`with` statements", ast.Try: "`try` statements", ast.Raise: "`raise`",
    ast.ClassDef: "class definitions", ast.FunctionDef: "nested function definitions",
    ast.Lambda: "lambdas", ast.Global: "`global`", ast.Nonlocal: "`nonlocal`",
    ast.Delete: "`del`", ast.Import: "imports", ast.ImportFrom: "imports",
    ast.AsyncFunctionDef: "async functions", ast.Yield: "`yield`",
}


def unsupported_message(node: ast.AST) -> str | None:
    """The error for a statement or expression the code generator has no visitor for (the
    interpreter's static check asks the same)."""
    if isinstance(node, (ast.Assign, ast.AugAssign)) and \
            any(isinstance(n, ast.Attribute) for t in _targets(node) for n in ast.walk(t)):
        return ATTRIBUTE_ASSIGN_MESSAGE
    if isinstance(node, ast.Assign) and not all(map(_names_only, node.targets)):
        return ASSIGN_TARGET_MESSAGE  # (`t[0] = v`: tuples and tiles are values)
    if isinstance(node, ast.ListComp) and (len(node.generators) != 1 or
                                           node.generators[0].ifs or
                                           node.generators[0].is_async):
        return COMPREHENSION_FORM_MESSAGE
    if hasattr(CodeGenerator, "visit_" + type(node).__name__):
        return None
    what = _UNSUPPORTED_STMT.get(type(node), f"`{type(node).__name__}`")
    return f"unsupported Python construct: {what}"


def comprehension_message(seq) -> str:
    return (f"comprehensions iterate over tuples (unrolled at compile time); got "
            f"{'a tile' if isinstance(seq, tensor) else type(seq).__name__}")


def fstring_message(v) -> str:
    # (Triton's words first, so that its tests' `match=` holds)
    return (f"Cannot evaluate f-string containing non-constexpr conversion values: an "
            f"f-string takes compile-time values, got a runtime value of type {v.dtype}")


COMPREHENSION_FORM_MESSAGE = "comprehensions take one `for` and no `if` (Triton's tuple " \
                             "comprehension)"


ASSIGN_TARGET_MESSAGE = "only assignment to names and tuples of names is supported"
ATTRIBUTE_ASSIGN_MESSAGE = ("Attribute assignment is not supported (as in Triton): an aggregate "
                            "is a value; build a new one")


def _targets(node) -> list:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _names_only(target) -> bool:
    return isinstance(target, ast.Name) or (isinstance(target, (ast.Tuple, ast.List)) and
                                            all(map(_names_only, target.elts)))


def _target_names(target) -> list:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


CHAINED_COMPARE_MESSAGE = "chained comparisons are not supported; split them with `&`"


def tile_call_message(fn) -> str:
    what = getattr(fn, "__name__", repr(fn))
    return (f"unsupported call to `{what}` with tile arguments: only tl builtins and @jit "
            f"functions take tiles")


# Python builtins the compiler refuses on tiles and the interpreter refuses too (it leaves
# int/float/bool/str/isinstance/getattr/hasattr to Python: debugging helpers, as Triton's
# interpreter; min/max are elementwise, print is device_print, range takes runtime bounds)
TILELESS_BUILTINS = frozenset({"abs", "len", "tuple", "list", "enumerate", "zip"})


def is_const(x) -> bool:
    return not isinstance(x, tensor)


def unwrap(x):
    return x.value if isinstance(x, constexpr) else x


class CodeGenerator(ControlFlow, ast.NodeVisitor):
    def __init__(self, jit_fn, builder: S.Builder, scope: dict, call_chain=(), call_at=()):
        self.fn = jit_fn
        self.b = builder
        self.scope = dict(scope)
        self.call_chain = call_chain
        self.call_at = call_at  # Triton's `at L:C:` of each call in the chain
        self.def_line = jit_fn.parse().body[0].lineno  # (the source holds the decorators)
        self.filename = jit_fn.filename
        self.line_offset = jit_fn.first_line - 1
        self.col_offset = jit_fn.col_offset
        self.returned = None
        self.return_node = None
        # control flow (ops_control.py): names assigned in the current region -> node, the
        # statements after each enclosing statement list, and the runtime loop nesting
        self.assigned, self.cont, self.loop_depth = {}, [], 0

    # ---- locations and errors --------------------------------------------------------------
    def _pos(self, node):
        return self.line_offset + getattr(node, "lineno", 1), \
            getattr(node, "col_offset", 0) + self.col_offset

    def _at(self, node):
        """Triton's position of `node`: line from the `def` line as 1, column in the source."""
        return (getattr(node, "lineno", self.def_line) - self.def_line + 1,
                getattr(node, "col_offset", 0), self.fn.__name__)

    def error(self, node, message, cls=CompilationError) -> CompilationError:
        line, col = self._pos(node)
        return cls(message, self.filename, line, col, self.call_chain, self._at(node),
                   self.call_at, def_source(self.fn))

    def visit(self, node):
        if hasattr(node, "lineno"):
            line, col = self._pos(node)
            self.b.loc = ir.Location.file(self.filename, line, col + 1, self.b.context)
        try:
            return super().visit(node)
        except (CompilationError, ReturnSignal):
            raise
        except StaticAssertionError as e:  # (Triton's CompileTimeAssertionFailure: no cause)
            raise self.error(node, str(e), CompileTimeAssertionFailure) from None
        except SemanticError as e:  # the cause stays (`exc.__cause__`), as in Triton
            raise self.error(node, S.detail(e)) from e
        except RecursionError:
            raise self.error(node, recursion_message(self.fn.__name__)) from None
        except TypeError as e:
            raise self.error(node, str(e)) from e

    def generic_visit(self, node):
        raise self.error(node, unsupported_message(node))

    @staticmethod
    def global_message(name: str) -> str:
        return (f"cannot read global variable `{name}` in a kernel: kernels read only globals "
                f"that are tl.constexpr (`{name} = tl.constexpr(...)` or `{name}: tl.constexpr = "
                f"...`), dtypes, @jit "
                f"functions, modules, functions and classes")

    # ---- statements ------------------------------------------------------------------------
    def visit_body(self, stmts):
        for i, s in enumerate(stmts):
            self.cont.append(stmts[i + 1:])  # what follows s (a `return` in an `if` needs it)
            try:
                self.visit(s)
            finally:
                self.cont.pop()

    def visit_Expr(self, node):
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node):
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value, node)

    def visit_AnnAssign(self, node):
        if node.value is None:
            return
        ann = node.annotation  # `c: tl.constexpr = -7` stays a constexpr (not a scalar)
        const = getattr(ann, "attr", getattr(ann, "id", None)) == "constexpr"
        self.assign(node.target, self.visit(node.value), node, scalar=not const)

    def visit_AugAssign(self, node):
        if unsupported_message(node):
            raise self.error(node, unsupported_message(node))
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "augmented assignment only to names is supported")
        cur = self.lookup(node.target.id, node.target)
        self.assign(node.target, self.binop(node, node.op, cur, self.visit(node.value)), node)

    def assign(self, target, value, node, scalar=True):
        if isinstance(target, ast.Name):
            if scalar and not self.fn.__module__.startswith(LANGUAGE):
                # Triton makes an assigned number a scalar: its operators are those (the
                # language's own @jit code, libdevice's, is written to Python's: exempt)
                value = as_scalar(value)
            if isinstance(value, (int, float, bool)) and not isinstance(value, tensor):
                value = constexpr(value)
            self.scope[target.id] = value
            self.assigned[target.id] = node
        elif isinstance(target, (ast.Tuple, ast.List)):
            vals = unwrap(value)
            if isinstance(vals, tensor):
                raise self.error(node, core.unpack_message(vals))  # (interpreter's too)
            if not isinstance(vals, (tuple, list)) or len(vals) != len(target.elts):
                raise self.error(node, f"cannot unpack {value!r} into {len(target.elts)} names")
            for t, v in zip(target.elts, vals):
                self.assign(t, v, node, scalar)
        else:
            raise self.error(target, ATTRIBUTE_ASSIGN_MESSAGE if isinstance(target, ast.Attribute)
                             else ASSIGN_TARGET_MESSAGE)

    def visit_Assert(self, node):
        # Triton's code generator: `assert c, msg` is `tl.device_assert(c, msg)`, a no-op
        # without debug, for a compile-time `c` too (tl.static_assert checks at compile time)
        cond = self.visit(node.test)
        msg = self.visit(node.msg) if node.msg is not None else constexpr("")
        self.call_builtin("device_assert", [cond, msg], {}, node)

    # ---- expressions -----------------------------------------------------------------------
    def visit_Constant(self, node):
        return constexpr(node.value)

    def visit_Name(self, node):
        return self.lookup(node.id, node)

    def lookup(self, name, node):
        if name in self.scope:
            v = self.scope[name]
            if isinstance(v, Undefined):
                raise self.error(node, v.message)
            return v
        g = self.fn.fn.__globals__
        if name in g:
            v = g[name]
            if not readable_global(v) and not is_constexpr_global(g, name) and \
                    not self.fn.__module__.startswith(LANGUAGE):
                # as Triton: a plain global would be baked into the kernel, and changing it
                # would not recompile (the cache key holds constexpr globals' values only).
                # The language's own @jit code (tl.random) is part of the compiler's hash.
                raise self.error(node, self.global_message(name))
            return constexpr(v) if isinstance(v, (int, float, bool)) else v
        if name in PY_BUILTINS:
            return getattr(builtins, name)
        if hasattr(builtins, name):
            raise self.error(node, f"unsupported builtin `{name}` in a kernel")
        raise self.error(node, undefined_message(name, self.fn.fn))

    def visit_Tuple(self, node):
        # every tuple a kernel builds is a tl.tuple (Triton's rule; lists too)
        return tl_tuple(self.visit(e) for e in node.elts)

    visit_List = visit_Tuple

    def visit_ListComp(self, node):
        # Triton's tuple comprehension, unrolled at compile time: `[f(v) for v in t]` over a
        # tuple `t` is a tl.tuple (one `for` and no `if`: the static check's rule)
        if unsupported_message(node):
            raise self.error(node, unsupported_message(node))
        comp = node.generators[0]
        seq = unwrap(self.visit(comp.iter))
        if not isinstance(seq, tuple):
            raise self.error(comp.iter, comprehension_message(seq))
        saved = {n: self.scope[n] for n in _target_names(comp.target) if n in self.scope}
        out = []
        for item in seq:
            self.assign(comp.target, item, node, scalar=False)
            out.append(self.visit(node.elt))
        for n in _target_names(comp.target):  # (the comprehension's names stay in it)
            self.scope.pop(n, None)
            self.assigned.pop(n, None)
        self.scope.update(saved)
        return tl_tuple(out)

    def visit_JoinedStr(self, node):
        # an f-string of compile-time values is a compile-time string (as Triton)
        return constexpr("".join(str(unwrap(self.visit(v))) for v in node.values))

    def visit_FormattedValue(self, node):
        v = self.visit(node.value)
        if isinstance(v, tensor):
            raise self.error(node.value, fstring_message(v))
        v = unwrap(v)
        v = {-1: v, ord("s"): str(v), ord("r"): repr(v), ord("a"): ascii(v)}[node.conversion]
        spec = unwrap(self.visit(node.format_spec)) if node.format_spec is not None else ""
        return constexpr(format(v, spec))

    def visit_BinOp(self, node):
        return self.binop(node, node.op, self.visit(node.left), self.visit(node.right))

    def binop(self, node, op, lhs, rhs):
        if is_aggregate(unwrap(lhs)) or is_aggregate(unwrap(rhs)):
            return self.aggregate_operator(node, op, unwrap(lhs), unwrap(rhs))
        if is_const(lhs) and is_const(rhs):
            if is_scalar_operation(unwrap(lhs), unwrap(rhs)) and type(op) in BINOPS:
                return constexpr(fold(BINOPS[type(op)], unwrap(lhs), unwrap(rhs)))
            f = PY_BINOPS.get(type(op))
            if f is None:
                raise self.error(node, f"unsupported operator {type(op).__name__}")
            return constexpr(f(unwrap(lhs), unwrap(rhs)))
        name = BINOPS.get(type(op))
        if name is None:
            raise self.error(node, core.operator_message(type(op).__name__))
        return S.binary(self.b, name, self._operand(lhs, node), self._operand(rhs, node))

    def aggregate_operator(self, node, op, lhs, rhs):
        """`lhs <op> rhs` with an aggregate operand: its `__add__` (or the right one's
        `__radd__`) member, as Python's."""
        name = PY_BINOPS[type(op)].__name__.strip("_")
        for obj, dunder, args in ((lhs, f"__{name}__", [rhs]), (rhs, f"__r{name}__", [lhs])):
            m = getattr(obj, dunder, None) if is_aggregate(obj) else None
            if isinstance(m, BoundMember):
                return self.call_member(m, args, {}, node)
        raise self.error(node, f"unsupported operand types for {type(op).__name__}: "
                               f"{type(lhs).__name__} and {type(rhs).__name__}")

    def call_member(self, m: BoundMember, args, kwargs, node):
        """An aggregate's member: a @jit one inlined (the instance first), another called at
        compile time on the values (Triton's: these may take tiles)."""
        if isinstance(m.fn, JITFunction):
            return self.call_jit(m.fn, m.args(args), kwargs, node)
        return self.call_python(m, args, kwargs, node, unwrap_args=False)

    def call_python(self, fn, args, kwargs, node, unwrap_args=True):
        u = unwrap if unwrap_args else (lambda v: v)
        try:
            with scalar_conversion(lambda x: S.to_tensor(self.b, x)):
                res = fn(*[u(a) for a in args], **{k: u(v) for k, v in kwargs.items()})
        except (CompilationError, ReturnSignal):
            raise
        except Exception as e:
            raise self.error(node, f"error calling {getattr(fn, '__name__', fn)}: {e}") from e
        return constexpr(res) if isinstance(res, (int, float, bool)) else res

    def _operand(self, x, node):
        v = unwrap(x)
        if isinstance(v, tensor) or isinstance(v, (int, float, bool)):
            return v
        raise self.error(node, S.not_a_tile(v))

    def visit_UnaryOp(self, node):
        v = self.visit(node.operand)
        if isinstance(node.op, ast.Not) and isinstance(unwrap(v), tuple):
            raise self.error(node, NOT_TUPLE_MESSAGE)
        if is_const(v):
            return constexpr(PY_UNARY[type(node.op)](unwrap(v)))
        if isinstance(node.op, ast.USub):
            return S.minus(self.b, v)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert):
            return S.invert(self.b, v)
        return S.logical_not(self.b, v)

    def visit_Compare(self, node):
        if len(node.ops) != 1:
            raise self.error(node, CHAINED_COMPARE_MESSAGE)
        lhs, rhs = self.visit(node.left), self.visit(node.comparators[0])
        op = node.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            # folded at compile time, as Triton: `x is None` on a runtime value is False
            same = unwrap(lhs) is unwrap(rhs)
            return constexpr(same if isinstance(op, ast.Is) else not same)
        if is_const(lhs) and is_const(rhs):
            return constexpr(PY_CMPOPS[type(op)](unwrap(lhs), unwrap(rhs)))
        if type(op) not in CMPOPS:
            raise self.error(node, core.operator_message(type(op).__name__))
        return S.compare(self.b, CMPOPS[type(op)], self._operand(lhs, node),
                         self._operand(rhs, node))

    def visit_BoolOp(self, node):
        op = "and" if isinstance(node.op, ast.And) else "or"
        acc = self.visit(node.values[0])
        for v in node.values[1:]:  # (a deciding compile-time value skips the rest, as Triton)
            if S.bool_op_stops(op, acc):
                break
            y = self.visit(v)
            if S.bool_op_on_tiles(acc, y):
                line, _ = self._pos(node)
                warnings.warn_explicit(S.BOOL_OP_TILE_WARNING, UserWarning, self.filename, line)
            acc = S.bool_op(self.b, op, acc, y)
        return acc

    def visit_IfExp(self, node):
        cond = self.visit(node.test)
        if isinstance(cond, tensor) and not cond.shape:
            # a runtime scalar condition evaluates only the chosen side (as Triton): the
            # expression becomes an `if` statement assigning a temporary
            tmp = f"__ifexp_{node.lineno}_{node.col_offset}"
            stmt = ast.If(test=node.test,
                          body=[ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=node.body)],
                          orelse=[ast.Assign(targets=[ast.Name(tmp, ast.Store())],
                                             value=node.orelse)])
            for n in ast.walk(stmt):
                if not hasattr(n, "lineno") or n is stmt or isinstance(n, (ast.Assign, ast.Name)):
                    ast.copy_location(n, node)
            stmt.tw_ternary = True  # (its type mismatch in Triton's words for a ternary)
            self.visit(stmt)
            return self.lookup(tmp, node)
        if isinstance(cond, tensor):
            return S.where(self.b, cond, self.visit(node.body), self.visit(node.orelse))
        return self.visit(node.body if unwrap(cond) else node.orelse)

    def visit_Attribute(self, node):
        base = self.visit(node.value)
        if isinstance(base, tensor):
            return self.tensor_attr(base, node.attr, node)
        obj = unwrap(base)
        methods = getattr(type(obj), "__tilework_methods__", None)  # tensor descriptors
        if methods and node.attr in methods:
            return _BoundMethod(obj, methods[node.attr])
        if node.attr == "dtype" and is_number(obj):
            # an int argument equal to 1 is specialized to a constant, yet stays an int32 (or
            # wider) value to the kernel, as in Triton; so is a constant assigned in the kernel
            # (`value = 1; value.dtype`, where Triton makes the int32 scalar)
            return S.python_scalar_dtype(obj)
        if node.attr in SCALAR_CONSTANT_METHODS and is_number(obj):
            # `acc = 0; acc = acc.to(tl.int64)`: Triton's assigned constant is a scalar (int32,
            # fp32, int1), whose `.to` this is (the interpreter's rewrite agrees)
            return _BoundMethod(S.to_tensor(self.b, obj), node.attr)
        if node.attr == "type" and isinstance(base, constexpr) and not hasattr(obj, "type"):
            return base.type  # Triton's constexpr_type
        try:
            v = getattr(obj, node.attr)
        except AttributeError:
            raise self.error(node, f"{obj!r} has no attribute `{node.attr}`") from None
        return constexpr(v) if isinstance(v, (int, float, bool)) else v

    def tensor_attr(self, t: tensor, attr, node):
        if attr == "dtype":
            return t.dtype
        if attr == "type":  # Triton's: a tile's block_type, a scalar's dtype
            return t.type
        if attr == "shape":
            return core.shape_tuple(constexpr(s) for s in t.shape)
        if attr == "T":
            return self.call_builtin("trans", [t], {}, node)
        if attr == "numel":
            return constexpr(t.numel)
        if attr == "to" or attr in core.MEMBER_BUILTINS or attr in core.MEMBER_FUNCTIONS:
            return _BoundMethod(t, attr)
        raise self.error(node, f"a tile has no attribute `{attr}`")

    def visit_Subscript(self, node):
        base = self.visit(node.value)
        idx = self.visit(node.slice)
        if isinstance(node.slice, ast.Tuple):  # `x[None, :]`: an index, not a value
            idx = tuple(idx)
        if isinstance(base, tensor):
            return subscript(self.b, base, idx)
        if is_aggregate(unwrap(base)):  # its `__getitem__` member
            m = getattr(unwrap(base), "__getitem__", None)
            if not isinstance(m, BoundMember):
                raise self.error(node, f"{type(unwrap(base)).__name__} is not subscriptable")
            return self.call_member(m, [idx], {}, node)
        try:
            v = unwrap(base)[unwrap(idx)]
        except Exception as e:
            raise self.error(node, f"cannot index {unwrap(base)!r}: {e}") from e
        return v

    def visit_Slice(self, node):
        parts = [unwrap(self.visit(p)) if p is not None else None
                 for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def visit_Call(self, node):
        fn = self.visit(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(unwrap(self.visit(a.value)))
            else:
                args.append(self.visit(a))
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        fn_u = unwrap(fn)
        if isinstance(fn_u, extern_names):  # libdevice's `arg0=`, `arg1=` keywords
            try:
                args, kwargs = fn_u.bind(args, kwargs)
            except TypeError as e:
                raise self.error(node, str(e)) from e
            fn_u = fn_u.fn
        if isinstance(fn_u, _BoundMethod):
            return self.call_method(fn_u, args, kwargs, node)
        if isinstance(fn_u, BoundMember):  # an aggregate's method
            return self.call_member(fn_u, args, kwargs, node)
        if is_aggregate_class(fn_u):  # built at compile time by its own __init__
            return self.call_python(fn_u, args, kwargs, node, unwrap_args=False)
        name = getattr(fn_u, "__tilework_builtin__", None)
        if name is not None:
            return self.call_builtin(name, args, kwargs, node)
        if isinstance(fn_u, JITFunction):  # jit functions are inlined
            return self.call_jit(fn_u, args, kwargs, node)
        if is_namedtuple_class(fn_u):  # a namedtuple built in a kernel: a tl.tuple with fields
            try:
                nt = fn_u(*args, **kwargs)
            except TypeError as e:
                raise self.error(node, f"{fn_u.__name__}(): {e}") from e
            return named_tuple(list(nt), list(fn_u._fields))
        if isinstance(fn_u, core.dtype) or fn_u is constexpr:
            return fn_u(*[unwrap(a) for a in args]) if fn_u is constexpr else fn_u
        if fn_u is builtins.print:  # as in Triton: print() in a kernel is tl.device_print
            if kwargs:
                raise self.error(node, f"print() in a kernel takes no keyword arguments "
                                       f"(got {', '.join(kwargs)}); it is tl.device_print")
            first = unwrap(args[0]) if args else None
            prefix, rest = (first, args[1:]) if isinstance(first, str) else ("", args)
            return self.call_builtin("device_print", [constexpr(prefix)] + list(rest), {}, node)
        if fn_u in (builtins.min, builtins.max):
            return min_max(self.b, fn_u, args, kwargs)
        if any(isinstance(a, tensor) for a in args) or any(isinstance(v, tensor) for v in kwargs.values()):
            raise self.error(node, tile_call_message(fn_u))
        if not callable(fn_u):
            raise self.error(node, f"{fn_u!r} is not callable")
        return self.call_python(fn_u, args, kwargs, node)

    def call_builtin(self, name, args, kwargs, node):
        impl = IMPLS.get(name)
        if impl is None:
            raise self.error(node, f"tl.{name} is not supported yet")
        import inspect
        try:
            inspect.signature(impl).bind(self.b, *args, **kwargs)
        except TypeError as e:
            raise self.error(node, f"tl.{name}: {e}") from e
        self.b.inline_jit = lambda fn, a: self.call_jit(fn, list(a), {}, node)
        return impl(self.b, *args, **kwargs)

    def call_method(self, m, args, kwargs, node):
        """Tensor member functions (`x.to(...)`, `x.sum(0)`, ...) call the builtin on `x`."""
        name = "cast" if m.name == "to" else m.name
        if name in core.MEMBER_FUNCTIONS:  # @jit functions of the language (x.sort())
            return self.call_jit(core.MEMBER_FUNCTIONS[name], [m.obj] + args, kwargs, node)
        return self.call_builtin(name, [m.obj] + args, kwargs, node)

    def call_jit(self, jfn, args, kwargs, node):
        line, col = self._pos(node)
        chain = self.call_chain + ((self.filename, line, col, jfn.__name__),)
        call_at = self.call_at + (self._at(node),)
        # a @jit function may call itself (inlined, as Triton's specialized calls) while the
        # recursion ends at compile time, on constexprs or shapes
        kernel_fn = self.fn if not self.call_chain else None
        depth = sum(c[3] == jfn.__name__ for c in chain) + (jfn is kernel_fn)
        if depth > MAX_RECURSION or len(chain) > 4 * MAX_RECURSION:
            raise self.error(node, recursion_message(jfn.__name__))
        try:
            bound = jfn.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(node, f"{jfn.__name__}(): {e}") from e
        bound.apply_defaults()
        for name in jfn.constexprs:  # as Triton: checked at the call, not at a later use
            v = bound.arguments.get(name)
            if isinstance(v, tensor):
                raise self.error(node, f"{jfn.__name__}(): `{name}` is a tl.constexpr "
                                       f"parameter, got a runtime value of type {v.dtype}")
        scope = {}
        for name, v in bound.arguments.items():
            if jfn.signature.parameters[name].kind == inspect.Parameter.VAR_POSITIONAL:
                v = tl_tuple(v)  # (`*args`: a tuple of the values)
            scope[name] = v if isinstance(v, (tensor, constexpr)) or is_aggregate(v) \
                else constexpr(v)
        child = CodeGenerator(jfn, self.b, scope, chain, call_at)
        tree = jfn.parse()
        try:
            child.visit_body(tree.body[0].body)
        except ReturnSignal:
            pass
        except CompilationError as e:
            # as Triton: raised again at this call, the callee's own error its `__cause__`
            outer = e.raised_at_call(len(chain))
            raise outer from outer.__cause__
        return child.returned


class _BoundMethod:
    def __init__(self, obj, name):
        self.obj, self.name = obj, name


def _defaults(jit_fn) -> dict:
    """The Python default values of the kernel's parameters (name -> value)."""
    try:
        params = inspect.signature(jit_fn.fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {q.name: q.default for q in params if q.default is not inspect.Parameter.empty}


def build_kernel(jit_fn, signature: dict, constants: dict, attrs: dict, context: ir.Context,
                 name: str | None = None, options=None, target=None) -> ir.Module:
    """Emits the tile IR module of `jit_fn` specialized on `signature` (param -> dtype of the
    runtime arguments), `constants` (param -> value) and `attrs` (param -> {attr: int}), for
    `target` (a `Target`, or None: target-neutral; host tensor descriptors then never use
    TMA)."""
    tree = jit_fn.parse()
    fdef = tree.body[0]
    b = S.Builder(context)
    b.kernel_name = name or jit_fn.__name__
    b.options = options  # CompileOptions: builtins read debug, enable_fp_fusion
    b.target = target
    with context:
        loc = ir.Location.file(jit_fn.filename, jit_fn.first_line, 1, context)
        module = ir.Module.create(loc)
        b.module = module
        params = []  # (name, dtype) of each IR argument; a host descriptor takes several
        for p in jit_fn.arg_names:
            if p in signature:
                t = signature[p]
                if is_tuple_spec(t):  # a tuple argument: its runtime members, flattened
                    for n, mt in runtime_params(p, t):
                        params += descriptor_params(n, mt) if is_descriptor_type(mt) \
                            else [(n, mt)]
                    continue
                if p in getattr(jit_fn, "const_params", ()) and t.is_ptr():  # `p: tl.const`
                    t = core.pointer_type(t.element_ty, t.address_space, const=True)
                params += descriptor_params(p, t) if is_descriptor_type(t) else [(p, t)]
        # the tensor maps of descriptors loaded by TMA come last (the runtime appends them)
        # (host descriptors: arguments, and members of tuple arguments)
        leaves = [e for p in jit_fn.arg_names if p in signature
                  for e in (runtime_params(p, signature[p]) if is_tuple_spec(signature[p])
                            else [(p, signature[p])])]
        tma = [(n, tma_param(b, n, t)) for n, t in leaves
               if is_descriptor_type(t) and tma_param(b, n, t)]
        params += [(tp[0], tp[1]) for _, tp in tma]
        n_tma_first = len(params) - len(tma)
        scratch = scratch_param(b)  # (dropped below unless a descriptor made in the kernel
        if scratch:                 # gets its tensor map there)
            params.append(scratch)
        arg_names = [p for p, _ in params]
        arg_types = [to_ir(t) for _, t in params]
        with ir.InsertionPoint(module.body), loc:
            ftype = ir.FunctionType.get(arg_types, [])
            f = func_d.FuncOp(name or jit_fn.__name__, ftype)
            f.attributes["tile.kernel"] = ir.UnitAttr.get()
            arg_attrs = []
            for p in arg_names:
                d = {k: ir.IntegerAttr.get(ir.IntegerType.get_signless(32), v)
                     for k, v in attrs.get(p, {}).items()}
                arg_attrs.append(ir.DictAttr.get(d))
            for i in range(n_tma_first, n_tma_first + len(tma)):
                arg_attrs[i] = ir.DictAttr.get({TMA_ATTR: ir.UnitAttr.get()})
            if scratch:
                arg_attrs[-1] = ir.DictAttr.get({SCRATCH_ATTR: ir.UnitAttr.get()})
            f.arg_attrs = ir.ArrayAttr.get(arg_attrs)
            if tma:  # what the runtime encodes each tensor map from (metadata["tma"])
                f.attributes[TMA_ATTR] = ir.ArrayAttr.get(
                    [ir.StringAttr.get(tp[2]) for _, tp in tma])
            entry = f.add_entry_block()
        scope = {}
        args = {p: tensor(entry.arguments[i], t) for i, (p, t) in enumerate(params)}
        b.global_scratch = args[scratch[0]] if scratch else None
        def value(p, t):  # an argument's (or a tuple member's) value in the kernel
            if not is_descriptor_type(t):
                return args[p]
            tp = tma_param(b, p, t)
            return descriptor_from_args(b, t, [args[n] for n, _ in descriptor_params(p, t)],
                                        args[tp[0]] if tp else None)

        with ir.InsertionPoint(entry), loc:
            for p in jit_fn.arg_names:
                t = signature.get(p)
                if is_tuple_spec(t):
                    scope[p] = tuple_value(p, t, value)
                elif t is not None:
                    scope[p] = value(p, t)
        for p, v in constants.items():
            scope[p] = v if isinstance(v, constexpr) else constexpr(v)
        for p, v in _defaults(jit_fn).items():  # a parameter given neither: its default
            scope.setdefault(p, constexpr(v))
        gen = CodeGenerator(jit_fn, b, scope)
        with ir.InsertionPoint(entry):
            try:
                gen.visit_body(fdef.body)
            except ReturnSignal:
                if gen.returned is not None:
                    raise gen.error(gen.return_node, KERNEL_RETURN_MESSAGE) from None
            with loc:
                func_d.ReturnOp([])
        if scratch:
            settle_global_scratch(f)
        if tma:
            drop_unused_tensor_maps(f)  # (a descriptor only stored to, or loaded by pointers)
    return module
