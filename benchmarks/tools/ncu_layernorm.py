"""Runs tilework's and Triton's LayerNorm forward once each (after warm-up) for Nsight Compute:
    ncu --section SpeedOfLight --section Occupancy --section WarpStateStats \
        --kernel-name regex:layernorm --launch-skip 2 python benchmarks/tools/ncu_layernorm.py
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
sys.path.insert(0, os.path.join(HERE, ".."))
import triton_kernels as tk  # noqa: E402
from layernorm import layernorm_fwd  # noqa: E402

m, n = 8192, 4096
x = torch.randn(m, n, device="cuda", dtype=torch.float16)
w = torch.randn(n, device="cuda", dtype=torch.float16)
b = torch.randn(n, device="cuda", dtype=torch.float16)
y = torch.empty_like(x)
mean = torch.empty(m, device="cuda")
rstd = torch.empty(m, device="cuda")
rows, warps = int(os.environ.get("ROWS", 1)), int(os.environ.get("WARPS", 8))
for _ in range(3):
    layernorm_fwd[(m // rows,)](x, y, w, b, mean, rstd, n, m, n, 1e-5, BLOCK_N=n, ROWS=rows,
                                RMS=False, num_warps=warps)
for _ in range(3):
    tk.layer_norm(x, w, b)
torch.cuda.synchronize()
