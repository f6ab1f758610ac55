"""Our passes: a name, a one-line description, and either small rewrite patterns (applied
greedily) or a `run` function.  They run inside an MLIR PassManager as Python passes, so
`TILEWORK_DUMP_PASSES=1` (IR printing) and upstream passes mix freely in one pipeline.

`PASSES` is the registry `tilework-opt --<name>` reads.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Callable

import mlir.ir as ir
import mlir.rewrite as rw
from mlir.passmanager import PassManager

from .target import Target


@dataclass
class PassContext:
    """What passes may read besides the IR: the compile target (a `target.Target`) and the
    compile options (a `tilework.compiler.options.CompileOptions`, or anything with its
    fields), so e.g. `num_stages` reaches a pipelining pass.  `extra` holds what a backend
    hands its own conversion (the GPU target attribute, maxnreg)."""
    target: Target
    options: object
    extra: dict = field(default_factory=dict)

    # the fields most passes read
    @property
    def backend(self) -> str:
        return self.target.backend

    @property
    def arch(self) -> str:
        return self.target.arch

    @property
    def warp_size(self) -> int:
        return self.target.warp_size

    @property
    def num_warps(self) -> int:
        return self.options.num_warps

    @property
    def num_stages(self) -> int:
        return self.options.num_stages


@dataclass
class Pass:
    name: str
    description: str
    patterns: tuple = ()  # ((root op name, fn), ...); fn(op, rewriter) returns truthy on no match
    run: Callable | None = None  # run(module_op, PassContext)

    def apply(self, module_op: ir.Operation, pctx: PassContext):
        with module_op.context, module_op.location:
            self._apply(module_op, pctx)

    def _apply(self, module_op, pctx):
        if self.run is not None:
            self.run(module_op, pctx)
        if self.patterns:
            ps = rw.RewritePatternSet()
            for root, fn in self.patterns:
                ps.add(root, fn)
            # (MLIR's default of 10 sweeps is too few for long chains each sweep shortens by
            # one, e.g. the rematerialized expand_dims of a rank-12 tile in tl.sort)
            cfg = rw.GreedyRewriteConfig()
            cfg.max_iterations = 64
            rw.apply_patterns_and_fold_greedily(module_op, ps.freeze(), cfg)


PASSES: dict[str, Pass] = {}


def replace_with(rewriter, op, name: str, operands, attributes=None):
    """Replaces `op` by a new op `name` of the same result types, built at `op`."""
    with rewriter.ip, op.location:
        new = ir.Operation.create(name, results=[r.type for r in op.results],
                                  operands=list(operands), attributes=attributes or {})
    rewriter.replace_op(op, new)


def register(p: Pass) -> Pass:
    PASSES[p.name] = p
    return p


def run_pipeline(module: ir.Module, steps, pctx: PassContext, dump: bool | None = None):
    """Runs `steps` (our pass names or upstream pipeline strings) on `module` in one
    PassManager.  Exceptions raised by our passes propagate unchanged."""
    if dump is None:
        dump = os.environ.get("TILEWORK_DUMP_PASSES", "") not in ("", "0")
    pm = PassManager("builtin.module", context=module.context)
    errors = []
    for step in steps:
        p = PASSES.get(step)
        if p is None:
            pm.add(step)
            continue

        def _run(op, pass_, p=p):
            try:
                p.apply(op, pctx)
            except Exception as e:  # re-raised after the pass manager returns
                errors.append(e)
                pass_.signal_pass_failure()
        pm.add(_run, name=p.name, argument=p.name, description=p.description)
    if dump:
        # IR printing needs a single-threaded context (LLVM aborts otherwise)
        module.context.enable_multithreading(False)
        pm.enable_ir_printing(print_after_all=True, print_module_scope=True)
    try:
        pm.run(module.operation)
    except ir.MLIRError:
        if errors:
            raise errors[0] from None
        raise
    finally:
        if dump:
            sys.stderr.flush()
    if errors:
        raise errors[0]
