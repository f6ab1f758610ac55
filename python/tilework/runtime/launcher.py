"""The launch path: specialization key, variant lookup/compile, grid, and the driver call.

It runs on every launch, so the hot path is one generated binder call, one pass over the
arguments (dispatching on the argument's type) that builds the variant key and the kernel
parameters, one dict lookup and one driver call.  Everything else (dtype mapping, the
signature, compiling, loading) happens once per variant, in `_compile_variant`.
"""
from __future__ import annotations

import inspect
import sys

from ..compiler.options import CompileOptions
from ..errors import IntegerOverflowError, located
from ..language import core
from ..language.descriptor import TensorDescriptor, tensor_descriptor_type
from ..language.function import IGNORED_OPTIONS, LAUNCH_OPTIONS, JITFunction
from ..language.tuples import arg_fields, member_label, member_param, tuple_type
from . import native_launch, warm_cache
from .allocation import global_scratch, scratch_size
from .device import runtime_for
from .gpu_errors import CudaError
from .launch_args import TORCH_DTYPES as _TORCH_DTYPES
from .launch_args import is_constant_member, list_message
from .launch_args import normalize_grid as _grid
from .tensor_wrapper import TensorWrapper, element_dtype
from .tma import descriptor_memo, descriptor_memos, tensor_maps

# typestr of __cuda_array_interface__ -> tile dtype name
_TYPESTR = {"<f4": "fp32", "<f2": "fp16", "<f8": "fp64", "|i1": "int8", "<i2": "int16",
            "<i4": "int32", "<i8": "int64", "|u1": "uint8", "<u2": "uint16", "<u4": "uint32",
            "<u8": "uint64", "|b1": "int1"}


_TORCH_TYPES: set = set()  # torch tensor classes seen so far (checked by type on the hot path)


def _is_torch_tensor(a) -> bool:
    if type(a).__module__.startswith("torch") and hasattr(a, "data_ptr"):
        if type(a) not in _TORCH_TYPES:
            _TORCH_TYPES.add(type(a))
            native_launch.use_torch_streams(sys.modules.get("torch"))
        return True
    return False


def _tensor_entry(fn, name, a):
    """(key entry, data pointer) of a tensor-like argument; raises for host memory.  A
    `reinterpret`ed tensor's entry holds its tl element dtype instead of the torch one."""
    if type(a) is TensorWrapper:
        return _wrapper_entry(fn, name, a)
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


def _wrapper_entry(fn, name, a: TensorWrapper):
    dt = element_dtype(a)
    if dt is None:
        raise located(f"argument `{name}` of {fn.__name__} is reinterpreted as {a.dtype!r}: "
                      f"a tensor is reinterpreted as a scalar tl or torch dtype", fn.fn,
                      exc=TypeError)
    (_, aligned), ptr = _tensor_entry(fn, name, a.base)
    return (dt, aligned), ptr


_NOPARAM = object()  # an argument that is part of the key only (None, an int equal to 1)


class _Several(list):
    """The parameter values of one argument that passes several (a TensorDescriptor, whose
    `maps` are its state's tensor maps: `tma.launch_maps` finds them there; a tuple)."""
    __slots__ = ("maps",)

    def __init__(self, values=(), maps=None):
        super().__init__(values)
        self.maps = maps


def _descriptor_entry(fn, name, a: TensorDescriptor):
    """(key entry, parameters) of a host tensor descriptor: specialized on the element type,
    block shape, padding, the divisibility by 16 of the shape, the strides' divisors
    (`_stride_divisor`; the base is 16-byte aligned, which TensorDescriptor asserts) and
    whether a row (the last dimension) is a multiple of 16 bytes (where the TMA store may write it: the lowering's tile-tma-guard);
    passes base, shape, strides[:-1].  Memoized per descriptor object
    (`tma.descriptor_memo`: checked against its fields and its base's address each launch)."""
    try:
        m = descriptor_memo(a)
    except (AttributeError, TypeError, KeyError):  # not a tensor: the message below
        return _descriptor_entry_of(fn, name, a)
    e = m.entry
    if e is None:
        key, params = _descriptor_entry_of(fn, name, a)
        e = m.entry = key, _Several(params, m.maps)
    return e


