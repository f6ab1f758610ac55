"""Atomic memory semantics and scopes reach the instruction, for every atomic: NVIDIA PTX in
Triton's modifier orders (`atom.global.<scope>.<sem>.<op>` for read-modify-writes,
`atom.global.<sem>.<scope>.cas`), AMD `llvm.atomicrmw`/`llvm.cmpxchg` with the LLVM ordering
and syncscope; the defaults are acq_rel at gpu scope, as Triton."""
import pytest

import tilework
import tilework.language as tl

ORDER = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}
AMD_SCOPE = {"gpu": 'syncscope("agent")', "cta": 'syncscope("workgroup")', "sys": None}
PTX = {"atomic_add": "add.u32", "atomic_max": "max.s32", "atomic_min": "min.s32",
       "atomic_and": "and.b32", "atomic_or": "or.b32", "atomic_xor": "xor.b32",
       "atomic_xchg": "exch.b32"}


@tilework.jit
def rmw(x, y, old, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    offs = tl.arange(0, 128)
    o = getattr(tl, OP)(x + offs, tl.load(y + offs), sem=SEM, scope=SCOPE)
    tl.store(old + offs, o)


@tilework.jit
def cas(x, old, SEM: tl.constexpr, SCOPE: tl.constexpr):
    offs = tl.arange(0, 128)
    tl.store(old + offs, tl.atomic_cas(x + offs, 0, offs, sem=SEM, scope=SCOPE))


SIG = {"x": "*i32", "y": "*i32", "old": "*i32"}


def atom_lines(text, word):
    return [ln.strip() for ln in text.splitlines() if word in ln]


@pytest.mark.parametrize("op", sorted(PTX))
@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel", None])
def test_rmw_ptx_every_op_and_sem(op, sem):
    scope = {"relaxed": "cta", "acquire": "sys"}.get(sem, "gpu")
    ck = tilework.compile(rmw, target="sm_90a", signature=SIG,
                          constexprs={"OP": op, "SEM": sem, "SCOPE": scope})
    lines = atom_lines(ck.asm["ptx"], "atom.")
    assert lines and all(ln.startswith(f"atom.global.{scope}.{sem or 'acq_rel'}.{PTX[op]} ")
                         for ln in lines), lines
    assert "cubin" in ck.asm  # ptxas accepted it


@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
@pytest.mark.parametrize("scope", ["gpu", "cta", "sys"])
def test_cas_ptx_sem_and_scope(sem, scope):
    ck = tilework.compile(cas, target="sm_90a", signature={"x": "*i32", "old": "*i32"},
                          constexprs={"SEM": sem, "SCOPE": scope})
    lines = atom_lines(ck.asm["ptx"], "atom.")
    assert lines and all(ln.startswith(f"atom.global.{sem}.{scope}.cas.b32 ") for ln in lines)
    assert "cubin" in ck.asm


def test_cas_default_is_acq_rel_gpu():
    ck = tilework.compile(cas, target="sm_90a", signature={"x": "*i32", "old": "*i32"},
                          constexprs={"SEM": None, "SCOPE": None})
    assert "atom.global.acq_rel.gpu.cas.b32" in ck.asm["ptx"]


@pytest.mark.parametrize("op", ["atomic_add", "atomic_xchg", "atomic_and"])
@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
@pytest.mark.parametrize("scope", ["gpu", "cta", "sys"])
def test_rmw_amd_ordering_and_syncscope(op, sem, scope):
    ck = tilework.compile(rmw, target="gfx942", signature=SIG,
                          constexprs={"OP": op, "SEM": sem, "SCOPE": scope})
    lines = atom_lines(ck.asm["llvm"], "llvm.atomicrmw")
    assert lines
    for ln in lines:
        assert f" {ORDER[sem]} " in ln, ln
        assert (AMD_SCOPE[scope] in ln) if AMD_SCOPE[scope] else "syncscope" not in ln, ln


@pytest.mark.parametrize("sem, failure", [("relaxed", "monotonic"), ("acquire", "acquire"),
                                          ("release", "monotonic"), ("acq_rel", "acquire")])
@pytest.mark.parametrize("scope", ["gpu", "cta", "sys"])
def test_cas_amd_ordering_and_syncscope(sem, failure, scope):
    ck = tilework.compile(cas, target="gfx942", signature={"x": "*i32", "old": "*i32"},
                          constexprs={"SEM": sem, "SCOPE": scope})
    lines = atom_lines(ck.asm["llvm"], "llvm.cmpxchg")
    assert lines
    for ln in lines:
        assert f" {ORDER[sem]} {failure} " in ln, ln
        assert (AMD_SCOPE[scope] in ln) if AMD_SCOPE[scope] else "syncscope" not in ln, ln
    assert "global_atomic_cmpswap" in ck.asm["amdgcn"]


@pytest.mark.parametrize("kw, msg", [
    ({"SEM": "seq_cst", "SCOPE": "gpu"},
     "atomic_xor sem must be one of 'acq_rel', 'acquire', 'release', 'relaxed'; got 'seq_cst'"),
    ({"SEM": "acq_rel", "SCOPE": "agent"},
     "atomic_xor scope must be one of 'gpu', 'cta', 'sys'; got 'agent'")])
def test_bad_values_rejected(kw, msg):
    with pytest.raises(tilework.CompilationError, match=msg.replace("(", r"\(")):
        tilework.compile(rmw, target="sm_90a", signature=SIG, constexprs={"OP": "atomic_xor", **kw})
