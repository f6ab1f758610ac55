"""A/B of a compiler change on benchmarks/tutorial_style.py's LayerNorm rows:
`python benchmarks/tools/ab_tutorial.py [--off NAME] [--on NAME] [tutorial_style.py's
arguments]` runs the benchmark (`--only ln_fwd,ln_bwd` unless given) with a change switched off
(NAME: store-cap) or a default-off one on (NAME: speculate-loads) in this process, for
comparing against a plain run in the same session on the same GPU.
Both runs compile into a fresh cache directory: the disk cache's key has the compiler's
sources, not a switch flipped here, so a shared cache would hand one side the other's code."""
import importlib.util
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def switch_off(name):
    if name == "store-cap":  # the rank default capped for 16-byte stores of fp32 rows
        import tilework.lowering.layout_hints as H
        H.store_run_cap = lambda an, op: None
    else:
        raise SystemExit(f"unknown change {name!r}")


def switch_on(name):
    if name == "speculate-loads":  # tile-speculate-loads (CompileOptions.speculate_loads)
        os.environ["TILEWORK_SPECULATE_LOADS"] = "1"
    else:
        raise SystemExit(f"unknown change {name!r}")


if __name__ == "__main__":
    os.environ["TILEWORK_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilework-ab-")  # (before any import)
    args = sys.argv[1:]
    while "--off" in args:
        i = args.index("--off")
        switch_off(args[i + 1])
        del args[i:i + 2]
    while "--on" in args:
        i = args.index("--on")
        switch_on(args[i + 1])
        del args[i:i + 2]
    if "--only" not in args:
        args += ["--only", "ln_fwd,ln_bwd"]
    spec = importlib.util.spec_from_file_location(
        "tutorial_style", os.path.join(HERE, "..", "tutorial_style.py"))
    bench = importlib.util.module_from_spec(spec)
    sys.modules["tutorial_style"] = bench
    spec.loader.exec_module(bench)
    sys.exit(bench.main(args))
