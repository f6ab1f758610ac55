"""tl.dot on AMD matrix cores (MFMA on CDNA, WMMA on RDNA) on an AMD GPU under ROCm torch,
against float64 references (test_dot.py's check_matmul): every dtype the matrix path takes on
the device's architecture, tails (skipped without a ROCm GPU; never run yet: see
docs/backends.md).  (The AMD options are not launch options yet: see docs/backends.md.)"""
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
