"""Vector add: out = x + y, one BLOCK-sized tile per program, masked tail."""
import tilework
import tilework.language as tl


@tilework.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out=None, BLOCK_SIZE=1024):
    import torch
    out = torch.empty_like(x) if out is None else out
    n = x.numel()
    add_kernel[(triton_cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


def triton_cdiv(a, b):
    return (a + b - 1) // b
