"""`tilework`: the command line.

    tilework compile FILE.py:KERNEL --target sm_90a --signature '*fp32,*fp32,*fp32,i32' \\
        --constexpr BLOCK=1024 [--num-warps 4] [--num-stages 3] [--num-ctas 1] [--maxnreg N]
        [--opt-level 3] [--debug] [--no-enable-fp-fusion] [--emit all|tile,ptx,...] -o DIR
    tilework compile FILE.tilegpu --start tilegpu --target gfx942 -o DIR   # from a stage's text
    tilework stages --target sm_90a

Compiles ahead of time, with no GPU.  Signature entries are the kernel's runtime parameters in
order: `*fp32` (pointer), `i32`, `i64`, `fp32`, `i1`; `:16` marks a pointer 16-byte aligned or
an integer divisible by 16 (e.g. `*fp32:16,i32:16`).  Without `:16` nothing is assumed.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys

from ..backends import get_backend, parse_target
from ..compiler.driver import ASTSource, compile, dump_kernel
from ..compiler.options import CompileOptions
from ..errors import CompilationError
from ..language.core import str_to_ty
from ..runtime.jit import JITFunction


def _load_kernel(spec: str):
    if ":" not in spec:
        raise SystemExit(f"error: expected FILE.py:KERNEL, got {spec!r}")
    path, name = spec.rsplit(":", 1)
    if not os.path.isfile(path):
        raise SystemExit(f"error: no such file: {path}")
    mod_name = "_tilework_aot_" + os.path.splitext(os.path.basename(path))[0]
    s = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(s)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        s.loader.exec_module(mod)
    finally:
        sys.path.pop(0)
    fn = getattr(mod, name, None)
    if not isinstance(fn, JITFunction):
        raise SystemExit(f"error: {path} has no @tilework.jit function named {name!r}")
    return fn


def _parse_value(v: str):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    if v in ("True", "False"):
        return v == "True"
    return v


def parse_signature(fn, signature: str, constexprs: dict):
    """-> (signature dict, attrs) for the runtime parameters of `fn`."""
    runtime = [n for n in fn.arg_names if n not in fn.constexprs and n not in constexprs]
    entries = [e.strip() for e in signature.split(",")] if signature.strip() else []
    if len(entries) != len(runtime):
        raise SystemExit(f"error: {fn.__name__} has {len(runtime)} runtime parameters "
                         f"({', '.join(runtime)}) but the signature has {len(entries)} entries")
    sig, attrs = {}, {}
    for name, e in zip(runtime, entries):
        ty, _, hint = e.partition(":")
        try:
            sig[name] = str_to_ty(ty)
        except ValueError as err:
            raise SystemExit(f"error: signature entry for `{name}`: {err}") from None
        if hint:
            if hint != "16":
                raise SystemExit(f"error: signature entry {e!r}: only the hint ':16' is known")
            attrs[name] = {"tile.divisibility": 16}
    return sig, attrs


def cmd_compile(args) -> int:
    opts = CompileOptions.from_env(**{f.name: getattr(args, f.name)
                                      for f in dataclasses.fields(CompileOptions)})
    constexprs = {}
    for c in args.constexpr or []:
        k, eq, v = c.partition("=")
        if not eq:
            raise SystemExit(f"error: --constexpr expects NAME=VALUE, got {c!r}")
        constexprs[k] = _parse_value(v)
    try:
        if args.start:
            with open(args.input) as f:
                text = f.read()
            ck = compile(text, opts.target, opts, start=args.start, cache=False)
        else:
            fn = _load_kernel(args.input)
            missing = [n for n in fn.constexprs if n not in constexprs and
                       fn.signature.parameters[n].default is fn.signature.parameters[n].empty]
            if missing:
                raise SystemExit(f"error: missing --constexpr for {', '.join(missing)}")
            unknown = [n for n in constexprs if n not in fn.arg_names]
            if unknown:
                raise SystemExit(f"error: {fn.__name__} has no parameter {', '.join(unknown)}")
            for n in fn.constexprs:
                if n not in constexprs:
                    constexprs[n] = fn.signature.parameters[n].default
            sig, attrs = parse_signature(fn, args.signature or "", constexprs)
            ck = compile(ASTSource(fn, sig, constexprs, attrs), opts.target, opts, cache=False)
    except CompilationError as e:
        print(e, file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    want = None if args.emit == "all" else set(args.emit.split(","))
    if want is not None:
        unknown = want - set(ck.asm)
        if unknown:
            print(f"error: unknown stage(s) {', '.join(sorted(unknown))}; stages: "
                  f"{', '.join(ck.asm)}", file=sys.stderr)
            return 1
        ck.asm = {k: v for k, v in ck.asm.items() if k in want}
    for p in dump_kernel(ck, args.output):
        print(p)
    return 0


def cmd_stages(args) -> int:
    b = get_backend(parse_target(args.target))
    print(" -> ".join(["tile"] + list(b.stages(CompileOptions()))))
    return 0


_OPTION_HELP = {"num_warps": "warps per program (default 4)",
                "num_stages": "software-pipelining depth (default 3)",
                "num_ctas": "CTAs per program, a thread block cluster on sm_90+ (default 1)",
                "debug": "enable tl.device_assert", "opt_level": "LLVM/ptxas level 0..3",
                "enable_fp_fusion": "let a * b + c become one fma (default on)",
                "maxnreg": "NVIDIA: cap on registers per thread"}


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
    c.add_argument("--emit", default="all", help="'all' or comma-separated stage names")
    c.add_argument("--start", default=None, help="start from this stage's text (e.g. tilegpu)")
    c.add_argument("-o", "--output", default=".", help="output directory")
    c.set_defaults(func=cmd_compile)
    s = sub.add_parser("stages", help="list a target's stages")
    s.add_argument("--target", required=True)
    s.set_defaults(func=cmd_stages)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
