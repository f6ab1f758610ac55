"""Lowering rules of the debug family: `tile.print`, `tile.assert`, `tile.assume`.

* print (NVIDIA): one `vprintf(format, args)` per element, in Triton's format
  `pid (%u, %u, %u) idx (%Nu, ...)<prefix>(operand n) <value>\\n`: a format-string global, an
  args struct on the stack (floats as double, small ints as i32).  Each element is printed by
  the thread owning it (copies held by other threads are skipped); scalars by thread 0.
  AMD has no printf without the device libraries: nothing is emitted and a warning is given
  once per process.
* assert: per thread, if any element's condition is false: NVIDIA `__assertfail(msg, file,
  line, function, 1)` (the CUDA runtime prints "file:line: function: block: [..], thread:
  [..] Assertion `msg` failed." and the kernel traps); AMD `llvm.trap` (no message).
* assume: `llvm.intr.assume` per element.
"""
from __future__ import annotations

import math
import re
import warnings

import mlir.ir as ir
from mlir.dialects import gpu, scf

from tilework.dialects import tile as T

from ..registry import lower
from .atomic import owner_predicate

_AMD_PRINT_WARNED = False


# ---- module-level symbols ----------------------------------------------------------------------

def _module_block(ctx) -> ir.Block:
    func = ctx.entry.owner
    func = func.operation if hasattr(func, "operation") else func
    return func.parent.regions[0].blocks[0]


def _symbols(block) -> set:
    out = set()
    for op in block.operations:
        op = op.operation
        if "sym_name" in op.attributes:
            out.add(ir.StringAttr(op.attributes["sym_name"]).value)
    return out


def _declare(ctx, name, signature):
    """`llvm.func @name` (external) in the gpu.module, once."""
    block = _module_block(ctx)
    if name not in _symbols(block):
        op = ir.Operation.parse(f"llvm.func @{name}{signature}")
        ir.InsertionPoint.at_block_begin(block).insert(op)


def _escape(data: bytes) -> str:
    return "".join(chr(c) if 32 <= c < 127 and chr(c) not in '"\\' else f"\\{c:02X}"
                   for c in data)


def _string(ctx, prefix, text: str) -> ir.Value:
    """A pointer to a NUL-terminated constant global holding `text` (one global per text)."""
    key = ("string", text)
    if key not in ctx._cache:
        block = _module_block(ctx)
        taken, i = _symbols(block), 0
        while f"{prefix}_{i}" in taken:
            i += 1
        data = text.encode() + b"\0"
        op = ir.Operation.parse(
            f'llvm.mlir.global internal constant @{prefix}_{i}("{_escape(data)}") '
            f'{{addr_space = 0 : i32}} : !llvm.array<{len(data)} x i8>')
        ir.InsertionPoint.at_block_begin(block).insert(op)
        ctx._cache[key] = f"{prefix}_{i}"
    return ctx.op1("llvm.mlir.addressof", [], ir.Type.parse("!llvm.ptr"),
                   {"global_name": ir.FlatSymbolRefAttr.get(ctx._cache[key])})


def _call(ctx, callee, args, result=None):
    attrs = {"callee": ir.FlatSymbolRefAttr.get(callee),
             "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(args), 0]),
             "op_bundle_sizes": ir.DenseI32ArrayAttr.get([])}
    return ctx.create("llvm.call", args, [result] if result else [], attrs)


def _under(pred, body):
    """body() under `scf.if pred` (always when pred is None)."""
    if pred is None:
        body()
        return
    if_op = scf.IfOp(pred, [], has_else=False)
    with ir.InsertionPoint(if_op.then_block):
        body()
        scf.YieldOp([])


# ---- print -------------------------------------------------------------------------------------

def _bits(t) -> int:
    s = str(t)
    if s.startswith("!llvm.ptr"):
        return 64
    return 16 if s == "bf16" else int("".join(c for c in s if c.isdigit()))


def _spec(t, signed, hex_, width=None):
    """(printf conversion, how to pass the value) for a per-thread scalar type."""
    s, bits = str(t), _bits(t)
    if s.startswith("!llvm.ptr"):
        return "%p", "ptr"
    if hex_:
        return f"0x%0{max(1, bits // 4)}{'ll' if bits > 32 else ''}x", "bits"
    w = str(width) if width else ""
    if not T.isa(t, ir.IntegerType):
        return f"%{w}f", "double"
    if bits == 64:
        return f"%{w}{'lli' if signed else 'llu'}", "int"
    return f"%{w}{'i' if signed else 'u'}", "int"


def _pass(ctx, v, how, signed):
    """`v` as vprintf reads it: double, i32 or i64."""
    t = v.type
    f64 = ir.F64Type.get()
    if how == "ptr":
        return ctx.op1("llvm.ptrtoint", [v], ctx.i64)
    if how == "double":
        return v if str(t) == "f64" else ctx.op1("arith.extf", [v], f64)
    if how == "bits" and not T.isa(t, ir.IntegerType):
        v = ctx.op1("arith.bitcast", [v], ir.IntegerType.get_signless(_bits(t)))
        signed = False
    bits = _bits(v.type)
    if bits < 32:
        return ctx.op1("arith.extsi" if signed and bits > 1 else "arith.extui", [v], ctx.i32)
    return v


