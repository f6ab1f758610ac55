"""`tile` ops of the shape family: expand_dims, trans, reshape, join/split/cat, dot, and the
reductions.  reduce/scan name their combine function (a private func.func of scalars, inlined
by the lowering): IRDL ops cannot be region terminators, so the body is not a region."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from .base import DENSE_I32, INT, PURE, STRING, SYMBOL, Attr, any_type, group, operand, optional, \
    result, tensor
from .checks import int_attr
from .core import TILE

TILE.op("expand_dims", "`src` with a new size-1 dimension at `axis`",
        operands=[operand("src", tensor())], results=[result("result", tensor())],
        attrs=[Attr("axis", INT)], traits={PURE})
TILE.op("trans", "`src` with its dimensions permuted by `order`",
        operands=[operand("src", tensor())], results=[result("result", tensor())],
        attrs=[Attr("order", DENSE_I32)], traits={PURE})
TILE.op("reshape", "`src`'s elements in row-major order, in the result's shape",
        operands=[operand("src", tensor())], results=[result("result", any_type())],
        traits={PURE})


def _join(op):
    a, r = op.operands[0].type, op.results[0].type
    if op.operands[1].type != a:
        return f"join operands must have the same type, got {a} and {op.operands[1].type}"
    if T.element_type(r) != T.element_type(a) or T.shape_of(r) != T.shape_of(a) + (2,):
        return f"join of {list(T.shape_of(a))} must produce {list(T.shape_of(a) + (2,))} " \
               f"elements of {T.element_type(a)}, not {r}"


_t = tensor()
TILE.op("join", "a new last dimension of size 2 ([..] x [..] -> [.., 2])",
        operands=[operand("lhs", _t), operand("rhs", _t)], results=[result("result", tensor())],
        traits={PURE}, verify=_join)


def _split(op):
    s, r = op.operands[0].type, op.results[0].type
    shape = T.shape_of(s)
    if len(shape) < 2 or shape[-1] != 2:
        return f"split needs a tile of rank >= 2 whose last dimension is 2, got {list(shape)}"
    if op.results[1].type != r:
        return "split results must have the same type"
    if T.element_type(r) != T.element_type(s) or T.shape_of(r) != shape[:-1]:
        return f"split of {list(shape)} must produce {list(shape[:-1])} elements of " \
               f"{T.element_type(s)}, not {r}"


_r = tensor()
TILE.op("split", "the inverse of join: the two halves of the last dimension (of size 2)",
        operands=[operand("src", tensor())], results=[result("lhs", _r), result("rhs", _r)],
        traits={PURE}, verify=_split, interp="builtin")


def _cat(op):
    a, r = op.operands[0].type, op.results[0].type
    if op.operands[1].type != a:
        return f"cat operands must have the same type, got {a} and {op.operands[1].type}"
    if len(T.shape_of(a)) != 1:
        return f"cat takes 1-D tiles, got {list(T.shape_of(a))}"
    if T.element_type(r) != T.element_type(a) or T.shape_of(r) != (2 * T.shape_of(a)[0],):
        return f"cat of two {list(T.shape_of(a))} tiles must produce [{2 * T.shape_of(a)[0]}] " \
               f"elements of {T.element_type(a)}, not {r}"


_t = tensor()
TILE.op("cat", "two 1-D tiles end to end", operands=[operand("lhs", _t), operand("rhs", _t)],
        results=[result("result", tensor())], traits={PURE}, verify=_cat)

DOT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")


def _dot(op):
    a, b, c = (T.shape_of(o.type) for o in op.operands)
    ea, eb, ec = (str(T.element_type(o.type)) for o in op.operands)
    if len(a) not in (2, 3) or len(b) != len(a) or len(c) != len(a):
        return f"dot takes 2-D or 3-D tiles of one rank, got {list(a)}, {list(b)}, {list(c)}"
    if a[:-2] != b[:-2] or a[-1] != b[-2] or c != a[:-1] + b[-1:]:
        return f"dot shapes do not agree: {list(a)} x {list(b)} -> {list(c)}"
    if ea != eb and not (ea.startswith("f8") and eb.startswith("f8")):
        return f"dot operands must have the same element type, got {ea} and {eb}"
    if op.results[0].type != op.operands[2].type:
        return "dot result must have the accumulator's type"
    want = "i32" if ea.startswith("i") else None
    if want and ec != want or not want and ec not in ("f16", "f32", "f64"):
        return f"dot of {ea} cannot accumulate in {ec}"


_c = tensor()
TILE.op("dot", "acc + a @ b ([B,]M,K x [B,]K,N -> [B,]M,N); the FMA path computes in fp32",
        operands=[operand("a", tensor()), operand("b", tensor()), operand("acc", _c)],
        results=[result("result", _c)],
        attrs=[Attr("input_precision", STRING, DOT_PRECISIONS),
               Attr("max_num_imprecise_acc", INT, default=0)],
        traits={PURE}, verify=_dot)

MAX_OPERANDS = 4  # tiles one reduce/scan combines (optional segments: IRDL variadics share a type)

TILE.op("reduce", "the tiles `src*` reduced along `axis` by the function `combine`",
        operands=group("src", tensor, MAX_OPERANDS),
        results=group("result", any_type, MAX_OPERANDS),
        attrs=[Attr("axis", INT), Attr("combine", SYMBOL)], traits={PURE}, interp="builtin")


def _scan(op):
    ins, outs = list(op.operands), list(op.results)
    if len(ins) != len(outs):
        return f"scan of {len(ins)} tiles must have {len(ins)} results, not {len(outs)}"
    shape = T.shape_of(ins[0].type)
    for a, r in zip(ins, outs):
        if T.shape_of(a.type) != shape:
            return "scan operands must have the same shape"
        if T.shape_of(r.type) != shape or T.element_type(r.type) != T.element_type(a.type):
            return f"scan of {a.type} cannot produce {r.type}"
    axis = int_attr(op, "axis")
    if not 0 <= axis < len(shape):
        return f"scan axis {axis} is out of range for a tile of rank {len(shape)}"
    if ir.IntegerAttr(op.attributes["reverse"]).value not in (0, 1):
        return "scan reverse must be 0 or 1"


TILE.op("scan", "inclusive scans of the tiles `src*` along `axis` by `combine` (`reverse`: "
                "from the end)",
        operands=group("src", tensor, MAX_OPERANDS), results=group("result", tensor, MAX_OPERANDS),
        attrs=[Attr("axis", INT), Attr("reverse", INT, default=0), Attr("combine", SYMBOL)],
        traits={PURE}, verify=_scan, interp="builtin")


def _histogram(op):
    x, r = op.operands[0].type, op.results[0].type
    if len(T.shape_of(x)) != 1 or str(T.element_type(x)) not in ("i32", "i64"):
        return f"histogram input must be a 1-D tile of i32 or i64, got {x}"
    if len(op.operands) > 1 and (tuple(T.shape_of(op.operands[1].type)) != tuple(T.shape_of(x)) or
                                 str(T.element_type(op.operands[1].type)) != "i1"):
        return f"histogram mask must be i1 of the input's shape, got {op.operands[1].type}"
    nb = ir.IntegerAttr(op.attributes["num_bins"]).value
    if tuple(T.shape_of(r)) != (nb,) or str(T.element_type(r)) != "i32":
        return f"histogram result must be tensor<{nb}xi32>, got {r}"


# read: each element's bin count goes up by one in shared memory (atomics), then is read back
TILE.op("histogram", "the number of elements of `src` equal to each of 0 .. num_bins-1 "
                     "(compared unsigned: negative values count nowhere) where `mask` holds",
        operands=[operand("src", tensor()), optional("mask", tensor())],
        results=[result("result", tensor())],
        attrs=[Attr("num_bins", INT)], traits={PURE}, verify=_histogram)


def _gather(op):
    src, idx, r = (v.type for v in (op.operands[0], op.operands[1], op.results[0]))
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    ss, si = tuple(T.shape_of(src)), tuple(T.shape_of(idx))
    if len(ss) != len(si) or not 0 <= axis < len(ss):
        return f"gather of {list(ss)} by {list(si)} along axis {axis}: ranks differ or the " \
               f"axis is out of range"
    if any(a != b for d, (a, b) in enumerate(zip(ss, si)) if d != axis):
        return f"gather index shape {list(si)} must match src shape {list(ss)} except along " \
               f"axis {axis}"
    if str(T.element_type(idx)) not in ("i32", "i64"):
        return f"gather index must be i32 or i64, got {T.element_type(idx)}"
    if tuple(T.shape_of(r)) != si or T.element_type(r) != T.element_type(src):
        return f"gather result must have the index's shape and src's elements, got {r}"


# src goes to shared memory (row-major), each result element reads its index's element back
TILE.op("gather", "`src` at `index` along `axis` (the other coordinates the result's own)",
        operands=[operand("src", tensor()), operand("index", tensor())],
        results=[result("result", tensor())],
        attrs=[Attr("axis", INT)], traits={PURE}, verify=_gather)
