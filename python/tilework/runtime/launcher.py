"""The launch path: specialization key, variant lookup/compile, grid, and the driver call.

Kept lean because it runs on every launch: one generated binder call, one pass over the
arguments building the key and the kernel parameters, one dict lookup, one driver call.
"""
from __future__ import annotations

import sys

from ..errors import located
from ..language import core
from .jit import LAUNCH_OPTIONS, JITFunction, interpret_enabled

# torch dtype name -> tile dtype name
_TORCH_DTYPES = {
    "torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16",
    "torch.float64": "fp64", "torch.int8": "int8", "torch.int16": "int16",
    "torch.int32": "int32", "torch.int64": "int64", "torch.uint8": "uint8",
    "torch.uint16": "uint16", "torch.uint32": "uint32", "torch.uint64": "uint64",
    "torch.bool": "int1", "torch.float8_e4m3fn": "fp8e4nv", "torch.float8_e5m2": "fp8e5",
}
# numpy-style typestr of __cuda_array_interface__ -> tile dtype name
_TYPESTR = {"<f4": "fp32", "<f2": "fp16", "<f8": "fp64", "|i1": "int8", "<i2": "int16",
            "<i4": "int32", "<i8": "int64", "|u1": "uint8", "<u2": "uint16", "<u4": "uint32",
            "<u8": "uint64", "|b1": "int1"}


class _Arg:
    """How one runtime argument is passed: 'p' pointer, 'i'/'l' int32/int64, 'f' float."""
    __slots__ = ()


def _pointer_info(fn, name, a):
    """(dtype name, data pointer, device) of a tensor-like argument."""
    t = type(a)
    if t.__module__.startswith("torch"):
        dev = a.device
        if dev.type == "cpu":
            raise located(f"argument `{name}` of {fn.__name__} is a CPU tensor; the kernel "
                          f"runs on the GPU: move it with .cuda() (or run the interpreter "
                          f"with TILEWORK_INTERPRET=1)", fn.fn, exc=ValueError)
        dt = _TORCH_DTYPES.get(str(a.dtype))
        if dt is None:
            raise located(f"argument `{name}` of {fn.__name__} has unsupported dtype {a.dtype}",
                          fn.fn, exc=TypeError)
        return dt, a.data_ptr(), dev
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        dt = _TYPESTR.get(cai["typestr"])
        if dt is None:
            raise located(f"argument `{name}` of {fn.__name__} has unsupported typestr "
                          f"{cai['typestr']!r}", fn.fn, exc=TypeError)
        return dt, cai["data"][0], None
    if hasattr(a, "__array_interface__") or t.__module__ == "numpy":
        raise located(f"argument `{name}` of {fn.__name__} is a host (numpy) array; the kernel "
                      f"runs on the GPU (or run the interpreter with TILEWORK_INTERPRET=1)",
                      fn.fn, exc=ValueError)
    return None


def specialize(fn: JITFunction, values):
    """-> (key, signature, constants, attrs, params).  `params` are (kind, value) pairs of the
    runtime arguments in order; the key identifies the compiled variant."""
    key = []
    signature, constants, attrs, params = {}, {}, {}, []
    device = None
    for name, a in zip(fn.arg_names, values):
        if name in fn.constexprs:
            if isinstance(a, core.constexpr):
                a = a.value
            constants[name] = a
            key.append(("c", a if _hashable(a) else repr(a)))
            continue
        if isinstance(a, core.constexpr):
            a = a.value
        if a is None:
            constants[name] = None
            key.append(("none",))
            continue
        if isinstance(a, bool):
            signature[name] = core.int1
            key.append(("i1",))
            params.append(("b", a))
            continue
        if isinstance(a, int):
            if a == 1 and name not in fn.do_not_specialize:
                constants[name] = 1
                key.append(("c", 1))
                continue
            if -2**31 <= a < 2**31:
                ty, kind = "int32", "i"
            elif -2**63 <= a < 2**63:
                ty, kind = "int64", "l"
            elif a < 2**64:
                ty, kind = "uint64", "L"
            else:
                raise located(f"argument `{name}` of {fn.__name__}: integer {a} does not fit "
                              f"in 64 bits", fn.fn, exc=ValueError)
            div16 = a % 16 == 0 and name not in fn.do_not_specialize
            signature[name] = core.DTYPES[ty]
            if div16:
                attrs[name] = {"tile.divisibility": 16}
            key.append((ty, div16))
            params.append((kind, a))
            continue
        if isinstance(a, float):
            signature[name] = core.float32
            key.append(("fp32",))
            params.append(("f", a))
            continue
        info = _pointer_info(fn, name, a)
        if info is None:
            raise located(f"argument `{name}` of {fn.__name__} has unsupported type "
                          f"{type(a).__name__}: pass a GPU tensor, an int, a float or a bool",
                          fn.fn, exc=TypeError)
        dt, ptr, dev = info
        if device is None and dev is not None:
            device = dev
        aligned = ptr % 16 == 0
        signature[name] = core.pointer_type(core.DTYPES[dt])
        if aligned:
            attrs[name] = {"tile.divisibility": 16}
        key.append(("*" + dt, aligned))
        params.append(("p", ptr))
    return tuple(key), signature, constants, attrs, params, device


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


def _grid(fn, grid, meta):
    if callable(grid):
        grid = grid(meta)
    if isinstance(grid, int):
        grid = (grid,)
    try:
        g = tuple(int(x) for x in grid)
    except (TypeError, ValueError):
        raise located(f"grid of {fn.__name__} must be a tuple of ints or a callable returning "
                      f"one, got {grid!r}", fn.fn, exc=TypeError) from None
    if not 1 <= len(g) <= 3 or any(x < 0 for x in g):
        raise located(f"grid of {fn.__name__} must have 1 to 3 non-negative sizes, got {g}",
                      fn.fn, exc=ValueError)
    return g + (1,) * (3 - len(g))


def run(fn: JITFunction, grid, args, kwargs, launch: bool = True):
    values, opts = fn.bind(args, kwargs)
    if interpret_enabled(fn):
        from .interpreter import interpret
        return interpret(fn, grid, values, dict(zip(LAUNCH_OPTIONS, opts)))
    key, signature, constants, attrs, params, device = specialize(fn, values)
    from . import device as devmod
    rt = devmod.runtime_for(device)
    target = opts[2] or rt.target()
    ckey = (key, target, opts)
    k = fn.cache.get(ckey)
    if k is None:
        k = _compile_and_load(fn, rt, target, signature, constants, attrs, opts)
        fn.cache[ckey] = k
    if not launch:
        return k
    meta = dict(zip(fn.arg_names, values))
    g = _grid(fn, grid, meta)
    if g[0] * g[1] * g[2] == 0:
        return k
    rt.launch(k, g, params)
    return k


def _compile_and_load(fn, rt, target, signature, constants, attrs, opts):
    from ..compiler.driver import ASTSource, compile
    from ..compiler.options import CompileOptions
    options = CompileOptions.from_env(**{n: v for n, v in zip(LAUNCH_OPTIONS, opts)
                                         if v is not None})
    if options.target is None:
        import dataclasses
        options = dataclasses.replace(options, target=target)
    ck = compile(ASTSource(fn, signature, constants, attrs), options.target, options)
    return rt.load(ck)


def _debug_dump(*a):  # pragma: no cover
    print(*a, file=sys.stderr)
