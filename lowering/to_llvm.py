"""`tilegpu-to-llvm`: tilegpu IR -> per-thread code in a `gpu.module`.

Each tile value becomes the list of scalars one thread holds (`Regs`, ordered row-major over
the layout's per-thread shape); scalars stay scalars.  Ops are lowered one at a time by the
rules of `registry.py` (see `rules/`).  The result is a `gpu.func` using arith/math/scf/llvm
and gpu ids, which upstream passes (`convert-gpu-to-nvvm` / `-rocdl`, ...) finish.
"""
from __future__ import annotations

import itertools
import math

import mlir.ir as ir
from mlir.dialects import gpu

from tilework.dialects import tile as T
from tilework.dialects.layout import Blocked, layout_of

from . import rules  # noqa: F401  (registers the rules)
from .pass_base import Pass, register
from .registry import LoweringError, lookup
from .tile_passes import module_config


class Regs:
    """The elements of a tile held by one thread."""

    def __init__(self, layout: Blocked, shape, values: list):
        self.layout = layout
        self.shape = tuple(shape)
        self.per_thread = layout.elems_per_thread(self.shape)
        self.values = list(values)
        assert len(self.values) == math.prod(self.per_thread), (len(self.values), self.per_thread)

    def coords(self):
        return itertools.product(*[range(n) for n in self.per_thread])

    def flat(self, coord) -> int:
        i = 0
        for c, n in zip(coord, self.per_thread):
            i = i * n + c
        return i

    def __getitem__(self, coord):
        return self.values[self.flat(coord)]

    def like(self, values) -> "Regs":
        return Regs(self.layout, self.shape, values)


def i32(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


class LoweringContext:
    """Per-kernel state handed to every rule."""

    def __init__(self, target: str, arch: str, num_warps: int, warp_size: int):
        self.target = target
        self.arch = arch
        self.num_warps = num_warps
        self.warp_size = warp_size
        self.values: dict = {}
        self._cache: dict = {}
        self.i32 = ir.IntegerType.get_signless(32)
        self.i64 = ir.IntegerType.get_signless(64)
        self.i1 = ir.IntegerType.get_signless(1)
        self.gptr = ir.Type.parse("!llvm.ptr<1>")

    # ---- building ---------------------------------------------------------------------------
    @staticmethod
    def create(name, operands, result_types, attributes=None, regions=0):
        op = ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                 attributes=attributes or {}, regions=regions)
        return op

    def op1(self, name, operands, result_type, attributes=None) -> ir.Value:
        return self.create(name, operands, [result_type], attributes).results[0]

    def const(self, value: int, ty: ir.Type | None = None) -> ir.Value:
        ty = ty or self.i32
        key = ("const", str(ty), value)
        if key not in self._cache:
            with ir.InsertionPoint.at_block_begin(self.entry):
                self._cache[key] = self.op1("arith.constant", [], ty,
                                            {"value": ir.IntegerAttr.get(ty, int(value))})
        return self._cache[key]

    def scalar_type(self, t: ir.Type) -> ir.Type:
        """The per-thread type of one element of `t`."""
        e = T.element_type(t)
        return self.gptr if T.is_ptr(e) else e

    # ---- thread geometry --------------------------------------------------------------------
    def _hoisted(self, key, build):
        """Values computed once per kernel, at the top of the entry block."""
        if key not in self._cache:
            with ir.InsertionPoint(self.prologue_end):
                self._cache[key] = build()
        return self._cache[key]

    def thread_id(self) -> ir.Value:
        def build():
            tid = gpu.thread_id(gpu.Dimension.x)
            return self.op1("arith.index_cast", [tid], self.i32)
        return self._hoisted("tid", build)

    def thread_offset(self, layout: Blocked, dim: int) -> ir.Value:
        """The first logical index along `dim` of this thread's elements (before repetition)."""
        def build():
            tid = self.thread_id()
            lane = self.op1("arith.remui", [tid, self.const(self.warp_size)], self.i32)
            warp = self.op1("arith.divui", [tid, self.const(self.warp_size)], self.i32)
            lane_stride = warp_stride = 1
            for d in layout.order:
                if d == dim:
                    break
                lane_stride *= layout.threads_per_warp[d]
                warp_stride *= layout.warps_per_cta[d]
            ld = self.op1("arith.remui", [self.op1("arith.divui", [lane, self.const(lane_stride)],
                                                    self.i32),
                                           self.const(layout.threads_per_warp[dim])], self.i32)
            wd = self.op1("arith.remui", [self.op1("arith.divui", [warp, self.const(warp_stride)],
                                                    self.i32),
                                           self.const(layout.warps_per_cta[dim])], self.i32)
            t = self.op1("arith.addi", [ld, self.op1("arith.muli", [
                wd, self.const(layout.threads_per_warp[dim])], self.i32)], self.i32)
            return self.op1("arith.muli", [t, self.const(layout.size_per_thread[dim])], self.i32)
        return self._hoisted(("toff", layout, dim), build)

    def logical_index(self, layout: Blocked, shape, dim: int, k: int) -> ir.Value:
        """The logical index along `dim` of the thread's k-th element along `dim`."""
        spt = min(layout.size_per_thread[dim], shape[dim])
        rep, e = divmod(k, spt)
        base = rep * layout.cta_tile()[dim] + e
        v = self.thread_offset(layout, dim)
        if base:
            v = self.op1("arith.addi", [v, self.const(base)], self.i32)
        if shape[dim] < layout.cta_tile()[dim]:  # replicated: wrap around the tile
            v = self.op1("arith.remui", [v, self.const(shape[dim])], self.i32)
        return v

    # ---- values -----------------------------------------------------------------------------
    def lowered(self, v: ir.Value):
        try:
            return self.values[v]
        except KeyError:
            raise LoweringError(f"value used before it was lowered: {v}") from None

    def lower_block(self, block: ir.Block):
        """Lowers every op of `block` at the current insertion point (rules of region ops
        call this for their bodies, after mapping the block arguments in `values`)."""
        _lower_block(self, block)

    # flattening tiles to scalars and back: region ops (scf.for/if/while) carry the scalars
    @staticmethod
    def flatten(values) -> list:
        out = []
        for v in values:
            out.extend(v.values if isinstance(v, Regs) else [v])
        return out

    def unflatten(self, like_types, scalars) -> list:
        """Inverse of `flatten` for values of the (tilegpu) types `like_types`."""
        out, i = [], 0
        for t in like_types:
            if T.is_tensor(t):
                lay, shape = layout_of(t), T.shape_of(t)
                n = math.prod(lay.elems_per_thread(shape))
                out.append(Regs(lay, shape, list(scalars[i:i + n])))
                i += n
            else:
                out.append(scalars[i])
                i += 1
        return out

    def flat_types(self, types) -> list:
        """The per-thread scalar types that `flatten` produces for values of `types`."""
        out = []
        for t in types:
            if T.is_tensor(t):
                n = math.prod(layout_of(t).elems_per_thread(T.shape_of(t)))
                out.extend([self.scalar_type(t)] * n)
            else:
                out.append(self.scalar_type(t))
        return out


