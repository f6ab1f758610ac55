"""The native launch path on the GPU: kernel[grid] is the Signature's Launch, variants
alternating past the fingerprint memo each launch their own kernel with the right results,
the floor loop (Kernel.bench) launches the kernel in both parameter layouts, and the timing
build sums every phase."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402
from tilework.runtime import launcher, native_launch  # noqa: E402


@tilework.jit
def scale_add(x, y, out, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, a * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def _native_on():
    if torch.version.hip:
        pytest.skip("NVIDIA's launcher")
    native_launch.module()  # (on a fresh machine: waits for the build the first launch began)
    x = torch.ones(16, device="cuda")
    for _ in range(2):  # (a kernel's first launch may take the Python path)
        scale_add[(1,)](x, x, x.clone(), 16, 1.0, BLOCK=16)
    if not scale_add._native_launch:
        pytest.fail(f"the native launch path is off: {native_launch.why_not()}")


def test_variants_past_the_memo_launch_their_own_kernels():
    _native_on()
    assert type(scale_add[(1,)]).__name__ == "Launch"
    cases = []
    for dtype in (torch.float32, torch.float16):
        for offset in (0, 1):           # an unaligned view is another variant
            for n in (1000, 1008):      # divisible by 16 or not
                for block in (128, 256):
                    cases.append((dtype, offset, n, block))
    g = torch.Generator(device="cuda").manual_seed(0)
    for order in (cases, cases[::-1], cases[1::2] + cases[::2]):  # alternating variants
        for dtype, offset, n, block in order:
            x = torch.randn(n + 1, device="cuda", generator=g).to(dtype)[offset:offset + n]
            y = torch.randn(n + 1, device="cuda", generator=g).to(dtype)[offset:offset + n]
            out = torch.full_like(x, float("nan"))
            scale_add[(_cdiv(n, block),)](x, y, out, n, 0.5, BLOCK=block)
            torch.testing.assert_close(out, (0.5 * x.float() + y.float()).to(dtype),
                                       rtol=4e-3, atol=4e-3)
    assert len(scale_add.cache) >= len(cases) > 8


def _cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("packed", [False, True])
def test_the_floor_loop_launches_the_kernel(packed):
    _native_on()
    n = 1000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    k = scale_add.warmup(x, y, out, n, 2.0, BLOCK=1024)
    values, _ = launcher.bind(scale_add, (x, y, out, n, 2.0), {"BLOCK": 1024})
    _, params = launcher.fast_key_and_params(scale_add)(values)
    stream = torch.cuda.current_stream().cuda_stream
    assert k.native.bench(1, 1, 1, stream, params, 3, packed) > 0
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 2.0 * x + y)


def test_the_timing_build_sums_every_phase(tmp_path):
    if torch.version.hip:
        pytest.skip("NVIDIA's launcher")
    script = """
import torch, tilework, tilework.language as tl
from tilework.runtime import native_launch
@tilework.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + tl.load(y + offs, mask=offs < n),
             mask=offs < n)
x = torch.randn(1024, device="cuda"); y = torch.randn_like(x); o = torch.empty_like(x)
add[(1,)](x, y, o, 1024, BLOCK=1024)  # compiles (the module builds meanwhile)
add[(1,)](x, y, o, 1024, BLOCK=1024)  # takes the native Signature
mod = native_launch.module()
mod.reset_timings()
for _ in range(200):
    add[(1,)](x, y, o, 1024, BLOCK=1024)
torch.cuda.synchronize()
assert torch.equal(o, x + y)
print(mod.timings())
"""
    path = tmp_path / "timed.py"
    path.write_text(script)
    env = dict(os.environ, TILEWORK_NATIVE_TIMING="1", TILEWORK_CACHE_DIR=str(tmp_path / "c"))
    env.pop("TILEWORK_NATIVE_LIB", None)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    t = eval(r.stdout.strip().splitlines()[-1])
    assert t["launches"] == 200
    for phase in ("total", "bind", "get_device", "data_ptr", "dtype", "key", "lookup", "grid",
                  "device", "stream", "pack", "driver"):
        assert t[phase] > 0, phase
    assert t["total"] >= t["driver"] + t["key"]
