"""Writes the PTX Triton makes for the vector add of benchmarks/vector_add.py (for comparing
with tilework's): python benchmarks/tools/triton_vector_add_ptx.py OUT.ptx"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from vector_add import triton_add  # noqa: E402

n = 2**28
x = torch.randn(n, device="cuda")
y, o = torch.randn_like(x), torch.empty_like(x)
k = triton_add()[(n // 1024,)](x, y, o, n, BLOCK_SIZE=1024)
with open(sys.argv[1], "w") as f:
    f.write(k.asm["ptx"])
