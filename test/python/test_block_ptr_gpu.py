"""Block pointers on the GPU against torch (skipped without a GPU)."""
import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402


def cdiv(a, b):
    return (a + b - 1) // b


@tilework.jit
def scale(a, out, M, N, stride_am, stride_an, stride_om, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    src = tl.make_block_ptr(a, (M, N), (stride_am, stride_an), (pm * BM, pn * BN), (BM, BN),
                            (1, 0))
    dst = tl.make_block_ptr(out, (M, N), (stride_om, 1), (pm * BM, 0), (BM, BN), (1, 0))
    dst = tl.advance(dst, (0, pn * BN))
    tl.store(dst, tl.load(src, boundary_check=(0, 1), padding_option="zero") * 2,
             boundary_check=(0, 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32])
@pytest.mark.parametrize("M, N, BM, BN, warps", [(1000, 333, 64, 64, 4), (7, 5, 16, 16, 1),
                                                 (4096, 4096, 128, 64, 8)])
@pytest.mark.parametrize("transposed", [False, True])
def test_scale_matches_torch(dtype, M, N, BM, BN, warps, transposed):
    base = (torch.randn(N, M, device="cuda") * 10).to(dtype) if transposed else \
        (torch.randn(M, N, device="cuda") * 10).to(dtype)
    a = base.t() if transposed else base
    out = torch.full((M, N), -777, device="cuda").to(dtype)
    scale[(cdiv(M, BM), cdiv(N, BN))](a, out, M, N, a.stride(0), a.stride(1), out.stride(0),
                                      BM=BM, BN=BN, num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(out, a * 2)


@tilework.jit
def colsum(a, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    p = tl.make_block_ptr(a, (M, N), (N, 1), (pm * BM, 0), (BM, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, N, BN):
        acc += tl.load(p, boundary_check=(0, 1), padding_option="zero")
        p = tl.advance(p, (0, BN))
    o = tl.make_block_ptr(out, (M, BN), (BN, 1), (pm * BM, 0), (BM, BN), (1, 0))
    tl.store(o, acc, boundary_check=(0, 1))


def test_runtime_loop_with_advance():
    M, N, BN = 333, 1000, 64
    a = torch.randn(M, N, device="cuda")
    out = torch.full((M, BN), float("nan"), device="cuda")
    colsum[(cdiv(M, 32),)](a, out, M, N, BM=32, BN=BN)
    torch.cuda.synchronize()
    pad = torch.zeros(M, cdiv(N, BN) * BN, device="cuda")
    pad[:, :N] = a
    torch.testing.assert_close(out, pad.view(M, -1, BN).sum(1), rtol=1e-4, atol=1e-4)


@tilework.jit
def pad_nan(a, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.make_block_ptr(a, (M, N), (N, 1), (-1, N - BN + 2), (BM, BN), (1, 0))
    o = tl.make_block_ptr(out, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(o, tl.load(p, boundary_check=(0, 1), padding_option="nan"))


def test_nan_padding():
    M, N, BM, BN = 9, 13, 4, 8
    a = torch.randn(M, N, device="cuda")
    out = torch.zeros(BM, BN, device="cuda")
    pad_nan[(1,)](a, out, M, N, BM=BM, BN=BN)
    torch.cuda.synchronize()
    rows = torch.arange(BM, device="cuda") - 1
    cols = torch.arange(BN, device="cuda") + N - BN + 2
    inside = (rows[:, None] >= 0) & (cols[None, :] < N)
    want = torch.where(inside, a[rows.clamp(0, M - 1)][:, cols.clamp(0, N - 1)],
                       torch.tensor(float("nan"), device="cuda"))
    assert torch.equal(torch.isnan(out), torch.isnan(want))
    assert torch.equal(out[inside], want[inside])
