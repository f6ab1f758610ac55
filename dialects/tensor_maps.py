"""A kernel's tensor-map parameters (`!tile.ptr<i8> {tile.tma}`, after the others but the
global scratch; their plans in the kernel's `tile.tma` attribute, in the same order): the frontend makes one per host descriptor
with a TMA plan and drops those no op used; tile-tma-guard drops those its fallbacks
left unused.  The plans are what the runtime encodes tensor maps from (metadata["tma"])."""
from __future__ import annotations

import mlir.ir as ir

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
