"""What the launch path and the interpreter both need of a launch's arguments: the tile dtype
of a torch dtype, the grid as three ints, which members of a tuple argument are constants
and the messages refusing lists and descriptors in tuples."""
from __future__ import annotations

from ..errors import located
from ..language import core
from ..language.function import JITFunction

# torch dtype name -> tile dtype name
TORCH_DTYPES = {
    "torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16",
    "torch.float64": "fp64", "torch.int8": "int8", "torch.int16": "int16",
    "torch.int32": "int32", "torch.int64": "int64", "torch.uint8": "uint8",
    "torch.uint16": "uint16", "torch.uint32": "uint32", "torch.uint64": "uint64",
    "torch.bool": "int1", "torch.float8_e4m3fn": "fp8e4nv", "torch.float8_e5m2": "fp8e5",
    "torch.float8_e4m3fnuz": "fp8e4b8", "torch.float8_e5m2fnuz": "fp8e5b16",
}


def normalize_grid(fn, grid, values) -> tuple:
    """`grid` (a tuple, an int, or a callable taking the bound arguments by name) as three
    non-negative ints."""
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


def list_message(fn, name) -> str:
    """The one message for a list argument (the compiler's and the interpreter's)."""
    return (f"argument `{name}` of {fn.__name__} is a list: a kernel takes tuples, not lists "
            f"(pass tuple(...))")


def is_constant_member(m) -> bool:
    """Whether a member of a tuple argument is a constant of the kernel whatever its value
    (a constexpr, None, a @jit function or a dtype; an int equal to 1 is one too)."""
    return m is None or type(m) is core.constexpr or isinstance(m, (JITFunction, core.dtype))

