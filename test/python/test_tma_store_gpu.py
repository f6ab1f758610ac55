"""The TMA-store epilogue on an sm_90 GPU against torch (`tma_store=True`): blocks stored by
`cp.async.bulk.tensor ... bulk_group` from the swizzled shared buffer where that is exact, the
block-pointer store elsewhere (issue 9, measured on an H200 with
benchmarks/tools/tma_store_probe.py: the copy writes a row's last 16-byte chunk whole, past
the inner bound, and faults with an illegal instruction at any negative coordinate).  So the
TMA store is used when the tensor's rows are a multiple of 16 bytes (the launcher's key) and
every coordinate is >= 0: proven, or tested at run time (`tma_store_guard`, a branch to the
block-pointer store; a program at a negative row takes that branch, no fault); each case
asserts which store it got, the stored values and that the row padding past the tensor is
untouched.  fp16, bf16, fp32; M/N tails; coordinates
partly negative or past the end; a runtime row offset; 2-D and 3-D descriptors; the
descriptor GEMM's epilogue (benchmarks/tma_matmul.py's kernel), also against the
block-pointer store (`tma_store=False`).  Compile-only and emulated checks: test_tma_store.py.
No case here runs the raw store at a negative coordinate (it would poison the process's CUDA
context); the probe runs those in subprocesses."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("TMA needs an sm_90 GPU", allow_module_level=True)

from tilework.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
from tma_kernels import (desc_matmul_store, store_block, store_block3d,  # noqa: E402
                         store_block_rt)
from test_tma_gpu import cdiv  # noqa: E402


def _padded(rows, cols, dtype, extra=8):
    """A [rows, cols] view of a random CUDA buffer whose rows are padded to a multiple of 16
    bytes and `extra` elements more (the padding is checked untouched), its strides, and the
    whole buffer."""
    item = torch.empty((), dtype=dtype).element_size()
    ld = cdiv(cols * item, 16) * 16 // item + extra
    buf = (torch.randn(rows, ld, device="cuda") * 2).to(dtype)
    return buf[:, :cols], [ld, 1], buf


def _store_ref(out, x2, r0, c0, bm, bn, grid):
    """torch: out with each block (pm, pn) of x2 at (r0 + pm * bm, c0 + pn * bn), clipped."""
    want = out.clone()
    M, N = out.shape
    for pm in range(grid[0]):
        for pn in range(grid[1]):
            r, c = r0 + pm * bm, c0 + pn * bn
            rs, cs, re, ce = max(r, 0), max(c, 0), min(r + bm, M), min(c + bn, N)
            if rs < re and cs < ce:
                want[rs:re, cs:ce] = x2[pm * bm + rs - r:pm * bm + re - r,
                                        pn * bn + cs - c:pn * bn + ce - c]
    return want


def _window(dtype, bm, bn, r0, c0, width, tma_store=True):
    out, strides, buf = _padded(100, width, dtype)
    grid = (2, 3)
    x = (torch.randn(grid[0] * bm, grid[1] * bn, device="cuda") * 4).to(dtype)
    before, whole = out.clone(), buf.clone()
    d = TensorDescriptor(out, list(out.shape), strides, [bm, bn])
    k = store_block[grid](x, d, R0=r0, C0=c0, BM=bm, BN=bn, tma_store=tma_store)
    torch.cuda.synchronize()
    x2 = (x.float() * 2).to(dtype)
    return k, out, _store_ref(before, x2, r0, c0, bm, bn, grid), buf, whole


@pytest.mark.parametrize("width", [72, 70])
@pytest.mark.parametrize("dtype, bm, bn", [(torch.float16, 64, 64), (torch.bfloat16, 32, 128),
                                           (torch.float32, 16, 32), (torch.float16, 64, 16)])
@pytest.mark.parametrize("r0, c0", [(0, 0), (-40, -16), (50, 32), (-64, 0)])
def test_store_window(dtype, bm, bn, r0, c0, width):
    """The guarded store: TMA for the 72-wide tensor (rows of 144 / 288 bytes), under the
    run-time guard (R0 + pid * BM: programs at a negative offset take the block-pointer
    store, no fault), the block-pointer store for the 70-wide one; exact, the padding past
    the tensor untouched, whichever it got."""
    esize = torch.empty((), dtype=dtype).element_size()
    k, out, want, buf, whole = _window(dtype, bm, bn, r0, c0, width)
    tma = width * esize % 16 == 0
    assert ("bulk_group" in k.asm["ptx"]) == tma
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    assert torch.equal(buf[:, width:], whole[:, width:])  # the padding: untouched


def test_variant_follows_the_row_width():
    """One kernel launched on 70-, 72- and again 70-wide tensors: the row flag of the key picks
    the block-pointer variant, the TMA one, then the first again (native launch path or not)."""
    for width, tma in ((70, False), (72, True), (70, False), (72, True)):
        k, out, want, buf, whole = _window(torch.float16, 64, 64, 0, 0, width)
        assert ("bulk_group" in k.asm["ptx"]) == tma, width
        torch.testing.assert_close(out, want, rtol=0, atol=0)
        assert torch.equal(buf[:, width:], whole[:, width:])


def test_unguarded_store_writes_the_row_chunk():
    """The hardware behaviour the guard avoids and the emulator models (simt_tma.py): the raw
    TMA store (`tma_store="unguarded"`) on a 70-wide fp16 tensor writes columns 70 and 71 (the
    rest of the row's last 16-byte chunk) and nothing further; the tensor itself is exact."""
    k, out, want, buf, whole = _window(torch.float16, 64, 64, 0, 0, 70,
                                       tma_store="unguarded")
    assert "bulk_group" in k.asm["ptx"]
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    assert not torch.equal(buf[:, 70:72], whole[:, 70:72])
    assert torch.equal(buf[:, 72:], whole[:, 72:])


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "off"])
@pytest.mark.parametrize("r0", [-40, -64, 32])
def test_runtime_row_offset(r0, guard):
    """r0 + pid * BM with an int argument r0 (maybe negative): with tma_store_guard a branch,
    TMA where the row is >= 0 and the block-pointer store where it is negative (r0 = -40:
    program 0 at -40, no fault, clipped; program 1 at 24 by TMA); without, the pointer store."""
    out, strides, buf = _padded(100, 64, torch.float16)
    before, whole = out.clone(), buf.clone()
    grid = (2, 1)
    x = (torch.randn(grid[0] * 64, 64, device="cuda") * 4).to(torch.float16)
    d = TensorDescriptor(out, [100, 64], strides, [64, 64])
    k = store_block_rt[grid](x, d, r0, BM=64, BN=64, tma_store=True, tma_store_guard=guard)
    torch.cuda.synchronize()
    assert ("bulk_group" in k.asm["ptx"]) == guard
    torch.testing.assert_close(out, _store_ref(before, x * 2, r0, 0, 64, 64, grid), rtol=0,
                               atol=0)
    assert torch.equal(buf[:, 64:], whole[:, 64:])


