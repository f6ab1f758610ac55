"""Descriptor matmul the way Triton's tutorials write it (host `TensorDescriptor` arguments,
`desc.load` in the K loop, `desc.store` of the tile, grouped ordering), one source run by
tilework (TMA loads, `tilegpu-pipeline-tma`; and with `tma=False`, the block-pointer path) and
by Triton, against cuBLAS (torch.matmul); CUDA-event medians, fp16 and bf16.

    python benchmarks/tma_matmul.py [M N K] [--dtype fp16|bf16|both] [--tma-store on|off|both]
        [--configs BMxBNxBK/warps/stages ...]

`--tma-store` chooses tilework's epilogue: `on` stores C by TMA (`tma_store=True`: the tile
written to shared memory, one `cp.async.bulk.tensor` store), `off` by the block-pointer store
(the default until the TMA store has run on a GPU), `both` runs each.

Also the device-descriptor variant (`tl.make_tensor_descriptor` in the kernel; tilework's
maps written in global scratch on sm_90a) under tilework and Triton: rows `tilework device`,
`triton device`.

Each row: TFLOP/s, the first call's time (compile included) and the max error against
cuBLAS's result.  Needs an sm_90 GPU (TMA).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from quick_matmul import GROUPED_PIDS, bench, load_source, measure  # noqa: E402

SRC = '''
@jit
def matmul_tma(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, GROUP_M: tl.constexpr):
''' + GROUPED_PIDS + '''    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))
'''

# the same matmul with its descriptors made in the kernel (Triton tutorial 09's device
# variant): on sm_90a tilework writes each program's tensor maps in global scratch
# (`set_allocator`) and loads through them as the host variant does; C's store is the
# block-pointer store (tilework keeps device-descriptor stores on the pointer path)
SRC_DEVICE = '''
@jit
def matmul_dev(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, GROUP_M: tl.constexpr):
''' + GROUPED_PIDS + '''    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1],
                                       block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))
'''

CONFIGS = [(128, 128, 64, 4, 3), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3),
           (128, 128, 64, 4, 4), (64, 128, 64, 4, 4)]
DTYPES = {"fp16": "float16", "bf16": "bfloat16"}  # (torch dtype names)


def descriptor_class(which):
    if which == "triton":
        from triton.tools.tensor_descriptor import TensorDescriptor
    else:
        from tilework.tools.tensor_descriptor import TensorDescriptor
    return TensorDescriptor


def set_allocators():
    """The global scratch the device variants' tensor maps live in: a torch buffer per
    launch, for tilework and for Triton."""
    def alloc(size, alignment, stream):
        return torch.empty(size, device="cuda", dtype=torch.int8)
    import tilework
    tilework.set_allocator(alloc)
    try:
        import triton
        triton.set_allocator(alloc)
    except ImportError:
        pass


def parse_configs(argv):
    out = []
    for a in argv:
        tile, w, s = a.split("/")
        bm, bn, bk = (int(x) for x in tile.split("x"))
        out.append((bm, bn, bk, int(w), int(s)))
    return out


def main():
    argv = sys.argv[1:]
    dt_names = ["fp16", "bf16"]
    if "--dtype" in argv:
        i = argv.index("--dtype")
        v = argv[i + 1]
        dt_names = ["fp16", "bf16"] if v == "both" else [v]
        del argv[i:i + 2]
    stores = ["off"]
    if "--tma-store" in argv:
        i = argv.index("--tma-store")
        v = argv[i + 1]
        stores = ["on", "off"] if v == "both" else [v]
        del argv[i:i + 2]
    configs = CONFIGS
    if "--configs" in argv:
        i = argv.index("--configs")
        configs = parse_configs(argv[i + 1:])
        del argv[i:]
    M, N, K = (int(x) for x in argv[:3]) if argv else (4096, 4096, 4096)
    flop = 2 * M * N * K
    kernels, device = {}, {}
    for which in ("tilework", "triton"):
        try:
            kernels[which] = load_source(SRC, which, "tma_matmul").matmul_tma
            device[which] = load_source(SRC_DEVICE, which, "tma_matmul_dev").matmul_dev
        except ImportError as e:
            print(f"({which} unavailable: {e})")
    set_allocators()
    print(f"{torch.cuda.get_device_name()}  descriptor matmul {M}x{N}x{K}")
    for dn in dt_names:
        dt = getattr(torch, DTYPES[dn])
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda", dtype=dt)
        b = torch.randn(K, N, device="cuda", dtype=dt)
        ref = a @ b
        t = bench(lambda: torch.matmul(a, b))
        print(f" {dn}  cuBLAS {flop / t / 1e9:8.1f} TFLOP/s")
        for bm, bn, bk, w, s in configs:
            row = []
            runs = [(f"tilework{' tma_store' if st == 'on' else ''}", kernels.get("tilework"),
                     {"tma_store": st == "on"}) for st in stores]
            runs += [("tilework tma=False", kernels.get("tilework"), {"tma": False}),
                     ("triton", kernels.get("triton"), {})]
            runs += [("tilework device", device.get("tilework"), {}),
                     ("triton device", device.get("triton"), {})]
            for name, k, extra in runs:
                if k is None:
                    continue
                grid = (((M + bm - 1) // bm) * ((N + bn - 1) // bn),)
                c = torch.empty(M, N, device="cuda", dtype=dt)
                if name.endswith("device"):  # descriptors made in the kernel
                    def run(k=k, c=c, extra=extra):
                        k[grid](a, b, c, M, N, K, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                                num_warps=w, num_stages=s, **extra)
                else:
                    TD = descriptor_class("triton" if name == "triton" else "tilework")
                    ad, bd = TD.from_tensor(a, [bm, bk]), TD.from_tensor(b, [bk, bn])
                    cd = TD.from_tensor(c, [bm, bn])

                    def run(k=k, ad=ad, bd=bd, cd=cd, extra=extra):
                        k[grid](ad, bd, cd, M, N, K, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                                num_warps=w, num_stages=s, **extra)
                try:
                    tflops, ct, err, ok = measure(run, c, ref, flop,
                                                  0.5 if dt == torch.float16 else 2.0)
                    row.append(f"{name} {tflops:7.1f} (first {ct:5.2f} s, err "
                               f"{err:.3f}{'' if ok else ' WRONG'})")
                except Exception as e:  # report and go on
                    row.append(f"{name} failed: {type(e).__name__}: {str(e)[:160]}")
            print(f"  {bm}x{bn}x{bk} w{w} s{s}: " + " | ".join(row))


if __name__ == "__main__":
    main()
