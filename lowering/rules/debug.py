"""Lowering rules of the debug family: `tile.print`, `tile.assert`, `tile.assume`,
`tile.debug_barrier` (a `gpu.barrier`).

* print (NVIDIA): one `vprintf(format, args)` per element, in Triton's format
  `pid (%u, %u, %u) idx (%Nu, ...)<prefix>(operand n) <value>\\n`: a format-string global, an
  args struct on the stack (floats as double, small ints as i32).  Each element is printed by
  the thread owning it (copies held by other threads are skipped); scalars by thread 0.
* print (AMD, no printf without ROCm's device libraries): each printing thread reserves
  records with one atomic add on the buffer the runtime owns (its address in the global
  `tilework_print_buf`) and writes them; the host formats them after the launch from the
  descriptors this rule records on the gpu.module (`tilework.prints`, copied into the
  kernel's metadata).  Layout: `tilework.runtime.printbuf`.
* assert: per thread, if any element's condition is false: NVIDIA `__assertfail(msg, file,
  line, function, 1)` (the CUDA runtime prints "file:line: function: block: [..], thread:
  [..] Assertion `msg` failed." and the kernel traps); AMD `llvm.trap` (no message).
* assume: `llvm.intr.assume` per element.
"""
from __future__ import annotations

import json
import math
import re

import mlir.ir as ir
from mlir.dialects import gpu, scf

from tilework.dialects import tile as T
from tilework.runtime import printbuf as PB  # the buffer layout; no MLIR, no GPU

from ..regs import Regs
from ..registry import lower
from .atomic import BIN_OP, ORDERING, owner_predicate

PRINTS_ATTR = "tilework.prints"  # on the gpu.module: the AMD print descriptors (JSON)


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
    if s.startswith("f8"):  # f8E4M3FN, ...: the digits are not the width
        return 8
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


def _printfs(ctx, prefix, n, hex_, signed, shape, layout, items):
    """NVIDIA: one vprintf per element."""
    head, prefix = "pid (%u, %u, %u)", prefix.replace("%", "%%")
    pids = _pids(ctx)
    if items[0][1] is None:
        _printf(ctx, head + prefix, pids)
        return
    widths = [max(0, math.ceil(math.log10(d))) for d in shape]
    idx_fmt = ", ".join(f"%{w}u" if w else "%u" for w in widths)
    conv, how = _spec(items[0][1].type, signed, hex_)
    tag = f"(operand {n}) " if n >= 0 else ""
    fmt = f"{head} idx ({idx_fmt}){prefix}{tag}{conv}"
    for coord, v in items:
        idx = [ctx.logical_index(layout, shape, d, k) for d, k in enumerate(coord)]
        _printf(ctx, fmt, pids + idx + [_pass(ctx, v, how, signed)])


# ---- print on AMD: records in the runtime's buffer -------------------------------------------

def _kind(t, signed, hex_):
    """(value kind, bit width) of a per-thread scalar type, as printbuf.KINDS."""
    if str(t).startswith("!llvm.ptr"):
        return "p", 64
    bits = _bits(t)
    if hex_:
        return "x", bits
    if not T.isa(t, ir.IntegerType):
        return "f", bits
    return ("i" if signed else "u"), bits


def _widen(ctx, v, kind):
    """`v` as a record's 8-byte value: f64 for kind f, else i64."""
    t = v.type
    if kind == "f":
        return v if str(t) == "f64" else ctx.op1("arith.extf", [v], ir.F64Type.get())
    if kind == "p":
        return ctx.op1("llvm.ptrtoint", [v], ctx.i64)
    if not T.isa(t, ir.IntegerType):  # hex of a float: its bits
        v = ctx.op1("arith.bitcast", [v], ir.IntegerType.get_signless(_bits(t)))
    if _bits(v.type) < 64:
        v = ctx.op1("arith.extsi" if kind == "i" else "arith.extui", [v], ctx.i64)
    return v


