"""Shape builtins: adding, moving and merging dimensions."""
from .core import builtin

__all__ = ["expand_dims", "reshape", "view", "ravel", "trans", "permute", "broadcast"]
__all__ += ["join", "split", "interleave", "cat"]


@builtin
def expand_dims(input, axis):
    """`input` with a new dimension of size 1 at `axis` (an int or a tuple of ints)."""


@builtin
def reshape(input, *shape, can_reorder=False):
    """`input` with the same elements, in row-major order, as a tile of `shape`: one tuple
    (`tl.reshape(x, (4, 16))`) or the dimensions one by one (`x.reshape(4, 16)`), as Triton."""


@builtin
def view(input, *shape):
    """Like `reshape` (element order kept); `shape` as for `reshape`."""


@builtin
def ravel(x, can_reorder=False):
    """`x` flattened to one dimension, in row-major order (`can_reorder` is accepted, as in
    Triton; the order is kept)."""


@builtin
def trans(input, *dims):
    """`input` with its dimensions permuted (reversed when no `dims` are given, as Triton)."""


@builtin
def permute(input, *dims):
    """`input` with its dimensions permuted by `dims`."""


@builtin
def broadcast(input, other):
    """`input` and `other` broadcast to their common shape (a pair)."""


# ---- join/split/interleave/cat (frontend/ops_join.py, lowering/rules/shape_join.py) ----------

@builtin
def join(a, b):
    """`a` and `b` (broadcast to one shape) side by side in a new last dimension of size 2:
    shape `[..., 2]`; two scalars give a tile of shape `[2]`.  The inverse of `split`."""


@builtin
def split(a):
    """The two halves `(a[..., 0], a[..., 1])` of a tile whose last dimension is 2 (two scalars
    for a tile of shape `[2]`).  The inverse of `join`."""


@builtin
def interleave(a, b):
    """`a` and `b` interleaved along their last dimension: `join(a, b)` reshaped to
    `[..., 2 * a.shape[-1]]`."""


@builtin
def cat(input, other, can_reorder=False):
    """Two 1-D tiles end to end.  As in Triton, `can_reorder=True` is required (the compiler may
    then order the elements as it likes); here the order is always `input` then `other`."""
