"""A/B of a compiler change on benchmarks/attention.py: `python benchmarks/tools/ab_attention.py
--off NAME [attention.py's arguments]` runs the benchmark with one change switched off in this
process (NAME: transposed-hint, loop-converts, zero-acc), for comparing against a plain run in
the same session on the same GPU."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))


def switch_off(name):
    if name == "transposed-hint":
        import tilework.lowering.layout_hints as H
        H._transposed_access = lambda *a: None
    elif name == "loop-converts":
        import tilework.backends.common as C
        passes = C.layout_passes
        C.layout_passes = lambda: [p for p in passes() if p != "tilegpu-hoist-loop-converts"]
    elif name == "zero-acc":
        import tilework.lowering.rules.dot_wgmma as W
        W._is_zero = lambda v: False
    else:
        raise SystemExit(f"unknown change {name!r}")


if __name__ == "__main__":
    args = sys.argv[1:]
    while "--off" in args:
        i = args.index("--off")
        switch_off(args[i + 1])
        del args[i:i + 2]
    import attention
    sys.argv = ["attention.py"] + args
    attention.main()
