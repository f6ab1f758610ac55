"""What the backends share: the stage chain down to `llir` and the pass groups each backend
composes into its own tilegpu pipeline.

Stages form a chain: a stage function reads only its predecessor's output (an `ir.Module` or
that stage's text: every stage restarts from the previous stage's text) and the kernel's
metadata, which it may add to."""
from __future__ import annotations

from collections import OrderedDict

import mlir.ir as ir

from tilework.lowering import PassContext, run_pipeline
from tilework.lowering.to_llvm import LAUNCH_WARPS_ATTR


# ---- pass groups of the tile -> tilegpu stage (each backend orders them in `tilegpu_passes`) --

def tile_cleanup_passes(options=None) -> list:
    """Dead code, folding and merging of identical ops on the frontend's IR; with
    `speculate_loads`, loads moved before an `if` where that is safe (after the merging: it
    compares values)."""
    spec = ["tile-speculate-loads"] if getattr(options, "speculate_loads", False) else []
    return ["tile-combine", "canonicalize", "cse", "tile-cse"] + spec


def layout_passes() -> list:
    """Layouts on every tensor, then as few conversions as possible, then cleanup."""
    return ["tilegpu-assign-layouts", "tile-cse", "tilegpu-remove-converts",
            "tilegpu-hoist-loop-converts", "tilegpu-remove-converts", "cse", "tile-cse",
            "tile-combine"]


def access_passes() -> list:
    """Vector widths of loads/stores and comparisons evaluated once per run of equal results."""
    return ["tilegpu-sink", "tilegpu-vector-width", "tilegpu-compare-runs"]


def as_module(src) -> ir.Module:
    """A stage's MLIR input: the predecessor's Module, or its text (a restart)."""
    if isinstance(src, ir.Module):
        return src
    if isinstance(src, str):
        return ir.Module.parse(src)
    raise TypeError(f"expected an MLIR module or its text, got {type(src).__name__}")


def shared_memory_passes() -> list:
    """Offsets of the shared buffers by liveness, then barriers from their reads and writes."""
    return ["tilegpu-allocate-shared", "tilegpu-insert-barriers"]


TARGET_ATTR = "tilegpu.target"  # the module attribute naming the target of a tilegpu module


class Backend:
    """Subclasses set `binary_stage` and implement `tilegpu_passes`, `llvm_conversion`,
    `gpu_target_attr` and the stages after `llir` in `add_binary_stages`."""
    binary_stage = ""

    def __init__(self, target):
        self.target = target

    def pass_context(self, options) -> PassContext:
        return PassContext(self.target, options,
                           extra={"gpu_target_attr": self.gpu_target_attr(options),
                                  "maxnreg": options.maxnreg})

    def stages(self, options) -> "OrderedDict[str, object]":
        """stage name -> function(predecessor's output, metadata) -> this stage's output."""
        pctx = self.pass_context(options)
        passes = tuple(self.tilegpu_passes(options))
        st = OrderedDict()
        st["tilegpu"] = lambda src, md: self.to_tilegpu(as_module(src), passes, pctx)
        st["llvm"] = lambda src, md: self.to_llvm(as_module(src), md, options, pctx)
        st["llir"] = lambda src, md: self.to_llir(as_module(src), md)
        self.add_binary_stages(st, options)
        return st

    def to_tilegpu(self, mod, passes, pctx):
        self._run(mod, passes, pctx)
        # what the layouts were chosen for: a restart from this text checks it (the driver)
        mod.operation.attributes[TARGET_ATTR] = ir.StringAttr.get(self.target.arch)
        return mod

    def to_llvm(self, mod, md, options, pctx):
        self._run(mod, ("tilegpu-to-llvm", "convert-scf-to-cf", "canonicalize", "cse")
                  + self.llvm_conversion(options) + ("convert-cf-to-llvm",
                                                     "reconcile-unrealized-casts",
                                                     "canonicalize", "cse"), pctx)
        attrs = mod.operation.attributes
        if "tilegpu.shared" in attrs:  # dynamic shared memory the launch must provide
            md["shared"] = ir.IntegerAttr(attrs["tilegpu.shared"]).value
        if LAUNCH_WARPS_ATTR in attrs:  # warp specialization's producer warps: launched too
            md["num_warps"] = ir.IntegerAttr(attrs[LAUNCH_WARPS_ATTR]).value
        return mod

    @staticmethod
    def _run(mod: ir.Module, steps, pctx):
        run_pipeline(mod, steps, pctx)
        return mod

    @staticmethod
    def gpu_module(mod: ir.Module):
        for op in mod.body.operations:
            if op.operation.name == "gpu.module":
                return op.operation
        raise ValueError("no gpu.module in the llvm stage")

    def to_llir(self, mod: ir.Module, md) -> str:
        from mlir.dialects import llvm
        return llvm.translate_module_to_llvmir(self.gpu_module(mod))

    # to implement
    def tilegpu_passes(self, options) -> list:  # pragma: no cover
        raise NotImplementedError

    def gpu_target_attr(self, options) -> str:  # pragma: no cover
        raise NotImplementedError

    def llvm_conversion(self, options) -> tuple:  # pragma: no cover
        raise NotImplementedError

    def add_binary_stages(self, st, options):  # pragma: no cover
        raise NotImplementedError