def _stride_divisor(stride: int, item: int) -> int:
    """What a descriptor's stride (elements) is known divisible by: 16, else 16 // itemsize
    where it spans a multiple of 16 bytes (as TMA requires: a row of 1000 fp16 elements still
    lets a tile's rows be written in 16-byte vectors), else 1."""
    if stride % 16 == 0:
        return 16
    return 16 // item if item < 16 and stride * item % 16 == 0 else 1


def _descriptor_entry_of(fn, name, a: TensorDescriptor):
    (dt, _), ptr = _tensor_entry(fn, name, a.base)
    for s in a.shape:
        if not 0 <= s < 2**31:
            raise located(f"argument `{name}` of {fn.__name__}: tensor descriptor shape "
                          f"{a.shape} does not fit in int32", fn.fn, exc=ValueError)
    item = a.base.dtype.itemsize
    key = ("tensordesc", dt, tuple(a.block_shape), a.padding,
           tuple(s % 16 == 0 for s in a.shape), tuple(_stride_divisor(s, item)
                                                      for s in a.strides[:-1]),
           a.shape[-1] * item % 16 == 0)
    return key, _Several([ptr, *a.shape, *a.strides[:-1]])


def arg_entry(fn: JITFunction, name: str, nospec: bool, a):
    """(key entry, parameter value or _NOPARAM) of one runtime argument."""
    t = type(a)
    if t is core.constexpr:
        a = a.value
        t = type(a)
    if t is int:
        if a == 1 and not nospec:
            return 1, _NOPARAM
        for lo, hi, ty in ((-2**31, 2**31, "i32"), (-2**63, 2**63, "i64"), (0, 2**64, "u64")):
            if lo <= a < hi:
                return (ty, not nospec and a % 16 == 0), a
        raise located(f"argument `{name}` of {fn.__name__}: integer {a} does not fit in 64 "
                      f"bits", fn.fn, exc=IntegerOverflowError)
    if t is float:
        return "fp32", a
    if t is bool:
        return "i1", a
    if t in _TORCH_TYPES and a.is_cuda:
        ptr = a.data_ptr()
        return (a.dtype, ptr & 15 == 0), ptr
    if a is None:
        return None, _NOPARAM
    if t is TensorDescriptor:
        return _descriptor_entry(fn, name, a)
    if isinstance(a, tuple):
        return _tuple_entry(fn, name, nospec, a)
    if t is list:
        raise located(list_message(fn, name), fn.fn, exc=TypeError)
    sc = numpy_scalar_dtype(a)
    if sc is not None:  # np.float16(1.5), np.int8(3), ...: a scalar of that type
        return sc, a.item()
    return _tensor_entry(fn, name, a)


def _tuple_entry(fn, name, nospec, a):
    """(key entry, parameters) of a tuple argument: each member's entry as an argument's
    (constant members by type and value), with the fields of a namedtuple; the runtime
    members' parameters in order."""
    keys, params = [], _Several()
    for i, m in enumerate(a):
        label = member_label(name, i)
        if m is not None and is_constant_member(m):  # (None: arg_entry's, a constant too)
            v = m.value if type(m) is core.constexpr else m
            keys.append(("constexpr", type(v), v))
            continue
        k, p = arg_entry(fn, label, nospec, m)
        keys.append(k)
        if type(p) is _Several:
            params.extend(p)
        elif p is not _NOPARAM:
            params.append(p)
    return ("tuple", tuple(arg_fields(a) or ()), tuple(keys)), params


_SCALAR_NAMES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
                 "bool": "int1", "int8": "int8", "int16": "int16", "int32": "int32",
                 "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
                 "uint64": "uint64"}


def numpy_scalar_dtype(a) -> str | None:
    """The tile dtype name of a numpy scalar (np.float16(1.5), np.uint8(3), ml_dtypes'
    bfloat16), else None."""
    if type(a).__module__ not in ("numpy", "ml_dtypes") or type(a).__name__ == "ndarray" or \
            getattr(a, "ndim", None) != 0:
        return None
    return _SCALAR_NAMES.get(getattr(getattr(a, "dtype", None), "name", None))


