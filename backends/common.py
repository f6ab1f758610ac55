"""What both backends share: the stage functions down to the `llvm` stage, differing only in
the upstream GPU-to-LLVM conversion they end with."""
from __future__ import annotations

from collections import OrderedDict

import mlir.ir as ir

from tilework.lowering import PassContext, run_pipeline

# our passes of the tile -> tilegpu stage, in order
TILEGPU_PASSES = ("tile-combine", "canonicalize", "cse", "tile-cse", "tilegpu-assign-layouts",
                  "tile-cse", "tilegpu-remove-converts", "cse", "tile-cse", "tile-combine",
                  "tilegpu-vector-width", "tilegpu-compare-runs", "tilegpu-allocate-shared",
                  "tilegpu-insert-barriers")


class Backend:
    """Subclasses set `binary_stage` and implement `llvm_conversion`, `gpu_target_attr` and
    the stages after `llir` in `add_binary_stages`."""
    binary_stage = ""

    def __init__(self, target):
        self.target = target

    def pass_context(self, options) -> PassContext:
        return PassContext(backend=self.target.backend, arch=self.target.arch,
                           num_warps=options.num_warps, warp_size=self.target.warp_size,
                           extra={"gpu_target_attr": self.gpu_target_attr(options),
                                  "maxnreg": options.maxnreg})

    def stages(self, options) -> "OrderedDict[str, object]":
        pctx = self.pass_context(options)
        st = OrderedDict()
        st["tilegpu"] = lambda mod, md: self._run(mod, TILEGPU_PASSES, pctx)
        st["llvm"] = lambda mod, md: self.to_llvm(mod, md, options, pctx)
        st["llir"] = lambda mod, md: self.to_llir(mod, md)
        self.add_binary_stages(st, options)
        return st

    def to_llvm(self, mod, md, options, pctx):
        self._run(mod, ("tilegpu-to-llvm", "convert-scf-to-cf", "canonicalize", "cse")
                  + self.llvm_conversion(options) + ("convert-cf-to-llvm",
                                                     "reconcile-unrealized-casts",
                                                     "canonicalize", "cse"), pctx)
        attrs = mod.operation.attributes
        if "tilegpu.shared" in attrs:  # dynamic shared memory the launch must provide
            md.metadata["shared"] = ir.IntegerAttr(attrs["tilegpu.shared"]).value
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
    def gpu_target_attr(self, options) -> str:  # pragma: no cover
        raise NotImplementedError

    def llvm_conversion(self, options) -> tuple:  # pragma: no cover
        raise NotImplementedError

    def add_binary_stages(self, st, options):  # pragma: no cover
        raise NotImplementedError