def _lower_block(ctx: LoweringContext, block: ir.Block):
    for op in list(block.operations):
        op = op.operation
        rule = lookup(op.name, ctx.target)
        args = [ctx.lowered(v) for v in op.operands]
        with op.location:
            try:
                results = rule(ctx, op, args)
            except LoweringError as e:
                if e.location is None:
                    raise LoweringError(str(e), op.location) from None
                raise
        results = results or []
        if len(results) != len(op.results):
            raise LoweringError(f"rule for '{op.name}' returned {len(results)} results, "
                                f"expected {len(op.results)}", op.location)
        for r, v in zip(op.results, results):
            ctx.values[r] = v


def _convert_func(f, gpu_module, target, arch, num_warps, warp_size):
    f = f.operation
    name = ir.StringAttr(f.attributes["sym_name"]).value
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    ctx = LoweringContext(target, arch, num_warps, warp_size)
    arg_types = [ctx.scalar_type(t) for t in ftype.inputs]
    with ir.InsertionPoint(gpu_module.regions[0].blocks[0]), f.location:
        gf = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get(arg_types, [])),
                           sym_name=name, kernel=True)
        nthreads = num_warps * warp_size
        gf.attributes["known_block_size"] = ir.DenseI32ArrayAttr.get([nthreads, 1, 1])
        gf.attributes["tilegpu.num_warps"] = i32(num_warps)
        entry = gf.body.blocks.append(*arg_types)
    ctx.entry = entry
    src_entry = f.regions[0].blocks[0]
    for a, b in zip(src_entry.arguments, entry.arguments):
        ctx.values[a] = b
    with ir.InsertionPoint(entry), f.location:
        # an anchor after which hoisted thread-geometry values go
        anchor = ctx.create("arith.constant", [], [ctx.i32], {"value": i32(0)})
        ctx.prologue_end = anchor
    with ir.InsertionPoint(entry):
        _lower_block(ctx, src_entry)
    anchor.erase()


def _to_llvm(module_op, pctx):
    nw, ws = module_config(module_op, pctx)
    target_attr = pctx.extra.get("gpu_target_attr") or _default_target_attr(pctx)
    funcs = [op.operation for op in module_op.regions[0].blocks[0].operations
             if op.operation.name == "func.func"]
    module_op.attributes["gpu.container_module"] = ir.UnitAttr.get()
    with ir.InsertionPoint.at_block_begin(module_op.regions[0].blocks[0]), module_op.location:
        gm = gpu.GPUModuleOp("kernels", targets=ir.ArrayAttr.get([ir.Attribute.parse(target_attr)]))
        gm.regions[0].blocks.append()
    for f in funcs:
        _convert_func(f, gm, pctx.backend, pctx.arch, nw, ws)
        f.erase()


def _default_target_attr(pctx) -> str:
    if pctx.backend == "amd":
        return f'#rocdl.target<chip = "{pctx.arch}">'
    return f'#nvvm.target<chip = "{pctx.arch}", features = "+ptx80", O = 3>'


register(Pass("tilegpu-to-llvm", "Lower tilegpu IR to per-thread code in a gpu.module",
              run=_to_llvm))
