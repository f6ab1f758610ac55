"""Issue 14's libdevice additions on the GPU: the directed roundings (add/sub/mul/div/fma/rcp/
sqrt `_rd`/`_ru`/`_rz`, int -> float, double2float) against the exact references and inputs
of test_libdevice_round.py (the interpreter and gpu_sim half); skipped without a GPU."""
from fractions import Fraction

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import test_libdevice_round as lr  # noqa: E402

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
