"""The fp8 GEMM example, every autotune config launched on its own (autotuning picks one by
timing, so a config broken on one card would otherwise pass unseen), with K tails and odd M/N.

Hopper's fp8 wgmma accumulates with fewer bits than fp32 (the kernel keeps Triton's sm_90
default, max_num_imprecise_acc unset: no fp32 promotion), so two checks:
- small-integer inputs, whose every partial sum is an integer below 2**11 (exact in the
  tensor core's accumulator): the result must equal torch's fp32 product exactly, which any
  misplaced row, column or k-slice breaks;
- normal inputs: |error| <= 2**-9 * (|A| @ |B|) per element, the truncating accumulator's bound
  (the measured worst on an H100 is about 2**-11.5)."""
import os
import sys

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
              pytest.mark.skipif(not hasattr(torch, "float8_e4m3fn"), reason="torch without fp8")]

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import fp8_matmul  # noqa: E402

CONFIGS = fp8_matmul.FP8_CONFIGS


def _cfg_id(c):
    kw = c.kwargs
    return f"{kw['BLOCK_M']}x{kw['BLOCK_N']}x{kw['BLOCK_K']}w{c.num_warps}s{c.num_stages}"


@pytest.mark.parametrize("cfg", CONFIGS, ids=_cfg_id)
@pytest.mark.parametrize("m, n, k", [(512, 640, 384), (100, 200, 300), (1, 257, 129),
                                     (256, 256, 1024)])
@pytest.mark.parametrize("out", [torch.bfloat16, torch.float32], ids=str)
def test_every_config(cfg, m, n, k, out):
    if torch.cuda.get_device_capability()[0] < 9 and torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("fp8 dot needs sm_89+")
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
    # |a| <= 2, |b| <= 1: every partial sum over K <= 1024 stays below 2**11
    a8 = torch.randint(-2, 3, (m, k), device="cuda", generator=g).to(torch.float8_e4m3fn)
    b8 = torch.randint(-1, 2, (k, n), device="cuda", generator=g).to(torch.float8_e4m3fn)
    _launch(cfg, a8, b8, out, exact=True)
    a8 = (torch.randn(m, k, device="cuda", generator=g) * 4).to(torch.float8_e4m3fn)
    b8 = torch.randn(k, n, device="cuda", generator=g).to(torch.float8_e4m3fn)
    _launch(cfg, a8, b8, out, exact=False)


def _launch(cfg, a8, b8, out, exact):
    (m, k), n = a8.shape, b8.shape[1]
    sa = torch.tensor([0.5], device="cuda")
    sb = torch.tensor([4.0], device="cuda")  # a power of two: exact
    c = torch.full((m, n), float("nan"), device="cuda", dtype=out)
    kw = cfg.kwargs
    grid = (triton_cdiv(m, kw["BLOCK_M"]) * triton_cdiv(n, kw["BLOCK_N"]),)
    fp8_matmul.fp8_matmul_kernel.base_fn[grid](
        a8.view(torch.uint8), b8.view(torch.uint8), c, sa, sb, m, n, k,
        a8.stride(0), a8.stride(1), b8.stride(0), b8.stride(1), c.stride(0), c.stride(1),
        num_warps=cfg.num_warps, num_stages=cfg.num_stages, **kw)
    ref = (a8.float() @ b8.float()) * 2.0
    if exact:
        torch.testing.assert_close(c.float(), ref.to(out).float(), rtol=0, atol=0)
    else:
        mag = (a8.float().abs() @ b8.float().abs()) * 2.0
        err = (c.float() - ref).abs() - ref.abs() * (2.0**-8 if out == torch.bfloat16 else 0)
        assert (err <= mag * 2.0**-9).all(), (err / mag).max().item()


def triton_cdiv(a, b):
    return (a + b - 1) // b
