import torch, triton, triton.language as tl, sys
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
n = 2**28
x = torch.randn(n, device="cuda"); y = torch.randn_like(x); o = torch.empty_like(x)
k = add_kernel[(n // 1024,)](x, y, o, n, BLOCK_SIZE=1024)
open(sys.argv[1], "w").write(k.asm["ptx"])
