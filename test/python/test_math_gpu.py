"""The math builtins on a CUDA GPU, against float64/longdouble (mpmath) references with the ulp
bounds documented in docs/language.md (math_kernels.gpu_bound).  Skipped without a GPU."""
import numpy as np
import pytest

import tilework
import tilework.language as tl

import math_kernels as K

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

TORCH = {"fp32": torch.float32, "fp64": torch.float64, "fp16": torch.float16,
         "bf16": torch.bfloat16, "int8": torch.int8, "int32": torch.int32,
         "int64": torch.int64, "uint32": torch.uint32, "uint64": torch.uint64}


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


def cuda(x, d):
    t = torch.from_numpy(np.ascontiguousarray(x))
    return (t.to(torch.bfloat16) if d == "bf16" else t).cuda()


def host(t):
    t = t.cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def poisoned(n, d):
    """An output filled with NaN (77 for ints): every element must be written."""
    if d in ("int8", "int32", "int64", "uint32", "uint64"):
        return torch.from_numpy(np.full(n, 77, K.NP[d])).cuda()
    return torch.full((n,), float("nan"), dtype=TORCH[d], device="cuda")


def check(fn, d, x, y, exact, src=None):
    err = K.ulp_error(y, exact, d)
    bound = K.gpu_bound(fn, d, x, src)
    bad = err > bound
    if fn in ("sin", "cos") and d == "fp64":  # beyond 2**27: 2 ulp + 2**-62 absolute
        big = np.isfinite(x) & (np.abs(x) >= 2.0 ** 27)
        e = np.asarray(exact, np.float64)
        bad &= ~(big & (np.abs(y - e) <= 2 * np.spacing(np.abs(e)) + 2.0 ** -62))
    if bad.any():
        i = int(np.argmax(np.where(bad, err, -1)))
        raise AssertionError(f"{fn} {d}: {int(bad.sum())} of {x.size} beyond the bound, e.g. "
                             f"x={x[i]!r} -> {y[i]!r}, want {float(exact[i])!r} "
                             f"({err[i]:.2f} ulp)")


@pytest.mark.parametrize("n, block", [(200_000, 1024), (1000, 256), (1, 128)])
@pytest.mark.parametrize("fn, d", K.UNARY_CASES)
def test_unary(fn, d, n, block, rng):
    if d == "fp64" and fn in ("sin", "cos", "erf"):
        n = min(n, 20_000)  # mpmath references
    x = K.inputs(fn, d, n, rng)
    y = poisoned(x.size, d)
    K.unary_kernel[(tl.cdiv(x.size, block),)](cuda(x, d), y, x.size, FN=fn, BLOCK=block)
    torch.cuda.synchronize()
    y = host(y)
    if fn == "abs":
        assert np.array_equal(y, np.abs(x), equal_nan=True)
        if d.startswith("fp") or d == "bf16":
            assert not np.signbit(y[~np.isnan(y)]).any()
        return
    check(fn, d, x, y, K.flushed(fn, d, K.reference(fn, x)))
    if fn in ("sin", "erf"):
        zeros = x == 0
        assert (np.signbit(y[zeros]) == np.signbit(x[zeros])).all()


@pytest.mark.parametrize("fn", ["exp", "sin", "erf", "sqrt", "log"])
def test_2d_masked(fn, rng):
    M, N = 37, 50
    x = rng.uniform(0.1, 3, (M, N)).astype(np.float32)
    y = torch.full((M, N), float("nan"), device="cuda")
    K.unary_2d_kernel[(tl.cdiv(M, 16), tl.cdiv(N, 32))](cuda(x, "fp32"), y, M, N, FN=fn,
                                                         BM=16, BN=32)
    torch.cuda.synchronize()
    x = x.ravel()
    check(fn, "fp32", x, host(y).ravel(), K.reference(fn, x))


@pytest.mark.parametrize("fn, d", K.BINARY_CASES)
def test_binary(fn, d, rng):
    n = 100_000
    x, y = K.inputs(fn, d, n, rng), K.inputs(fn, d, n, rng)[::-1].copy()
    if fn == "cdiv":
        y = np.where(y == 0, 7, np.abs(y) % 1000 + 1).astype(x.dtype)
    od = K.out_dtype(fn, d)
    o = poisoned(x.size, od)
    K.binary_kernel[(tl.cdiv(x.size, 512),)](cuda(x, d), cuda(y, d), o, x.size, FN=fn,
                                             BLOCK=512)
    torch.cuda.synchronize()
    o = host(o)
    if fn == "umulhi":
        ut = np.uint32 if x.dtype.itemsize == 4 else np.uint64
        want = [(int(a) * int(b)) >> (8 * x.dtype.itemsize) for a, b in zip(x.view(ut), y.view(ut))]
        assert [int(v) for v in o.view(ut)] == want
    elif fn == "cdiv":
        assert o.tolist() == [int((int(a) + int(b) - 1) / int(b)) for a, b in zip(x, y)]
    else:
        with np.errstate(all="ignore"):
            exact = x.astype(np.longdouble) / y.astype(np.longdouble)
        check(fn, od, x, o, exact, src=d)  # fp16/bf16 quotients are correctly rounded


@pytest.mark.parametrize("fn, d", K.TERNARY_CASES)
def test_ternary(fn, d, rng):
    n = 20_000
    x, y, z = (K.inputs("fma", d, n, rng) for _ in range(3))
    if fn.startswith("clamp"):
        y, z = np.minimum(y, z), np.maximum(y, z)
        y[np.isnan(y)], z[np.isnan(z)] = -1, 1
    od = K.out_dtype(fn, d)
    o = poisoned(x.size, od)
    K.ternary_kernel[(tl.cdiv(x.size, 256),)](cuda(x, d), cuda(y, d), cuda(z, d), o, x.size,
                                              FN=fn, BLOCK=256)
    torch.cuda.synchronize()
    o = host(o)
    if fn == "fma":
        check(fn, d, x, o, K.exact_fma(x, y, z))
    else:
        want = np.minimum(np.maximum(x, y), z)
        if fn == "clamp":
            want = np.where(np.isnan(x), y, want)
        assert np.array_equal(o, want.astype(o.dtype), equal_nan=True)


@tilework.jit
def _mod_kernel(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) % tl.load(y_ptr + offs, mask=m),
             mask=m)


@pytest.mark.parametrize("d", ["fp32", "fp64", "fp16"])
def test_float_mod_is_exact_fmod(d, rng):
    """Float `%` is C fmod (the sign of x), exact: huge and tiny ratios, subnormals, signed
    zeros, infinities and NaN, against numpy's fmod."""
    dt = K.NP[d]
    n = 30_011
    mag = {"fp16": 12, "fp32": 60, "fp64": 300}[d]
    x = (rng.standard_normal(n) * 10.0 ** rng.uniform(-mag, mag, n)).astype(dt)
    y = (rng.standard_normal(n) * 10.0 ** rng.uniform(-mag, mag, n)).astype(dt)
    sp = K.specials(d)
    x[:sp.size * sp.size] = np.repeat(sp, sp.size)
    y[:sp.size * sp.size] = np.tile(sp, sp.size)
    out = poisoned(n, d)
    _mod_kernel[(tl.cdiv(n, 1024),)](cuda(x, d), cuda(y, d), out, n, BLOCK=1024)
    got = host(out)
    with np.errstate(all="ignore"):
        want = np.fmod(x, y)
    assert np.array_equal(got, want, equal_nan=True), (x[got != want][:5], y[got != want][:5])
    assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
