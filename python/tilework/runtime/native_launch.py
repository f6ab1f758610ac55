"""The native launch path (`native/launch.c`): built on first use with the system C compiler
into the cache folder (keyed by the source's hash and the Python ABI), or taken from where
CMake's `native_launch` target put it (TILEWORK_NATIVE_LIB).  It loads the driver itself
(dlopen libcuda.so.1; TILEWORK_LIBCUDA names another library, loaded first: tests use a fake
driver, and `driver_path()` says which library the launches go to), so no
CUDA headers are needed; HIP's libamdhip64.so likewise (TILEWORK_LIBAMDHIP).  Without a
compiler, Python's headers or a driver, or with TILEWORK_NATIVE_LAUNCH=0, `module()` is None
and launches take the Python path.  TILEWORK_NATIVE_TIMING=1 builds and loads the timing build
instead (`-DTW_LAUNCH_TIMING`: the module's `timings()` sums each phase of a launch; see
`native/timing.h` and `benchmarks/launch_overhead.py --breakdown`).
"""
from __future__ import annotations

import os

from ..compiler.options import cache_dir

NATIVE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "native")
SOURCE = os.path.join(NATIVE_DIR, "launch.c")
# included by launch.c, so part of the build's hash
HEADERS = ("pack.h", "timing.h", "signature.h", "bind.h")
MODULE_NAME = "tilework_native"

_state: dict = {}  # "module": the loaded module or None; "why": why there is none


def disabled() -> bool:
    return os.environ.get("TILEWORK_NATIVE_LAUNCH", "1") in ("0", "", "off")


def tensor_maps() -> bool:
    """Whether kernels taking host descriptors' TMA tensor maps (from `tma.launch_maps`) or
    global scratch (in-kernel descriptors' maps: `allocation.launch_scratch`) launch natively;
    TILEWORK_NATIVE_TMA=0 leaves them to the Python path (A/B)."""
    return os.environ.get("TILEWORK_NATIVE_TMA", "1") not in ("0", "", "off")


def timing() -> bool:
    """TILEWORK_NATIVE_TIMING=1: the timing build (per-phase sums, a little slower)."""
    return os.environ.get("TILEWORK_NATIVE_TIMING", "0") not in ("0", "", "off")


def library_name(timed: bool = False) -> str:
    """The built module's file name: the sources' hash, the build and the Python ABI in it."""
    import hashlib
    import sysconfig
    h = hashlib.sha256()
    for name in ("launch.c",) + HEADERS:
        with open(os.path.join(NATIVE_DIR, name), "rb") as f:
            h.update(f.read())
    kind = "-timing" if timed else ""
    return f"{MODULE_NAME}-{h.hexdigest()[:16]}{kind}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"


def compile_command(out: str, timed: bool = False) -> list | None:
    """The compiler command building the module into `out` (None: no compiler or headers);
    `timed`: the timing build."""
    import shutil
    import sysconfig
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or \
        shutil.which("clang")
    include = sysconfig.get_paths().get("include")
    if not cc or not include or not os.path.exists(os.path.join(include, "Python.h")):
        return None
    return [cc, "-O2", "-shared", "-fPIC", f"-I{include}"] + \
        (["-DTW_LAUNCH_TIMING"] if timed else []) + [SOURCE, "-o", out, "-ldl"]


def build(folder: str | None = None, timed: bool = False) -> str:
    """The path of the built module (`timed`: the timing build), compiling it unless it is
    there (atomically: several processes sharing the cache folder each build to a temporary
    file renamed into place)."""
    import subprocess
    import tempfile
    folder = folder or os.path.join(cache_dir(), "native")
    path = os.path.join(folder, library_name(timed))
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=folder)
    os.close(fd)
    try:
        cmd = compile_command(tmp, timed)
        if cmd is None:
            raise OSError("no C compiler or no Python headers")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise OSError(f"{' '.join(cmd)} failed:\n{r.stderr.strip()}")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _load(path: str):
    import importlib.util
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def start_build() -> bool:
    """Starts building the module in a thread where it is neither loaded nor built yet, so that
    the C compiler runs while the first kernel compiles (its launch takes the Python path and
    `module()`, at the kernel's load, waits for the build); True while that build runs."""
    if "module" in _state or disabled() or os.environ.get("TILEWORK_NATIVE_LIB"):
        return False
    t = _state.get("build")
    if t is None:
        if os.path.exists(os.path.join(cache_dir(), "native", library_name(timing()))):
            return False
        import threading
        t = _state["build"] = threading.Thread(target=_build_into_state, daemon=True)
        t.start()
    return t.is_alive()