def placeholder(fn, name, a):
    """(dtype, 16-byte aligned / divisible by 16) of a warmup argument standing for a value:
    a type string (`'*fp32:16'`, `'fp16'`), a tl dtype, or a torch dtype (a tensor of that
    dtype, as Triton's warmup takes); None for a real value."""
    if isinstance(a, str):
        ty, _, hint = a.partition(":")
        try:
            t = core.str_to_ty(ty)
        except ValueError as e:
            raise located(f"argument `{name}` of {fn.__name__}: {e}", fn.fn,
                          exc=ValueError) from None
        if hint not in ("", "16"):
            raise located(f"argument `{name}` of {fn.__name__}: only the hint ':16' is known, "
                          f"got {a!r}", fn.fn, exc=ValueError)
        return t, hint == "16"
    if isinstance(a, core.dtype):
        return a, isinstance(a, core.pointer_type)  # a pointer stands for an aligned tensor
    if type(a).__name__ == "dtype" and type(a).__module__.startswith("torch"):
        tname = _TORCH_DTYPES.get(str(a))
        if tname is None:
            raise located(f"argument `{name}` of {fn.__name__} has unsupported dtype {a}",
                          fn.fn, exc=TypeError)
        return core.pointer_type(core.DTYPES[tname]), True
    return None


def key_and_params(fn: JITFunction, values):
    """The variant key and the kernel parameter values of one launch (their C types follow
    from the key, so they are fixed per compiled variant: `abi.param_kinds`)."""
    key, params = [], []
    for name, is_cx, nospec, a in zip(fn.arg_names, fn._is_constexpr, fn._nospec, values):
        if is_cx:
            key.append(a.value if type(a) is core.constexpr else a)
            continue
        k, p = arg_entry(fn, name, nospec, a)
        key.append(k)
        if type(p) is _Several:
            params.extend(p)
        elif p is not _NOPARAM:
            params.append(p)
    return tuple(key), params


def fast_key_and_params(fn: JITFunction):
    """`key_and_params` generated for one kernel: the common arguments (CUDA torch tensors,
    int32 ints) are inlined, everything else goes through `arg_entry`; same results."""
    n = len(fn.arg_names)
    lines = ["def _kp(values):", f"    {', '.join(f'a{i}' for i in range(n))}, = values",
             "    several = False"]
    params = []
    for i, (name, is_cx, nospec) in enumerate(zip(fn.arg_names, fn._is_constexpr, fn._nospec)):
        a = f"a{i}"
        if is_cx:
            lines.append(f"    k{i} = {a}.value if type({a}) is _CX else {a}")
            continue
        int_ok = f"-2147483648 <= {a} < 2147483648" + ("" if nospec else f" and {a} != 1")
        lines += [f"    t = type({a})",
                  f"    if t in _TT and {a}.is_cuda:",
                  f"        p{i} = {a}.data_ptr()",
                  f"        k{i} = ({a}.dtype, not p{i} & 15)",
                  f"    elif t is int and {int_ok}:",
                  f"        p{i} = {a}",
                  f"        k{i} = ('i32', {'False' if nospec else f'not {a} & 15'})",
                  "    else:",
                  f"        k{i}, p{i} = _entry(_fn, {name!r}, {nospec}, {a})",
                  f"        several = several or type(p{i}) is _SV"]
        params.append(f"p{i}")
    lines.append(f"    key = ({''.join(f'k{i}, ' for i in range(n))})")
    lines.append(f"    params = [{', '.join(params)}]")
    lines.append("    if _NP in params:")
    lines.append("        params = [p for p in params if p is not _NP]")
    lines.append("    if several:")  # descriptors pass several parameters each
    lines.append("        params = [x for p in params for x in (p if type(p) is _SV else (p,))]")
    lines.append("    return key, params")
    ns = {"_CX": core.constexpr, "_TT": _TORCH_TYPES, "_entry": arg_entry, "_fn": fn,
          "_NP": _NOPARAM, "_SV": _Several}
    exec("\n".join(lines), ns)
    return ns["_kp"]


