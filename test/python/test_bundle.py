"""Bundles (`tilework compile --emit bundle`, `tilework.runtime.load`): binaries per target and
a manifest; loading and launching with no MLIR, llvmlite or compiler (a subprocess with
them blocked, against a fake cuda-python); the generated C launcher compiled with the system
compiler against a fake driver, passing the parameter bytes the Python path passes."""
import json
import os
import shutil
import subprocess
import sys
import types

import pytest

from tilework.runtime import bundle
from tilework.runtime.cuda import LoadedKernel
from tilework.tools import cli

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = '''import tilework
import tilework.language as tl


@tilework.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * scale + y, mask=mask)
'''
SIG = "*fp32:16,*fp32:16,*fp32:16,i32,fp32"


def make_bundle(tmp_path, targets="sm_90a,gfx942"):
    src = tmp_path / "add.py"
    src.write_text(KERNEL)
    out = tmp_path / "bundle"
    rc = cli.main(["compile", f"{src}:add_kernel", "--target", targets, "--signature", SIG,
                   "--constexpr", "BLOCK_SIZE=1024", "--emit", "bundle", "-o", str(out)])
    assert rc == 0
    return out


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory):
    return make_bundle(tmp_path_factory.mktemp("b"))


def test_bundle_holds_binaries_manifest_and_c(bundle_dir):
    m = json.loads((bundle_dir / "manifest.json").read_text())
    assert m["format"] == "tilework-bundle" and m["version"] == 1
    entries = {e["target"]: e for e in m["kernels"]}
    assert set(entries) == {"sm_90a", "gfx942"}
    for t, ext in (("sm_90a", "cubin"), ("gfx942", "hsaco")):
        e = entries[t]
        assert e["binary"] == f"add_kernel.{t}.{ext}" and e["kinds"] == "pppif"
        assert e["params"] == [["x_ptr", "p"], ["y_ptr", "p"], ["out_ptr", "p"],
                               ["n_elements", "i"], ["scale", "f"]]
        assert (bundle_dir / e["binary"]).stat().st_size > 0
    assert (bundle_dir / "add_kernel.sm_90a.cubin").read_bytes()[:4] == b"\x7fELF"
    assert sorted(os.listdir(bundle_dir)) == sorted(
        ["manifest.json", "add_kernel.sm_90a.cubin", "add_kernel.gfx942.hsaco",
         "add_kernel_sm_90a.h", "add_kernel_sm_90a.c"])


def test_bundle_merges_targets(tmp_path):
    out = make_bundle(tmp_path, "sm_80")
    make_bundle(tmp_path, "sm_90a")
    make_bundle(tmp_path, "sm_80")  # again: replaces its entry
    m = bundle.read_manifest(str(out))
    assert sorted(e["target"] for e in m["kernels"]) == ["sm_80", "sm_90a"]


def test_bad_bundles_are_refused(tmp_path):
    with pytest.raises(ValueError, match="is not a tilework bundle"):
        bundle.load(str(tmp_path))
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "tilework-bundle",
                                                        "version": 99, "kernels": []}))
    with pytest.raises(ValueError, match="bundle version 99 is not supported"):
        bundle.load(str(tmp_path))


FAKE_CUDA = '''"""A stand-in for cuda.bindings.driver: records the launch."""
import ctypes
LAUNCHES = []
class CUdevice_attribute:
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
class CUfunction_attribute:
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
def cuInit(flags): return (0,)
def cuCtxGetCurrent(): return (0, 0xC0)
def cuCtxGetDevice(): return (0, 0)
def cuDeviceGetAttribute(attr, dev): return (0, 9 if attr == 75 else 0)
def cuModuleLoadData(binary):
    assert binary[:4] == b"\\x7fELF"
    return (0, "module")
def cuModuleGetFunction(mod, name): return (0, 0xF00)
def cuFuncSetAttribute(fn, attr, value): return (0,)
def cuGetErrorName(err): return (0, b"CUDA_ERROR_FAKE")
def cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
    LAUNCHES.append((f, gx, gy, gz, bx, by, bz, shared, stream))
    return (0,)
'''


def test_load_launches_without_the_compiler(bundle_dir, tmp_path):
    """A fresh process with mlir, llvmlite and the compiler's driver, frontend and backends
    blocked loads the bundle and launches its sm_90a kernel (on a fake cuda-python)."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "fake_cuda_driver.py").write_text(FAKE_CUDA)
    script = f"""
