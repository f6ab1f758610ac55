"""`tilework`: the command line.

    tilework compile FILE.py:KERNEL --target sm_90a --signature '*fp32,*fp32,*fp32,i32' \\
        --constexpr BLOCK=1024 [--num-warps 4] [--num-stages 3] [--num-ctas 1] [--maxnreg N]
        [--opt-level 3] [--debug] [--no-enable-fp-fusion] [--emit all|tile,ptx,...] -o DIR
    tilework compile FILE.py:KERNEL --target sm_90a,sm_80 --signature ... --emit bundle -o DIR
    tilework compile FILE.tilegpu --start tilegpu --target gfx942 -o DIR   # from a stage's text
    tilework stages --target sm_90a

Compiles ahead of time, with no GPU.  Signature entries are the kernel's runtime parameters in
order: `*fp32` (pointer), or a scalar: `i1`, `i8`..`i64`, `u8`..`u64`, `fp16`, `bf16`, `fp32`,
`fp64`; `:16` marks a pointer 16-byte aligned or
an integer divisible by 16 (e.g. `*fp32:16,i32:16`).  Without `:16` nothing is assumed.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import re
import sys

from ..backends import get_backend, parse_target
from ..compiler.driver import LAYOUT_STAGES, ASTSource, compile, dump_kernel
from ..compiler.api import bind_constexprs, parse_signature
from ..compiler.options import CompileOptions
from ..errors import CompilationError, StageError
from ..runtime.bundle import write as write_bundle
from ..runtime.jit import JITFunction


def _load_kernel(spec: str):
    if ":" not in spec:
        raise SystemExit(f"error: expected FILE.py:KERNEL, got {spec!r}")
    path, name = spec.rsplit(":", 1)
    if not os.path.isfile(path):
        raise SystemExit(f"error: no such file: {path}")
    mod_name = "_tilework_aot_" + os.path.splitext(os.path.basename(path))[0]
    s = importlib.util.spec_from_file_location(mod_name, path)
    if s is None:
        raise SystemExit(f"error: {path} is not a Python file")
    mod = importlib.util.module_from_spec(s)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        s.loader.exec_module(mod)
    except SyntaxError as e:  # the file's own error, not our import machinery's
        where = f"{e.filename or path}:{e.lineno}:{e.offset or 0}"
        raise SystemExit(f"error: {where}: {e.msg} (in the kernel's file)") from None
    except CompilationError as e:
        raise SystemExit(str(e)) from None
    except Exception as e:
        raise SystemExit(f"error: importing {path} failed: {type(e).__name__}: {e}") from None
    finally:
        sys.path.pop(0)
    fn = getattr(mod, name, None)
    base = getattr(fn, "base_fn", None)  # an @autotune/@heuristics wrapper: its kernel
    if isinstance(base, JITFunction):
        fn = base
    if not isinstance(fn, JITFunction):
        raise SystemExit(f"error: {path} has no @tilework.jit function named {name!r}")
    return fn


def _read_text(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        raise SystemExit(f"error: no such file: {path}") from None
    except UnicodeDecodeError:
        raise SystemExit(f"error: {path} is not a text file (a stage's text is expected)") \
            from None
    except OSError as e:
        raise SystemExit(f"error: cannot read {path}: {e.strerror}") from None


def recorded_num_warps(text: str) -> int | None:
    """The warp count a tilegpu/llvm text was laid out for (its module attribute)."""
    m = re.search(r"tilegpu\.num_warps = (\d+)", text)
    return int(m.group(1)) if m else None


def _parse_value(v: str):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    if v in ("True", "False"):
        return v == "True"
    return v


def cmd_compile(args) -> int:
    text = None
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(CompileOptions)}
    if args.start:
        text = _read_text(args.input)
        if values.get("num_warps") is None and args.start in LAYOUT_STAGES:
            values["num_warps"] = recorded_num_warps(text)  # the count the layouts were made for
    constexprs = {}
    for c in args.constexpr or []:
        k, eq, v = c.partition("=")
        if not eq:
            raise SystemExit(f"error: --constexpr expects NAME=VALUE, got {c!r}")
        constexprs[k] = _parse_value(v)
    if args.emit == "bundle":  # one binary per target (--target sm_90a,sm_80) + metadata
        kernels = []
        for t in args.target.split(","):
            ck = _compile_one(args, CompileOptions.from_env(**dict(values, target=t)),
                              dict(constexprs), text)
            if isinstance(ck, int):
                return ck
            kernels.append(ck)
        try:
            paths = write_bundle(kernels, args.output)
        except OSError as e:
            print(f"error: -o {args.output}: {e.strerror or e}", file=sys.stderr)
            return 1
        for p in paths:
            print(p)
        return 0
    ck = _compile_one(args, CompileOptions.from_env(**values), constexprs, text)
    if isinstance(ck, int):
        return ck
    want = None if args.emit == "all" else set(args.emit.split(","))
    if want is not None:
        unknown = want - set(ck.asm)
        if unknown:
            print(f"error: unknown stage(s) {', '.join(sorted(unknown))}; stages: "
                  f"{', '.join(ck.asm)}", file=sys.stderr)
            return 1
        ck.asm = {k: v for k, v in ck.asm.items() if k in want}
    try:
        paths = dump_kernel(ck, args.output)
    except OSError as e:
        print(f"error: -o {args.output}: {e.strerror or e}", file=sys.stderr)
        return 1
    for p in paths:
        print(p)
    return 0


def _compile_one(args, opts, constexprs, text):
    """The compiled kernel, or the exit status after printing the error."""
    try:
        if args.start:
            return compile(text, opts.target, opts, start=args.start, cache=False)
        fn = _load_kernel(args.input)
        missing = [n for n in fn.constexprs if n not in constexprs and
                   fn.signature.parameters[n].default is fn.signature.parameters[n].empty]
        if missing:
            raise SystemExit(f"error: missing --constexpr for {', '.join(missing)}")
        constexprs = bind_constexprs(fn, constexprs)
        sig, attrs = parse_signature(fn, args.signature or "", constexprs)
        return compile(ASTSource(fn, sig, constexprs, attrs), opts.target, opts, cache=False)
    except StageError as e:
        print(f"error: {args.input}: {e}", file=sys.stderr)
        return 1
    except CompilationError as e:
        print(e if e.filename else f"error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def cmd_stages(args) -> int:
    b = get_backend(parse_target(args.target))
    print(" -> ".join(["tile"] + list(b.stages(CompileOptions()))))
    return 0


_OPTION_HELP = {"num_warps": "warps per program (default 4)",
                "num_stages": "software-pipelining depth (default 3)",
                "num_ctas": "CTAs per program, a thread block cluster on sm_90+ (default 1)",
                "debug": "enable tl.device_assert",
                "opt_level": "LLVM/ptxas level 0..3 (default 3; ptxas -O1 for huge kernels)",
                "enable_fp_fusion": "let a * b + c become one fma (default on)",
                "maxnreg": "NVIDIA: cap on registers per thread",
                "huge_tile_bounds": "NVIDIA: .minnctapersm 1 where a kernel holds more loaded "
                                    "data than registers (default on)",
                "waves_per_eu": "AMD: occupancy hint, waves per SIMD (default 0: none)",
                "matrix_instr_nonkdim": "AMD CDNA: MFMA M=N, 16 or 32 (default 0: per dot)",
                "kpack": "AMD CDNA: MFMA operand K elements per lane, x1 or x2 (default 1)",
                "tma": "NVIDIA sm_90: load host tensor descriptors by TMA (default on)",
                "tma_store": "NVIDIA sm_90: store them by TMA too, where safe (default off)",
                "launch_cooperative_grid": "a cooperative launch: all programs resident at "
                                           "once (default off)"}


def add_option_flags(parser) -> None:
    """One flag per `CompileOptions` field (`--num-stages`, `--no-enable-fp-fusion`, ...);
    unset flags stay None, so the options' defaults and the environment fill them."""
    for f in dataclasses.fields(CompileOptions):
        if f.name == "target":
            continue
        flag = "--" + f.name.replace("_", "-")
        help_ = _OPTION_HELP.get(f.name)
        if isinstance(f.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                                help=help_)
        else:
            parser.add_argument(flag, type=int, default=None, help=help_)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tilework", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile a kernel ahead of time (no GPU needed)")
    c.add_argument("input", help="FILE.py:KERNEL, or a stage's text file with --start")
    c.add_argument("--target", required=True, help="sm_80, sm_90a, gfx942, ...")
    c.add_argument("--signature", default="", help="e.g. '*fp32:16,*fp32:16,i32'")
    c.add_argument("--constexpr", action="append", metavar="NAME=VALUE")
    add_option_flags(c)
    c.add_argument("--emit", default="all", help="'all', comma-separated stage names, or "
                   "'bundle' (binaries + manifest + C launcher; --target may list several)")
    c.add_argument("--start", default=None, help="start from this stage's text (e.g. tilegpu)")
    c.add_argument("-o", "--output", default=".", help="output directory")
    c.set_defaults(func=cmd_compile)
    s = sub.add_parser("stages", help="list a target's stages")
    s.add_argument("--target", required=True)
    s.set_defaults(func=cmd_stages)
    # a tilegpu/llvm restart takes its warp count from the text unless one is given
    c.set_defaults(num_warps=None)
    args = ap.parse_args(argv)
    return run_guarded(lambda: args.func(args))


def run_guarded(body) -> int:
    """Runs a command: its errors end in one `error:` line and exit status 1, never in a
    traceback (TILEWORK_TRACEBACK=1 shows the traceback of an unexpected one); a closed
    output pipe (`| head`) ends it quietly."""
    try:
        return body()
    except BrokenPipeError:
        quiet_stdout()
        return 0
    except (ValueError, OSError, CompilationError) as e:
        print(e if isinstance(e, CompilationError) and e.filename else f"error: {e}",
              file=sys.stderr)
        return 1
    except Exception as e:  # an internal error still ends in one line
        if os.environ.get("TILEWORK_TRACEBACK", "") not in ("", "0"):
            raise
        print(f"error: internal error: {type(e).__name__}: {e} (TILEWORK_TRACEBACK=1 shows "
              f"where)", file=sys.stderr)
        return 1


def quiet_stdout():
    """After a closed pipe: later writes (and the interpreter's final flush) go nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
