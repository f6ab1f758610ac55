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


def k_trans4d(a, out, D0, D1, D2, D3, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr,
              B3: tl.constexpr):
    """A 4-D block read through tl.make_tensor_descriptor, permuted, stored contiguous (the
    shape of Triton's test_trans_4d)."""
    src = tl.make_tensor_descriptor(a, [D0, D1, D2, D3], [D1 * D2 * D3, D2 * D3, D3, 1],
                                    [B0, B1, B2, B3])
    t = tl.permute(src.load([0, 0, 0, 0]), (2, 0, 3, 1))  # [B2, B0, B3, B1]
    o = (tl.arange(0, B2)[:, None, None, None] * (B0 * B3 * B1)
         + tl.arange(0, B0)[None, :, None, None] * (B3 * B1)
         + tl.arange(0, B3)[None, None, :, None] * B1 + tl.arange(0, B1)[None, None, None, :])
    tl.store(out + o, t)


SHAPE4 = (2, 4, 8, 8)


def test_make_tensor_descriptor_4d_interpreted():
    a = np.random.default_rng(31).standard_normal(SHAPE4).astype(np.float32)
    out = np.zeros(a.size, np.float32)
    interpreted(k_trans4d)[(1,)](a, out, *SHAPE4, B0=2, B1=4, B2=8, B3=8)
    np.testing.assert_array_equal(out, a.transpose(2, 0, 3, 1).ravel())


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_make_tensor_descriptor_4d_compiled(target):
    from simt_emulator import Emulator
    a = np.random.default_rng(32).standard_normal(SHAPE4).astype(np.float32)
    out = np.zeros(a.size, np.float32)
    sig = {"a": tl.pointer_type(tl.float32), "out": tl.pointer_type(tl.float32),
           **{f"D{i}": tl.int32 for i in range(4)}}
    emu = Emulator.from_kernel(tilework.jit(k_trans4d), sig, dict(B0=2, B1=4, B2=8, B3=8),
                               target, 4)
    emu.run((1,), a, out, *SHAPE4)
    np.testing.assert_array_equal(out, a.transpose(2, 0, 3, 1).ravel())


def k_bad_index(x, WHAT: tl.constexpr):
    p = x + tl.arange(0, 8)
    if WHAT == "int":
        q = p[None, 0]  # ERR
    else:
        q = p[:, :, None]  # ERR (a `:` past the rank is Triton's no-op; None there is not)
    tl.store(q, 1.0)


@pytest.mark.parametrize("what, msg", [
    ("int", "unsupported tensor index: tiles are indexed only with None and `:`, got 0"),
    ("colons", "invalid axis 2: axis 2 is out of range for a tile of rank 2")])
def test_bad_none_indexing_rejected(what, msg):
    from located import assert_located
    with pytest.raises(tilework.CompilationError) as e:
        compile(ASTSource(tilework.jit(k_bad_index), {"x": tl.pointer_type(tl.float32)},
                          {"WHAT": what}, {}), "sm_90a", cache=False)
    assert_located(e.value, msg, __file__)
    with pytest.raises(Exception, match=msg):
        interpreted(k_bad_index)[(1,)](np.zeros(8, np.float32), WHAT=what)
