"""`tilegpu-to-llvm`: tilegpu IR -> per-thread code in a `gpu.module`.

Each tile value becomes the list of scalars one thread holds (`Regs`, ordered row-major over
the layout's per-thread shape); scalars stay scalars.  Ops are lowered one at a time by the
rules of `registry.py` (see `rules/`).  The result is a `gpu.func` using arith/math/scf/llvm
and gpu ids, which upstream passes (`convert-gpu-to-nvvm` / `-rocdl`, ...) finish.
"""
from __future__ import annotations

import math

import mlir.ir as ir
from mlir.dialects import gpu, nvvm

from tilework.dialects import tile as T
from tilework.dialects.layout import layout_of

from . import rules  # noqa: F401  (registers the rules)
from .pass_base import Pass, register
from .registry import LoweringError, lookup
from .module_info import kernels, module_config
from .shared_memory import (ALIGN, OFFSET_ATTR, SCRATCH, SHARED_ATTR, SMEM_PTR, SMEM_SYMBOL,
                            buffer_align, scratch_bytes, smem_offset_ptr)
from .smem_alloc import allocate_shared
from .smem_barriers import insert_barriers
from .warp_specialize import PRODUCER_ATTR, register_split


from .regs import Regs  # noqa: E402,F401  (re-exported: the per-thread form of a tile)


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
        self.facts = None  # the `Target` (its matrix instructions, fp8 formats), when known

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

    def tid_bits(self) -> int:
        return (self.num_warps * self.warp_size).bit_length() - 1

    def thread_terms(self, lin, dim: int) -> tuple:
        """[(thread id bit, coordinate along `dim`)] of the lane and warp bases of `lin`
        (thread id = warp * warp_size + lane)."""
        lane_bits = self.warp_size.bit_length() - 1
        terms = [(i, v[dim]) for i, v in enumerate(lin.basis("lane")) if v[dim]]
        terms += [(lane_bits + i, v[dim]) for i, v in enumerate(lin.basis("warp")) if v[dim]]
        return tuple(terms)

    def gather_bits(self, terms) -> ir.Value:
        """XOR over `terms` [(thread id bit, value)] of value where the bit is set: runs of
        consecutive bits with doubling values become one shift/and (a blocked layout's lanes
        and warps along a dim are one run each, or one run together)."""
        def build():
            runs = []
            for bit, val in sorted(terms):
                if val & (val - 1) == 0 and runs and runs[-1][0] + runs[-1][1] == bit \
                        and runs[-1][2] << runs[-1][1] == val:
                    runs[-1][1] += 1
                else:
                    runs.append([bit, 1, val])
            tid, total = self.thread_id(), self.tid_bits()
            acc, seen = None, 0
            for s, n, v in runs:
                if v & (v - 1):  # not a power of two: select the value by the bit
                    x = self.op1("arith.andi", [tid, self.const(1 << s)], self.i32)
                    x = self.op1("arith.muli", [self.op1("arith.shrui", [x, self.const(s)],
                                                         self.i32), self.const(v)], self.i32)
                    vmask = v
                else:
                    t = v.bit_length() - 1
                    x = tid
                    if s + n == total and t == 0:  # the top bits: one shift clears the rest
                        if s:
                            x = self.op1("arith.shrui", [x, self.const(s)], self.i32)
                    else:
                        if s + n < total or s:  # other bits to clear
                            x = self.op1("arith.andi", [x, self.const(((1 << n) - 1) << s)],
                                         self.i32)
                        if t > s:
                            x = self.op1("arith.shli", [x, self.const(t - s)], self.i32)
                        elif t < s:
                            x = self.op1("arith.shrui", [x, self.const(s - t)], self.i32)
                    vmask = ((1 << n) - 1) << t
                if acc is None:
                    acc = x
                else:
                    acc = self.op1("arith.addi" if not seen & vmask else "arith.xori",
                                   [acc, x], self.i32)
                seen |= vmask
            return acc if acc is not None else self.const(0)
        return self._hoisted(("bits", tuple(terms)), build)

    def thread_offset(self, layout, dim: int, shape=None) -> ir.Value:
        """The coordinate along `dim` of this thread's first element (register 0), from the
        lane and warp bases of the layout's linear map."""
        lin = layout.linear(shape if shape is not None else layout.tile_shape())
        return self.gather_bits(self.thread_terms(lin, dim))

    def logical_index(self, layout, shape, dim: int, k: int) -> ir.Value:
        """The logical index along `dim` of the thread's k-th element along `dim`: the thread's
        part xor the bases of k's set bits among the register bits along `dim`."""
        v, const, disjoint = self.logical_index_parts(layout, shape, dim, k)
        if const:
            v = self.op1("arith.addi" if disjoint else "arith.xori", [v, self.const(const)],
                         self.i32)
        return v

    def logical_index_parts(self, layout, shape, dim: int, k: int):
        """(thread part, constant, whether their bits are disjoint) of `logical_index`: the
        index is their sum when disjoint, else their xor."""
        lin = layout.linear(shape)
        terms = self.thread_terms(lin, dim)
        regs = [v[dim] for v in lin.basis("register") if v[dim]]
        const = 0
        for j, v in enumerate(regs):
            if k >> j & 1:
                const ^= v
        tmask = 0
        for _, t in terms:
            tmask |= t
        return self.gather_bits(terms), const, not const & tmask

    def linear_index(self, regs_layout, shape, coord, strides=None) -> ir.Value:
        """Row-major linear index of the element at per-thread `coord` (or with `strides`)."""
        if strides is None:
            strides, acc = [], 1
            for n in reversed(shape):
                strides.insert(0, acc)
                acc *= n
        v = None
        for d, k in enumerate(coord):
            if shape[d] == 1:
                continue
            term = self.logical_index(regs_layout, shape, d, k)
            if strides[d] != 1:
                term = self.op1("arith.muli", [term, self.const(strides[d])], self.i32)
            v = term if v is None else self.op1("arith.addi", [v, term], self.i32)
        return v if v is not None else self.const(0)

    # ---- warps, lanes, shared memory ---------------------------------------------------------
    def lane_id(self) -> ir.Value:
        return self._hoisted("lane", lambda: self.op1(
            "arith.remui", [self.thread_id(), self.const(self.warp_size)], self.i32))

    def warp_id(self) -> ir.Value:
        return self._hoisted("warp", lambda: self.op1(
            "arith.divui", [self.thread_id(), self.const(self.warp_size)], self.i32))

    def warp_id_uniform(self) -> ir.Value:
        """The warp id broadcast from lane 0 (shfl.sync.idx): the same value, but one ptxas
        sees is warp-uniform, so what is computed from it (wgmma descriptors) can live in
        uniform registers (Triton's warp id is made so)."""
        return self._hoisted("warp_uniform", lambda: self.shuffle(self.warp_id(), 0, "idx"))

    # Warp specialization (lowering/warp_specialize.py): `producer_warps` warps after the
    # kernel's num_warps; inside the marked scf.if, `ws_role` is "producer" or "consumer" and
    # a barrier is a named one of that role's threads only (the other role never reaches it).
    # The producer's program runs on its first warp alone (rules/scf.py): the other three
    # take part in its setmaxnreg (a warp group's instruction), then leave.
    producer_warps = 0
    ws_role = None

    def barrier(self):
        if self.ws_role is None:
            gpu.barrier()
            return
        bid, n = (1, self.num_warps) if self.ws_role == "consumer" else (2, 1)
        # (the intrinsic, not inline asm: LLVM knows it convergent, as gpu.barrier's)
        nvvm.BarrierOp(None, barrierId=self.const(bid),
                       numberOfThreads=self.const(n * self.warp_size))

    def issuer_id(self) -> ir.Value:
        """The thread id within the threads running this code (the producer's first thread
        is 0 there): the one thread that issues a copy or inits a barrier is issuer 0."""
        if self.ws_role != "producer":
            return self.thread_id()
        return self._hoisted("issuer", lambda: self.op1(
            "arith.subi", [self.thread_id(), self.const(self.num_warps * self.warp_size)],
            self.i32))

    # Barriers between ops are placed by tilegpu-insert-barriers as `tilegpu.barrier` ops; one
    # before an op with scratch is emitted where its rule starts touching shared memory
    # (`smem_begin`), so the op's register work comes first.  The barrier between a rule's own
    # writes and reads of its scratch is the rule's (`smem_publish`).
    barrier_pending = False
    current_op = None

    def smem_begin(self):
        """Before an op's first shared-memory access: the barrier the pass placed before it."""
        if self.barrier_pending:
            self.barrier_pending = False
            self.barrier()

    def smem_publish(self):
        """Between a rule's writes to its scratch and its reads of it."""
        self.barrier()

    def smem_base(self) -> ir.Value:
        """The kernel's dynamic shared memory (!llvm.ptr<3>)."""
        return self._hoisted("smem", lambda: self.op1(
            "llvm.mlir.addressof", [], ir.Type.parse(SMEM_PTR),
            {"global_name": ir.FlatSymbolRefAttr.get(SMEM_SYMBOL)}))

    def smem_at(self, op) -> ir.Value:
        """The base plus the offset tilegpu-allocate-shared gave `op`."""
        if OFFSET_ATTR not in op.attributes:
            raise LoweringError(f"'{op.name}' has no shared memory assigned; run "
                                "tilegpu-allocate-shared")
        off = ir.IntegerAttr(op.attributes[OFFSET_ATTR]).value
        return self._hoisted(("smem", off), lambda: smem_offset_ptr(self, self.smem_base(), off))

    def smem(self, nbytes: int) -> ir.Value:
        """The scratch of the op being lowered (!llvm.ptr<3>): the base plus its offset; the
        rule uses `nbytes`, which must be its registered scratch size (`@scratch`)."""
        op = self.current_op
        have = scratch_bytes(op)
        if int(nbytes) != have:
            raise LoweringError(f"'{op.name}' uses {nbytes} bytes of shared scratch but "
                                f"{have} were allocated")
        return self.smem_at(op)

    def shuffle_xor(self, v: ir.Value, offset: int) -> ir.Value:
        """`v` from the lane `lane ^ offset` (any scalar type up to 64 bits)."""
        return self.shuffle(v, offset, "xor")

    def shuffle(self, v: ir.Value, offset, mode: str = "xor") -> ir.Value:
        """`v` from another lane (any scalar type up to 64 bits): gpu.shuffle `mode` xor, up
        (lane - offset), down (lane + offset) or idx (lane `offset`); `offset` an int or an i32
        value.  Where the source lane is outside the warp the result is unspecified (NVIDIA
        gives the lane's own value, AMD's ds_bpermute wraps around): callers select."""
        t = v.type
        bits = _bits(t)
        if bits == 64:  # two 32-bit halves
            i64, is_ptr = self.i64, str(t).startswith("!llvm.ptr")
            x = self.op1("llvm.ptrtoint", [v], i64) if is_ptr else (
                v if t == i64 else self.op1("arith.bitcast", [v], i64))
            lo = self.op1("arith.trunci", [x], self.i32)
            hi = self.op1("arith.trunci", [self.op1("arith.shrui", [x, self.const(32, i64)], i64)],
                          self.i32)
            lo, hi = self.shuffle(lo, offset, mode), self.shuffle(hi, offset, mode)
            x = self.op1("arith.ori", [self.op1("arith.extui", [lo], i64), self.op1(
                "arith.shli", [self.op1("arith.extui", [hi], i64), self.const(32, i64)], i64)], i64)
            if is_ptr:
                return self.op1("llvm.inttoptr", [x], t)
            return x if t == i64 else self.op1("arith.bitcast", [x], t)
        if t == self.i32 or str(t) == "f32":
            off = self.const(offset) if isinstance(offset, int) else offset
            res = gpu.ShuffleOp(v, off, self.const(self.warp_size),
                                getattr(gpu.ShuffleMode, mode.upper()))
            return res.results[0]
        # narrower types travel in an i32
        it = ir.IntegerType.get_signless(bits)
        x = v if T.isa(t, ir.IntegerType) else self.op1("arith.bitcast", [v], it)
        x = self.op1("arith.extui", [x], self.i32) if bits < 32 else x
        x = self.shuffle(x, offset, mode)
        x = self.op1("arith.trunci", [x], it) if bits < 32 else x
        return x if T.isa(t, ir.IntegerType) else self.op1("arith.bitcast", [x], t)

    def inline_func(self, name: str, args: list) -> list:
        """Lowers the body of the private scalar function `name` (a combine function) on
        `args` at the insertion point; returns what it returns."""
        f = self.functions[name]
        block = f.regions[0].blocks[0]
        for a, v in zip(block.arguments, args):
            self.values[a] = v
        result = None
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                result = [self.lowered(v) for v in op.operands]
                break
            rule = lookup(op.name, self.target, self.arch)
            outs = rule(self, op, [self.lowered(v) for v in op.operands]) or []
            for r, v in zip(op.results, outs):
                self.values[r] = v
        return result

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

    def lower_ops(self, ops):
        """Lowers `ops` (some of one block's, in order) at the current insertion point."""
        _lower_ops(self, list(ops))

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


