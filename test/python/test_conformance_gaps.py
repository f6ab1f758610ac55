"""Issue 14's rows that lacked an interpreter or compiled test (docs/conformance.md): atomics
under every `sem=`/`scope=` in the interpreter (values against numpy) and their rejections
there, and `tl.pi32_t` as the target of an int64 -> pointer cast (interpreted and compiled)."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

interpreted = tilework.jit(interpret=True)


def k_sem(x, y, old, c, SEM: tl.constexpr, SCOPE: tl.constexpr):
    o = tl.arange(0, 64)
    tl.store(old + o, tl.atomic_add(x + o, tl.load(y + o), sem=SEM, scope=SCOPE))
    tl.atomic_max(c, tl.max(tl.load(y + o)), sem=SEM, scope=SCOPE)
    tl.atomic_cas(c + 1, 0, 7, sem=SEM, scope=SCOPE)
    tl.atomic_xchg(c + 2, 5, sem=SEM, scope=SCOPE)


@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
@pytest.mark.parametrize("scope", ["gpu", "cta", "sys"])
def test_atomic_sem_scope_interpreted(sem, scope):
    rng = np.random.default_rng(30)
    x = rng.integers(-100, 100, 64).astype(np.int32)
    y = rng.integers(-100, 100, 64).astype(np.int32)
    x0, old, c = x.copy(), np.zeros(64, np.int32), np.array([-1000, 0, 0], np.int32)
    interpreted(k_sem)[(1,)](x, y, old, c, SEM=sem, SCOPE=scope)
    np.testing.assert_array_equal(old, x0)
    np.testing.assert_array_equal(x, x0 + y)
    np.testing.assert_array_equal(c, [y.max(), 7, 5])


@pytest.mark.parametrize("sem, scope, msg", [
    ("seq_cst", "gpu", "atomic_add sem must be one of 'acq_rel', 'acquire', 'release', "
                       "'relaxed'; got 'seq_cst'"),
    ("relaxed", "agent", "atomic_add scope must be one of 'gpu', 'cta', 'sys'; got 'agent'")])
def test_atomic_sem_scope_rejected_interpreted(sem, scope, msg):
    z = np.zeros(64, np.int32)
    with pytest.raises(Exception, match=msg):
        interpreted(k_sem)[(1,)](z, z.copy(), z.copy(), z[:3].copy(), SEM=sem, SCOPE=scope)


def k_pi32(ptrs, out, B: tl.constexpr):
    g = tl.program_id(0)
    base = tl.load(ptrs + g).to(tl.pi32_t)
    o = tl.arange(0, B)
    tl.store(out + g * B + o, tl.load(base + o) + g)


def test_pi32_t_cast():
    assert tl.pi32_t == tl.pointer_type(tl.int32)
    ir = compile(ASTSource(tilework.jit(k_pi32), {"ptrs": tl.pointer_type(tl.int64),
                                                  "out": tl.pi32_t}, {"B": 16}, {}),
                 "sm_90a").asm["tile"]
    assert "!tile.ptr<i32>" in ir and "i64" in ir


def test_pi32_t_cast_rejects_a_float():
    def k(x, out):
        tl.store(out, tl.load(tl.load(x).to(tl.pi32_t)))
    with pytest.raises(tilework.CompilationError, match=r"cannot cast fp32 to \*int32"):
        compile(ASTSource(tilework.jit(k), {"x": tl.pointer_type(tl.float32), "out": tl.pi32_t},
                          {}, {}), "sm_90a", cache=False)
