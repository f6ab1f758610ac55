"""NVIDIA runtime through `cuda.bindings.driver`: loads cubins (or PTX, JIT-compiled by the
driver) into the current context and launches on the current stream, so kernels share
PyTorch's context and stream."""
from __future__ import annotations

import ctypes
import sys

from . import native_launch
from .gpu_errors import CudaError  # noqa: F401  (raised here; imported from here too)
from .allocation import launch_scratch, scratch_size
from .tma import launch_maps
from .abi import ctypes_of, encode_values, needs_encoding, param_kinds


_INVALID_CONTEXT = 201  # CUDA_ERROR_INVALID_CONTEXT


class LoadedKernel:
    __slots__ = ("compiled", "module", "function", "block", "shared", "asm", "metadata", "name",
                 "kinds", "slots", "params_address", "_keep", "encode", "native", "device",
                 "on_devices", "cooperative")

    def __init__(self, compiled, module, function, block, shared):
        self.compiled = compiled
        self.module = module
        self.function = function
        self.block = block
        self.shared = shared
        self.asm = compiled.asm
        self.metadata = compiled.metadata
        self.name = compiled.name
        # Launch parameters go through storage allocated once per kernel: the driver copies
        # them at launch, so it is reused (no ctypes arrays built per launch).
        self.kinds = param_kinds(compiled.metadata)
        self.slots = [t() for t in ctypes_of(self.kinds)]
        self.encode = needs_encoding(self.kinds)  # fp16/bf16 parameters go as their bits
        array = (ctypes.c_void_p * max(1, len(self.slots)))(
            *[ctypes.addressof(s) for s in self.slots])
        self.params_address = ctypes.addressof(array)
        self._keep = array
        self.native = None  # the native launcher's handle (native_launch), when there is one
        self.device = None  # the device ordinal it is loaded on (None: not tracked)
        self.on_devices = {}  # device ordinal -> this kernel loaded on that device
        # launch_cooperative_grid: (programs resident at once, per multiprocessor, the
        # multiprocessors), which the launch checks the grid against; None: a plain launch
        self.cooperative = None

    def fill(self, values):
        """Stores one launch's parameter values into the slots."""
        if self.encode:
            values = encode_values(self.kinds, values)
        for s, v in zip(self.slots, values):
            s.value = v

    def slot_bytes(self) -> bytes:
        """The slots' bytes, each padded to 8 (what the native path's `pack` gives)."""
        return b"".join(ctypes.string_at(ctypes.addressof(s), ctypes.sizeof(s)).ljust(8, b"\0")
                        for s in self.slots)


    @property
    def n_regs(self) -> int:
        """Registers per thread (Triton's `kernel.n_regs`): ptxas's report, else the
        driver's."""
        n = self.compiled.n_regs
        return n if n is not None else self._attribute("NUM_REGS")

    @property
    def n_spills(self) -> int:
        """Spilled 4-byte words per thread (Triton's `kernel.n_spills`)."""
        n = self.compiled.n_spills
        return n if n is not None else self._attribute("LOCAL_SIZE_BYTES") // 4

    def check_coresident(self, grid) -> None:
        """Refuses a cooperative launch whose programs cannot all be resident at once (the
        driver would fail it with COOPERATIVE_LAUNCH_TOO_LARGE; this names the numbers)."""
        limit, per_sm, sms = self.cooperative
        programs = grid[0] * grid[1] * grid[2]
        if programs > limit:
            raise ValueError(
                f"{self.name}: launch_cooperative_grid needs every program of the grid "
                f"resident at once; this device holds at most {limit} ({per_sm} a "
                f"multiprocessor x {sms} multiprocessors, at {self.block} threads and "
                f"{self.shared} bytes of shared memory a program), the grid has {programs}: "
                f"launch at most {limit} programs")

    def _attribute(self, name) -> int:
        cu = driver_module()
        err, v = cu.cuFuncGetAttribute(getattr(cu.CUfunction_attribute,
                                               f"CU_FUNC_ATTRIBUTE_{name}"), self.function)
        return int(v) if int(err) == 0 else 0