def specialization(fn: JITFunction, values, placeholders: bool = False):
    """The signature (runtime param -> dtype; a tuple argument's `tuple_type`), constants and
    arg attributes of a launch (of a warmup, with `placeholders`: type strings and dtypes
    standing for arguments)."""
    signature, constants, attrs = {}, {}, {}
    for name, a in zip(fn.arg_names, values):
        if type(a) is core.constexpr:
            a = a.value
        if name in fn.constexprs:
            constants[name] = a
            continue
        nospec = name in fn.do_not_specialize
        if isinstance(a, tuple):
            signature[name] = _tuple_spec(fn, name, name, a, nospec, placeholders, attrs)
            continue
        const, t = _value_spec(fn, name, name, a, nospec, placeholders, attrs)
        if const:
            constants[name] = t
        else:
            signature[name] = t
    return signature, constants, attrs


def _tuple_spec(fn, param, label, a, nospec, placeholders, attrs) -> tuple_type:
    """The `tuple_type` of tuple argument `a` (its members specialized as arguments are; the
    attributes of member parameters `param.<i>` go in `attrs`)."""
    types = []
    for i, m in enumerate(a):
        p, lb = member_param(param, i), member_label(label, i)
        if isinstance(m, tuple):
            types.append(_tuple_spec(fn, p, lb, m, nospec, placeholders, attrs))
        elif m is not None and is_constant_member(m):
            types.append(core.constexpr_type(m))
        else:
            const, t = _value_spec(fn, p, lb, m, nospec, placeholders, attrs)
            types.append(core.constexpr_type(t) if const else t)
    return tuple_type(types, arg_fields(a))