def _bits(t: ir.Type) -> int:
    s = str(t)
    if s.startswith("!llvm.ptr"):
        return 64
    if s == "bf16":
        return 16
    if s.startswith("f8"):
        return 8
    if s.startswith("i"):
        return int(s[1:])
    return int(s[1:])


def _lower_block(ctx: LoweringContext, block: ir.Block):
    _lower_ops(ctx, [op.operation for op in block.operations])


def _lower_ops(ctx: LoweringContext, ops):
    for op in ops:
        with op.location:
            if ctx.barrier_pending and op.name not in SCRATCH:
                ctx.smem_begin()  # only rules with scratch defer the barrier
            outer, ctx.current_op = ctx.current_op, op
            try:
                rule = lookup(op.name, ctx.target, ctx.arch)
                args = [ctx.lowered(v) for v in op.operands]
                results = rule(ctx, op, args)
            except LoweringError as e:
                if e.location is None:
                    raise LoweringError(str(e), op.location) from None
                raise
            finally:
                ctx.current_op = outer
            if ctx.barrier_pending and op.name != "tilegpu.barrier":
                ctx.smem_begin()  # the op did not touch shared memory after all
        results = results or []
        if len(results) != len(op.results):
            raise LoweringError(f"rule for '{op.name}' returned {len(results)} results, "
                                f"expected {len(op.results)}", op.location)
        for r, v in zip(op.results, results):
            ctx.values[r] = v


