"""The `tile` dialect's pointer type and its core ops: program ids, tile creation, pointer
arithmetic, loads and stores."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from .base import (ELEMENTWISE, INT, PURE, READS, SAME_SHAPE, WRITES, Attr, Dialect, any_type,
                   is_type, named_operands, operand, optional, result, tensor)
from .checks import check_mask, check_ptr_value, int_attr, same_shape

TILE = Dialect("tile", "the target-independent form the frontend emits")

TILE.type("ptr", "a pointer to global memory holding `pointee` values",
          params=[("pointee", any_type())])


def _program_id(op):
    axis = int_attr(op, "axis")
    if axis not in (0, 1, 2):
        return f"axis must be 0, 1 or 2, got {axis}"


TILE.op("get_program_id", "this program's index along grid axis `axis`",
        results=[result("result", is_type("i32"))], attrs=[Attr("axis", INT)],
        traits={PURE}, verify=_program_id)
TILE.op("get_num_programs", "the grid's size along `axis`",
        results=[result("result", is_type("i32"))], attrs=[Attr("axis", INT)],
        traits={PURE}, verify=_program_id)


def _make_range(op):
    start, end = int_attr(op, "start"), int_attr(op, "end")
    rt = T.as_tensor(op.results[0].type)
    if end <= start:
        return f"make_range needs start < end, got [{start}, {end})"
    if list(rt.shape) != [end - start]:
        return f"make_range [{start}, {end}) must produce {end - start} elements, not shape {list(rt.shape)}"
    if str(rt.element_type) != "i32":
        return "make_range produces i32 elements"
    n = end - start
    if n & (n - 1):
        return f"make_range length {n} is not a power of two"


TILE.op("make_range", "the i32 tile start, start + 1, ..., end - 1",
        results=[result("result", tensor())], attrs=[Attr("start", INT), Attr("end", INT)],
        traits={PURE}, verify=_make_range)


def _splat(op):
    src, res = op.operands[0].type, op.results[0].type
    if T.is_tensor(src):
        return "splat takes a scalar"
    if T.element_type(res) != src:
        return f"splat of {src} cannot produce elements of {T.element_type(res)}"


TILE.op("splat", "a tile every element of which is the scalar `src`",
        operands=[operand("src", any_type())], results=[result("result", tensor())],
        traits={PURE}, verify=_splat)


def _broadcast(op):
    src, res = T.as_tensor(op.operands[0].type), T.as_tensor(op.results[0].type)
    if src.element_type != res.element_type:
        return "broadcast must keep the element type"
    if src.rank != res.rank:
        return f"broadcast must keep the rank ({src.rank} vs {res.rank})"
    for a, b in zip(src.shape, res.shape):
        if a != b and a != 1:
            return f"broadcast of shape {list(src.shape)} to {list(res.shape)}: only size-1 dimensions grow"


TILE.op("broadcast", "`src` with its size-1 dimensions repeated to the result's shape",
        operands=[operand("src", tensor())], results=[result("result", tensor())],
        traits={PURE}, verify=_broadcast)


def _addptr(op):
    p, o = op.operands[0].type, op.operands[1].type
    if not T.is_ptr(T.element_type(p)):
        return f"addptr takes pointers, got {p}"
    if not T.isa(T.element_type(o), ir.IntegerType):
        return f"addptr offsets must be integers, got {o}"
    if T.is_tensor(p) != T.is_tensor(o) or not same_shape(p, o):
        return f"addptr pointer {p} and offset {o} must have the same shape"


_p = any_type()
TILE.op("addptr", "`ptr` advanced by `offset` elements of its pointee",
        operands=[operand("ptr", _p), operand("offset", any_type())],
        results=[result("result", _p)], traits={PURE, ELEMENTWISE, SAME_SHAPE}, verify=_addptr)


def _load(op):
    args = named_operands(op)
    ptr_t = args["ptr"].type
    res_t = op.results[0].type
    err = check_ptr_value(ptr_t, res_t, "load") or check_mask(args["mask"], ptr_t, "load")
    if err:
        return err
    if args["other"] is not None:
        if args["mask"] is None:
            return "load with `other` needs a mask"
        if args["other"].type != res_t:
            return f"load `other` must have the result type {res_t}, got {args['other'].type}"


TILE.op("load", "the values `ptr` points to; where `mask` is false, `other` (or undefined)",
        operands=[operand("ptr", any_type()), optional("mask", any_type()),
                  optional("other", any_type())],
        results=[result("result", any_type())], traits={READS, SAME_SHAPE}, verify=_load)


def _store(op):
    args = named_operands(op)
    ptr_t = args["ptr"].type
    return check_ptr_value(ptr_t, args["value"].type, "store") or check_mask(args["mask"], ptr_t, "store")


TILE.op("store", "writes `value` where `ptr` points, where `mask` is true",
        operands=[operand("ptr", any_type()), operand("value", any_type()),
                  optional("mask", any_type())],
        traits={WRITES, SAME_SHAPE}, verify=_store)

def _address_cast(what):
    """int_to_ptr / ptr_to_int: i64 <-> a pointer, scalars or tiles of one shape."""
    def check(op):
        src, res = op.operands[0].type, op.results[0].type
        ints, ptrs = (src, res) if what == "int_to_ptr" else (res, src)
        if str(T.element_type(ints)) != "i64":
            return f"{what} takes an i64 address, got {T.element_type(ints)}"
        if not T.is_ptr(T.element_type(ptrs)):
            return f"{what} takes a pointer, got {T.element_type(ptrs)}"
        if not same_shape(src, res):
            return f"{what} keeps the shape: {list(T.shape_of(src))} -> {list(T.shape_of(res))}"
    return check


TILE.op("int_to_ptr", "the pointer whose address is the i64 `src` (per element of a tile)",
        operands=[operand("src", any_type())], results=[result("result", any_type())],
        traits={PURE, ELEMENTWISE, SAME_SHAPE}, verify=_address_cast("int_to_ptr"))
TILE.op("ptr_to_int", "the address of the pointer `src` as i64 (per element of a tile)",
        operands=[operand("src", any_type())], results=[result("result", any_type())],
        traits={PURE, ELEMENTWISE, SAME_SHAPE}, verify=_address_cast("ptr_to_int"))
