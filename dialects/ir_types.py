"""Helpers on MLIR types and ops shared by the dialect declarations, the verifier and the
lowering (re-exported by `tile.py`).  A leaf module: the op declarations need these, and
`tile.py` needs the declarations, so they cannot live in `tile.py` itself."""
from __future__ import annotations

import re

import mlir.ir as ir

# ---------------------------------------------------------------------------------------------
# Type helpers.  Dynamic (IRDL) types have no Python accessors, so their parameters are read
# back from their textual form.

_PTR_RE = re.compile(r"^!tile\.ptr<(.*)>$")


def ptr_type(pointee: ir.Type) -> ir.Type:
    return ir.Type.parse(f"!tile.ptr<{pointee}>")


def is_ptr(t: ir.Type) -> bool:
    return str(t).startswith("!tile.ptr<")


def pointee(t: ir.Type) -> ir.Type:
    m = _PTR_RE.match(str(t))
    if not m:
        raise TypeError(f"not a !tile.ptr type: {t}")
    return ir.Type.parse(m.group(1))


def isa(t: ir.Type, cls) -> bool:
    """isinstance for MLIR types whether or not the Python object was downcast."""
    if isinstance(t, cls):
        return True
    try:
        cls(t)
        return True
    except (ValueError, TypeError):
        return False


def walk_ops(root) -> list:
    """Every operation under `root` (pre-order), collected first so callers may raise or mutate."""
    ops = []
    (root.operation if hasattr(root, "operation") else root).walk(
        lambda o: (ops.append(o.operation), ir.WalkResult.ADVANCE)[1], ir.WalkOrder.PRE_ORDER)
    return ops


def ancestor_in(op, block):
    """The op of `block` that is `op` or holds it (as an `ir.Operation`), or None where `op`
    is not nested in `block`."""
    op = getattr(op, "operation", op)
    while op is not None:
        parent = op.parent
        if parent is None:  # the module: in no block (its `block` would abort)
            return None
        if op.block == block:
            return op
        op = getattr(parent, "operation", parent)
    return None


def is_tensor(t: ir.Type) -> bool:
    if isinstance(t, ir.RankedTensorType):
        return True
    try:
        ir.RankedTensorType(t)
        return True
    except ValueError:
        return False


def as_tensor(t: ir.Type) -> ir.RankedTensorType:
    return t if isinstance(t, ir.RankedTensorType) else ir.RankedTensorType(t)


def element_type(t: ir.Type) -> ir.Type:
    """The element type of a tensor, or the type itself for a scalar."""
    return as_tensor(t).element_type if is_tensor(t) else t


def shape_of(t: ir.Type) -> tuple[int, ...]:
    return tuple(as_tensor(t).shape) if is_tensor(t) else ()


# ---- shared-memory descriptors (`!tilegpu.memdesc<shape, element type, layout, buffers>`) ----

_MEMDESC_RE = re.compile(r"^!tilegpu\.memdesc<array<i64(?::\s*([-\d,\s]*))?>,\s*([^,]+),\s*(.*),"
                         r"\s*(-?\d+)\s*:\s*i\d+>$", re.S)


class MemDesc:
    """The parameters of a memdesc type: `shape` (of one buffer), `elem`, `layout` (the shared
    layout attribute, text) and `buffers`."""

    def __init__(self, shape, elem: ir.Type, layout: str, buffers: int):
        self.shape, self.elem, self.layout, self.buffers = tuple(shape), elem, layout, buffers

    def with_buffers(self, n: int) -> "MemDesc":
        return MemDesc(self.shape, self.elem, self.layout, n)

    def type(self) -> ir.Type:
        return memdesc_type(self.shape, self.elem, self.layout, self.buffers)


def memdesc_type(shape, elem: ir.Type, layout: str = "unit", buffers: int = 1) -> ir.Type:
    dims = ", ".join(str(int(n)) for n in shape)
    return ir.Type.parse(f"!tilegpu.memdesc<array<i64{': ' + dims if dims else ''}>, {elem}, "
                         f"{layout}, {int(buffers)} : i32>")


def is_memdesc(t: ir.Type) -> bool:
    return str(t).startswith("!tilegpu.memdesc<")


def memdesc_of(t: ir.Type) -> MemDesc:
    m = _MEMDESC_RE.match(str(t))
    if not m:
        raise TypeError(f"not a !tilegpu.memdesc type: {t}")
    dims = [int(x) for x in m.group(1).split(",")] if m.group(1) and m.group(1).strip() else []
    return MemDesc(dims, ir.Type.parse(m.group(2).strip()), m.group(3).strip(), int(m.group(4)))