@pytest.mark.parametrize("r0, c1", [(-1, -2), (0, 1)])
def test_store3d(r0, c1):
    B = (2, 4, 8)
    x = torch.randn(3 * B[0], B[1], B[2], device="cuda")
    o = torch.full((5, 6, 8), -9.0, device="cuda")
    k = store_block3d[(3,)](x, TensorDescriptor.from_tensor(o, list(B)), R0=r0, C1=c1,
                            B0=B[0], B1=B[1], B2=B[2], tma_store=True)
    assert ("cp.async.bulk.tensor.3d.global" in k.asm["ptx"]) == (r0 >= 0 and c1 >= 0)
    want = torch.full_like(o, -9.0)
    for p in range(3):
        for i in range(B[0]):
            for j in range(B[1]):
                r, c = r0 + p * B[0] + i, c1 + j
                if 0 <= r < 5 and 0 <= c < 6:
                    want[r, c] = x[p * B[0] + i, j] + 1
    torch.testing.assert_close(o, want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype, out_dtype, M, N, K, BM, BN, BK, warps, num_stages", [
    (torch.float16, torch.float16, 256, 256, 256, 128, 128, 64, 4, 3),
    (torch.bfloat16, torch.bfloat16, 200, 136, 120, 64, 64, 32, 4, 4),
    (torch.float16, torch.float32, 200, 136, 120, 128, 128, 64, 4, 3),
    (torch.float16, torch.float16, 256, 256, 256, 128, 256, 64, 8, 3),
    (torch.float16, torch.float16, 77, 190, 70, 64, 64, 32, 4, 1),  # 380-byte rows: pointers
    (torch.float16, torch.float32, 77, 188, 70, 64, 64, 32, 4, 1),  # 752-byte rows: TMA
])
def test_desc_matmul_store(dtype, out_dtype, M, N, K, BM, BN, BK, warps, num_stages):
    a, sa, _ = _padded(M, K, dtype, 0)
    b, sb, _ = _padded(K, N, dtype, 0)
    c, sc, cbuf = _padded(M, N, out_dtype)
    cbuf.fill_(float("nan"))
    ad = TensorDescriptor(a, [M, K], sa, [BM, BK])
    bd = TensorDescriptor(b, [K, N], sb, [BK, BN])
    cd = TensorDescriptor(c, [M, N], sc, [BM, BN])
    grid = (cdiv(M, BM), cdiv(N, BN))
    k = desc_matmul_store[grid](ad, bd, cd, M, N, K, BM=BM, BN=BN, BK=BK, num_warps=warps,
                                num_stages=num_stages, tma_store=True)
    esize = torch.empty((), dtype=out_dtype).element_size()
    assert ("bulk_group" in k.asm["ptx"]) == (N * esize % 16 == 0)
    assert "wgmma.mma_async" in k.asm["ptx"]
    want = (a.float() @ b.float()).to(out_dtype)
    tol = {torch.float16: 1e-2, torch.bfloat16: 5e-2, torch.float32: 1e-2}[out_dtype]
    torch.testing.assert_close(c, want, rtol=tol, atol=tol)
    assert cbuf[:, N:].isnan().all()  # the padding: untouched
    c2, _, _ = _padded(M, N, out_dtype)
    desc_matmul_store[grid](ad, bd, TensorDescriptor(c2, [M, N], sc, [BM, BN]), M, N, K, BM=BM,
                            BN=BN, BK=BK, num_warps=warps, num_stages=num_stages,
                            tma_store=False)
    torch.testing.assert_close(c, c2, rtol=0, atol=0)  # the same values either way
