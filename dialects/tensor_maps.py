"""A kernel's tensor maps.  Host descriptors' are parameters (`!tile.ptr<i8> {tile.tma}`,
after the others but the global scratch; their plans in the kernel's `tile.tma` attribute, in
the same order): the frontend makes one per host descriptor with a TMA plan and drops those no
op used; tile-tma-guard drops those its fallbacks left unused.  The plans are what the runtime
encodes tensor maps from (metadata["tma"]).  Descriptors made in the kernel write theirs in the
global scratch (`tile.make_tensormap`, a 128-byte slot each per program; the scratch is the
last parameter, `{tile.global_scratch}`, and the kernel's `tile.global_scratch` attribute its
bytes per program): `settle_global_scratch` numbers the slots of the maps some op reads, after
the frontend and again after tile-tma-guard (whose fallbacks may leave maps unread), and
drops the scratch where none is left."""
from __future__ import annotations

import mlir.ir as ir

from .ir_types import walk_ops
from .opdefs.tma import MAP_BYTES

TMA_ATTR = "tile.tma"


def drop_unused_tensor_maps(func) -> None:
    """Erases `func`'s tensor-map arguments that nothing uses, with their plans."""
    f = func.operation
    if TMA_ATTR not in f.attributes:
        return
    entry = f.regions[0].blocks[0]
    plans = list(ir.ArrayAttr(f.attributes[TMA_ATTR]))
    arg_attrs = list(ir.ArrayAttr(f.attributes["arg_attrs"]))
    maps = [i for i, d in enumerate(arg_attrs) if TMA_ATTR in ir.DictAttr(d)]
    assert len(maps) == len(plans), "a tensor-map parameter per plan"
    unused = [(j, i) for j, i in enumerate(maps) if not len(list(entry.arguments[i].uses))]
    if not unused:
        return
    for j, i in reversed(unused):
        entry.erase_argument(i)
        del plans[j], arg_attrs[i]
    with f.context:
        results = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value).results
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in entry.arguments], results))
        f.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
        if plans:
            f.attributes[TMA_ATTR] = ir.ArrayAttr.get(plans)
        else:
            del f.attributes[TMA_ATTR]


SCRATCH_ATTR = "tile.global_scratch"  # on the scratch argument; on the kernel: bytes/program


def settle_global_scratch(func) -> int:
    """Erases `func`'s `tile.make_tensormap`s whose map nothing reads, gives the others their
    slots in a program's scratch and records the bytes a program needs on the kernel; with no
    map left, the scratch parameter goes (and the kernel's attribute).  Returns the bytes."""
    f = func.operation
    live = []
    for o in [o for o in walk_ops(f) if o.name == "tile.make_tensormap"]:
        if len(list(o.results[0].uses)):
            live.append(o)
        else:
            o.erase()
    i32 = ir.IntegerType.get_signless(32, f.context)
    for i, o in enumerate(live):
        o.attributes["offset"] = ir.IntegerAttr.get(i32, i * MAP_BYTES)
        o.attributes["program_bytes"] = ir.IntegerAttr.get(i32, len(live) * MAP_BYTES)
    if live:
        f.attributes[SCRATCH_ATTR] = ir.IntegerAttr.get(i32, len(live) * MAP_BYTES)
        return len(live) * MAP_BYTES
    if SCRATCH_ATTR in f.attributes:
        del f.attributes[SCRATCH_ATTR]
    if "arg_attrs" not in f.attributes:
        return 0
    entry = f.regions[0].blocks[0]
    arg_attrs = list(ir.ArrayAttr(f.attributes["arg_attrs"]))
    scratch = [i for i, d in enumerate(arg_attrs) if SCRATCH_ATTR in ir.DictAttr(d)]
    for i in reversed(scratch):
        entry.erase_argument(i)
        del arg_attrs[i]
    if scratch:
        with f.context:
            results = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value).results
            f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [a.type for a in entry.arguments], results))
            f.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
    return 0
