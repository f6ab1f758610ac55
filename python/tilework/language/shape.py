"""Shape builtins: adding, moving and merging dimensions."""
from .core import builtin

__all__ = ["expand_dims", "reshape", "view", "ravel", "trans", "permute", "broadcast"]


@builtin
def expand_dims(input, axis):
    """`input` with a new dimension of size 1 at `axis` (an int or a tuple of ints)."""


@builtin
def reshape(input, shape, can_reorder=False):
    """`input` with the same elements, in row-major order, as a tile of `shape`."""


@builtin
def view(input, shape):
    """Like `reshape` (element order kept)."""


@builtin
def ravel(input):
    """`input` flattened to one dimension, in row-major order."""


@builtin
def trans(input, *dims):
    """`input` with its dimensions permuted (reversed when no `dims` are given, as Triton)."""


@builtin
def permute(input, *dims):
    """`input` with its dimensions permuted by `dims`."""


@builtin
def broadcast(input, other):
    """`input` and `other` broadcast to their common shape (a pair)."""
