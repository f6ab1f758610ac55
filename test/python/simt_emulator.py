"""A small SIMT emulator of the per-thread code `tilegpu-to-llvm` emits, for tests without a GPU.

It runs the `gpu.func` of a kernel's `tilegpu` stage after `tilegpu-to-llvm` (arith, math,
scf, llvm memory ops, gpu ids, shuffles and barriers), all threads of a program in lockstep:
every SSA value is a numpy array over the threads; `scf.if` runs both sides under a mask of
active threads; `gpu.shuffle` reads other lanes of the same warp.

Shared memory is checked for races: a thread reading bytes another thread wrote, or writing
bytes another thread read or wrote (a different value), with no `gpu.barrier` in between is
an error, as are two threads of one store writing different values to one byte.  Global
memory accesses outside the arrays passed as arguments are errors too.

    emu = Emulator.from_kernel(kernel, signature, constants, "sm_80", num_warps=4)
    emu.run(grid, x, out, n)   # numpy arrays for pointers (written in place), ints, floats

Arith and math ops are in simt_arith.py (values: simt_values.py), Hopper's wgmma and the
async-proxy fence in simt_wgmma.py, the TMA store in
simt_tma.py (pass a `TensorMap` for a tensor-map parameter), CDNA's MFMA in simt_mfma_amd.py
(mixins).

Not a model of timing or of lane divergence (shuffles and barriers must be reached by every
thread, which is what the lowering emits).
"""
from __future__ import annotations

import re
import types

import numpy as np

import mlir.ir as ir

from simt_mfma_amd import MfmaOps
from sim_rounding import fma_exact
from simt_mma import MmaOps
from simt_arith import ArithOps
from simt_tma import TensorMap, TmaOps
from simt_values import EmulationError, as_unsigned, np_type  # (EmulationError: also the tests')
from simt_values import f32_to_f8_satfinite
from simt_wgmma import WgmmaOps

GLOBAL_SHIFT = 40
_SMEM_BASE = 1 << 60

# ops that may hold a pending wgmma accumulator (simt_wgmma.py): packing, chaining, carrying
WG_CARRIERS = frozenset({"llvm.insertvalue", "llvm.extractvalue", "nvvm.wgmma.mma_async",
                         "scf.for", "llvm.inline_asm"})  # (inline asm: only the tied wait)


