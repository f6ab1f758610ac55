"""A/B of a compiler change on benchmarks/attention.py: `python benchmarks/tools/ab_attention.py
--off NAME [attention.py's arguments]` runs the benchmark with one change switched off in this
process (NAME: transposed-hint, loop-converts, zero-acc, exp2-ftz, slot-views, equal-buffers,
proxy-fence, desc-add), or `--on NAME` with one that is off by default (invariant-operands,
overlap-dots), for comparing against a plain run in the same session on the same GPU.  With a
change switched, kernels compile into a fresh cache folder (the disk cache's key hashes the
compiler's sources, not this process's switches)."""
import importlib.util
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def switch_off(name):
    if name == "transposed-hint":
        import tilework.lowering.layout_hints as H
        H._transposed_access = lambda *a: None
    elif name == "loop-converts":
        import tilework.backends.common as C
        passes = C.layout_passes
        C.layout_passes = lambda: [p for p in passes() if p != "tilegpu-hoist-loop-converts"]
    elif name == "exp2-ftz":
        import tilework.lowering.rules.math as M
        call = M._call  # (the rules are registered at import: redirect the intrinsic instead)
        M._call = lambda name, *a: call("llvm.exp2" if name == "llvm.nvvm.ex2.approx.ftz.f"
                                        else name, *a)
    elif name == "slot-views":  # one read of a pipelined slot, converted per dot (as before)
        import tilework.lowering.pipeline_views as V
        V.ENABLED = False
    elif name == "equal-buffers":  # q's wgmma buffer written before each key loop again
        import tilework.lowering.dot_wgmma as W
        W.share_equal_buffers = lambda f: None
    elif name == "proxy-fence":  # every wgmma fences before its barrier, as before
        import tilework.lowering.proxy_fences as P
        P.plan = lambda f: None
    elif name == "desc-add":  # each wgmma descriptor from its address, the warp id per lane
        import tilework.lowering.rules.dot_wgmma as W
        import tilework.lowering.to_llvm as L
        W.Operand.k_step = lambda self, k0, align=1: None
        L.LoweringContext.warp_id_uniform = L.LoweringContext.warp_id
    elif name == "zero-acc":
        import tilework.lowering.rules.dot_wgmma as W
        W._is_zero = lambda v: False
    else:
        raise SystemExit(f"unknown change {name!r}")


def switch_on(name):
    """Changes that are off by default."""
    if name == "invariant-operands":  # dK/dV's k and v written to shared memory once
        import tilework.lowering.pipeline_invariant as P
        P.ENABLED = True
    elif name == "overlap-dots":  # attention's P @ V wgmma in flight across the back edge
        import tilework.lowering.dot_overlap as O
        O.ENABLED = True
    else:
        raise SystemExit(f"unknown change {name!r}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if ("--off" in args or "--on" in args) and "TILEWORK_CACHE_DIR" not in os.environ:
        os.environ["TILEWORK_CACHE_DIR"] = tempfile.mkdtemp(prefix="ab_attention_")
    for flag, switch in (("--off", switch_off), ("--on", switch_on)):
        while flag in args:
            i = args.index(flag)
            switch(args[i + 1])
            del args[i:i + 2]
    # by path, under another name: the benchmark itself imports the example as `attention`
    spec = importlib.util.spec_from_file_location(
        "attention_benchmark", os.path.join(HERE, "..", "attention.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    sys.argv = ["attention.py"] + args
    bench.main()
