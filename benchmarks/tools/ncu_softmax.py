"""Runs the long-row softmax (1024x32768 fp16) of tilework's example and of Triton once each
after warm-up, for Nsight Compute:
    ncu --section SpeedOfLight --section Occupancy --section WarpStateStats \\
        --section MemoryWorkloadAnalysis --kernel-name regex:softmax --launch-skip 3 \\
        --launch-count 2 python benchmarks/tools/ncu_softmax.py
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
sys.path.insert(0, os.path.join(HERE, ".."))
import triton_kernels as tk  # noqa: E402
from softmax import softmax  # noqa: E402

x = torch.randn(1024, 32768, device="cuda", dtype=torch.float16)
out = torch.empty_like(x)
for _ in range(3):
    softmax(x, out)
torch.cuda.synchronize()
softmax(x, out)
tk.softmax(x, out)
torch.cuda.synchronize()
