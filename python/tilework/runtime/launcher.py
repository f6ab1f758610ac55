"""The launch path: specialization key, variant lookup/compile, grid, and the driver call.

It runs on every launch, so the hot path is one generated binder call, one pass over the
arguments (dispatching on the argument's type) that builds the variant key and the kernel
parameters, one dict lookup and one driver call.  Everything else (dtype mapping, the
signature, compiling, loading) happens once per variant, in `_compile_variant`.
"""
from __future__ import annotations

from ..errors import located
from ..language import core
from .jit import LAUNCH_OPTIONS, JITFunction

# torch dtype name -> tile dtype name
_TORCH_DTYPES = {
    "torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16",
    "torch.float64": "fp64", "torch.int8": "int8", "torch.int16": "int16",
    "torch.int32": "int32", "torch.int64": "int64", "torch.uint8": "uint8",
    "torch.uint16": "uint16", "torch.uint32": "uint32", "torch.uint64": "uint64",
    "torch.bool": "int1", "torch.float8_e4m3fn": "fp8e4nv", "torch.float8_e5m2": "fp8e5",
}
# typestr of __cuda_array_interface__ -> tile dtype name
_TYPESTR = {"<f4": "fp32", "<f2": "fp16", "<f8": "fp64", "|i1": "int8", "<i2": "int16",
            "<i4": "int32", "<i8": "int64", "|u1": "uint8", "<u2": "uint16", "<u4": "uint32",
            "<u8": "uint64", "|b1": "int1"}


_TORCH_TYPES: set = set()  # torch tensor classes seen so far (checked by type on the hot path)


def _is_torch_tensor(a) -> bool:
    if type(a).__module__.startswith("torch") and hasattr(a, "data_ptr"):
        _TORCH_TYPES.add(type(a))
        return True
    return False


def _tensor_entry(fn, name, a):
    """(key entry, data pointer) of a tensor-like argument; raises for host memory."""
    if _is_torch_tensor(a):
        if not a.is_cuda:
            raise located(f"argument `{name}` of {fn.__name__} is a CPU tensor; the kernel "
                          f"runs on the GPU: move it with .cuda() (or run the interpreter "
                          f"with TILEWORK_INTERPRET=1)", fn.fn, exc=ValueError)
        ptr = a.data_ptr()
        return (a.dtype, ptr & 15 == 0), ptr
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        ptr = cai["data"][0]
        return (cai["typestr"], ptr & 15 == 0), ptr
    if hasattr(a, "__array_interface__"):
        raise located(f"argument `{name}` of {fn.__name__} is a host (numpy) array; the kernel "
                      f"runs on the GPU (or run the interpreter with TILEWORK_INTERPRET=1)",
                      fn.fn, exc=ValueError)
    raise located(f"argument `{name}` of {fn.__name__} has unsupported type "
                  f"{type(a).__name__}: pass a GPU tensor, an int, a float or a bool",
                  fn.fn, exc=TypeError)


def key_and_params(fn: JITFunction, values):
    """The variant key and the kernel parameter values of one launch (their C types follow
    from the key, so they are fixed per compiled variant: metadata["param_kinds"])."""
    key, params = [], []
    for name, is_cx, nospec, a in zip(fn.arg_names, fn._is_constexpr, fn._nospec, values):
        if is_cx:
            key.append(a.value if type(a) is core.constexpr else a)
            continue
        t = type(a)
        if t is core.constexpr:
            a = a.value
            t = type(a)
        if t is int:
            if a == 1 and not nospec:
                key.append(1)
            elif -2**31 <= a < 2**31:
                key.append(("i32", not nospec and a % 16 == 0))
                params.append(a)
            elif -2**63 <= a < 2**63:
                key.append(("i64", not nospec and a % 16 == 0))
                params.append(a)
            elif a < 2**64:
                key.append(("u64", not nospec and a % 16 == 0))
                params.append(a)
            else:
                raise located(f"argument `{name}` of {fn.__name__}: integer {a} does not fit "
                              f"in 64 bits", fn.fn, exc=ValueError)
        elif t is float:
            key.append("fp32")
            params.append(a)
        elif t is bool:
            key.append("i1")
            params.append(a)
        elif t in _TORCH_TYPES and a.is_cuda:
            ptr = a.data_ptr()
            key.append((a.dtype, ptr & 15 == 0))
            params.append(ptr)
        elif a is None:
            key.append(None)
        else:
            entry, ptr = _tensor_entry(fn, name, a)
            key.append(entry)
            params.append(ptr)
    return tuple(key), params


def specialization(fn: JITFunction, values):
    """The signature (runtime param -> dtype), constants and arg attributes of a launch."""
    signature, constants, attrs = {}, {}, {}
    for name, a in zip(fn.arg_names, values):
        if type(a) is core.constexpr:
            a = a.value
        if name in fn.constexprs:
            constants[name] = a
        elif a is None:
            constants[name] = None
        elif type(a) is bool:
            signature[name] = core.int1
        elif type(a) is int:
            if a == 1 and name not in fn.do_not_specialize:
                constants[name] = 1
                continue
            signature[name] = core.int32 if -2**31 <= a < 2**31 else (
                core.int64 if -2**63 <= a < 2**63 else core.uint64)
            if a % 16 == 0 and name not in fn.do_not_specialize:
                attrs[name] = {"tile.divisibility": 16}
        elif type(a) is float:
            signature[name] = core.float32
        else:
            (dt, aligned), _ = _tensor_entry(fn, name, a)
            tname = _TORCH_DTYPES.get(str(dt)) if not isinstance(dt, str) else _TYPESTR.get(dt)
            if tname is None:
                raise located(f"argument `{name}` of {fn.__name__} has unsupported dtype {dt}",
                              fn.fn, exc=TypeError)
            signature[name] = core.pointer_type(core.DTYPES[tname])
            if aligned:
                attrs[name] = {"tile.divisibility": 16}
    return signature, constants, attrs


def _grid(fn, grid, values):
    if callable(grid):
        grid = grid(dict(zip(fn.arg_names, values)))
    if type(grid) is tuple and len(grid) == 1 and type(grid[0]) is int and grid[0] >= 0:
        return grid[0], 1, 1  # the common case, fast
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


_runtime = None


def _get_runtime():
    global _runtime
    if _runtime is None:
        from .device import runtime_for
        _runtime = runtime_for(None)
    return _runtime


def run(fn: JITFunction, grid, args, kwargs, launch: bool = True):
    try:
        values, opts = fn._binder(*args, **kwargs)
    except TypeError as e:
        raise located(f"{fn.__name__}[grid](...): {e}", fn.fn) from None
    if fn.interpret:
        if not launch:
            return None  # nothing to compile
        from .interpreter import interpret
        return interpret(fn, grid, values, dict(zip(LAUNCH_OPTIONS, opts)))
    key, params = key_and_params(fn, values)
    k = fn.cache.get((key, opts))
    if k is None:
        k = fn.cache[(key, opts)] = _compile_variant(fn, values, opts)
    if not launch:
        return k
    g = _grid(fn, grid, values)
    if g[0] and g[1] and g[2]:
        _runtime.launch(k, g, params)
    return k


def _compile_variant(fn, values, opts):
    from ..compiler.driver import ASTSource, compile
    from ..compiler.options import CompileOptions
    signature, constants, attrs = specialization(fn, values)
    rt = _get_runtime()
    options = CompileOptions.from_env(**{n: v for n, v in zip(LAUNCH_OPTIONS, opts)
                                         if v is not None})
    target = options.target or rt.target()
    ck = compile(ASTSource(fn, signature, constants, attrs), target, options)
    return rt.load(ck)
