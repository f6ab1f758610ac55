"""09 - Persistent matmul with tensor descriptors (TMA).

Tutorial 03 launches one program per output tile; when the last wave of tiles only half fills
the GPU, half the multiprocessors idle, and every program pays its own prologue.  A
*persistent* kernel launches one program per multiprocessor and lets each walk tiles
`program_id, program_id + NUM_SMS, ...` (`tl.range` with a step), in the grouped order of 03:

    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_SMS):
        pid_m, pid_n = tile_position(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([ki * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))

The operands are *tensor descriptors*: a base, shape, strides and block shape.  On sm_90a a
`desc.load` is one TMA bulk copy into shared memory (cp.async.bulk.tensor, the hardware
clipping the blocks at the edges, so no masks), feeding wgmma.  `TensorDescriptor.from_tensor`
builds them on the host (`matmul_persistent`); `tl.make_tensor_descriptor` builds them in the
kernel (`matmul_persistent_device`).  The kernels are examples/persistent_matmul.py.  The
benchmark compares fp16 TFLOP/s with Triton (the same source), with tutorial 03's
one-program-per-tile kernel and with torch.matmul (cuBLAS).

    python docs/tutorials/09-persistent-matmul.py
"""
import sys

import common
import matmul  # examples/matmul.py
import persistent_matmul as pm  # examples/persistent_matmul.py
import torch

from tilework.tools.tensor_descriptor import TensorDescriptor


def check_cpu():
    common.interpret(pm)
    bm, bn, bk = 16, 16, 16
    for m, n, k in ((40, 24, 48), (16, 56, 40)):  # rows 16-byte aligned (TMA)
        a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
        c = torch.empty(m, n).half()
        pm.matmul_persistent[(3,)](TensorDescriptor.from_tensor(a, [bm, bk]),
                                   TensorDescriptor.from_tensor(b, [bk, bn]),
                                   TensorDescriptor.from_tensor(c, [bm, bn]), m, n, k,
                                   BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=2, NUM_SMS=3)
        torch.testing.assert_close(c.float(), a.float() @ b.float(), atol=2e-2, rtol=2e-2)


def check_gpu():
    for m, n, k in ((4096, 4096, 4096), (1000, 768, 1024)):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        want = (a.float() @ b.float()).half()
        torch.testing.assert_close(pm.matmul(a, b), want, atol=1e-1, rtol=1e-2)
        torch.testing.assert_close(pm.matmul(a, b, device_descriptors=True), want, atol=1e-1,
                                   rtol=1e-2)


def benchmark():
    tri = common.triton_module("persistent_matmul")
    sizes = [512, 1024, 2048, 4096, 8192]
    mats = {}

    def ab(n):
        if n not in mats:
            mats[n] = (torch.randn(n, n, device="cuda", dtype=torch.float16),
                       torch.randn(n, n, device="cuda", dtype=torch.float16))
        return mats[n]

    providers = {
        "tilework persistent": lambda n: (lambda m=ab(n): pm.matmul(*m)),
        "Triton persistent": (lambda n: (lambda m=ab(n): tri.matmul(*m))) if tri else None,
        "tilework per tile (03)": lambda n: (lambda m=ab(n): matmul.matmul(*m)),
        "torch (cuBLAS)": lambda n: (lambda m=ab(n): torch.matmul(*m)),
    }
    series = common.sweep(sizes, providers, lambda ms, n: 2 * n ** 3 / ms / 1e9)
    common.plot("09-persistent-matmul", "Persistent matmul (fp16, M = N = K)", sizes, series,
                "M = N = K", "TFLOP/s")


if __name__ == "__main__":
    common.main(sys.modules[__name__])
