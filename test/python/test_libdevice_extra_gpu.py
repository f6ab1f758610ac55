"""Issue 14's libdevice additions on the GPU: the directed roundings (add/sub/mul/div/fma/rcp/
sqrt `_rd`/`_ru`/`_rz`, int -> float, double2float) against the exact references and inputs
of test_libdevice_round.py, and the special functions (erfinv, lgamma, ...) within the ulp
bounds of test_libdevice_special.py, the Bessel functions within test_libdevice_bessel.py's
and tl.bitonic_merge (test_bitonic_merge.py) (those files are the interpreter and emulator
halves);
skipped without a GPU."""
from fractions import Fraction

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import test_libdevice_round as lr  # noqa: E402
from libdevice_checks import k1  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no GPU", allow_module_level=True)

TORCH = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32,
         "int64": torch.int64}
VIEW = {"uint32": ("int32", torch.uint32), "uint64": ("int64", torch.uint64)}


def dev(a):
    a = np.ascontiguousarray(a)
    if str(a.dtype) in VIEW:
        signed, ut = VIEW[str(a.dtype)]
        return torch.from_numpy(a.view(signed)).cuda().view(ut)
    return torch.from_numpy(a).cuda()


def run_gpu(name, ins, out_dt):
    k = (lr.k1, lr.k2, lr.k3)[len(ins) - 1]
    o = torch.zeros(lr.N, dtype=TORCH[str(np.dtype(lr.NP[out_dt]))], device="cuda")
    k[(1,)](*[dev(a) for a in ins], o, FN=name)
    torch.cuda.synchronize()
    return o.cpu().numpy()


def same_bits(got, want):
    w = got.dtype.itemsize
    return (got.view(f"u{w}") == want.view(f"u{w}")) | (np.isnan(got) & np.isnan(want))


@pytest.mark.parametrize("op, dt", lr.CASES, ids=[f"{o}-{d}" for o, d in lr.CASES])
def test_arith(op, dt):
    t = lr.NP[dt]
    xs = lr.inputs(op, t, np.random.default_rng(lr.OPS.index(op) * 2 + (dt == "fp64")))
    for mode in lr.MODES:
        want = np.array([lr.ref_op(op, mode, args, t) for args in zip(*xs)], t)
        got = run_gpu(f"{op}_{mode}", xs, dt)
        bad = np.flatnonzero(~same_bits(got, want))
        assert not bad.size, (op, mode, [(tuple(x[i] for x in xs), got[i], want[i])
                                         for i in bad[:5]])


@pytest.mark.parametrize("name, src, dst", lr.CONV, ids=[c[0] for c in lr.CONV])
def test_int_to_float(name, src, dst):
    t = lr.NP[dst]
    x = lr.int_inputs(src, np.random.default_rng(len(name)))
    for mode in lr.MODES:
        want = np.array([t(0.0) if int(v) == 0 else lr.round_frac(Fraction(int(v)), t, mode)
                         for v in x], t)
        np.testing.assert_array_equal(run_gpu(f"{name}_{mode}", [x], dst), want)


import test_libdevice_special as ls  # noqa: E402


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", list(ls.CASES))
def test_special(fn, dt):
    """The special functions' ulp bounds of test_libdevice_special.py, on the GPU."""
    t = ls.NP[dt]
    x = ls.inputs(fn, t, np.random.default_rng(len(fn) + (dt == "fp64")))
    o = torch.zeros(ls.N, dtype=TORCH[str(np.dtype(t))], device="cuda")
    k1[(1,)](dev(x), o, FN=fn)
    got = o.cpu().numpy()
    n_ex = len(ls.EXACT[fn])
    bound = 1.0 if dt == "fp32" else ls.CASES[fn][1]
    errs = [ls.ulps(g, ls.REF[fn](float(v)), t) for g, v in zip(got[:-n_ex], x[:-n_ex])]
    worst = int(np.argmax(errs))
    assert errs[worst] <= bound, (fn, x[worst], got[worst], errs[worst])
    np.testing.assert_array_equal(got[-n_ex:], np.array([w for _, w in ls.EXACT[fn]], t))


import test_libdevice_bessel as lb  # noqa: E402


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", list(lb.REF))
def test_bessel(fn, dt):
    """The Bessel functions' bounds of test_libdevice_bessel.py, on the GPU."""
    t = lb.NP[dt]
    x = lb.inputs(fn, t, np.random.default_rng(len(fn) * 3 + (dt == "fp64")))
    o = torch.zeros(lb.N, dtype=TORCH[str(np.dtype(t))], device="cuda")
    k1[(1,)](dev(x), o, FN=fn)
    got = o.cpu().numpy()
    n_ex = len(lb.EXACT[fn])
    bound = 8.0 if (dt == "fp64" and fn.startswith("cyl")) else lb.BOUND[dt]
    for g, v in zip(got[:-n_ex], x[:-n_ex]):
        w = lb.REF[fn](float(v))
        wf = t(float(w))
        err = lb.error(fn, g, w, t) if np.isfinite(wf) else (0.0 if g == wf else np.inf)
        assert err <= bound, (fn, v, g, err)
    np.testing.assert_array_equal(got[-n_ex:], np.array([w for _, w in lb.EXACT[fn]], t))


import test_bitonic_merge as bm  # noqa: E402


@pytest.mark.parametrize("m, n, dim, desc", [(4, 64, 1, True), (32, 8, 0, False), (1, 1024, 1, 1)])
def test_bitonic_merge(m, n, dim, desc):
    rng = np.random.default_rng(n)
    for x in (bm.bitonic(rng, m, n, dim, np.float32),
              rng.standard_normal((m, n)).astype(np.float32)):
        y = torch.zeros((m, n), dtype=torch.float32, device="cuda")
        bm.merge_k[(1,)](dev(x), y, M=m, N=n, DIM=dim, DESC=desc)
        np.testing.assert_array_equal(y.cpu().numpy(), bm.network(x, dim, desc))


def test_rcp64h():
    """NVIDIA: rcp.approx.ftz.f64 (its bits are the instruction's; checked loosely);
    AMD: the high word of 1/x, as the interpreter."""
    rng = np.random.default_rng(11)
    x = lr.floats(np.float64, rng, lr.N, -1000, 1000)
    o = torch.zeros(lr.N, dtype=torch.float64, device="cuda")
    lr.k1[(1,)](dev(x), o, FN="rcp64h")
    got = o.cpu().numpy()
    assert (np.abs(got / (1.0 / x) - 1) < 2.0 ** -19).all()
    if getattr(torch.version, "hip", None) is not None:
        oi = np.zeros(lr.N, np.float64)
        lr.tilework.jit(lr.k1.fn, interpret=True)[(1,)](x, oi, FN="rcp64h")
        np.testing.assert_array_equal(got, oi)


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", ["jn", "yn"])
def test_integer_order_bessel(fn, dt):
    t = lb.NP[dt]
    n, x = lb.order_inputs(t, np.random.default_rng(17 + (dt == "fp64")))
    o = torch.zeros(lb.N, dtype=TORCH[str(np.dtype(t))], device="cuda")
    lb.k_order[(1,)](dev(n), dev(x), o, FN=fn)
    errs = lb.order_errors(fn, n, x, o.cpu().numpy(), t)
    bound = 1.0 if dt == "fp32" else {"jn": 2.0, "yn": 12.0}[fn]
    assert max(errs) <= bound, (fn, max(errs))
