"""The interpreter's view of array arguments: the element dtype, address and memory region of
a numpy array or CPU torch tensor (`pointer`), and the regions `tilework.reachable` adds."""
from __future__ import annotations

import numpy as np

from ..errors import located
from ..language import core
from .launch_args import TORCH_DTYPES
from .tensor_wrapper import TensorWrapper, element_dtype

NUMPY_DTYPES = {"float32": "fp32", "float16": "fp16", "float64": "fp64", "bfloat16": "bf16",
                "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
                "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
                "bool": "int1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
                "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16"}


_byte_bounds = getattr(getattr(np.lib, "array_utils", None), "byte_bounds", None) or \
    getattr(np, "byte_bounds", None)  # numpy 2 moved it


def pointer(fn, name, a):
    """(element dtype, address, (lo, hi, writable, name) of its memory) of an array argument
    (of a `reinterpret`ed tensor: its base's memory, read as the wrapper's dtype)."""
    if type(a) is TensorWrapper:
        dt = element_dtype(a)
        if dt is None:
            raise located(f"argument `{name}` of {fn.__name__} is reinterpreted as "
                          f"{a.dtype!r}: a tensor is reinterpreted as a scalar tl or torch "
                          f"dtype", fn.fn, exc=TypeError)
        return (dt,) + pointer(fn, name, a.base)[1:]
    if type(a).__module__.startswith("torch"):
        if a.device.type != "cpu":
            raise located(f"argument `{name}` of {fn.__name__} is on {a.device}; the "
                          f"interpreter needs CPU tensors or numpy arrays", fn.fn, exc=ValueError)
        dt = TORCH_DTYPES.get(str(a.dtype))
        s = a.untyped_storage()
        lo, hi, writable, ptr = s.data_ptr(), s.data_ptr() + s.nbytes(), True, a.data_ptr()
    elif isinstance(a, np.ndarray):
        dt = NUMPY_DTYPES.get(a.dtype.name)
        lo, hi = _byte_bounds(a)
        writable, ptr = a.flags.writeable, a.ctypes.data
    else:
        raise located(f"argument `{name}` of {fn.__name__} has unsupported type "
                      f"{type(a).__name__}: the interpreter takes numpy arrays, CPU torch "
                      f"tensors, ints, floats and bools", fn.fn, exc=TypeError)
    if dt is None:
        raise located(f"argument `{name}` of {fn.__name__} has unsupported dtype {a.dtype}",
                      fn.fn, exc=TypeError)
    return core.DTYPES[dt], ptr, (lo, hi, writable, name)



def region(a, name):
    if isinstance(a, np.ndarray):
        lo, hi = _byte_bounds(a)
        return lo, hi, bool(a.flags.writeable), name
    if type(a).__module__.startswith("torch") and a.device.type == "cpu":
        st = a.untyped_storage()
        return st.data_ptr(), st.data_ptr() + st.nbytes(), True, name
    raise TypeError(f"reachable takes numpy arrays and CPU torch tensors, got "
                    f"{type(a).__name__}{' on ' + str(a.device) if hasattr(a, 'device') else ''}")


REACHABLE: list = []  # arrays given to `reachable`: (lo, hi, writable, name) regions


class reachable:
    """`with reachable(*arrays):` kernels interpreted inside may also access these arrays
    (numpy or CPU torch), reached through addresses the kernel loads from memory (grouped
    GEMM's arrays of pointers, `tl.load(ptrs + g).to(tl.pointer_type(...))`): the bounds
    check knows only the argument arrays otherwise."""

    def __init__(self, *arrays):
        self.regions = [region(a, f"reachable[{i}]") for i, a in enumerate(arrays)]
        self.arrays = arrays  # kept alive while the regions are in use

    def __enter__(self):
        REACHABLE.extend(self.regions)
        return self

    def __exit__(self, *exc):
        for r in self.regions:
            REACHABLE.remove(r)
