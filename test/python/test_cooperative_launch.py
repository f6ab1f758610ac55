"""`launch_cooperative_grid=` (Triton 3.6's launch option: a cooperative launch, every program
resident at once): a compile option (in the key and the metadata, the code unchanged), taken
by `@jit` launches, autotune configs and the interpreter (no effect there); launched through
cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE by the native path (the fake libcuda
records it) and the Python path (a fake cuda-python); a grid larger than the device holds at
once is refused, naming the numbers.  The GPU test: test_cooperative_launch_gpu.py."""
import types

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.language.function import LAUNCH_OPTIONS
from tilework.runtime import hip, launcher, native_launch
from tilework.runtime.cuda import CudaError, CudaRuntime, LoadedKernel

from native_fakes import fake_native

F32 = tl.pointer_type(tl.float32)
I32 = tl.pointer_type(tl.int32)


@tilework.jit
def grid_sync_shift(x_ptr, y_ptr, count_ptr, BLOCK: tl.constexpr):
    """Each program writes its block of x, waits for every program (a grid barrier on a
    counter: only sound when all programs are resident, i.e. launched cooperatively), then
    reads the next program's block: y[p] = x[p + 1 (mod n)]."""
    pid = tl.program_id(0)
    n = tl.num_programs(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs * 3 + 1)
    tl.debug_barrier()
    tl.atomic_add(count_ptr, 1, sem="release", scope="gpu")
    while tl.atomic_add(count_ptr, 0, sem="acquire", scope="gpu") < n:
        pass
    tl.debug_barrier()
    nxt = ((pid + 1) % n) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + nxt, cache_modifier=".cg"))