def _printf(ctx, fmt: str, args: list):
    """vprintf(fmt, &{args...}) with one args buffer per struct type (in the entry block)."""
    st = ir.Type.parse("!llvm.struct<(" + ", ".join(str(a.type) for a in args) + ")>")
    key = ("printf_buf", str(st))
    if key not in ctx._cache:
        with ir.InsertionPoint(ctx.prologue_end):
            ctx._cache[key] = ctx.op1("llvm.alloca", [ctx.const(1)], ir.Type.parse("!llvm.ptr"),
                                      {"elem_type": ir.TypeAttr.get(st)})
    buf = ctx._cache[key]
    for i, a in enumerate(args):
        p = ctx.op1("llvm.getelementptr", [buf], ir.Type.parse("!llvm.ptr"), {
            "rawConstantIndices": ir.DenseI32ArrayAttr.get([0, i]),
            "elem_type": ir.TypeAttr.get(st)})
        ctx.create("llvm.store", [a, p], [])
    _declare(ctx, "vprintf", "(!llvm.ptr, !llvm.ptr) -> i32")
    _call(ctx, "vprintf", [_string(ctx, "tilework_printf", fmt + "\n"), buf], ctx.i32)


def _pids(ctx):
    return [ctx.op1("arith.index_cast", [gpu.block_id(d)], ctx.i32)
            for d in (gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z)]


@lower("tile.print")
def _print(ctx, op, args):
    global _AMD_PRINT_WARNED
    if ctx.target == "amd":
        if not _AMD_PRINT_WARNED:
            _AMD_PRINT_WARNED = True
            warnings.warn("tl.device_print prints nothing on AMD targets (no printf without "
                          "the ROCm device libraries); use the interpreter "
                          "(TILEWORK_INTERPRET=1) to see values", stacklevel=2)
        return []
    from ..to_llvm import Regs
    prefix = ir.StringAttr(op.attributes["prefix"]).value.replace("%", "%%")
    hex_ = bool(ir.IntegerAttr(op.attributes["hex"]).value)
    signed = bool(ir.IntegerAttr(op.attributes["is_signed"]).value)
    n = ir.IntegerAttr(op.attributes["operand"]).value
    head = "pid (%u, %u, %u)"
    first = ctx.op1("arith.cmpi", [ctx.thread_id(), ctx.const(0)], ctx.i1,
                    {"predicate": ir.IntegerAttr.get(ctx.i64, 0)})
    if not args:
        _under(first, lambda: _printf(ctx, head + prefix, _pids(ctx)))
        return []
    a = args[0]
    if isinstance(a, Regs):
        shape, layout = a.shape, a.layout
        widths = [max(0, math.ceil(math.log10(d))) for d in shape]
        idx_fmt = ", ".join(f"%{w}u" if w else "%u" for w in widths)
        pred = owner_predicate(ctx, layout, shape)
        items = [(list(c), a[c]) for c in a.coords()]
    else:
        shape, layout, idx_fmt, pred, items = (), None, "", first, [([], a)]
    conv, how = _spec(items[0][1].type, signed, hex_)
    tag = f"(operand {n}) " if n >= 0 else ""
    fmt = f"{head} idx ({idx_fmt}){prefix}{tag}{conv}"

    def body():
        pids = _pids(ctx)
        for coord, v in items:
            idx = [ctx.logical_index(layout, shape, d, k) for d, k in enumerate(coord)]
            _printf(ctx, fmt, pids + idx + [_pass(ctx, v, how, signed)])
    _under(pred, body)
    return []


# ---- assert and assume ---------------------------------------------------------------------------

_LOC_RE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+)(?::(\d+))?')


def _file_line(op):
    m = _LOC_RE.search(str(op.location))
    if not m:
        return "<unknown>", 0
    return m.group(1), int(m.group(2))


@lower("tile.assert")
def _assert(ctx, op, args):
    from ..to_llvm import Regs
    cond = args[0]
    elems = cond.values if isinstance(cond, Regs) else [cond]
    bad = None
    for c in elems:
        nc = ctx.op1("arith.xori", [c, ctx.const(1, ctx.i1)], ctx.i1)
        bad = nc if bad is None else ctx.op1("arith.ori", [bad, nc], ctx.i1)

    def fail():
        if ctx.target == "amd":
            ctx.create("llvm.intr.trap", [], [])
            return
        file, line = _file_line(op)
        func = ctx.entry.owner
        func = func.operation if hasattr(func, "operation") else func
        fname = ir.StringAttr(func.attributes["sym_name"]).value
        msg = ir.StringAttr(op.attributes["msg"]).value
        _declare(ctx, "__assertfail", "(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64)")
        _call(ctx, "__assertfail", [
            _string(ctx, "tilework_assert", msg), _string(ctx, "tilework_assert", file),
            ctx.const(line), _string(ctx, "tilework_assert", fname), ctx.const(1, ctx.i64)])
    _under(bad, fail)
    return []


@lower("tile.assume")
def _assume(ctx, op, args):
    from ..to_llvm import Regs
    c = args[0]
    for v in (c.values if isinstance(c, Regs) else [c]):
        ctx.create("llvm.intr.assume", [v], [], {"op_bundle_sizes": ir.DenseI32ArrayAttr.get([])})
    return []
