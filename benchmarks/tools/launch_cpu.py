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
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")

FAKE_CUDA = '''
class CUdevice_attribute:
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
class CUfunction_attribute:
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
def cuInit(flags): return (0,)
def cuCtxGetCurrent(): return (0, 0xC0)
def cuCtxGetDevice(): return (0, 0)
def cuDeviceGetAttribute(attr, dev): return (0, 9 if attr == 75 else 0)
def cuModuleLoadData(binary): return (0, "module")
def cuModuleGetFunction(mod, name): return (0, 0xF00)
def cuFuncSetAttribute(fn, attr, value): return (0,)
def cuGetErrorName(err): return (0, b"CUDA_ERROR_FAKE")
def cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra): return (0,)
'''


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


def child(d, M, N, K, cfg):
    sys.path.insert(0, d)
    sys.path.insert(0, HERE)
    import ctypes
    import tilework
    from quick_matmul import load_source
    from tilework.runtime import launcher, native_launch, tma
    from tilework.runtime.cuda import CudaRuntime
    from tilework.tools.tensor_descriptor import TensorDescriptor
    lib = ctypes.CDLL(os.environ["TILEWORK_LIBCUDA"])
    lib.fake_set_context(ctypes.c_void_p(0xC0))  # the context the fake cuda-python reports
    native_launch.pin_stream_source(lambda: 0, lambda dev: 0)

    class DType:
        is_floating_point, itemsize = True, 2

        def __str__(self):
            return "torch.float16"
    f16 = DType()

    class Tensor:
        __module__ = "torch.fake"  # the launcher's torch check
        is_cuda = True

        def __init__(self, p, shape):
            self.p, self.shape, self.dtype = p, shape, f16

        def data_ptr(self):
            return self.p

        def get_device(self):
            return 0

        def element_size(self):
            return 2

        def stride(self):
            return (self.shape[-1], 1)

    launcher._TORCH_TYPES.add(Tensor)
    rt = CudaRuntime()
    rt.target = lambda: "sm_90a"
    rt.stream = lambda: 0
    launcher._runtime = rt
    tma.encode = lambda p, fn=None: bytes(128)  # (no libcuda: the maps are memoized anyway)
    tilework.set_allocator(lambda size, align, stream: Tensor(0x9000000, (size,)))
    mod = load_source(kernel_sources(), "tilework", "launch_cpu")
    bm, bn, bk, w, s = cfg
    a, b, c = Tensor(0x1000000, (M, K)), Tensor(0x2000000, (K, N)), Tensor(0x3000000, (M, N))
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
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(2000):
                fn()
            best = min(best, (time.perf_counter() - t) / 2000 * 1e6)
        path = "native" if getattr(k, "native", None) is not None else "Python path"
        print(f"  {name:30s} {best:7.2f} us  ({path})")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    M, N, K = (int(x) for x in args[:3]) if args and args[0] != "child" else (4096,) * 3
    cfg = (128, 256, 64, 8, 3)
    if "--config" in sys.argv:
        tile, w, s = sys.argv[sys.argv.index("--config") + 1].split("/")
        cfg = tuple(int(x) for x in tile.split("x")) + (int(w), int(s))
    if os.environ.get("LAUNCH_CPU_CHILD"):
        return child(os.environ["LAUNCH_CPU_CHILD"], M, N, K, cfg)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "fake_cuda_driver.py"), "w") as f:
            f.write(FAKE_CUDA)
        lib = os.path.join(d, "libfakecuda.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", lib, os.path.join(
            ROOT, "test", "python", "native", "fake_libcuda.c")], check=True)
        for native in ("1", "0"):
            print(f"M N K {M} {N} {K}, config {cfg}, TILEWORK_NATIVE_TMA={native}:")
            env = dict(os.environ, LAUNCH_CPU_CHILD=d, TILEWORK_CUDA_DRIVER="fake_cuda_driver",
                       TILEWORK_LIBCUDA=lib, TILEWORK_NATIVE_TMA=native)
            subprocess.run([sys.executable] + sys.argv, env=env, check=True)


if __name__ == "__main__":
    main()