def _convert_func(f, gpu_module, target, arch, num_warps, warp_size, functions, shared,
                  maxnreg=None, facts=None, buffer_ops=False, ring_k_step=False,
                  tma_elect=False, stmatrix=False):
    f = f.operation
    name = ir.StringAttr(f.attributes["sym_name"]).value
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    ctx = LoweringContext(target, arch, num_warps, warp_size)
    ctx.functions = functions
    ctx.facts = facts
    ctx.buffer_ops = buffer_ops  # AMD: masked loads/stores as buffer ops (rules/memory_amd.py)
    ctx.ring_k_step = ring_k_step  # wgmma ring slots' K steps as additions (rules/dot_wgmma.py)
    ctx.tma_elect = tma_elect  # TMA loads' copies by an elect.sync lane of warp 0 (rules/tma.py)
    ctx.stmatrix = stmatrix  # 16-bit shared-memory writes by stmatrix (rules/layout.py)
    arg_types = [ctx.scalar_type(t) for t in ftype.inputs]
    for i in _tma_args(f):  # a tensor map: a by-value parameter, addressed generically
        arg_types[i] = ir.Type.parse("!llvm.ptr")
    with ir.InsertionPoint(gpu_module.regions[0].blocks[0]), f.location:
        gf = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get(arg_types, [])),
                           sym_name=name, kernel=True)
        if TMA_ATTR in f.attributes:  # the backend makes those parameters byval (TMA_ATTR)
            gf.attributes[TMA_ATTR] = f.attributes[TMA_ATTR]
        if SCRATCH_ATTR in f.attributes:  # the metadata's global_scratch_size (the backend)
            gf.attributes[SCRATCH_ATTR] = f.attributes[SCRATCH_ATTR]
        producer = ir.IntegerAttr(f.attributes[PRODUCER_ATTR]).value \
            if PRODUCER_ATTR in f.attributes else 0
        ctx.producer_warps = producer
        nthreads = (num_warps + producer) * warp_size
        gf.attributes["known_block_size"] = ir.DenseI32ArrayAttr.get([nthreads, 1, 1])
        gf.attributes["tilegpu.num_warps"] = i32(num_warps)
        if producer:  # the count at entry setmaxnreg starts from (ptxas must know it)
            gf.attributes["nvvm.maxnreg"] = i32(register_split(num_warps, maxnreg)[0])
        elif maxnreg and target == "nvidia":  # ptxas fits the cap (Triton's `maxnreg`)
            gf.attributes["nvvm.maxnreg"] = i32(maxnreg)
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
    gf.attributes[SHARED_ATTR] = i32(shared)


