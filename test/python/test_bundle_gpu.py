"""Bundles on the GPU: `tilework.runtime.load` launches the device's binary on torch tensors,
and the generated C launcher, compiled with a small C program linked to libcuda, runs the
kernel and checks its output (bundle_main.c)."""
import ctypes
import os
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework.runtime  # noqa: E402
from test_bundle import HERE, make_bundle  # noqa: E402


def _target():
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}" + ("a" if major == 9 else "")


@pytest.fixture(scope="module")
def gpu_bundle(tmp_path_factory):
    if torch.version.hip:
        pytest.skip("the C launcher is NVIDIA's")
    return make_bundle(tmp_path_factory.mktemp("gb"), _target())


def test_loaded_bundle_launches_on_torch_tensors(gpu_bundle):
    b = tilework.runtime.load(str(gpu_bundle))
    n = 5000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    b.add_kernel[((n + 1023) // 1024,)](x, y, out, n, 2.5)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x * 2.5 + y)


def _libcuda_path():
    ctypes.CDLL("libcuda.so.1")
    with open("/proc/self/maps") as f:
        for line in f:
            if "libcuda.so" in line:
                return line.split()[-1]
    pytest.skip("libcuda.so.1 not found")


def test_c_program_launches_the_bundle(gpu_bundle, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    prefix = f"add_kernel_{_target()}"
    exe = tmp_path / "main"
    subprocess.run([cc, "-std=c11", "-O1", f'-DLAUNCHER_H="{prefix}.h"', f"-DLAUNCH={prefix}",
                    f"-I{gpu_bundle}", os.path.join(HERE, "native", "bundle_main.c"),
                    str(gpu_bundle / f"{prefix}.c"), _libcuda_path(), "-o", str(exe)],
                   check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "OK", r.stdout + r.stderr