def _descriptor(ctx, desc: dict) -> int:
    """The id of `desc` in the gpu.module's list (the backend copies it into the metadata)."""
    gm = _module_block(ctx).owner
    gm = gm.operation if hasattr(gm, "operation") else gm
    descs = json.loads(ir.StringAttr(gm.attributes[PRINTS_ATTR]).value) \
        if PRINTS_ATTR in gm.attributes else []
    if desc not in descs:
        descs.append(desc)
        gm.attributes[PRINTS_ATTR] = ir.StringAttr.get(json.dumps(descs))
    return descs.index(desc)


def _print_buffer(ctx) -> ir.Value:
    """The buffer's address, loaded from the global the runtime fills in after loading the
    module (protected visibility, as clang gives HIP __device__ variables: exported, so
    hipModuleGetGlobal finds it, and addressed directly)."""
    block = _module_block(ctx)
    if PB.SYMBOL not in _symbols(block):
        op = ir.Operation.parse(
            f"llvm.mlir.global external protected @{PB.SYMBOL}() {{addr_space = 1 : i32, "
            "alignment = 8 : i64} : !llvm.ptr<1> {\n  %0 = llvm.mlir.zero : !llvm.ptr<1>\n"
            "  llvm.return %0 : !llvm.ptr<1>\n}")
        ir.InsertionPoint.at_block_begin(block).insert(op)
    g = ctx.op1("llvm.mlir.addressof", [], ctx.gptr,
                {"global_name": ir.FlatSymbolRefAttr.get(PB.SYMBOL)})
    return ctx.op1("llvm.load", [g], ctx.gptr)


def _at(ctx, base, off):
    """`base` + `off` bytes (an int or an i64 value)."""
    dyn = not isinstance(off, int)
    return ctx.op1("llvm.getelementptr", [base, off] if dyn else [base], ctx.gptr, {
        "rawConstantIndices": ir.DenseI32ArrayAttr.get([-2147483648 if dyn else off]),
        "elem_type": ir.TypeAttr.get(ir.IntegerType.get_signless(8))})


def _records(ctx, prefix, n, hex_, signed, shape, layout, items):
    """AMD: reserve len(items) records with one atomic add, write those that fit."""
    v0 = items[0][1]
    kind, bits = _kind(v0.type, signed, hex_) if v0 is not None else (None, 0)
    desc = ctx.const(_descriptor(ctx, {"prefix": prefix, "operand": n, "kind": kind,
                                       "bits": bits, "shape": list(shape)}))
    buf = _print_buffer(ctx)
    i64 = ctx.i64
    ult = {"predicate": ir.IntegerAttr.get(i64, 6)}
    set_up = ctx.op1("arith.cmpi", [ctx.const(0, i64), ctx.op1("llvm.ptrtoint", [buf], i64)],
                     ctx.i1, ult)  # null: no runtime set the buffer up, print nothing

    def write():
        start = ctx.op1("llvm.atomicrmw", [buf, ctx.const(len(items) * PB.RECORD, i64)], i64, {
            "bin_op": ir.IntegerAttr.get(i64, BIN_OP["add"]),
            "ordering": ir.IntegerAttr.get(i64, ORDERING["relaxed"]),
            "syncscope": ir.StringAttr.get("agent"), "alignment": ir.IntegerAttr.get(i64, 8)})
        cap = ctx.op1("llvm.load", [_at(ctx, buf, 8)], i64)
        pids = _pids(ctx)
        for k, (coord, v) in enumerate(items):
            off = ctx.op1("arith.addi", [start, ctx.const(k * PB.RECORD, i64)], i64) \
                if k else start
            end = ctx.op1("arith.addi", [off, ctx.const(PB.RECORD, i64)], i64)
            fits = ctx.op1("arith.cmpi", [end, cap], ctx.i1,  # ule: the rest is dropped
                           {"predicate": ir.IntegerAttr.get(i64, 7)})

            def store(off=off, coord=coord, v=v):
                rec = _at(ctx, buf, ctx.op1("arith.addi", [off, ctx.const(PB.HEADER, i64)], i64))
                fields = [(PB.DESC, desc), (PB.PID, pids[0]), (PB.PID + 4, pids[1]),
                          (PB.PID + 8, pids[2]), (PB.TID, ctx.thread_id()),
                          (PB.INDEX, ctx.linear_index(layout, shape, coord))]
                if v is not None:
                    fields.append((PB.VALUE, _widen(ctx, v, kind)))
                for o, x in fields:
                    ctx.create("llvm.store", [x, _at(ctx, rec, o)], [])
            _under(fits, store)
    _under(set_up, write)


