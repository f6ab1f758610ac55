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
from regression_kernels import fp64_to_16bit, seed_1271  # noqa: E402
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


def _near_ties(rng, bits, n):
    """Doubles just above/below the halfway points of a float format whose values have
    `bits` mantissa bits after the 16-bit format's: rounded through float32 first, they
    round twice (wrongly); once, as cvt.rn.{f16,bf16}.f64 does, they do not."""
    if bits == "bf16":
        hi = rng.integers(0x0080, 0x7F7F, n).astype(np.uint32) << 16
        mid = (hi | 0x8000).view(np.float32).astype(np.float64)
    else:
        h = rng.integers(0x0400, 0x7BFF, n).astype(np.uint16).view(np.float16)
        mid = h.astype(np.float64) + np.spacing(h).astype(np.float64) / 2
    return np.concatenate([np.nextafter(mid, np.inf), -np.nextafter(mid, -np.inf)])


def test_seed_50_fp64_to_fp16_and_bf16_on_the_host():
    """Seed 50: gpu_sim segfaulted on `fptrunc double to half` (a call of `__truncdfhf2`,
    which MCJIT linked as address 0); now gpu_sim's own helper rounds once, as the GPU's
    cvt.rn.f16.f64 does, and bf16 alike, matching the interpreter and the SIMT emulator bit
    for bit (both rounded fp64 -> bf16 twice, through float32 to nearest)."""
    rng = np.random.default_rng(50)
    x = np.concatenate([rng.standard_normal(300) * 10.0 ** rng.integers(-9, 9, 300),
                        _near_ties(rng, "f16", 100), _near_ties(rng, "bf16", 100),
                        [7e4, -1e300, 3e-8, np.inf, np.nan]])
    n = x.size
    args = [x, np.full(n, np.nan, np.float16), np.full(n, 77, np.int16), n]
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    grid = (-(-n // 128),)
    fp64_to_16bit.interpret = True
    try:
        fp64_to_16bit[grid](*ref, BLOCK=128)
    finally:
        fp64_to_16bit.interpret = False
    sig = {"x_ptr": P(tl.float64), "h_ptr": P(tl.float16), "b_ptr": P(tl.int16), "n": tl.int32}
    ck = compile(ASTSource(fp64_to_16bit, sig, {"BLOCK": 128}, {}), "sm_90a",
                 CompileOptions(num_warps=4), cache=False)
    assert "fptrunc double" in ck.asm["llir"]  # (the host libcalls this test is about)
    emu = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    gpu_sim.run(ck, grid, *args)
    assert close(args[1], ref[1], True)
    assert args[2].tobytes() == ref[2].tobytes()
    from simt_emulator import Emulator  # (the tilegpu IR: its truncf to bf16 rounded twice)
    Emulator.from_tilegpu(ck.asm["tilegpu"], "sm_90a", 4).run(grid, *emu)
    assert emu[1].tobytes() == args[1].tobytes() and emu[2].tobytes() == args[2].tobytes()
    with np.errstate(over="ignore"):  # against numpy's float64 -> float16, which rounds once
        assert close(args[1], x.astype(np.float16), True)
    # the bf16 near-ties: just above a halfway point rounds up, just below it down (the
    # interpreter too: it rounded through float32 to nearest, twice)
    hi = (x[500:600].astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    want = np.concatenate([hi + 1, hi | 0x8000]).view(np.int16)  # (2nd half: negative)
    assert args[2][500:700].tobytes() == want.tobytes()


def test_seed_50_program(tmp_path):
    from fuzz_harness import check
    ok, why, _ = check(50, workdir=str(tmp_path))
    assert ok, why


def test_an_unresolved_host_function_is_rejected():
    """A function the JIT cannot find would be linked as address 0 (a segfault when called):
    gpu_sim names it instead."""
    import llvmlite.binding as lb
    lb.initialize_native_target()
    lb.initialize_native_asmprinter()
    tm = lb.Target.from_default_triple().create_target_machine()
    mod = lb.parse_assembly("declare void @no_such_host_fn()\n"
                            "define void @k() {\n  call void @no_such_host_fn()\n  ret void\n}")
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    obj = tm.emit_object(mod)
    assert "no_such_host_fn" in gpu_sim._undefined_symbols(obj)
    gpu_sim._require_resolved(obj, {"no_such_host_fn"})  # (known: accepted)
    with pytest.raises(gpu_sim.Unsupported,
                       match="cannot resolve `no_such_host_fn` .*add it to gpu_sim's helpers"):
        gpu_sim._require_resolved(obj, set())
