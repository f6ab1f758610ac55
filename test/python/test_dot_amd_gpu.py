"""tl.dot on AMD matrix cores (MFMA on CDNA, WMMA on RDNA) on an AMD GPU under ROCm torch,
against float64 references (test_dot.py's check_matmul): every dtype the matrix path takes on
the device's architecture, tails, fp8 in the fnuz and OCP formats (skipped without a ROCm
GPU; never run yet: see docs/backends.md).  (The AMD options are not launch options yet: see
docs/backends.md.)"""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
    pytest.skip("needs a ROCm GPU", allow_module_level=True)

from dot_kernels import matmul_kernel  # noqa: E402
from test_dot import CASES, cdiv, check_matmul  # noqa: E402

TORCH = {"fp32": torch.float32, "fp16_acc32": torch.float16, "fp16_acc16": torch.float16,
         "bf16": torch.bfloat16, "int8": torch.int8}
OUT = {np.float32: torch.float32, np.float16: torch.float16, np.int32: torch.int32}


def _run(case, m, n, k, bm, bn, bk, warps):
    dt = TORCH[case]
    if case == "int8":
        a = torch.randint(-128, 128, (m, k), device="cuda", dtype=dt)
        b = torch.randint(-128, 128, (k, n), device="cuda", dtype=dt)
    else:
        a, b = torch.randn(m, k, device="cuda").to(dt), torch.randn(k, n, device="cuda").to(dt)
    c = torch.full((m, n), 7, device="cuda", dtype=OUT[CASES[case][4]])
    matmul_kernel[(cdiv(m, bm), cdiv(n, bn))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1], PLUS_EQ=False,
        num_warps=warps)
    torch.cuda.synchronize()
    f64 = (lambda t: t.cpu().numpy()) if case == "int8" else (lambda t: t.cpu().double().numpy())
    check_matmul(c.cpu().numpy() if case == "int8" else c.cpu().double().numpy(), f64(a), f64(b),
                 case, bk)


@pytest.mark.parametrize("case", list(TORCH))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps", [
    (100, 70, 45, 32, 32, 32, 4), (300, 200, 129, 128, 64, 32, 8), (257, 255, 100, 64, 64, 32, 4)])
def test_matmul(case, m, n, k, bm, bn, bk, warps):
    _run(case, m, n, k, bm, bn, bk, warps)


@pytest.mark.parametrize("fmt", ["fnuz", "ocp"])
def test_fp8_matmul_in_the_architectures_format(fmt):
    """fp8 dots in the format the device's matrix cores read (gfx942: fnuz; gfx950, gfx12: OCP)
    or, elsewhere, on FMAs: against float64 products of the decoded bytes."""
    from simt_mfma_amd import fp8_values
    tdt = torch.float8_e4m3fnuz if fmt == "fnuz" else torch.float8_e4m3fn
    m, n, k = 130, 70, 96
    rng = np.random.default_rng(11)
    bad = (lambda r: r == 0x80) if fmt == "fnuz" else (lambda r: (r & 0x7F) == 0x7F)

    def draw(shape):
        r = rng.integers(0, 256, shape).astype(np.uint8)
        return np.where(bad(r), 0x38, r).astype(np.uint8)
    a8, b8 = draw((m, k)), draw((k, n))
    a = torch.from_numpy(a8).cuda().view(tdt)
    b = torch.from_numpy(b8).cuda().view(tdt)
    c = torch.full((m, n), 7, device="cuda", dtype=torch.float32)
    matmul_kernel[(cdiv(m, 64), cdiv(n, 64))](
        a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
        ACC=CASES["fp32"][1], PLUS_EQ=False, num_warps=4)
    torch.cuda.synchronize()
    a64, b64 = (fp8_values(x, "fp8", fmt == "fnuz") for x in (a8, b8))
    np.testing.assert_allclose(c.cpu().numpy(), a64 @ b64, rtol=0, atol=(
        k * 2.0**-23 * (np.abs(a64) @ np.abs(b64))).max() + 1e-30)