def _value_spec(fn, name, label, a, nospec, placeholders, attrs):
    """(is a constant, the constant or the dtype) of one runtime argument or tuple member
    (`name`: its parameter, `label`: how messages name it); its attributes go in `attrs`."""
    if a is None:
        return True, None
    if type(a) is bool:
        return False, core.int1
    if type(a) is int:
        if a == 1 and not nospec:
            return True, 1
        if a % 16 == 0 and not nospec:
            attrs[name] = {"tile.divisibility": 16}
        return False, core.int32 if -2**31 <= a < 2**31 else (
            core.int64 if -2**63 <= a < 2**63 else core.uint64)
    if type(a) is float:
        return False, core.float32
    if type(a) is list:
        raise located(list_message(fn, label), fn.fn, exc=TypeError)
    if type(a) is TensorDescriptor:
        key, _ = _descriptor_entry(fn, label, a)
        elem = _tile_dtype(fn, label, key[1])
        attrs[name] = {"tile.divisibility": 16}
        for d, ok in enumerate(key[4]):
            if ok:
                attrs[f"{name}.shape{d}"] = {"tile.divisibility": 16}
        last = f"{name}.shape{len(key[4]) - 1}"
        if key[6] and last not in attrs:  # rows of 16 bytes: 16 // itemsize elements
            attrs[last] = {"tile.divisibility": 16 // a.base.dtype.itemsize}
        for d, div in enumerate(key[5]):
            if div > 1:
                attrs[f"{name}.stride{d}"] = {"tile.divisibility": div}
        return False, tensor_descriptor_type(elem, a.block_shape, a.padding)
    if numpy_scalar_dtype(a) is not None:
        return False, core.DTYPES[numpy_scalar_dtype(a)]
    if placeholders and placeholder(fn, label, a) is not None:
        t, hint = placeholder(fn, label, a)
        if hint:
            attrs[name] = {"tile.divisibility": 16}
        return False, t
    (dt, aligned), _ = _tensor_entry(fn, label, a)
    if aligned:
        attrs[name] = {"tile.divisibility": 16}
    return False, core.pointer_type(_tile_dtype(fn, label, dt))


def _tile_dtype(fn, name, dt) -> core.dtype:
    """The tile dtype of a tensor argument's torch dtype or typestr (a reinterpreted
    tensor's: the tl dtype itself)."""
    if isinstance(dt, core.dtype):
        return dt
    tname = _TORCH_DTYPES.get(str(dt)) if not isinstance(dt, str) else _TYPESTR.get(dt)
    if tname is None:
        raise located(f"argument `{name}` of {fn.__name__} has unsupported dtype {dt}",
                      fn.fn, exc=TypeError)
    return core.DTYPES[tname]


_runtime = None


def _get_runtime():
    global _runtime
    if _runtime is None:
        _runtime = runtime_for(None)
    return _runtime


def bind(fn: JITFunction, args, kwargs):
    """(argument values, launch options) of a launch; Python's message, located, on a bad
    call."""
    try:
        return fn._binder(*args, **kwargs)
    except TypeError as e:
        raise located(f"{fn.__name__}[grid](...): {e}", fn.fn) from None


def native_signature(fn: JITFunction):
    """The native launcher of `fn` (`native_launch`: key, lookup, packing and the driver call
    in C, the same key as `fast_key_and_params`), or None where there is no native module."""
    mod = native_launch.module()
    if mod is None:
        return None
    torch = sys.modules.get("torch")
    if torch is not None:
        native_launch.use_torch_streams(torch)
    params = fn.signature.parameters
    return mod.Signature(fn, tuple(fn._is_constexpr), tuple(fn._nospec), tuple(fn.arg_names),
                         _TORCH_TYPES, core.constexpr, arg_entry, _NOPARAM, _Several, _grid,
                         fn._binder, run, tuple(params[n].default for n in fn.arg_names),
                         inspect.Parameter.empty, LAUNCH_OPTIONS,
                         tuple(o for o in IGNORED_OPTIONS if o not in params),
                         descriptor_type=TensorDescriptor, descriptor_memo=descriptor_memos())


def _leaves(names, values):
    """(label, value) of each argument, tuple arguments' members in their place."""
    for n, a in zip(names, values):
        if isinstance(a, tuple):
            yield from _leaves([member_label(n, i) for i in range(len(a))], a)
        else:
            yield n, a


def launch_device(fn: JITFunction, values):
    """The device ordinal of the launch's torch tensors (None: no torch tensor); raises if
    they are on several devices."""
    dev = name = None
    for n, a in _leaves(fn.arg_names, values):
        if type(a) is TensorWrapper:
            a = a.base
        if type(a) in _TORCH_TYPES and a.is_cuda:
            d = a.get_device()
            if dev is None:
                dev, name = d, n
            elif d != dev:
                raise located(f"{fn.__name__}: arguments on different devices: `{name}` is on "
                              f"cuda:{dev} and `{n}` on cuda:{d}; a launch runs on one device "
                              f"(move the tensors with .to(...))", fn.fn, exc=ValueError)
    return dev


def run(fn: JITFunction, grid, args, kwargs, launch: bool = True, native: bool = True):
    """`fn[grid](*args, **kwargs)` (`launch` False: only the variant, compiled and loaded);
    `native` False: the native launcher already declined this launch (its Launch calls so)."""
    try:
        values, opts = fn._binder(*args, **kwargs)
    except TypeError as e:
        raise located(f"{fn.__name__}[grid](...): {e}", fn.fn) from None
    if fn.interpret:
        if not launch:
            return None  # nothing to compile
        from .interpreter import interpret
        return interpret(fn, grid, values, dict(zip(LAUNCH_OPTIONS, opts)))
    nat = fn._native_launch
    if nat:
        if launch and native:
            try:
                k = nat(values, opts, fn.cache, grid)
            except CudaError as e:
                if "INVALID_CONTEXT" not in str(e):
                    raise
                # a thread with no current context (torch's autograd thread): bind one, again
                _get_runtime().ensure_context()
                k = nat(values, opts, fn.cache, grid)
            if k is not None:
                return k  # launched natively; None: an unseen variant, another device, ...
    elif nat is None and not native_launch.start_build():  # (building: ask again next time)
        # the Signature: called here, and `kernel[grid]` returns `sig[grid]` (the binder and
        # this function's native part in one C call; what it does not handle comes back here)
        sig = native_signature(fn)
        fn._native_launch = sig if sig is not None else False
    kp = fn._key_and_params
    if kp is None:
        kp = fn._key_and_params = fast_key_and_params(fn)
    key, params = kp(values)
    dev = launch_device(fn, values)
    torch = sys.modules.get("torch")
    if dev is not None and torch is not None and dev != _current_device(torch):
        with torch.cuda.device(dev):  # that device's context and current stream
            return _run_variant(fn, key, params, values, opts, grid, launch, dev)
    return _run_variant(fn, key, params, values, opts, grid, launch, dev)


def _current_device(torch) -> int:
    c = torch._C
    return c._cuda_getDevice() if hasattr(c, "_cuda_getDevice") else torch.cuda.current_device()


def _run_variant(fn, key, params, values, opts, grid, launch, dev):
    k = fn.cache.get((key, opts))
    if k is None:
        k = fn.cache[(key, opts)] = _compile_variant(fn, values, opts)
    kdev = getattr(k, "device", None)
    if dev is not None and kdev is not None and kdev != dev:
        k = _runtime.on_device(k, dev)  # the variant, loaded on this device too
    if not launch:
        return k
    g = _grid(fn, grid, values)
    if g[0] and g[1] and g[2]:
        if "tma" in k.metadata:  # TMA tensor maps of host descriptors follow the parameters
            params = params + tensor_maps(fn, values, k.metadata["tma"])
        if "global_scratch_size" in k.metadata and scratch_size(k.metadata):
            buf, ptr = global_scratch(k.metadata, g, _runtime.stream())
            params = params + [ptr]  # `buf` lives until the launch is queued
        _runtime.launch(k, g, params)
    return k


def warmup(fn: JITFunction, grid, args, kwargs):
    """`kernel.warmup(*args, grid=, target=, ...)`: compiles the variant these arguments
    select.  With `target=`, ahead of time without a GPU (arguments may be placeholders:
    `'*fp32:16'`, `'fp16'`, tl or torch dtypes) -> the CompiledKernel (`.asm`, `.metadata`);
    without, for the current device, loaded as a launch would, -> the loaded kernel."""
    try:
        values, opts = fn._binder(*args, **kwargs)
    except TypeError as e:
        raise located(f"{fn.__name__}.warmup(...): {e}", fn.fn) from None
    options = dict(zip(LAUNCH_OPTIONS, opts))
    if options.get("target") is None:
        return run(fn, grid, args, kwargs, launch=False)
    from ..compiler.driver import ASTSource, compile
    signature, constants, attrs = specialization(fn, values, placeholders=True)
    copts = CompileOptions.from_env(**{k: v for k, v in options.items() if v is not None})
    return compile(ASTSource(fn, signature, constants, attrs), copts.target, copts)


def variant_key(fn: JITFunction, values, opts):
    """The key of `fn.cache` for these bound arguments and options."""
    kp = fn._key_and_params
    if kp is None:
        kp = fn._key_and_params = fast_key_and_params(fn)
    return kp(values)[0], opts


def device_target() -> str:
    """The current device's target name (sm_90a, gfx942, ...)."""
    return _get_runtime().target()


def variant_source(fn: JITFunction, values, opts):
    """(ASTSource, target, CompileOptions) of the variant these bound arguments select: what
    `compile` needs, so a caller may compile it elsewhere (the autotuner's workers)."""
    from ..compiler.driver import ASTSource
    signature, constants, attrs = specialization(fn, values)
    options = CompileOptions.from_env(**{n: v for n, v in zip(LAUNCH_OPTIONS, opts)
                                         if v is not None})
    target = options.target or _get_runtime().target()
    return ASTSource(fn, signature, constants, attrs), target, options


def install_variant(fn: JITFunction, vkey, ck):
    """Loads a compiled kernel as the variant of `vkey` (later launches find it)."""
    k = fn.cache[vkey] = _get_runtime().load(ck)
    return k


def _compile_variant(fn, values, opts):
    signature, constants, attrs = specialization(fn, values)
    options = CompileOptions.from_env(**{n: v for n, v in zip(LAUNCH_OPTIONS, opts)
                                         if v is not None})
    target = options.target or _get_runtime().target()
    ck = warm_cache.lookup(fn, signature, constants, attrs, options, target)
    if ck is None:  # not in the disk cache: the compiler (MLIR, LLVM) is imported only now
        from ..compiler.driver import ASTSource, compile
        ck = compile(ASTSource(fn, signature, constants, attrs), target, options)
    return _get_runtime().load(ck)