class Emulator(ArithOps, TmaOps, WgmmaOps, MfmaOps, MmaOps):
    # what the op mixins use (simt_mma.py)
    Error = EmulationError
    SMEM_BASE = _SMEM_BASE
    # cp.async's landed bytes need a fence.proxy.async before a wgmma reads them (the PTX
    # ISA's generic proxy); False: they need none (what Triton's and CUTLASS's cp.async + wgmma
    # loops assume; CompileOptions.wgmma_cp_async_fence off)
    cp_async_needs_proxy_fence = True
    np_type = staticmethod(lambda t: np_type(t))

    def __init__(self, module: ir.Module, num_warps: int, warp_size: int):
        self.module = module
        self.nw, self.ws = num_warps, warp_size
        self.T = num_warps * warp_size
        self.func = None
        for op in module.body.operations:
            if op.operation.name == "gpu.module":
                for f in op.operation.regions[0].blocks[0].operations:
                    if f.operation.name == "gpu.func":
                        self.func = f.operation
        if self.func is None:
            raise EmulationError("no gpu.func in the module")
        attrs = self.func.attributes
        self.shared = ir.IntegerAttr(attrs["tilegpu.shared"]).value if "tilegpu.shared" in attrs \
            else 0

    @classmethod
    def from_kernel(cls, kernel, signature: dict, constants: dict, target="sm_80",
                    num_warps=4, rewrite=None, attrs=None, **options):
        """Compiles `kernel` (every stage: the compile-only check; `attrs` the arguments'
        specialization, e.g. {"n": {"tile.divisibility": 16}}; `options` are more
        CompileOptions) and lowers its `tilegpu` stage, first passed through
        `rewrite(text) -> text` if given (e.g. to force other layouts)."""
        from tilework import CompileOptions
        from tilework.compiler.driver import ASTSource, compile
        ck = compile(ASTSource(kernel, signature, constants, attrs or {}), target,
                     CompileOptions(num_warps=num_warps, **options), cache=False)
        text = ck.asm["tilegpu"]
        emu = cls.from_tilegpu(rewrite(text) if rewrite is not None else text, target,
                               num_warps)
        emu.compiled = ck
        return emu

    @classmethod
    def from_tilegpu(cls, text: str, target="sm_80", num_warps=4, passes=None, **options):
        """Lowers tilegpu IR text: shared memory allocated and barriers placed again (a
        rewrite may have changed what needs scratch), then tilegpu-to-llvm (`options`: more
        CompileOptions, e.g. buffer_ops)."""
        from tilework import CompileOptions
        from tilework.backends import parse_target
        from tilework.dialects import tile as T
        from tilework.lowering import PassContext, run_pipeline
        tgt = parse_target(target)
        ctx = T.new_context()
        if passes is None:
            passes = ("tilegpu-allocate-shared", "tilegpu-insert-barriers", "tilegpu-to-llvm")
        with ctx:
            m = ir.Module.parse(text)
            run_pipeline(m, passes, PassContext(tgt, CompileOptions(num_warps=num_warps,
                                                                    **options)))
        emu = cls(m, num_warps, tgt.warp_size)
        emu.context = ctx
        emu.arch = tgt.arch  # (gfx942's fp8 MFMAs read fnuz bytes, gfx950's OCP ones)
        return emu

    # ---- running --------------------------------------------------------------------------
    def run(self, grid, *args):
        ctx = getattr(self, "context", None)
        if ctx is not None:
            with ctx:
                return self._run(grid, *args)
        return self._run(grid, *args)

    def _run(self, grid, *args):
        grid = tuple(grid) + (1,) * (3 - len(grid))
        self.buffers, self.tmaps = [], []
        block = self.func.regions[0].blocks[0]
        if len(args) != len(block.arguments):
            raise EmulationError(f"the kernel takes {len(block.arguments)} arguments, "
                                 f"got {len(args)}")
        env0 = {}
        for a, v in zip(block.arguments, args):
            if isinstance(v, np.ndarray):
                if not v.flags.c_contiguous:
                    raise EmulationError("arrays must be contiguous")
                self.buffers.append(v.reshape(-1).view(np.uint8))
                addr = len(self.buffers) << GLOBAL_SHIFT
                env0[a] = np.full(self.T, addr, np.int64)
            elif isinstance(v, TensorMap):
                env0[a] = np.full(self.T, self.tma_register(v), np.int64)
            else:
                dt, _ = np_type(a.type)
                env0[a] = np.full(self.T, v, dt)
        self.grid = grid
        for z in range(grid[2]):
            for y in range(grid[1]):
                for x in range(grid[0]):
                    self.pid = (x, y, z)
                    self.smem = np.zeros(max(self.shared, 1), np.uint8)
                    self.w_epoch = np.full(self.smem.size, -1, np.int64)
                    self.w_thread = np.full(self.smem.size, -1, np.int64)
                    self.r_epoch = np.full(self.smem.size, -1, np.int64)
                    self.r_thread = np.full(self.smem.size, -1, np.int64)
                    self.epoch = 0
                    self.tma_reset()
                    self.wg_reset()
                    self.async_open, self.async_groups = [], []
                    env = dict(env0)
                    self.exec_block(block, env, np.ones(self.T, np.bool_))

    def exec_block(self, block, env, active):
        """Runs the ops of `block`; returns the operands of its terminator (scf.yield)."""
        for op in block.operations:
            op = op.operation
            name = op.name
            if name in ("scf.yield", "gpu.return"):
                return [env[v] for v in op.operands]
            handler = getattr(self, "op_" + name.replace(".", "_"), None) \
                or self.matrix_handler(name)
            if handler is None:
                raise EmulationError(f"op {name} is not emulated")
            args = [env[v] for v in op.operands]
            if self.wg_pending and name not in WG_CARRIERS:
                self.wg_check_args(op, args)
            outs = handler(op, args, env, active)
            if outs is not None:
                for r, v in zip(op.results, outs):
                    env[r] = v
        return []

    # ---- control flow ---------------------------------------------------------------------
    def op_scf_if(self, op, args, env, active):
        cond = args[0].astype(np.bool_)
        then_b = op.regions[0].blocks[0]
        # a branch without results that no thread takes is not run (as on the hardware: its
        # barriers are not reached, e.g. tile-tma-guard's TMA store at a negative row)
        skip = (lambda m: not op.results and not m.any())
        t = [] if skip(active & cond) else self.exec_block(then_b, dict(env), active & cond)
        if len(op.regions) > 1 and len(op.regions[1].blocks) and not skip(active & ~cond):
            e = self.exec_block(op.regions[1].blocks[0], dict(env), active & ~cond)
        else:
            e = []
        out = []
        for a, b in zip(t, e):
            c = cond if a.ndim == 1 else cond[:, None]
            out.append(np.where(c, a, b))
        return out

    def op_scf_for(self, op, args, env, active):
        lb, ub, step = (int(a[0]) for a in args[:3])
        if any(len(set(a.tolist())) != 1 for a in args[:3]):
            raise EmulationError("scf.for with bounds that differ between threads")
        vals = list(args[3:])
        body = op.regions[0].blocks[0]
        iv_dt, _ = np_type(body.arguments[0].type)
        for i in range(lb, ub, step):
            benv = dict(env)
            benv[body.arguments[0]] = np.full(self.T, i, iv_dt)
            for a, v in zip(list(body.arguments)[1:], vals):
                benv[a] = v
            vals = self.exec_block(body, benv, active)
        return vals

    # ---- ids --------------------------------------------------------------------------------
    def _dim(self, op):
        return "xyz".index(str(op.attributes["dimension"]).split()[-1].rstrip(">"))

    def op_gpu_thread_id(self, op, args, env, active):
        d = self._dim(op)
        return [np.arange(self.T, dtype=np.int64) if d == 0 else np.zeros(self.T, np.int64)]

    def op_gpu_block_id(self, op, args, env, active):
        return [np.full(self.T, self.pid[self._dim(op)], np.int64)]

    def op_gpu_grid_dim(self, op, args, env, active):
        return [np.full(self.T, self.grid[self._dim(op)], np.int64)]

    def op_gpu_block_dim(self, op, args, env, active):
        d = self._dim(op)
        return [np.full(self.T, self.T if d == 0 else 1, np.int64)]

    def op_gpu_barrier(self, op, args, env, active):
        if not active.all():
            raise EmulationError("gpu.barrier reached by only some threads")
        self.epoch += 1

    # ---- cp.async: the bytes are read when issued and land in shared memory (race-checked,
    # as the issuing thread's writes) when a wait completes their group
    def op_nvvm_cp_async_shared_global(self, op, args, env, active):
        dst, src = args[0], args[1]
        size = ir.IntegerAttr(op.attributes["size"]).value
        n = args[2].astype(np.int64) if len(args) > 2 else np.full(self.T, size, np.int64)
        data = np.zeros((self.T, size), np.uint8)
        for sel in self._split(src, active & (n > 0)):
            _, buf, idx = self._bytes(src, size, sel)
            if idx.size:
                data[sel] = np.where(np.arange(size) < n[sel][:, None], buf[idx], 0)
        self.async_open.append((dst.copy(), data, active.copy(), size))

    def op_nvvm_cp_async_commit_group(self, op, args, env, active):
        self.async_groups.append(self.async_open)
        self.async_open = []

    def op_nvvm_cp_async_wait_group(self, op, args, env, active):
        keep = ir.IntegerAttr(op.attributes["n"]).value
        done = self.async_groups[:max(0, len(self.async_groups) - keep)]
        self.async_groups = self.async_groups[len(done):]
        for group in done:
            for dst, data, act, size in group:
                shared, buf, idx = self._bytes(dst, size, act)
                if not idx.size:
                    continue
                if not shared:
                    raise EmulationError("cp.async to global memory")
                self._check_write(idx, data[act], np.nonzero(act)[0])
                buf[idx] = data[act]
                if not self.cp_async_needs_proxy_fence:
                    self.w_seq[idx.reshape(-1)] = -1  # (the proxy fence check skips them)

    def op_gpu_shuffle(self, op, args, env, active):
        v, off, width = args
        mode = str(op.attributes["mode"])
        w = int(width[0])
        if w != self.ws:
            raise EmulationError(f"shuffle width {w} != warp size {self.ws}")
        tid = np.arange(self.T)
        lane = tid % self.ws
        off = off.astype(np.int64)
        if "xor" in mode:
            src = lane ^ off
        elif "up" in mode:
            src = lane - off
        elif "down" in mode:
            src = lane + off
        else:
            src = off
        ok = (src >= 0) & (src < self.ws)
        src_t = np.where(ok, tid - lane + src, tid)
        if not active[src_t[active & ok]].all():
            raise EmulationError("gpu.shuffle reads an inactive lane")
        return [v[src_t], ok]

    # ---- constants and arithmetic ---------------------------------------------------------
    def op_llvm_bitcast(self, op, a, env, act):
        """Reinterprets each thread's bytes (vectors included)."""
        dt, n = np_type(op.results[0].type)
        raw = np.ascontiguousarray(a[0]).view(np.uint8).reshape(self.T, -1)
        out = raw.copy().view(dt)
        return [out if n else out[:, 0]]

    def op_llvm_call_intrinsic(self, op, a, env, act):
        name = ir.StringAttr(op.attributes["intrin"]).value
        # the approximations (ex2.approx, div.full) as exact values: within a few ulp of them
        if name in ("llvm.exp2", "llvm.log2"):  # (AMD: v_exp_f32 / v_log_f32)
            fn = np.exp2 if name == "llvm.exp2" else np.log2
            return [fn(a[0].astype(np.float64)).astype(a[0].dtype)]
        if name == "llvm.nvvm.ex2.approx.ftz.f":  # subnormal results flush to zero
            r = np.exp2(a[0].astype(np.float64))
            return [np.where(r < 2.0 ** -126, 0.0, r).astype(a[0].dtype)]
        if name == "llvm.exp":  # (AMD: tl.exp, expanded by LLVM)
            return [np.exp(a[0].astype(np.float64)).astype(a[0].dtype)]
        if name == "llvm.fabs":
            return [np.abs(a[0])]
        if name == "llvm.nvvm.prmt":  # PTX ISA prmt.b32, default mode: byte n of d is byte
            # c[4n+2:4n] of {b, a} (a bytes 0-3), its sign replicated where c[4n+3] is set
            x = (a[0].astype(np.int64) & 0xFFFFFFFF) | (a[1].astype(np.int64) & 0xFFFFFFFF) << 32
            c = a[2].astype(np.int64)
            d = np.zeros_like(x)
            for n in range(4):
                nib = c >> 4 * n & 0xF
                byte = x >> 8 * (nib & 7) & 0xFF
                byte = np.where(nib & 8, np.where(byte & 0x80, 0xFF, 0), byte)
                d |= byte << 8 * n
            d = (d & 0xFFFFFFFF).astype(np.uint32)
            return [d.view(a[0].dtype) if a[0].dtype.itemsize == 4 else d.astype(a[0].dtype)]
        if name == "llvm.roundeven":
            return [np.rint(a[0])]
        if name == "llvm.copysign":
            return [np.copysign(a[0], a[1])]
        if name in ("llvm.minnum", "llvm.maxnum"):  # NaN-ignoring, as fmin/fmax
            return [(np.fmin if name == "llvm.minnum" else np.fmax)(a[0], a[1])]
        if name == "llvm.nvvm.div.full":
            return [(a[0].astype(np.float64) / a[1]).astype(a[0].dtype)]
        if name == "llvm.sqrt":  # correctly rounded (no afn: tl.sqrt_rn, fp64)
            return [np.sqrt(a[0])]
        if name in ("llvm.floor", "llvm.ceil"):
            return [(np.floor if name == "llvm.floor" else np.ceil)(a[0])]
        if name not in ("llvm.fma", "llvm.fmuladd"):
            raise EmulationError(f"intrinsic {name} is not emulated")
        return [fma_exact(*a)]  # rounded once

    def op_llvm_extractvalue(self, op, a, env, act):
        if not isinstance(a[0], tuple):  # a wgmma accumulator struct (simt_wgmma.py)
            return super().op_llvm_extractvalue(op, a, env, act)
        return [a[0][list(ir.DenseI64ArrayAttr(op.attributes["position"]))[0]]]  # mma.sync's

    # ---- memory ---------------------------------------------------------------------------
    def op_llvm_mlir_addressof(self, op, a, env, act):
        return [np.full(self.T, _SMEM_BASE, np.int64)]

    def op_llvm_getelementptr(self, op, a, env, act):
        raw = list(ir.DenseI32ArrayAttr(op.attributes["rawConstantIndices"]))
        if len(raw) != 1:
            raise EmulationError("only one-index GEPs are emulated")
        elem = ir.TypeAttr(op.attributes["elem_type"]).value
        dt, n = np_type(elem)
        size = (1 if dt == np.bool_ else np.dtype(dt).itemsize) * max(n, 1)
        idx = a[1].astype(np.int64) if raw[0] == -2147483648 else raw[0]
        return [a[0] + idx * size]

    def op_llvm_ptrtoint(self, op, a, env, act):
        return [a[0].astype(self._res(op))]

    def op_llvm_inttoptr(self, op, a, env, act):
        return [a[0].astype(np.int64)]

    def op_llvm_mlir_poison(self, op, a, env, act):
        dt, n = np_type(op.results[0].type)
        # a float struct (wgmma accumulators) is NaN: an op that reads it where it must not shows
        fill = np.nan if str(op.results[0].type).startswith("!llvm.struct") and \
            np.issubdtype(dt, np.floating) else 0
        return [np.full((self.T, n) if n else self.T, fill, dt)]

    op_llvm_mlir_undef = op_llvm_mlir_poison

    def op_llvm_extractelement(self, op, a, env, act):
        v, i = a
        return [v[np.arange(self.T), i.astype(np.int64)]]

    def op_llvm_insertelement(self, op, a, env, act):
        v, x, i = a
        v = v.copy()
        v[np.arange(self.T), i.astype(np.int64)] = x
        return [v]

    def _bytes(self, addrs, size, act):
        """(is shared, buffer, byte indices [active, size]) of accesses at `addrs`."""
        a = addrs[act]
        if not a.size:
            return None, None, np.zeros((0, size), np.int64)
        shared = a >= _SMEM_BASE
        if shared.any() and not shared.all():
            raise EmulationError("one access mixes shared and global memory")
        if shared.all():
            off = a - _SMEM_BASE
            buf = self.smem
        else:
            ids = a >> GLOBAL_SHIFT
            bid = int(ids[0]) - 1
            if not 0 <= bid < len(self.buffers):
                raise EmulationError(f"access at {int(a[0]):#x} is outside every argument")
            buf = self.buffers[bid]
            off = a - ((bid + 1) << GLOBAL_SHIFT)
        if (off < 0).any() or (off + size > buf.size).any():
            bad = int(off[(off < 0) | (off + size > buf.size)][0])
            raise EmulationError(f"out-of-bounds {'shared' if shared.all() else 'global'} "
                                 f"access at byte {bad} of {buf.size}")
        return bool(shared.all()), buf, off[:, None] + np.arange(size)

    def op_llvm_load(self, op, a, env, act):
        dt, n = np_type(op.results[0].type)
        isz = 1 if dt == np.bool_ else np.dtype(dt).itemsize
        size = isz * max(n, 1)
        out = np.zeros((self.T, n) if n else self.T, dt)
        for sel in self._split(a[0], act):
            shared, buf, idx = self._bytes(a[0], size, sel)
            if not idx.size:
                continue
            if shared:
                self._check_read(idx, np.nonzero(sel)[0])
            raw = buf[idx]  # [A, size]
            vals = raw.copy().view(np.uint8 if dt == np.bool_ else dt)
            vals = vals.astype(np.bool_) if dt == np.bool_ else vals
            out[sel] = vals if n else vals[:, 0]
        return [out]

    def op_rocdl_make_buffer_rsrc(self, op, a, env, act):
        """A buffer resource (rules/memory_amd.py): per thread [base, num_records]."""
        return [np.stack([a[0].astype(np.int64), a[2].astype(np.int64)], axis=1)]

    def op_rocdl_raw_ptr_buffer_load(self, op, a, env, act):
        """base + voffset + soffset (unsigned 32-bit offsets) where the access lies within
        num_records bytes; else 0, as the hardware reads out of range (nothing is accessed)."""
        rsrc, voff, soff = a[0], a[1], a[2]
        dt, n = np_type(op.results[0].type)
        size = (1 if dt == np.bool_ else np.dtype(dt).itemsize) * max(n, 1)
        off = as_unsigned(voff).astype(np.int64) + as_unsigned(soff).astype(np.int64)
        inside = off + size <= rsrc[:, 1]
        return self.op_llvm_load(op, [rsrc[:, 0] + off], env, act & inside)

    def op_rocdl_raw_ptr_buffer_store(self, op, a, env, act):
        """Writes where the access lies within num_records bytes; else nothing."""
        v, rsrc, voff, soff = a[0], a[1], a[2], a[3]
        size = (1 if v.dtype == np.bool_ else v.dtype.itemsize) * (v.shape[1] if v.ndim == 2
                                                                  else 1)
        off = as_unsigned(voff).astype(np.int64) + as_unsigned(soff).astype(np.int64)
        inside = off + size <= rsrc[:, 1]
        return self.op_llvm_store(op, [v, rsrc[:, 0] + off], env, act & inside)

    def op_llvm_store(self, op, a, env, act):
        v, p = a
        dt = v.dtype
        n = v.shape[1] if v.ndim == 2 else 0
        isz = 1 if dt == np.bool_ else dt.itemsize
        size = isz * max(n, 1)
        for sel in self._split(p, act):
            shared, buf, idx = self._bytes(p, size, sel)
            if not idx.size:
                continue
            vals = v[sel]
            vals = vals.astype(np.uint8) if dt == np.bool_ else vals
            raw = np.ascontiguousarray(vals).reshape(len(idx), -1).view(np.uint8)
            if shared:
                self._check_write(idx, raw, np.nonzero(sel)[0])
            buf[idx] = raw

    _CVT_F8 = re.compile(r"cvt\.rn\.satfinite\.(e4m3|e5m2)x2\.f32 \$0, \$2, \$1;")
    _CVT_F8X4 = re.compile(r"\{ \.reg \.b16 l, h; cvt\.rn\.satfinite\.(e4m3|e5m2)x2\.f32 l, "
                           r"\$2, \$1; cvt\.rn\.satfinite\.\1x2\.f32 h, \$4, \$3; "
                           r"mov\.b32 \$0, \{l, h\}; \}")
    _PRED = re.compile(r"@\$\d+ (?P<kind>ld|st)(?:\.volatile)?\.global(?:\.v\d)?\.(?P<ty>[bu]\d+) .*")

    def op_llvm_inline_asm(self, op, a, env, act):
        """The predicated `@p ld.global` / `@p st.global` of masked accesses (memory_ptx.py):
        operands (p, address, words...), a load's words tied to its outputs (kept where p is
        false); `u8` moves one byte in a 16-bit register.  Other asm: the wgmma mixin's."""
        text = ir.StringAttr(op.attributes["asm_string"]).value
        if not text.strip() and len(a) == 1:  # AMD's pinned LDS offset (rules/layout.py)
            return [a[0]]
        if self._PINNED.fullmatch(text):
            return [self._pinned_compare(text, a)]
        cvt = self._CVT_F8.fullmatch(text) or self._CVT_F8X4.fullmatch(text)
        if cvt:  # (rules/fp8.py's cvt_asm: operand j's byte in byte j of a b16 or b32)
            w = sum(f32_to_f8_satfinite(x, cvt[1]).astype(np.int64) << 8 * j
                    for j, x in enumerate(a))
            return [w.astype(np.uint16).astype(np.int16) if len(a) == 2 else
                    w.astype(np.uint32).astype(np.int32)]
        m = self._PRED.fullmatch(text)
        if m is None:
            return super().op_llvm_inline_asm(op, a, env, act)
        on = act & a[0].astype(np.bool_)
        byte = m["ty"] == "u8"
        if m["kind"] == "st":
            v = np.stack(a[2:], axis=1) if len(a) > 3 else a[2]
            self.op_llvm_store(op, [v.astype(np.uint8) if byte else v, a[1]], env, on)
            return []
        res = op.results[0].type
        fake = types.SimpleNamespace(results=[types.SimpleNamespace(
            type=ir.IntegerType.get_signless(8) if byte else res)])
        out = self.op_llvm_load(fake, [a[1]], env, on)[0]
        fill = np.stack(a[2:], axis=1) if out.ndim == 2 else a[2]
        if byte:
            out = out.view(np.uint8).astype(fill.dtype)
        return [np.where(on[:, None] if out.ndim == 2 else on, out, fill)]

    _PINNED = re.compile(r"\{ (\.reg \.b\d+ %t\d; )*(add\.s\d+ %t\d, \S+, -?\d+; )*"
                         r"setp\.\w+\.[bsu]\d+ \$0, \S+, \S+; \}")
    _SETP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
             "gt": np.greater, "ge": np.greater_equal}

    def _pinned_compare(self, text, a):
        """memory_ptx.pinned_compare: `add.sN %tK, $i, k;` (wrapping) then `setp.<cmp>.<kind>N
        $0, x, y;` (kind s signed, u unsigned, b either) on the operands."""
        vals = {}

        def val(x, bits, kind):
            v = vals[x] if x.startswith("%") else a[int(x[1:]) - 1] if x.startswith("$") \
                else np.int64(int(x))
            v = np.asarray(v).astype(np.int64 if bits == 64 else np.int32)
            return v.view(np.uint64 if bits == 64 else np.uint32) if kind == "u" else v
        for stmt in (t.strip() for t in text.strip("{} ").split(";")):
            add = re.fullmatch(r"add\.s(\d+) (%t\d), (\S+), (-?\d+)", stmt)
            cmp = re.fullmatch(r"setp\.(\w+)\.([bsu])(\d+) \$0, (\S+), (\S+)", stmt)
            if add:
                bits = int(add[1])
                with np.errstate(over="ignore"):
                    vals[add[2]] = val(add[3], bits, "s") + \
                        np.asarray(int(add[4])).astype(np.int64 if bits == 64 else np.int32)
            elif cmp:
                bits = int(cmp[3])
                return self._SETP[cmp[1]](val(cmp[4], bits, cmp[2]), val(cmp[5], bits, cmp[2]))
            elif stmt and not stmt.startswith(".reg"):
                raise EmulationError(f"inline asm {stmt!r} is not emulated")
        raise EmulationError(f"inline asm {text!r} is not emulated")

    _ATOMIC = -3  # the writer of bytes only atomics touched this epoch

    def op_llvm_atomicrmw(self, op, a, env, act):
        """Shared-memory integer add (tl.histogram's bins), one active thread after another.
        Atomics of different threads on one byte do not race with each other; a plain read
        or write of those bytes before the next barrier does (the atomics count as writes of
        another thread), and so does an atomic on bytes another thread wrote plainly."""
        import mlir.ir as _ir
        if _ir.IntegerAttr(op.attributes["bin_op"]).value != 1:
            raise EmulationError("only atomicrmw add is emulated")
        p, v = a
        dt = v.dtype
        old = np.zeros(self.T, dt)
        shared, buf, idx = self._bytes(p, dt.itemsize, act)
        if not idx.size:
            return [old]
        if not shared:
            raise EmulationError("atomicrmw on global memory is not emulated")
        threads = np.nonzero(act)[0]
        b = idx.reshape(-1)
        t = np.repeat(threads, idx.shape[1])
        e = self.epoch
        bad = (self.w_epoch[b] == e) & (self.w_thread[b] != t) & (self.w_thread[b] != self._ATOMIC)
        bad |= (self.r_epoch[b] == e) & (self.r_thread[b] != t)
        if bad.any():
            raise EmulationError(f"shared-memory race: an atomic on byte {b[np.nonzero(bad)[0][0]]} "
                                 f"another thread accessed plainly with no barrier between")
        for k, th in enumerate(threads):
            cur = buf[idx[k]].copy().view(dt)[0]
            old[th] = cur
            buf[idx[k]] = np.array([cur + v[th]], dt).view(np.uint8)
        self.w_epoch[b] = e
        self.w_thread[b] = self._ATOMIC
        return [old]

    def _split(self, addrs, act):
        """Masks of the active threads per array (one access may span several arrays)."""
        a = addrs
        region = np.where(a >= _SMEM_BASE, -1, a >> GLOBAL_SHIFT)
        for r in sorted(set(region[act].tolist())):
            yield act & (region == r)

    # ---- shared-memory race checks ----------------------------------------------------------
    def _check_read(self, idx, threads):
        b = idx.reshape(-1)
        t = np.repeat(threads, idx.shape[1])
        e = self.epoch
        bad = (self.w_epoch[b] == e) & (self.w_thread[b] != t)
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            raise EmulationError(f"shared-memory race: thread {t[i]} reads byte {b[i]} that "
                                 f"thread {self.w_thread[b[i]]} wrote with no barrier between")
        # readers: one thread, or -2 for several
        fresh = self.r_epoch[b] != e
        self.r_thread[b[fresh]] = t[fresh]
        other = ~fresh & (self.r_thread[b] != t)
        self.r_thread[b[other]] = -2
        self.r_epoch[b] = e
        ub, counts = np.unique(b, return_counts=True)
        multi = ub[counts > 1]
        if multi.size:
            # several threads of this access read the byte (or one thread twice: harmless)
            for x in multi:
                if len(set(t[b == x].tolist())) > 1:
                    self.r_thread[x] = -2

    def _check_write(self, idx, raw, threads):
        self.check_bulk_reads(idx)
        b = idx.reshape(-1)
        v = raw.reshape(-1)
        t = np.repeat(threads, idx.shape[1])
        e = self.epoch
        war = (self.r_epoch[b] == e) & (self.r_thread[b] != t)
        if war.any():
            i = int(np.nonzero(war)[0][0])
            raise EmulationError(f"shared-memory race: thread {t[i]} writes byte {b[i]} that "
                                 f"another thread read with no barrier between")
        waw = (self.w_epoch[b] == e) & (self.w_thread[b] != t) & (self.smem[b] != v)
        if waw.any():
            i = int(np.nonzero(waw)[0][0])
            raise EmulationError(f"shared-memory race: threads {t[i]} and "
                                 f"{self.w_thread[b[i]]} write different values to byte {b[i]}")
        order = np.argsort(b, kind="stable")
        bs, vs = b[order], v[order]
        same = bs[1:] == bs[:-1]
        if (same & (vs[1:] != vs[:-1])).any():
            i = int(np.nonzero(same & (vs[1:] != vs[:-1]))[0][0])
            raise EmulationError(f"shared-memory race: one store writes different values to "
                                 f"byte {bs[i]} from several threads")
        self.wg_check_write(b)
        self.w_epoch[b] = e
        self.w_thread[b] = t
        self.w_seq[b] = self.seq  # (for the async proxy's fence check, simt_wgmma.py)
        self.seq += 1
