"""The public ahead-of-time API: `tilework.compile(kernel, target=, signature=, constexprs=,
**options)` compiles a @jit kernel for a named target with no GPU and returns the
`CompiledKernel` (`.asm[stage]`, `.metadata`), through the disk cache.

    k = tilework.compile(add_kernel, target="sm_90a", signature="*fp32:16,*fp32:16,*fp32:16,i32",
                         constexprs={"BLOCK_SIZE": 1024}, num_warps=4)
    print(k.asm["ptx"])

A tuple parameter's entry is a (nested) tuple of entries, in the string form a parenthesized
group: `signature="*fp32,(*fp32:16,(i32,fp32)),i32"`; in the list and dict forms a member may
also be `tl.constexpr(v)` (or None): a constant baked into the kernel, as a constexpr member
of a launched tuple is.  The kernel's parameters are then the runtime members, flattened
(`t.0`, `t.1.0`, ... in `metadata["signature"]`).

This module loads MLIR (the driver); `tilework.compile` imports it at its first call, so
`import tilework` stays light.
"""
from __future__ import annotations

from ..language import core
from ..language.descriptor import tensor_descriptor_type, tensordesc_type_from_str
from ..language.function import JITFunction
from ..language.tuples import member_label, member_param, tuple_type
from .driver import ASTSource
from .driver import compile as compile_source
from .options import CompileOptions

