"""tilework-opt: runs our passes (and upstream ones) on textual IR, like mlir-opt.

    tilework-opt FILE.mlir --tilegpu-assign-layouts --num-warps 4 --target sm_90a
    tilework-opt FILE.mlir --pass-pipeline 'tile-combine,canonicalize'
    tilework-opt FILE.mlir --split-input-file --verify-only

The tile/tilegpu dialects are loaded; the IR is verified after parsing and after the passes.
Errors are printed as `<loc>: error: <message>` and exit with status 1 (for `not` in lit).
"""
from __future__ import annotations

import argparse
import os
import sys

import mlir.ir as ir

from tilework.backends import parse_target
from tilework.compiler.options import CompileOptions
from tilework.dialects import VerificationError, new_context, verify
from tilework.dialects.layout import split_top
from tilework.lowering import PASSES, PassContext, run_pipeline
from tilework.lowering.registry import LoweringError


def _parser():
    ap = argparse.ArgumentParser(prog="tilework-opt", description=__doc__.split("\n")[0])
    ap.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    ap.add_argument("-o", dest="output", default="-")
    ap.add_argument("--pass-pipeline", default=None,
                    help="comma-separated pass names (ours or upstream MLIR passes)")
    ap.add_argument("--target", default="sm_90a", help="sm_80, sm_90a, gfx942, ...")
    ap.add_argument("--num-warps", type=int, default=4)
    ap.add_argument("--split-input-file", action="store_true",
                    help="process chunks separated by '// -----' independently")
    ap.add_argument("--verify-only", action="store_true", help="parse and verify only")
    ap.add_argument("--list-passes", action="store_true")
    for name, p in PASSES.items():
        ap.add_argument(f"--{name}", dest="passes", action="append_const", const=name,
                        help=p.description)
    return ap


def run_chunk(text: str, steps, pctx, verify_only) -> tuple[int, str]:
    ctx = new_context()
    with ctx:
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            return 1, _format_mlir_error(e)
        try:
            verify(module)
            if not verify_only and steps:
                run_pipeline(module, steps, pctx)
                verify(module)
        except (VerificationError, LoweringError) as e:
            if e.location is not None:
                return 1, f"{e.location}: error: {e.message}"
            return 1, f"error: {e.message}"
        except ir.MLIRError as e:
            return 1, _format_mlir_error(e)
        except Exception as e:  # a pass failed in Python: report it, do not crash
            return 1, f"error: {type(e).__name__}: {e}"
        return 0, str(module)


def _format_mlir_error(e) -> str:
    lines = []
    for d in getattr(e, "error_diagnostics", []) or []:
        lines.append(f"{d.location}: error: {d.message}")
    return "\n".join(lines) if lines else f"error: {e}"


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.list_passes:
        for name, p in PASSES.items():
            print(f"{name:28s} {p.description}")
        return 0
    steps = list(args.passes or [])
    if args.pass_pipeline:
        steps += split_top(args.pass_pipeline, "({", ")}")  # gpu.module(a,b) nests
    try:
        t = parse_target(args.target)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        options = CompileOptions.from_env(num_warps=args.num_warps)  # env: defaults
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pctx = PassContext(t, options)
    try:
        text = sys.stdin.read() if args.input == "-" else _read(args.input)
    except OSError as e:
        print(f"error: cannot read {args.input}: {e.strerror or e}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"error: {args.input} is not a text file", file=sys.stderr)
        return 2
    chunks = text.split("// -----") if args.split_input_file else [text]
    status, outputs = 0, []
    for chunk in chunks:
        rc, out = run_chunk(chunk, steps, pctx, args.verify_only)
        if rc:
            status = 1
            if args.input != "-":  # name the file in the locations, not MLIR's "-"
                out = out.replace('loc("-":', f'loc("{args.input}":')
            print(out, file=sys.stderr)
        else:
            outputs.append(out)
    result = "\n// -----\n".join(outputs)
    try:
        if args.output == "-":
            sys.stdout.write(result)
            sys.stdout.flush()
        else:
            write_atomically(args.output, result)
    except BrokenPipeError:  # `tilework-opt ... | head`: the reader had enough
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return status
    except OSError as e:
        print(f"error: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
        return 1
    return status


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def write_atomically(path: str, text: str):
    """Writes `path` through a temporary file renamed into place: a failure leaves nothing."""
    import tempfile
    d = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise IsADirectoryError(21, "is a directory")
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


if __name__ == "__main__":
    sys.exit(main())