@lower("tile.print", target="nvidia")
def _print_nvidia(ctx, op, args):
    return _print(ctx, op, args, _printfs)


@lower("tile.print", target="amd")
def _print_amd(ctx, op, args):
    return _print(ctx, op, args, _records)


def _print(ctx, op, args, emit):
    """Each element by the thread owning it (a scalar once per program), through `emit`:
    vprintf calls on NVIDIA, records in the print buffer on AMD."""
    prefix = ir.StringAttr(op.attributes["prefix"]).value
    hex_ = bool(ir.IntegerAttr(op.attributes["hex"]).value)
    signed = bool(ir.IntegerAttr(op.attributes["is_signed"]).value)
    n = ir.IntegerAttr(op.attributes["operand"]).value
    first = ctx.op1("arith.cmpi", [ctx.thread_id(), ctx.const(0)], ctx.i1,
                    {"predicate": ir.IntegerAttr.get(ctx.i64, 0)})
    a = args[0] if args else None
    if isinstance(a, Regs):  # each element by the thread owning it
        shape, layout, pred = a.shape, a.layout, owner_predicate(ctx, a.layout, a.shape)
        items = [(list(c), a[c]) for c in a.coords()]
    else:  # a scalar or the prefix alone: once per program
        shape, layout, pred, items = (), None, first, [([], a)]
    _under(pred, lambda: emit(ctx, prefix, n, hex_, signed, shape, layout, items))
    return []


# ---- assert and assume ---------------------------------------------------------------------------

_LOC_RE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+)(?::(\d+))?')


def _file_line(op):
    m = _LOC_RE.search(str(op.location))
    if not m:
        return "<unknown>", 0
    return m.group(1), int(m.group(2))


@lower("tile.assert", target="nvidia")
def _assert_nvidia(ctx, op, args):
    def fail():  # CUDA's __assertfail prints the message and location, then traps
        file, line = _file_line(op)
        func = ctx.entry.owner
        func = func.operation if hasattr(func, "operation") else func
        fname = ir.StringAttr(func.attributes["sym_name"]).value
        msg = ir.StringAttr(op.attributes["msg"]).value
        _declare(ctx, "__assertfail", "(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64)")
        _call(ctx, "__assertfail", [
            _string(ctx, "tilework_assert", msg), _string(ctx, "tilework_assert", file),
            ctx.const(line), _string(ctx, "tilework_assert", fname), ctx.const(1, ctx.i64)])
    return _assert(ctx, args, fail)


@lower("tile.assert", target="amd")
def _assert_amd(ctx, op, args):
    return _assert(ctx, args, lambda: ctx.create("llvm.intr.trap", [], []))


def _assert(ctx, args, fail):
    """Runs `fail()` under the predicate that some element this thread holds is false."""
    cond = args[0]
    elems = cond.values if isinstance(cond, Regs) else [cond]
    bad = None
    for c in elems:
        nc = ctx.op1("arith.xori", [c, ctx.const(1, ctx.i1)], ctx.i1)
        bad = nc if bad is None else ctx.op1("arith.ori", [bad, nc], ctx.i1)
    _under(bad, fail)
    return []


@lower("tile.assume")
def _assume(ctx, op, args):
    c = args[0]
    for v in (c.values if isinstance(c, Regs) else [c]):
        ctx.create("llvm.intr.assume", [v], [], {"op_bundle_sizes": ir.DenseI32ArrayAttr.get([])})
    return []


@lower("tile.debug_barrier")
def _debug_barrier(ctx, op, args):
    ctx.barrier_pending = False  # (a pending barrier of tilegpu-insert-barriers is this one)
    ctx.barrier()
    return []