# scalar parameter types a kernel may take (Triton's): every int and float type but fp8
SCALAR_TYPES = ("int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "fp16", "bf16", "fp32", "fp64")


def parse_entry(name: str, entry) -> tuple:
    """One signature entry (`'*fp32:16'`, `'i32'`, a tl dtype, a host descriptor's
    `'tensordesc<fp16[64, 64]>'`) -> (type, divisible by 16)."""
    hint = ""
    if isinstance(entry, tensor_descriptor_type):
        return entry, False
    if isinstance(entry, str) and entry.strip().startswith("tensordesc"):
        try:  # a host TensorDescriptor argument (Triton's spelling)
            return tensordesc_type_from_str(entry), False
        except (ValueError, TypeError) as err:
            raise ValueError(f"signature entry for `{name}`: {err}") from None
    if isinstance(entry, str):
        ty, _, hint = entry.strip().partition(":")
        try:
            t = core.str_to_ty(ty)
        except ValueError as err:
            raise ValueError(f"signature entry for `{name}`: {err}") from None
    elif isinstance(entry, core.dtype):
        t = entry
    else:
        raise ValueError(f"signature entry for `{name}`: expected a type string such as "
                         f"'*fp32' or 'i32', or a tl dtype; got {entry!r}")
    if hint and hint != "16":
        raise ValueError(f"signature entry {entry!r}: only the hint ':16' is known")
    if not isinstance(t, core.pointer_type) and str(t) not in SCALAR_TYPES:
        raise ValueError(f"signature entry for `{name}`: {t} is not a kernel parameter type; "
                         f"scalars are {', '.join(SCALAR_TYPES)}, or a pointer (*{t})")
    return t, hint == "16"


def split_signature(text: str) -> list:
    """The entries of a signature string, a parenthesized group as a tuple of its entries (a
    comma inside `<...>` or `[...]`, as in `tensordesc<fp16[64, 64]>`, stays in its entry)."""
    def group(i, closing):
        out, cur = [], ""
        while i < len(text):
            c = text[i]
            if cur and c == "," and cur.count("<") + cur.count("[") > \
                    cur.count(">") + cur.count("]"):
                cur += c
            elif c == "(":
                if cur.strip():
                    raise ValueError(f"signature {text!r}: '(' after {cur.strip()!r}")
                sub, i = group(i + 1, ")")
                out.append(tuple(sub))
                cur = None  # a group ends the entry
            elif c == ")":
                if closing != ")":
                    raise ValueError(f"signature {text!r}: unbalanced ')'")
                break
            elif c == ",":
                if cur is not None:
                    out.append(cur.strip())
                cur = ""
            elif cur is None:
                if not c.isspace():
                    raise ValueError(f"signature {text!r}: {c!r} after a ')'")
            else:
                cur += c
            i += 1
        else:
            if closing == ")":
                raise ValueError(f"signature {text!r}: unbalanced '('")
        if cur is not None and (cur.strip() or (out and closing != ")")):
            out.append(cur.strip())  # (a group's trailing comma ends it, as in Python)
        return out, i
    return group(0, "")[0] if text.strip() else []


def _tuple_entry(name: str, label: str, entry: tuple, attrs: dict):
    """The `tuple_type` of a tuple parameter's entry (member attributes go in `attrs`)."""
    types = []
    for i, e in enumerate(entry):
        p, lb = member_param(name, i), member_label(label, i)
        if isinstance(e, tuple):
            types.append(_tuple_entry(p, lb, e, attrs))
        elif e is None or isinstance(e, core.constexpr):
            types.append(core.constexpr_type(e))
        elif isinstance(e, list):
            raise ValueError(f"signature entry for `{lb}`: a tuple parameter's entry is a "
                             f"tuple, not a list")
        else:
            t, div16 = parse_entry(lb, e)
            types.append(t)
            if div16:
                attrs[p] = {"tile.divisibility": 16}
    return tuple_type(types, getattr(type(entry), "_fields", None))


def parse_signature(fn, signature, constexprs: dict) -> tuple:
    """(signature dict, attrs) for the runtime parameters of `fn`: `signature` is a
    comma-separated string (`'*fp32:16,i32'`), a list in parameter order, or a dict by
    parameter name; `:16` marks a pointer 16-byte aligned or an integer divisible by 16; a tuple
    parameter's entry is a tuple of entries (a parenthesized group in the string)."""
    runtime = [n for n in fn.arg_names if n not in fn.constexprs and n not in constexprs]
    if isinstance(signature, dict):
        unknown = [n for n in signature if n not in runtime]
        if unknown:
            raise ValueError(f"{fn.__name__} has no runtime parameter "
                             f"{', '.join(map(str, unknown))} (its runtime parameters: "
                             f"{', '.join(runtime)})")
        missing = [n for n in runtime if n not in signature]
        if missing:
            raise ValueError(f"the signature of {fn.__name__} lacks {', '.join(missing)}")
        entries = [signature[n] for n in runtime]
    elif isinstance(signature, str):
        entries = split_signature(signature)
    else:
        entries = list(signature or [])
    if len(entries) != len(runtime):
        raise ValueError(f"{fn.__name__} has {len(runtime)} runtime parameters "
                         f"({', '.join(runtime)}) but the signature has {len(entries)} entries")
    sig, attrs = {}, {}
    for name, e in zip(runtime, entries):
        if isinstance(e, tuple):
            sig[name] = _tuple_entry(name, name, e, attrs)
            continue
        sig[name], div16 = parse_entry(name, e)
        if div16:
            attrs[name] = {"tile.divisibility": 16}
    return sig, attrs


def bind_constexprs(fn, constexprs: dict) -> dict:
    """`constexprs` completed with the defaults of `fn`'s constexpr parameters; a missing one
    or an unknown name is a ValueError."""
    constexprs = {k: (v.value if isinstance(v, core.constexpr) else v)
                  for k, v in (constexprs or {}).items()}
    unknown = [n for n in constexprs if n not in fn.arg_names]
    if unknown:
        raise ValueError(f"{fn.__name__} has no parameter {', '.join(unknown)}")
    params = fn.signature.parameters
    missing = [n for n in fn.constexprs
               if n not in constexprs and params[n].default is params[n].empty]
    if missing:
        raise ValueError(f"{fn.__name__}: missing constexpr value for {', '.join(missing)}")
    for n in fn.constexprs:
        if n not in constexprs:
            d = params[n].default
            constexprs[n] = d.value if isinstance(d, core.constexpr) else d
    return constexprs


def compile(kernel, target: str | None = None, signature=None, constexprs: dict | None = None,
            cache: bool = True, **options):
    """Compiles the @jit `kernel` for `target` ("sm_90a", "gfx942", ...) with no GPU.
    `signature`: the runtime parameters' types (see `parse_signature`); `constexprs`: values
    of constexpr parameters (and of runtime ones to specialize on); `options`: CompileOptions
    fields (num_warps, num_stages, debug, opt_level, maxnreg, ...).  Returns the
    CompiledKernel: `.asm[stage]` (tile, tilegpu, llvm, llir, ptx/amdgcn, cubin/hsaco),
    `.metadata`, `.name`."""
    if not isinstance(kernel, JITFunction):
        raise TypeError(f"tilework.compile takes a @tilework.jit kernel, got {kernel!r}")
    target = target or options.pop("target", None)
    if target is None:
        raise ValueError("tilework.compile needs target= (e.g. 'sm_90a' or 'gfx942'): it "
                         "compiles ahead of time, without a GPU")
    opts = CompileOptions.from_env(target=str(target), **options)
    cx = bind_constexprs(kernel, constexprs)
    sig, attrs = parse_signature(kernel, signature if signature is not None else "", cx)
    return compile_source(ASTSource(kernel, sig, cx, attrs), opts.target, opts,
                          cache=None if cache else False)