def _build_into_state():
    try:
        _state["built"] = build(timed=timing())
    except OSError as e:
        _state["built"] = e


def module():
    """The native module (built and loaded once per process), or None."""
    if "module" in _state:
        return _state["module"]
    mod = None
    if disabled():
        _state["why"] = "TILEWORK_NATIVE_LAUNCH=0"
    else:
        try:
            path = os.environ.get("TILEWORK_NATIVE_LIB")
            if path is None and "build" in _state:  # started by `start_build`
                _state.pop("build").join()
                path = _state.pop("built")
                if isinstance(path, OSError):
                    raise path
            mod = _load(path or build(timed=timing()))
        except (OSError, ImportError) as e:
            _state["why"] = str(e)
    _state["module"] = mod
    return mod


def why_not() -> str | None:
    """Why the native path is off (None: it is on, or not tried yet)."""
    return _state.get("why")


def cuda_driver(error_type):
    """The native module with the CUDA driver loaded (None: no module or no driver);
    launch failures raise `error_type`."""
    if "cuda" in _state:
        return _state["cuda"]
    mod = module()
    if mod is not None:
        try:
            mod.load_driver(os.environ.get("TILEWORK_LIBCUDA") or "libcuda.so.1", error_type)
        except OSError as e:
            _state["why"] = str(e)
            mod = None
    _state["cuda"] = mod
    return mod


def driver_path() -> str | None:
    """The file of the library whose cuLaunchKernel native launches call (None: none)."""
    mod = _state.get("cuda")
    return mod.driver_path() if mod is not None else None


def current_context():
    """The thread's current CUDA context (an int) through the native module where it is
    loaded with the driver already (None: not loaded, or no context): one C call, where
    cuda-python's cuCtxGetCurrent builds Python objects."""
    mod = _state.get("cuda")
    query = getattr(mod, "current_context", None)  # (a prebuilt module may lack it)
    return query() if query is not None else None


def hip_runtime(error_type):
    """The native module with the HIP runtime loaded (libamdhip64.so, the name hip-python
    opens, so dlopen gives back the library it loaded and its function handles are ours;
    TILEWORK_LIBAMDHIP names another), or None; launch failures raise `error_type`."""
    if "hip" in _state:
        return _state["hip"]
    mod = module()
    if mod is not None:
        try:
            mod.load_hip(os.environ.get("TILEWORK_LIBAMDHIP") or "libamdhip64.so", error_type)
        except OSError as e:
            _state["why"] = str(e)
            mod = None
    _state["hip"] = mod
    return mod


def hip_path() -> str | None:
    """The file of the library whose hipModuleLaunchKernel native HIP launches call (None:
    none)."""
    mod = _state.get("hip")
    return mod.hip_path() if mod is not None else None


def use_torch_streams(torch) -> None:
    """Native launches go on torch's current stream of the current device (unless a source
    is pinned)."""
    mod = _state.get("module")
    c = getattr(torch, "_C", None) if torch is not None else None
    if mod is not None and hasattr(c, "_cuda_getCurrentRawStream") and \
            not _state.get("pinned"):
        mod.set_stream_source(c._cuda_getDevice, c._cuda_getCurrentRawStream)


def pin_stream_source(get_device, raw_stream) -> None:
    """Native launches ask `get_device()` and `raw_stream(device)` (tests inject fakes so),
    and torch found later does not replace them; (None, None) unpins."""
    mod = module()
    if mod is None:
        return
    mod.set_stream_source(get_device, raw_stream)
    _state["pinned"] = get_device is not None


def reset() -> dict:
    """Forgets the loaded state (the next `module()` loads again); returns it for `restore`."""
    old = dict(_state)
    _state.clear()
    return old


def restore(state: dict) -> None:
    _state.clear()
    _state.update(state)