import sys
sys.path.insert(0, {str(fake)!r})
for m in ("mlir", "llvmlite", "torch", "tilework.compiler.driver", "tilework.frontend",
          "tilework.backends", "tilework.lowering", "tilework.dialects"):
    sys.modules[m] = None  # importing any of them fails
import tilework.runtime
import fake_cuda_driver as driver
b = tilework.runtime.load({str(bundle_dir)!r})
k = b.add_kernel[lambda meta: (meta["n_elements"] // 1024 + 1,)](0x1000, 0x2000, 0x3000, 5000, 2.5)
print(driver.LAUNCHES)
print(k.slot_bytes().hex())
print(sorted(m for m, v in sys.modules.items()
             if v is not None and m.startswith(("mlir", "llvmlite", "tilework.compiler"))))
"""
    # the fake driver module is named explicitly: an installed cuda-python cannot shadow it
    env = dict(os.environ, TILEWORK_NATIVE_LAUNCH="0", TILEWORK_CUDA_DRIVER="fake_cuda_driver")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    launches, slots, mods = r.stdout.strip().splitlines()
    assert launches == "[(3840, 5, 1, 1, 128, 1, 1, 0, 0)]"
    k = LoadedKernel(types.SimpleNamespace(asm={}, name="add_kernel", metadata={
        "signature": {"a": "*fp32", "b": "*fp32", "c": "*fp32", "n": "int32", "s": "fp32"}}),
        None, None, 128, 0)
    k.fill([0x1000, 0x2000, 0x3000, 5000, 2.5])
    assert slots == k.slot_bytes().hex()
    assert mods == ("['tilework.compiler', 'tilework.compiler.cache', "
                    "'tilework.compiler.kernel_stats', 'tilework.compiler.options']")


def test_load_rejects_a_missing_kernel(bundle_dir):
    b = bundle.load(str(bundle_dir))
    with pytest.raises(AttributeError, match="has no kernel 'mul'; it has add_kernel"):
        b.mul


def _cc():
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


def test_c_launcher_passes_the_python_paths_bytes(bundle_dir, tmp_path):
    """The generated C source, compiled with a small program against the fake driver: the
    kernel's function, grid, block, stream and each parameter's bytes reach cuLaunchKernel."""
    cc = _cc()
    fake = tmp_path / "libfakecuda.so"
    subprocess.run([cc, "-shared", "-fPIC", os.path.join(HERE, "native", "fake_libcuda.c"),
                    "-o", str(fake)], check=True)
    exe = tmp_path / "main"
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-DFAKE",
                    '-DLAUNCHER_H="add_kernel_sm_90a.h"', "-DLAUNCH=add_kernel_sm_90a",
                    f"-I{bundle_dir}", os.path.join(HERE, "native", "bundle_main.c"),
                    str(bundle_dir / "add_kernel_sm_90a.c"), str(fake), "-o", str(exe),
                    f"-Wl,-rpath,{tmp_path}"], check=True)
    # preloaded: the fake's symbols come first even where the machine loads a real libcuda
    env = dict(os.environ, LD_PRELOAD=f"{fake} {os.environ.get('LD_PRELOAD', '')}".strip())
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, env=env).stdout
    lines = out.split()
    cubin = (bundle_dir / "add_kernel.sm_90a.cubin").read_bytes()
    assert lines[:12] == ["0", "1", "3", "2", "1", "128", "1", "1", "0", str(0x77), "1",
                          str(int.from_bytes(cubin[:8], "little"))]
    k = LoadedKernel(types.SimpleNamespace(asm={}, name="add_kernel", metadata={
        "signature": {"a": "*fp32", "b": "*fp32", "c": "*fp32", "n": "int32", "s": "fp32"}}),
        None, None, 128, 0)
    k.fill([0x1000, 0x2000, 0x3000, -1000, 2.5])
    slots = k.slot_bytes()
    for i, h in enumerate(lines[12:]):
        width = [8, 8, 8, 4, 4][i]  # the C value's own bytes; the rest is the fake's 8
        assert int(h, 16).to_bytes(8, "little")[:width] == slots[8 * i:8 * i + width]
