"""The native launch path on an AMD GPU (ROCm torch): after its first launch a kernel launches
through hipModuleLaunchKernel in C (the Python path's launch is made to fail, so a launch that
reached it would raise), with pointers, i32, i64, fp32, fp16 and i1 scalars and a None
argument, on torch's current stream (a side stream included), with the results torch
computes; Kernel.bench launches it in a loop."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402
from tilework.runtime import launcher, native_launch  # noqa: E402


@tilework.jit
def scalars(x_ptr, out_ptr, n, big, s, h, flag, none, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * s + h.to(tl.float32) + (big % 1000).to(tl.float32) + \
        flag.to(tl.float32)
    tl.store(out_ptr + offs, v, mask=m)


def _hip():
    if not torch.version.hip:
        pytest.skip("AMD's launcher (ROCm torch)")


def _reference(x, big, s, h, flag):
    return x * s + float(h) + float(big % 1000) + float(flag)


def test_native_hip_launches_match_torch(monkeypatch):
    import numpy as np
    _hip()
    n, block = 1000, 256
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(n, device="cuda", generator=g)
    out = torch.full_like(x, float("nan"))
    args = (x, out, n, 2**40 + 16 * 37, 1.5, np.float16(2.5), True, None)
    k = scalars[(4,)](*args, BLOCK=block)  # compiled, loaded, launched by the Python path
    torch.cuda.synchronize()
    torch.testing.assert_close(out, _reference(x, args[3], 1.5, 2.5, True))
    assert k.native is not None, native_launch.why_not()
    assert "libamdhip64" in (native_launch.hip_path() or "")
    assert type(scalars[(4,)]).__name__ == "Launch"

    def python_path(*a, **kw):
        raise AssertionError("the Python path launched")
    monkeypatch.setattr(launcher._get_runtime(), "launch", python_path)
    # the same variant: big an int64 divisible by 16
    for big, s, h, flag in ((2**41 + 16 * 5, -0.25, -1.0, False),
                            (2**35 + 16 * 999, 3.0, 0.125, True)):
        out.fill_(float("nan"))
        assert scalars[(4,)](x, out, n, big, s, np.float16(h), flag, None, BLOCK=block) is k
        torch.cuda.synchronize()
        torch.testing.assert_close(out, _reference(x, big, s, h, flag))
    side = torch.cuda.Stream()
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    with torch.cuda.stream(side):  # torch's current stream is the side one: launched there
        side.wait_stream(torch.cuda.default_stream())
        scalars[(4,)](*args, BLOCK=block)
        done = torch.empty_like(out).copy_(out)
    side.synchronize()
    torch.testing.assert_close(done, _reference(x, args[3], 1.5, 2.5, True))


def test_hip_bench_runs_the_kernel():
    _hip()
    x = torch.ones(256, device="cuda")
    out = torch.zeros_like(x)
    k = scalars[(1,)](x, out, 256, 16, 2.0, 0.0, False, None, BLOCK=256)
    assert k.native is not None, native_launch.why_not()
    out.zero_()
    stream = torch.cuda.current_stream().cuda_stream
    assert k.native.bench(1, 1, 1, stream, [x.data_ptr(), out.data_ptr(), 256, 16, 2.0, 0.0,
                                            False], 50) > 0
    torch.cuda.synchronize()
    torch.testing.assert_close(out, torch.full_like(out, 2.0 + 16))
