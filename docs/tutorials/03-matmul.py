"""03 - Matrix multiplication.

`C = A @ B` with `tl.dot` on [BLOCK_M, BLOCK_K] x [BLOCK_K, BLOCK_N] tiles and an fp32
accumulator (examples/matmul.py).  What makes it fast:

* **tensor cores**: `tl.dot` lowers to mma.sync (sm_80) or wgmma (sm_90a), with operands
  staged through shared memory by a software pipeline (`num_stages`);
* **grouped ordering**: consecutive programs take C's tiles in groups of GROUP_M tile rows, so
  they share A's row panels and B's column panels in L2 (program id -> (pid_m, pid_n) below);
* **autotuning**: `@tilework.autotune(configs=..., key=["M", "N", "K"])` times each config on
  the first call for a shape and keeps the fastest; `@tilework.heuristics` sets EVEN_K (no
  masks when BLOCK_K divides K).

        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        ...
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=..., other=0.0)
            b = tl.load(b_ptrs, mask=..., other=0.0)
            acc = tl.dot(a, b, acc)

The benchmark reports fp16 TFLOP/s (2 M N K flops) for square sizes: tilework, Triton (the same
source and configs) and torch.matmul (cuBLAS).

    python docs/tutorials/03-matmul.py
"""
import sys

import common
import matmul  # examples/matmul.py
import torch


def check_cpu():
    common.interpret(matmul)
    a, b = torch.randn(40, 30), torch.randn(30, 50)
    # fp32 dots round their inputs to tf32, as on the GPU
    torch.testing.assert_close(matmul.matmul(a, b), a @ b, atol=2e-2, rtol=2e-2)
    a, b = torch.randn(33, 64).half(), torch.randn(64, 17).half()
    torch.testing.assert_close(matmul.matmul(a, b).float(), a.float() @ b.float(), atol=2e-2,
                               rtol=2e-2)


def check_gpu():
    for m, n, k in ((512, 512, 512), (1000, 777, 333)):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        torch.testing.assert_close(matmul.matmul(a, b), (a.float() @ b.float()).half(),
                                   atol=1e-1, rtol=1e-2)


def benchmark():
    tri = common.triton_module("matmul")
    sizes = [512, 1024, 2048, 4096, 8192]
    mats = {}

    def ab(n):
        if n not in mats:
            mats[n] = (torch.randn(n, n, device="cuda", dtype=torch.float16),
                       torch.randn(n, n, device="cuda", dtype=torch.float16))
        return mats[n]

    providers = {
        "tilework": lambda n: (lambda m=ab(n): matmul.matmul(*m)),
        "Triton": (lambda n: (lambda m=ab(n): tri.matmul(*m))) if tri else None,
        "torch (cuBLAS)": lambda n: (lambda m=ab(n): torch.matmul(*m)),
    }
    series = common.sweep(sizes, providers, lambda ms, n: 2 * n ** 3 / ms / 1e9)
    common.plot("03-matmul", "Matmul (fp16, M = N = K)", sizes, series, "M = N = K",
                "TFLOP/s")


if __name__ == "__main__":
    common.main(sys.modules[__name__])
