"""The kernels of test_interp_parity_constructs.py, test_language_compat.py and
test_libdevice_convert.py compiled and run on a GPU (torch CUDA tensors) against the
interpreter and numpy (skipped without a GPU)."""
import numpy as np
import pytest

import test_interp_parity_constructs as P
import test_language_compat as C
import test_libdevice_convert as L

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no GPU", allow_module_level=True)


def dev(a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def host(t):
    torch.cuda.synchronize()
    return t.cpu().numpy()


def _both(fn, arrays, outs, scalars, constants):
    """(interpreted outputs, GPU outputs)."""
    oi = [o.copy() for o in outs]
    import tilework
    tilework.jit(fn.fn, interpret=True)[(1,)](*arrays, *oi, *scalars, **constants)
    od = [dev(o) for o in outs]
    fn[(1,)](*[dev(a) for a in arrays], *od, *scalars, **constants)
    return oi, [host(o) for o in od]


@pytest.mark.parametrize("fn, constants, n", [(P.k_bool_ops, {"B": 16}, 5),
                                              (P.k_bool_ops, {"B": 16}, 200),
                                              (P.k_constexpr_short_circuit, {"B": 0}, 5),
                                              (P.k_taken, {"B": 4}, 6)])
def test_constructs(fn, constants, n):
    rng = np.random.default_rng(5)
    x, y = (rng.standard_normal(32).astype(np.float32) for _ in range(2))
    oi, og = _both(fn, [x, y], [np.full(16, -7, np.float32)], [n], constants)
    np.testing.assert_allclose(og[0], oi[0], rtol=1e-5)


def test_compat():
    x, y, bits, m = C._inputs(np.random.default_rng(16))
    o, ors, cnt, q = C._buffers()
    od, orsd, cntd, qd = dev(o), dev(ors), dev(cnt), dev(q)
    C.k_compat[(1,)](dev(x), dev(y), od, dev(bits), orsd, cntd, dev(m), qd, B=16)
    C._check((host(od), host(orsd), host(cntd), host(qd)), C._expected(x, y, bits, m))


@pytest.mark.parametrize("name, in_dt, out_dt, ref", L.UNARY, ids=[u[0] for u in L.UNARY])
def test_libdevice_unary(name, in_dt, out_dt, ref):
    rng = np.random.default_rng(hash(name) % 1000)
    x = L._input(in_dt, rng, positive="uint" in name.split("2")[-1] or "ull" in name[6:])
    o = dev(np.zeros(16, L.NP[out_dt]))
    L.k_unary[(1,)](dev(x), o, FN=name)
    np.testing.assert_array_equal(host(o), ref(x))