@tilework.jit
def scale(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


def _scale_src():
    return ASTSource(scale, {"x_ptr": F32, "y_ptr": F32, "n": tl.int32, "s": tl.float32},
                     {"BLOCK": 128}, {})


# ---- the option ---------------------------------------------------------------------------

def test_the_option_is_keyed_and_in_the_metadata_only(tmp_path):
    assert "launch_cooperative_grid" in LAUNCH_OPTIONS
    assert CompileOptions().launch_cooperative_grid is False
    assert CompileOptions().key() != CompileOptions(launch_cooperative_grid=True).key()
    plain = compile(_scale_src(), "sm_90a", CompileOptions(), cache=False)
    coop = compile(_scale_src(), "sm_90a", CompileOptions(launch_cooperative_grid=True),
                   cache=False)
    assert plain.metadata["launch_cooperative_grid"] is False
    assert coop.metadata["launch_cooperative_grid"] is True
    assert plain.asm["ptx"] == coop.asm["ptx"]  # a launch attribute: the same code
    from tilework.compiler.cache import FileCache
    fc = FileCache(str(tmp_path / "c"))
    a = compile(_scale_src(), "sm_90a", CompileOptions(), cache=fc)
    b = compile(_scale_src(), "sm_90a", CompileOptions(launch_cooperative_grid=True), cache=fc)
    again = compile(_scale_src(), "sm_90a", CompileOptions(launch_cooperative_grid=True),
                    cache=fc)
    assert a.key != b.key and again.key == b.key
    assert again.metadata["launch_cooperative_grid"] is True


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_the_option_must_be_a_bool(bad):
    with pytest.raises(ValueError, match="launch_cooperative_grid must be a bool, got"):
        CompileOptions(launch_cooperative_grid=bad)


def test_warmup_and_autotune_configs_take_it():
    x = np.zeros(4, np.float32)
    ck = scale.warmup("*fp32:16", "*fp32:16", 300, 2.0, BLOCK=128, target="sm_90a",
                      launch_cooperative_grid=True)
    assert ck.metadata["launch_cooperative_grid"] is True
    # a Config's kwargs and a launch's keyword reach the launch options (as in Triton: the
    # autotuner passes them on as launch keywords)
    cfg = tilework.Config({"BLOCK": 128, "launch_cooperative_grid": True}, num_warps=2)
    values, opts = launcher.bind(scale, (x, x, 4, 2.0), cfg.all_kwargs())
    assert dict(zip(LAUNCH_OPTIONS, opts))["launch_cooperative_grid"] is True
    options = CompileOptions.from_env(**{n: v for n, v in zip(LAUNCH_OPTIONS, opts)
                                         if v is not None})
    assert options.launch_cooperative_grid is True and options.num_warps == 2


# ---- the interpreter: accepted, no effect ---------------------------------------------------

def _interp(fn):
    return tilework.jit(fn.fn, interpret=True)


@pytest.mark.parametrize("coop", [True, False])
def test_interpreter_accepts_it(coop):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(300).astype(np.float32)
    y = np.zeros_like(x)
    _interp(scale)[(3,)](x, y, 300, 1.5, BLOCK=128, launch_cooperative_grid=coop)
    np.testing.assert_array_equal(y, x * np.float32(1.5))


def test_interpreter_under_autotune():
    @tilework.autotune(configs=[tilework.Config({"BLOCK": 64, "launch_cooperative_grid": True}),
                                tilework.Config({"BLOCK": 128})], key=["n"])
    @tilework.jit(interpret=True)
    def k(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(256).astype(np.float32)
    y = np.zeros_like(x)
    k[lambda meta: (triton_cdiv(256, meta["BLOCK"]),)](x, y, 256, 3.0)
    np.testing.assert_array_equal(y, x * np.float32(3.0))


def triton_cdiv(a, b):
    return -(-a // b)


def test_triton_load_scope_sem_coop_grid_cta_one_form():
    """Triton's test_load_scope_sem_coop_grid_cta_one: the same launches, both values."""
    @tilework.jit(interpret=True)
    def kernel_r(ptrs, BLOCK_SIZE: tl.constexpr):
        numel = 512
        offset = tl.program_id(0) * BLOCK_SIZE
        index = offset
        mask = index < numel
        a = tl.load(ptrs, mask=mask)
        tl.store(ptrs, a)
    data = np.random.default_rng(2).standard_normal(128).astype(np.float32)
    keep = data.copy()
    kernel_r[(2,)](data, BLOCK_SIZE=128, num_ctas=1, launch_cooperative_grid=True)
    kernel_r[(2,)](data, BLOCK_SIZE=128, num_ctas=1, launch_cooperative_grid=False)
    np.testing.assert_array_equal(data, keep)


# ---- the grid barrier, compiled (the emulator runs programs one after another: one) ---------

def test_grid_barrier_kernel_compiles_to_acquire_release_atomics():
    ck = grid_sync_shift.warmup("*i32:16", "*i32:16", "*i32:16", BLOCK=128, target="sm_90a",
                                launch_cooperative_grid=True)
    ptx = ck.asm["ptx"]
    # thread 0 arrives (release) and spins (acquire), the program waits on it at bar.sync
    assert "red.global.gpu.release.add.u32" in ptx
    assert "atom.global.gpu.acquire.add.u32" in ptx and ptx.count("bar.sync") >= 3
    assert ck.metadata["launch_cooperative_grid"] is True


def test_grid_barrier_kernel_emulated_one_program():
    import gpu_sim
    ck = grid_sync_shift.warmup("*i32:16", "*i32:16", "*i32:16", BLOCK=128, target="sm_90a",
                                launch_cooperative_grid=True)
    x = np.zeros(128, np.int32)
    y = np.zeros(128, np.int32)
    count = np.zeros(1, np.int32)
    gpu_sim.run(ck, (1, 1, 1), x, y, count)
    np.testing.assert_array_equal(x, np.arange(128) * 3 + 1)
    np.testing.assert_array_equal(y, x)
    assert count[0] == 1  # a scalar atomic: once per program


# ---- the launch: native path and Python path over fakes -----------------------------------

@pytest.fixture(scope="module")
def native(tmp_path_factory):
    with fake_native(tmp_path_factory, "coop", "fake_libcuda.c", "libfakecuda.so",
                     "TILEWORK_LIBCUDA", lambda: native_launch.cuda_driver(CudaError),
                     native_launch.driver_path, 0x5000) as ns:
        yield ns


class _Tensor:
    """Takes the torch path (registered below)."""
    __module__ = "torch.fake"
    is_cuda = True
    dtype = "torch.float32"

    def __init__(self, p):
        self.p = p

    def data_ptr(self):
        return self.p

    def get_device(self):
        return 0


@pytest.fixture
def fake_tensors():
    launcher._TORCH_TYPES.add(_Tensor)
    yield
    launcher._TORCH_TYPES.discard(_Tensor)


class _FakeCu:
    """cuda-python's surface the runtime's load and launch use; records the launches and the
    occupancy asked (4 programs a multiprocessor, 3 multiprocessors)."""
    PER_SM, SMS = 4, 3

    class CUdevice_attribute:
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    class CUlaunchAttributeID:
        CU_LAUNCH_ATTRIBUTE_COOPERATIVE = "COOPERATIVE"

    def __init__(self):
        self.launches, self.occupancy = [], []

    def CUlaunchAttribute(self):
        return types.SimpleNamespace(id=None, value=types.SimpleNamespace(cooperative=0))

    def CUlaunchConfig(self):
        return types.SimpleNamespace()

    def CUstream(self, s):
        return ("stream", s)

    def cuModuleLoadData(self, binary):
        return 0, "module"

    def cuModuleGetFunction(self, mod, name):
        return 0, 0x4000

    def cuCtxGetDevice(self):
        return 0, 0

    def cuCtxGetCurrent(self):
        return 0, 0

    def cuFuncSetAttribute(self, *a):
        return (0,)

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, fn, block, shared):
        self.occupancy.append((fn, block, shared))
        return 0, self.PER_SM

    def cuDeviceGetAttribute(self, attr, dev):
        assert attr == 16
        return 0, self.SMS

    def cuLaunchKernel(self, *a):
        self.launches.append(("plain", a))
        return (0,)

    def cuLaunchKernelEx(self, cfg, fn, params, extra):
        self.launches.append(("ex", cfg, fn, params, extra))
        return (0,)

    def cuGetErrorName(self, err):
        return 0, b"CUDA_ERROR_FAKE"


def _runtime(cu):
    rt = object.__new__(CudaRuntime)
    rt.cu = cu
    rt._targets, rt._ctx_targets = {}, {}
    rt.ensure_context = lambda: None
    rt.stream = lambda: 0x77
    return rt


def _too_large(programs):
    return (rf"scale: launch_cooperative_grid needs every program of the grid resident at "
            rf"once; this device holds at most 12 \(4 a multiprocessor x 3 multiprocessors, "
            rf"at 128 threads and 0 bytes of shared memory a program\), the grid has "
            rf"{programs}: launch at most 12 programs")


def test_python_path_launches_cooperatively():
    cu = _FakeCu()
    rt = _runtime(cu)
    coop = rt.load(scale.warmup("*fp32:16", "*fp32:16", 300, 2.0, BLOCK=128, target="sm_90a",
                                launch_cooperative_grid=True))
    assert coop.cooperative == (12, 4, 3) and cu.occupancy == [(0x4000, 128, 0)]
    rt.launch(coop, (6, 2, 1), [0x1000, 0x2000, 300, 2.0])
    kind, cfg, fn, params, extra = cu.launches[-1]
    assert (kind, fn, params, extra) == ("ex", 0x4000, coop.params_address, 0)
    assert (cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ, cfg.blockDimX, cfg.blockDimY,
            cfg.blockDimZ, cfg.sharedMemBytes, cfg.hStream, cfg.numAttrs) == \
        (6, 2, 1, 128, 1, 1, 0, ("stream", 0x77), 1)
    (attr,) = cfg.attrs
    assert attr.id == "COOPERATIVE" and attr.value.cooperative == 1
    # one program too many: refused before the driver is called
    n = len(cu.launches)
    with pytest.raises(ValueError, match=_too_large(13)):
        rt.launch(coop, (13, 1, 1), [0x1000, 0x2000, 300, 2.0])
    with pytest.raises(ValueError, match=_too_large(14)):
        rt.launch(coop, (7, 2, 1), [0x1000, 0x2000, 300, 2.0])
    assert len(cu.launches) == n
    # without the option: cuLaunchKernel, no occupancy asked
    plain = rt.load(scale.warmup("*fp32:16", "*fp32:16", 300, 2.0, BLOCK=128,
                                 target="sm_90a"))
    assert plain.cooperative is None and len(cu.occupancy) == 1
    rt.launch(plain, (100, 1, 1), [0x1000, 0x2000, 300, 2.0])
    assert cu.launches[-1][0] == "plain" and cu.launches[-1][1][:4] == (0x4000, 100, 1, 1)


def _record(lib):
    r = lib.fake_record()
    return [r[i] for i in range(15)]


def _install(native, rt, args, kwargs):
    """The variant of these arguments loaded by `rt` (its native handle on the fake driver)
    in scale's cache; scale's native launcher set."""
    ck = scale.warmup(*["*fp32:16" if type(a) is _Tensor else a for a in args],
                      target="sm_90a", **kwargs)
    k = rt.load(ck)
    values, opts = launcher.bind(scale, args, kwargs)
    scale.cache[launcher.variant_key(scale, values, opts)] = k
    scale._native_launch = launcher.native_signature(scale)
    return k


def test_native_path_launches_cooperatively(native, fake_tensors):
    rt = _runtime(_FakeCu())
    x, y = _Tensor(0x10000), _Tensor(0x20000)
    scale.cache.clear()
    try:
        coop = _install(native, rt, (x, y, 300, 2.0), {"BLOCK": 128,
                                                       "launch_cooperative_grid": True})
        plain = _install(native, rt, (x, y, 300, 2.0), {"BLOCK": 128})
        assert coop.native.cooperative == 12 and plain.native.cooperative == 0
        native.lib.fake_set_nparams(len(coop.kinds))
        before = _record(native.lib)[9]
        assert scale[(3,)](x, y, 300, 2.0, BLOCK=128, launch_cooperative_grid=True) is coop
        r = _record(native.lib)
        assert r[:10] == [0x4000, 3, 1, 1, 128, 1, 1, 0, 0x5000, before + 1]
        assert r[11:15] == [1, 2, 1, 1]  # one attribute: COOPERATIVE (2) = 1, cuLaunchKernelEx
        # the same arguments without the option: the plain variant, cuLaunchKernel
        assert scale[(3,)](x, y, 300, 2.0, BLOCK=128) is plain
        r = _record(native.lib)
        assert r[9] == before + 2 and r[11:15] == [0, 0, 0, 0]
        # too large: refused with the Python path's message, nothing launched
        with pytest.raises(ValueError, match=_too_large(26)):
            scale[(13, 2)](x, y, 300, 2.0, BLOCK=128, launch_cooperative_grid=True)
        assert _record(native.lib)[9] == before + 2
        scale[(12,)](x, y, 300, 2.0, BLOCK=128, launch_cooperative_grid=True)  # at the limit
        assert _record(native.lib)[9] == before + 3
    finally:
        scale.cache.clear()
        scale._native_launch = None


def test_native_kernel_rejects_bad_cooperative_handles(native):
    with pytest.raises(ValueError, match="a cooperative launch needs refuse"):
        native.mod.Kernel(0x1000, 128, 0, "pi", "k", 0, cooperative=4)
    with pytest.raises(ValueError, match="a cooperative launch is CUDA's here"):
        native.mod.Kernel(0x1000, 128, 0, "pi", "k", 0, hip=True, cooperative=4,
                          refuse=lambda g: None)
    # a refuse that returns: still refused
    k = native.mod.Kernel(0x1000, 128, 0, "pi", "k", 0, cooperative=4, refuse=lambda g: None)
    with pytest.raises(ValueError, match="k: a cooperative grid of 6 programs, at most 4"):
        k.launch(3, 2, 1, 0, [0x1000, 5])


def test_hip_runtime_refuses_it():
    rt = object.__new__(hip.HipRuntime)
    rt.hip = types.SimpleNamespace(hipModuleLoadData=lambda b: (0, "m"),
                                   hipModuleGetFunction=lambda m, n: (0, 0x10),
                                   hipGetDevice=lambda: (0, 0))
    ck = scale.warmup("*fp32:16", "*fp32:16", 300, 2.0, BLOCK=128, target="gfx942",
                      launch_cooperative_grid=True)
    with pytest.raises(hip.HipError, match="scale: launch_cooperative_grid is not supported "
                                           "by tilework's HIP runtime yet"):
        rt.load(ck)


def test_cooperative_kernel_python_path_wraps_loaded_kernel():
    """LoadedKernel built directly (bundles, tests) is a plain launch."""
    k = LoadedKernel(types.SimpleNamespace(asm={}, name="k", metadata={"signature": {}}),
                     None, None, 128, 0)
    assert k.cooperative is None


_MAIN = r"""
#include <stdio.h>
#include "add_kernel_sm_90a.h"
const uint64_t *fake_record(void);
void fake_set_nparams(int n);
int main(void) {
    fake_set_nparams(5);
    CUresult r = add_kernel_sm_90a((CUstream)0x77, 3, 2, 1, 0x1000, 0x2000, 0x3000, 7, 2.5f);
    const uint64_t *rec = fake_record();
    printf("%d %llu %llu %llu %llu %llu\n", r, (unsigned long long)rec[1],
           (unsigned long long)rec[2], (unsigned long long)rec[3], (unsigned long long)rec[4],
           (unsigned long long)rec[14]);
    return 0;
}
"""


@pytest.mark.parametrize("coop", [True, False])
def test_the_bundles_c_launcher_launches_cooperatively(tmp_path, coop):
    """A bundle's generated C launcher (bundle_c.py) of a cooperative kernel calls
    cuLaunchCooperativeKernel (the fake records 2), of a plain one cuLaunchKernel (0)."""
    import os
    import shutil
    import subprocess
    from tilework.runtime import bundle_c
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    entry = {"name": "add_kernel", "target": "sm_90a",
             "metadata": {"num_warps": 4, "warp_size": 32, "shared": 0,
                          "launch_cooperative_grid": coop},
             "params": [["x_ptr", "p"], ["y_ptr", "p"], ["out_ptr", "p"], ["n", "i"],
                        ["s", "f"]]}
    for name, text in bundle_c.sources(entry, bytes(range(16))).items():
        (tmp_path / name).write_text(text)
    (tmp_path / "main.c").write_text(_MAIN)
    here = os.path.dirname(os.path.abspath(__file__))
    fake = tmp_path / "libfakecuda.so"
    subprocess.run([cc, "-shared", "-fPIC", os.path.join(here, "native", "fake_libcuda.c"),
                    "-o", str(fake)], check=True)
    exe = tmp_path / "main"
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{tmp_path}",
                    str(tmp_path / "main.c"), str(tmp_path / "add_kernel_sm_90a.c"), str(fake),
                    "-o", str(exe),
                    f"-Wl,-rpath,{tmp_path}"], check=True)
    env = dict(os.environ, LD_PRELOAD=f"{fake} {os.environ.get('LD_PRELOAD', '')}".strip())
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["0", "3", "2", "1", "128", "2" if coop else "0"]
