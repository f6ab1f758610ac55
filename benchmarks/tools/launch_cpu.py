"""Host-side cost of one launch of tma_matmul.py's kernels (µs, best of 5 x 2,000 launches)
with no GPU: the runtime over fake drivers (a Python cuda-python stand-in for loading, the
test suite's fake libcuda for the native path), kernels compiled for sm_90a, fake tensors.
What `quick_matmul.bench` adds to each figure, since it times one launch at a time.

    python benchmarks/tools/launch_cpu.py [M N K] [--config BMxBNxBK/warps/stages]

Rows: the host-descriptor kernel (TMA tensor maps), with `tma=False` (no maps), the
device-descriptor one (global scratch from the allocator); each natively and by the Python
path (`TILEWORK_NATIVE_TMA=0`: the kernels with maps or scratch on the Python path).
"""
import ast
import os
import subprocess
import sys

from cpu_fakes import FakeTensor, best_time, fake_driver, in_child, install_fake_gpu

HERE = os.path.dirname(os.path.abspath(__file__))


def kernel_sources():
    """tma_matmul.py's SRC and SRC_DEVICE (read from its AST: it imports torch)."""
    sys.path.insert(0, HERE)
    from quick_matmul import GROUPED_PIDS
    tree = ast.parse(open(os.path.join(HERE, "..", "tma_matmul.py")).read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in (
                "SRC", "SRC_DEVICE"):
            out[node.targets[0].id] = eval(compile(ast.Expression(node.value), "tma_matmul",
                                                   "eval"), {"GROUPED_PIDS": GROUPED_PIDS})
    return out["SRC"] + out["SRC_DEVICE"]


def child(M, N, K, cfg):
    sys.path.insert(0, HERE)
    import tilework
    from quick_matmul import load_source
    from tilework.tools.tensor_descriptor import TensorDescriptor
    install_fake_gpu()
    mod = load_source(kernel_sources(), "tilework", "launch_cpu")
    bm, bn, bk, w, s = cfg
    a, b, c = (FakeTensor(p, shape) for p, shape in ((0x1000000, (M, K)), (0x2000000, (K, N)),
                                                     (0x3000000, (M, N))))
    ad, bd, cd = (TensorDescriptor.from_tensor(t, blk)
                  for t, blk in ((a, [bm, bk]), (b, [bk, bn]), (c, [bm, bn])))
    grid = (((M + bm - 1) // bm) * ((N + bn - 1) // bn),)
    kw = dict(BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=w, num_stages=s)
    cases = {"host descriptors": lambda: mod.matmul_tma[grid](ad, bd, cd, M, N, K, **kw),
             "host descriptors, tma=False":
                 lambda: mod.matmul_tma[grid](ad, bd, cd, M, N, K, tma=False, **kw),
             "device descriptors": lambda: mod.matmul_dev[grid](a, b, c, M, N, K, **kw)}
    for name, fn in cases.items():
        fn()
        k = fn()
        best = best_time(fn, 2000)
        path = "native" if getattr(k, "native", None) is not None else "Python path"
        print(f"  {name:30s} {best:7.2f} us  ({path})")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    M, N, K = (int(x) for x in args[:3]) if args else (4096,) * 3
    cfg = (128, 256, 64, 8, 3)
    if "--config" in sys.argv:
        tile, w, s = sys.argv[sys.argv.index("--config") + 1].split("/")
        cfg = tuple(int(x) for x in tile.split("x")) + (int(w), int(s))
    if in_child():
        return child(M, N, K, cfg)
    with fake_driver() as env:
        for native in ("1", "0"):
            print(f"M N K {M} {N} {K}, config {cfg}, TILEWORK_NATIVE_TMA={native}:", flush=True)
            subprocess.run([sys.executable] + sys.argv, env=dict(env, TILEWORK_NATIVE_TMA=native),
                           check=True)


if __name__ == "__main__":
    main()
