"""The differential fuzzer in CI: random tile programs (fuzz_gen.py) run in the interpreter and
compiled for sm_90a, the compiled code run on this CPU by gpu_sim.py, outputs compared bit for
bit or within fuzz_harness's tolerance.  TILEWORK_FUZZ_COUNT programs (default 160, about
2 minutes on one core) from TILEWORK_FUZZ_SEED (default 0), in chunks of 20.  The GPU run:
test_fuzz_gpu.py.  By hand: `python test/python/fuzz --seed S --count N [--gpu]`."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_gen import Gen  # noqa: E402
from fuzz_harness import check, close  # noqa: E402

import numpy as np  # noqa: E402

COUNT = int(os.environ.get("TILEWORK_FUZZ_COUNT", "160"))
SEED = int(os.environ.get("TILEWORK_FUZZ_SEED", "0"))
CHUNK = 20


@pytest.mark.parametrize("start", range(SEED, SEED + COUNT, CHUNK))
def test_fuzz_cpu(start, tmp_path):
    bad = []
    for s in range(start, min(start + CHUNK, SEED + COUNT)):
        ok, why, g = check(s, False, str(tmp_path))
        if not ok:
            bad.append(f"seed {s}:\n{g.source()}\n{why}")
    assert not bad, "\n\n".join(bad)


def test_generator_covers_the_brief():
    """Over the CI seeds the programs use every family the fuzzer is meant to cover."""
    feats, dts = set(), set()
    for s in range(SEED, SEED + COUNT):
        g = Gen(s)
        g.program()
        feats |= g.features
        dts |= {g.dx, g.dy}
    fams = {f.split("_")[0] for f in feats}
    for need in ("int", "float", "un", "where", "cast", "red", "scan", "perm", "math", "join",
                 "if", "for", "while", "atomic"):
        assert need in fams, need
    assert {"sum", "max", "min", "argmax", "xor"} <= {f.split("_")[1] for f in feats
                                                     if f.startswith("red_")}
    assert dts >= {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                   "float16", "float32", "float64"}


def test_programs_are_reproducible():
    assert Gen(7).program() == Gen(7).program()
    assert Gen(7).program() != Gen(8).program()


def test_compare_rules():
    f = np.array([1.0, np.nan, -0.0], np.float32)
    assert close(f, f.copy(), True)
    assert not close(f, np.array([1.0, np.nan, 0.0], np.float32), True)  # the sign of zero
    assert close(f, np.array([1.0, np.nan, 0.0], np.float32), True, zero_sign=False)
    assert not close(f, np.nextafter(f, 2).astype(np.float32), True)
    g = np.array([1.0, 2.0], np.float32)
    assert close(g * (1 + 1e-6), g, False)
    assert not close(g * 1.01, g, False)
    assert close(np.array([np.inf], np.float16), np.array([65504.0], np.float16), False)
    assert not close(np.array([1], np.int32), np.array([1], np.int64), True)


def test_compare_rules_of_float_sums():
    """A sum that cancels: 300 ulp of the element, 2 of the output's largest value, passes
    only where the program sums floats (sums=True); 32 ulp of the largest value does not."""
    ref = np.array([1e6, 1.0], np.float32)
    eps = np.finfo(np.float32).eps
    near = np.array([1e6, 1.0 + 2 * eps * 1e6], np.float32)
    far = np.array([1e6, 1.0 + 32 * eps * 1e6], np.float32)
    assert not close(near, ref, False)
    assert close(near, ref, False, sums=True)
    assert not close(far, ref, False, sums=True)