LAUNCH_WARPS_ATTR = "tilegpu.launch_warps"  # module: the warps a launch needs, producers too
BUFFER_OPS_ATTR = "tilegpu.buffer_ops"  # unit module attribute: `buffer_ops` on
TMA_ATTR = "tile.tma"  # (frontend/ops_descriptor.py): tensor-map arguments, the kernel's plans
SCRATCH_ATTR = "tile.global_scratch"  # (frontend/ops_descriptor.py): bytes per program


def _tma_args(f) -> list:
    """Indices of the kernel's tensor-map arguments (arg attribute `tile.tma`)."""
    if "arg_attrs" not in f.attributes:
        return []
    return [i for i, d in enumerate(ir.ArrayAttr(f.attributes["arg_attrs"]))
            if TMA_ATTR in ir.DictAttr(d)]


def _to_llvm(module_op, pctx):
    nw, ws = module_config(module_op, pctx)
    if SHARED_ATTR not in module_op.attributes:  # hand-written IR: allocate and synchronize
        allocate_shared(module_op, pctx)
        insert_barriers(module_op, pctx)
    shared = ir.IntegerAttr(module_op.attributes[SHARED_ATTR]).value
    salign = _smem_align(module_op)
    target_attr = pctx.extra.get("gpu_target_attr") or _default_target_attr(pctx)
    funcs = kernels(module_op)
    helpers = [op.operation for op in module_op.regions[0].blocks[0].operations
               if op.operation.name == "func.func" and op.operation not in funcs]
    module_op.attributes["gpu.container_module"] = ir.UnitAttr.get()
    with ir.InsertionPoint.at_block_begin(module_op.regions[0].blocks[0]), module_op.location:
        gm = gpu.GPUModuleOp("kernels", targets=ir.ArrayAttr.get([ir.Attribute.parse(target_attr)]))
        gm.regions[0].blocks.append()
    functions = {ir.StringAttr(h.attributes["sym_name"]).value: h for h in helpers}
    # the option, or the module attribute (hand-written IR)
    buffer_ops = bool(getattr(pctx.options, "buffer_ops", False)) or \
        BUFFER_OPS_ATTR in module_op.attributes
    launch = max([nw + (ir.IntegerAttr(f.attributes[PRODUCER_ATTR]).value
                        if PRODUCER_ATTR in f.attributes else 0) for f in funcs] + [nw])
    if launch != nw:  # the backend's metadata (the launch's block) takes it from here
        module_op.attributes[LAUNCH_WARPS_ATTR] = i32(launch)
    for f in funcs:
        _convert_func(f, gm, pctx.backend, pctx.arch, nw, ws, functions, shared,
                      pctx.extra.get("maxnreg"), pctx.target, buffer_ops,
                      bool(getattr(pctx.options, "wgmma_ring_k_step", False)),
                      bool(getattr(pctx.options, "tma_elect", False)),
                      bool(getattr(pctx.options, "stmatrix", False)))
        f.erase()
    for h in helpers:
        h.erase()
    if shared:
        # dynamic shared memory: a zero-sized external array in address space 3
        g = ir.Operation.parse(f'llvm.mlir.global external @{SMEM_SYMBOL}() {{addr_space = 3 '
                               f': i32, alignment = {salign} : i64}} : '
                               f'!llvm.array<0 x i8>')
        ir.InsertionPoint.at_block_begin(gm.regions[0].blocks[0]).insert(g)
    module_op.attributes[SHARED_ATTR] = i32(shared)


def _smem_align(module_op) -> int:
    """The dynamic shared memory's alignment: that of its most aligned buffer."""
    out = ALIGN
    for op in T.walk_ops(module_op):
        if op.name == "tilegpu.local_alloc":
            out = max(out, buffer_align(T.memdesc_of(op.results[0].type)))
    return out


def _default_target_attr(pctx) -> str:
    if pctx.backend == "amd":
        return f'#rocdl.target<chip = "{pctx.arch}">'
    return f'#nvvm.target<chip = "{pctx.arch}", features = "+ptx80", O = 3>'


register(Pass("tilegpu-to-llvm", "Lower tilegpu IR to per-thread code in a gpu.module",
              run=_to_llvm))