def driver_module():
    """cuda-python's `cuda.bindings.driver`, or the module TILEWORK_CUDA_DRIVER names (tests
    inject a fake driver so, ahead of any installed cuda-python)."""
    import importlib
    import os
    return importlib.import_module(os.environ.get("TILEWORK_CUDA_DRIVER") or
                                   "cuda.bindings.driver")


class CudaRuntime:
    def __init__(self):
        try:
            cu = driver_module()
        except ImportError as e:
            raise RuntimeError("the NVIDIA runtime needs cuda-python: pip install "
                               "'tilework[cuda]'") from e
        self.cu = cu
        self._targets = {}  # device ordinal -> "sm_XY"
        self._ctx_targets = {}  # context handle (native_launch.current_context) -> "sm_XY"
        self._check(cu.cuInit(0), "cuInit")
        self.ensure_context()

    def _check(self, res, what):
        err = res[0] if isinstance(res, tuple) else res
        if int(err) != 0:
            _, name = self.cu.cuGetErrorName(err)
            raise CudaError(f"{what} failed: {name.decode() if isinstance(name, bytes) else name}")
        return res[1:] if isinstance(res, tuple) and len(res) > 2 else (
            res[1] if isinstance(res, tuple) and len(res) == 2 else None)

    def ensure_context(self):
        """Makes a context current in this thread (a new thread, e.g. torch's autograd one, has
        none): torch's current device's primary context where torch is in use, else device 0's."""
        cu = self.cu
        ctx = self._check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
        if ctx is None or int(ctx) == 0:
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_available():
                torch.cuda.init()
                torch.cuda.current_device()
                ctx = self._check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
            if ctx is None or int(ctx) == 0:
                ordinal = torch.cuda.current_device() if torch is not None and \
                    torch.cuda.is_available() else 0
                dev = self._check(cu.cuDeviceGet(ordinal), "cuDeviceGet")
                ctx = self._check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
                self._check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    def target(self) -> str:
        # routing code asks per call: a context known already answers from one C call (its
        # device, hence its target, never changes), else the driver is asked through
        # cuda-python and the context remembered
        ctx = native_launch.current_context()
        known = self._ctx_targets.get(ctx) if ctx is not None else None
        if known is not None:
            return known
        cu = self.cu
        self.ensure_context()
        dev = self._check(cu.cuCtxGetDevice(), "cuCtxGetDevice")
        known = self._targets.get(int(dev))  # (asked per call by routing code: two driver
        if known is not None:                  # calls saved, a device's target never changes)
            ctx = native_launch.current_context()
            if ctx is not None:
                self._ctx_targets[ctx] = known
            return known
        A = cu.CUdevice_attribute
        major = self._check(cu.cuDeviceGetAttribute(
            A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute")
        minor = self._check(cu.cuDeviceGetAttribute(
            A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute")
        t = self._targets[int(dev)] = f"sm_{major}{minor}" + ("a" if major == 9 else "")
        ctx = native_launch.current_context()
        if ctx is not None:
            self._ctx_targets[ctx] = t
        return t

    def load(self, ck) -> LoadedKernel:
        cu = self.cu
        self.ensure_context()
        mod = self._check(cu.cuModuleLoadData(ck.binary), f"loading {ck.name}")
        fn = self._check(cu.cuModuleGetFunction(mod, ck.name.encode()), f"finding {ck.name}")
        block = ck.metadata["num_warps"] * ck.metadata["warp_size"]
        shared = ck.metadata.get("shared", 0)
        if shared > 48 * 1024:  # above 48 KiB a kernel must opt in to dynamic shared memory
            A = cu.CUfunction_attribute
            self._check(cu.cuFuncSetAttribute(
                fn, A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared),
                f"{ck.name}: {shared} bytes of shared memory")
        k = LoadedKernel(ck, mod, fn, block, shared)
        k.device = int(self._check(cu.cuCtxGetDevice(), "cuCtxGetDevice"))
        if ck.metadata.get("launch_cooperative_grid"):
            k.cooperative = self._coresident(k)
        nat = native_launch.cuda_driver(CudaError)
        # tensor maps (host descriptors) and global scratch (in-kernel ones) come from Python
        # callables per launch; TILEWORK_NATIVE_TMA=0 leaves such kernels to the Python path
        maps, scratch = "T" in k.kinds, bool(scratch_size(ck.metadata))
        if nat is not None and len(k.kinds) <= 256 and \
                (native_launch.tensor_maps() or not (maps or scratch)):
            # its context: a native launch checks the thread's current one is it
            ctx = self._check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
            k.native = nat.Kernel(int(fn), block, shared, k.kinds, ck.name, k.device,
                                  context=int(ctx),
                                  maps=launch_maps(ck.metadata["tma"]) if maps else None,
                                  scratch=launch_scratch(ck.metadata) if scratch else None,
                                  # (only where set: a plain kernel's handle is as before)
                                  **({"cooperative": k.cooperative[0],
                                      "refuse": k.check_coresident} if k.cooperative else {}))
        return k

    def _coresident(self, k: LoadedKernel):
        """(programs of `k` resident at once on the current device, per multiprocessor, the
        multiprocessors): the driver's occupancy at k's block and shared memory."""
        cu = self.cu
        per_sm = int(self._check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            k.function, k.block, k.shared), f"{k.name}: occupancy"))
        dev = self._check(cu.cuCtxGetDevice(), "cuCtxGetDevice")  # (the driver's CUdevice)
        sms = int(self._check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
            "cuDeviceGetAttribute"))
        return per_sm * sms, per_sm, sms

    def on_device(self, k: LoadedKernel, device: int) -> LoadedKernel:
        """`k` loaded on `device` (the current one: the caller switched to it), once."""
        kd = k.on_devices.get(device)
        if kd is None:
            kd = k.on_devices[device] = self.load(k.compiled)
        return kd

    def stream(self):
        """PyTorch's current stream when torch is in use, else the default stream."""
        torch = sys.modules.get("torch")
        if torch is None:
            return 0
        c = torch._C
        if hasattr(c, "_cuda_getCurrentRawStream"):
            return c._cuda_getCurrentRawStream(c._cuda_getDevice())
        return torch.cuda.current_stream().cuda_stream

    def launch(self, k: LoadedKernel, grid, values):
        k.fill(values)
        if k.cooperative is not None:
            k.check_coresident(grid)
            err = self._launch_cooperative(k, grid)
            if int(err) == _INVALID_CONTEXT:
                self.ensure_context()
                err = self._launch_cooperative(k, grid)
        else:
            err, = self.cu.cuLaunchKernel(k.function, grid[0], grid[1], grid[2], k.block, 1,
                                          1, k.shared, self.stream(), k.params_address, 0)
            if int(err) == _INVALID_CONTEXT:  # a thread with no current context
                self.ensure_context()
                err, = self.cu.cuLaunchKernel(k.function, grid[0], grid[1], grid[2], k.block,
                                              1, 1, k.shared, self.stream(), k.params_address,
                                              0)
        if err:
            self._check((err,), f"launching {k.name}")

    def _launch_cooperative(self, k: LoadedKernel, grid):
        """cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE (as Triton's launcher)."""
        cu = self.cu
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
        attr.value.cooperative = 1
        cfg = cu.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = k.block, 1, 1
        cfg.sharedMemBytes = k.shared
        cfg.hStream = cu.CUstream(self.stream())
        cfg.attrs, cfg.numAttrs = [attr], 1
        err, = cu.cuLaunchKernelEx(cfg, k.function, k.params_address, 0)
        return err
