"""Every mismatch the fuzzer found, as a fixed program: interpreted and compiled (sm_90a, run
by gpu_sim.py), compared as the fuzzer compares."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gpu_sim  # noqa: E402
import tilework.language as tl  # noqa: E402
from fuzz_harness import close  # noqa: E402
from regression_kernels import seed_1271  # noqa: E402
from tilework import CompileOptions  # noqa: E402
from tilework.compiler.driver import ASTSource, compile  # noqa: E402

P = tl.pointer_type


@pytest.mark.parametrize("low", [-3, 1])  # (both sides of the `if`)
def test_seed_1271_select_on_a_scalar_condition(low):
    rng = np.random.default_rng(1271)
    m, n = 3, 50
    x = rng.standard_normal(m * n).astype(np.float16)
    y = rng.integers(low, 100, m * n).astype(np.int8)
    outs = [np.full(m * n, np.nan, d) for d in (np.float32, np.float16, np.float32)]
    args = [x, y, *outs, np.zeros(1, np.int32), m, n, 0, 0]
    grid = (m, 2)
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    seed_1271.interpret = True
    try:
        seed_1271[grid](*ref, BM=1, BN=32)
    finally:
        seed_1271.interpret = False
    sig = {"x_ptr": P(tl.float16), "y_ptr": P(tl.int8), "out0_ptr": P(tl.float32),
           "out1_ptr": P(tl.float16), "out2_ptr": P(tl.float32), "cnt_ptr": P(tl.int32),
           "M": tl.int32, "N": tl.int32, "s0": tl.int32, "s1": tl.int32}
    ck = compile(ASTSource(seed_1271, sig, {"BM": 1, "BN": 32}, {}), "sm_90a",
                 CompileOptions(num_warps=1), cache=False)
    assert "arith.select" in ck.asm["tilegpu"] or "scf.if" in ck.asm["tilegpu"]
    gpu_sim.run(ck, grid, *args)
    for i in range(3):  # (sqrt.approx: within the fuzzer's tolerance)
        assert close(args[2 + i], ref[2 + i], False, np.dtype(np.float16)), i
    if low == 1:  # the else side: exact
        assert args[4].tobytes() == ref[4].tobytes()


@pytest.mark.parametrize("seed", [501, 707])
def test_float_sums_added_in_another_order(seed, tmp_path):
    """Seeds 501 (an fp32 cumsum of int64 values near 1e19 into an fp64 output) and 707 (an
    fp16 cumsum, then an fp16 sum over rows): the compiled scan and reduction add in a tree,
    the interpreter (numpy) in sequence.  Where the result cancels, they differ by 1.8 and
    1.5 ulp of the output's largest value (300 ulp of that element): within the harness's
    SUM_TOL for programs that sum floats, as every order is a correct one."""
    from fuzz_harness import check
    ok, why, _ = check(seed, workdir=str(tmp_path))
    assert ok, why
