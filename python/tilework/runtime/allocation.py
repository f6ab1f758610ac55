"""`set_allocator`, as Triton's: the function a launch calls for the global scratch memory a
kernel asks for (`metadata["global_scratch_size"]` bytes per program, aligned to
`metadata["global_scratch_align"]`), passed as the kernel's last parameter.  No GPU library."""
from __future__ import annotations

_allocator = None

NO_ALLOCATOR = ("Kernel requires a runtime memory allocation, but no allocator was set. Use "
                "tilework.set_allocator to specify an allocator.")


def set_allocator(allocator):
    """Sets `allocator(size: int, alignment: int, stream) -> buffer` (the buffer has
    `data_ptr()`), called at each launch of a kernel that needs global scratch memory; None
    unsets it."""
    global _allocator
    if allocator is not None and not callable(allocator):
        raise TypeError(f"set_allocator expects a callable (size, alignment, stream) -> buffer, "
                        f"got {type(allocator).__name__}")
    _allocator = allocator


def get_allocator():
    return _allocator


def scratch_size(metadata: dict) -> int:
    """The global scratch bytes one program of the kernel needs (0: none)."""
    return int(metadata.get("global_scratch_size", 0) or 0)


def launch_scratch(metadata: dict):
    """`scratch(programs, stream) -> (buffer, address)`: one variant's global scratch of a
    launch of `programs` programs (the native launcher calls it per launch; the allocator is
    the one set at that time)."""
    size = scratch_size(metadata)
    align = int(metadata.get("global_scratch_align", 1) or 1)

    def scratch(programs, stream):
        if _allocator is None:
            raise RuntimeError(NO_ALLOCATOR)
        buf = _allocator(size * programs, align, stream)
        return buf, buf.data_ptr()
    return scratch


def global_scratch(metadata: dict, grid, stream):
    """(the buffer, its address) of a launch's global scratch: `grid` programs' worth, from the
    allocator; raises Triton's error when none is set."""
    size = scratch_size(metadata)
    if _allocator is None:
        raise RuntimeError(NO_ALLOCATOR)
    programs = grid[0] * grid[1] * grid[2]
    buf = _allocator(size * programs, int(metadata.get("global_scratch_align", 1) or 1),
                     stream)
    return buf, buf.data_ptr()
