"""Tuple (and namedtuple) kernel arguments on the GPU: the kernels of test_tuple_args.py
launched with torch tensors inside nested tuples and namedtuples, against numpy; a new structure compiles a
new variant; `warmup` for the device; autotune timing configs of a kernel taking tuples; host
TensorDescriptors as tuple members (TMA-loaded on sm_90).
Skipped without a GPU (docs/conformance.md's row)."""
import numpy as np
import pytest

import tilework
import tilework.language as tl

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_tuple_args import (Descs, Op, Src, View, _axpb, k_args, k_copy,  # noqa: E402
                             k_desc_tuple, k_pairs, k_shape, k_views, np_args, np_views)

DEV = "cuda"
rng = np.random.default_rng(615)


def test_tuple_arguments_on_the_gpu():
    kern = tilework.jit(k_args)
    x = rng.standard_normal(1000).astype(np.float32)
    xt = torch.from_numpy(x).to(DEV)
    for k, m in ((7, 32), (-3, 5)):  # m == 32 divisible by 16, then not: two variants
        outs = tuple(torch.zeros(1000, device=DEV) for _ in range(3))
        for _ in range(2):  # the second launch finds the variant
            kern[(8,)](Src(xt, 1.5), outs, 1000, (k, tl.constexpr(3), None, (1, m)), IDX=2,
                       BLOCK=128)
        # ptxas contracts x * 1.5 + k into one fma (one rounding, as Triton's code): each
        # element is the two-step value or the fused one, bit for bit
        y = x.astype(np.float64) * 1.5  # (exact)
        fused = (y + k, y * 3, y + m)
        for got, want, want_fma in zip(outs, np_args(x, 1.5, k, m), fused):
            got = got.cpu().numpy()
            ok = (got == want) | (got == want_fma.astype(np.float32))
            assert ok.all(), (k, m, np.flatnonzero(~ok)[:5], got[~ok][:5], want[~ok][:5])
    assert len(kern.cache) == 2


def test_nested_pairs_and_shape_tuples_on_the_gpu():
    a, b = (rng.standard_normal(16).astype(np.float32) for _ in range(2))
    out = torch.zeros(16, device=DEV)
    tilework.jit(k_pairs)[(1,)](((torch.from_numpy(a).to(DEV), 2.0),
                                 (torch.from_numpy(b).to(DEV), 0.5)), out, N=16)
    np.testing.assert_allclose(out.cpu().numpy(), a * 2 + b * 0.5 + 2.5, rtol=1e-6)
    x = torch.randint(-5, 5, (8, 8), dtype=torch.int32, device=DEV)
    want = 8 * x
    tilework.jit(k_shape)[(1,)](x, x.shape, x.stride(), (2, 3))  # torch.Size, a stride tuple
    assert torch.equal(x, want)


def test_namedtuples_on_the_gpu():
    x = rng.standard_normal((24, 16)).astype(np.float32)
    a = np.array([1.75], np.float32)
    y = torch.zeros((10, 16), device=DEV)
    tilework.jit(k_views)[(1,)](Op(_axpb, (torch.from_numpy(a).to(DEV), 0.25)),
                                View(torch.from_numpy(x).to(DEV), 24, 16), View(y, 10, 16),
                                R=32, C=16)
    np.testing.assert_allclose(y.cpu().numpy(), np_views(x, a, 0.25, 10), rtol=1e-6)


def test_a_new_structure_is_a_new_variant_on_the_gpu():
    kern = tilework.jit(k_copy)
    a = torch.randn(16, device=DEV)
    b, c = torch.zeros(16, device=DEV), torch.zeros(16, device=DEV)
    kern[(1,)]((a, b), N=16)
    kern[(1,)]((a, c, 3), N=16)  # one more member: compiled anew, not an error
    assert torch.equal(b, a) and torch.equal(c, a) and len(kern.cache) == 2
    assert kern.warmup((a, b), N=16) in kern.cache.values()  # the loaded variant, no launch


def test_autotune_with_tuple_arguments_on_the_gpu():
    configs = [tilework.Config({"BLOCK": 128}, num_warps=4),
               tilework.Config({"BLOCK": 256}, num_warps=8)]

    @tilework.autotune(configs=configs, key=["n"], reset_to_zero=["outs"])
    @tilework.jit
    def kern(src, outs, n, coef, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = o < n
        x = tl.load(src.ptr + o, mask=m) * coef[0] + coef[1]
        tl.store(outs[0] + o, x, mask=m)
        tl.store(outs[1] + o, x * src.scale, mask=m)

    x = torch.randn(10000, device=DEV)
    outs = (torch.zeros_like(x), torch.zeros_like(x))
    kern[lambda meta: (tl.cdiv(meta["n"], meta["BLOCK"]),)](Src(x, 0.5), outs, 10000, (2.0, 1))
    assert kern.best_config in configs
    torch.testing.assert_close(outs[0], x * 2 + 1)
    torch.testing.assert_close(outs[1], (x * 2 + 1) * 0.5)


def test_descriptor_members_on_the_gpu():
    from tilework.tools.tensor_descriptor import TensorDescriptor as TD
    kern = tilework.jit(k_desc_tuple)
    M, N = 37, 52
    a = torch.randn(M, N, device=DEV)
    bias = torch.randn(N, device=DEV)
    for _ in range(2):  # the second launch finds the variant (and the memoized tensor maps)
        out = torch.full((M, N), 7.0, device=DEV)
        kern[(3, 2)](Descs(TD.from_tensor(a, [16, 32]), TD.from_tensor(out, [16, 32])),
                     (1.5, TD.from_tensor(bias, [32])), BM=16, BN=32)
        torch.testing.assert_close(out, a * 1.5 + bias, rtol=1e-6, atol=1e-6)
    assert len(kern.cache) == 1
