"""LayerNorm backward's dx kernel (benchmarks/tutorial_style.py, the tutorial's): its fp32
partial-sum rows are read, added to and written under a spin lock, one row of programs after
another.  The rank's default layout was made for the fp16 rows (8 a thread, 16 bytes), which
split each thread's 8 fp32 partial sums into two 16-byte vectors 16 bytes apart: every warp
store then spanned 1 KiB for its 512 bytes (32 half-written sectors, twice).  The default is
now capped at 4 a thread (`layout_hints.store_run_cap`): the partial sums are 16-byte accesses
with lanes contiguous, and no conversion is added (the fp16 accesses become 8 bytes a thread,
whole sectors still).  Checked on the tilegpu text, the PTX and ptxas's counts, and run by
gpu_sim (the compiled code, lock included) against numpy."""
import re

import numpy as np
import pytest

import gpu_sim
import test_tutorial_style as tts
import tilework
import tilework.language as tl

SIG = tts.SIG["ln_bwd_dx"][0]


def _compile(block, warps, group=96):
    return tts.tutorial_style.build("tilework").ln_bwd_dx.warmup(
        *SIG, GROUP_SIZE_M=group, BLOCK_SIZE_N=block, num_warps=warps, target="sm_90a")


def _f32_stores(text):
    return [ln for ln in text.splitlines()
            if '"tile.store"' in ln and "tensor<" in ln and "!tile.ptr<f32>" in ln]


def _critical_section(ptx):
    """The PTX from the first global load after the lock's cas (the count; the spin loop
    before it broadcasts the cas result through shared memory) to the release (the last
    exch)."""
    start = ptx.index("ld.global", ptx.index("atom.global.acq_rel.gpu.cas"))
    return ptx[start:ptx.rindex("atom.global.gpu.acq_rel.exch")]


@pytest.mark.parametrize("block, warps", [(8192, 8), (4096, 8), (1024, 4)])
def test_partial_sums_stored_coalesced(block, warps):
    ck = _compile(block, warps)
    stores = _f32_stores(ck.asm["tilegpu"])
    assert len(stores) == 2, stores
    threads = warps * 32
    lay = (f"#tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: {warps}>, "
           "array<i32: 0>>")
    for st in stores:
        assert lay in st and "tilegpu.vector_width = 4" in st, st
    assert '"tilegpu.convert_layout"' not in ck.asm["tilegpu"]
    cs = _critical_section(ck.asm["ptx"])
    per_thread = block // threads // 4  # 16-byte vectors a thread per tile
    assert len(re.findall(r"st\.global\.v4\.b32", cs)) == 2 * per_thread
    assert len(re.findall(r"ld\.global\.v4\.b32", cs)) == 2 * per_thread
    # nothing goes through shared memory inside the lock (only the debug_barrier's bar.sync)
    assert not re.search(r"(ld|st)\.shared", cs) and cs.count("bar.sync") == 1
    # consecutive vectors of a thread are a whole CTA's 16-byte chunks apart (lanes contiguous)
    offs = [int(o) for o in re.findall(r"add\.s64\s+%rd\d+, %rd\d+, (\d+);", cs)]
    assert threads * 16 in offs, offs
    if ck.n_spills is not None:
        assert ck.n_spills == 0, ck.metadata["ptxas_info"]


def test_cap_switched_off_gives_the_split_stores(monkeypatch):
    """The A/B switch (benchmarks/tools/ab_tutorial.py --off store-cap): the old layout."""
    from tilework.lowering import layout_hints
    monkeypatch.setattr(layout_hints, "store_run_cap", lambda an, op: None)
    ck = _compile(8192, 8)
    for st in _f32_stores(ck.asm["tilegpu"]):
        assert "array<i32: 8>, array<i32: 32>, array<i32: 8>" in st, st


def _reference(x, dy, w, mean, rstd, group):
    x, dy, w = (a.astype(np.float64) for a in (x, dy, w))
    n = x.shape[1]
    xhat = (x - mean[:, None]) * rstd[:, None]
    wdy = w * dy
    c1 = (xhat * wdy).sum(1, keepdims=True) / n
    c2 = wdy.sum(1, keepdims=True) / n
    dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
    pdw = np.zeros((group, n))
    pdb = np.zeros((group, n))
    for r in range(x.shape[0]):
        pdw[r % group] += dy[r] * xhat[r]
        pdb[r % group] += dy[r]
    return dx, pdw, pdb


def _run_ln_bwd_dx(ck, rng, m, n, group, block):
    """Runs the compiled ln_bwd_dx `ck` in gpu_sim on m random fp16 rows of n columns (into
    `group` partial-sum rows of `block` columns), checks dx and the partial sums against numpy,
    and returns the lock array."""
    x = rng.standard_normal((m, n)).astype(np.float16)
    dy = (0.5 * rng.standard_normal((m, n))).astype(np.float16)
    w = rng.random(n).astype(np.float16)
    xf = x.astype(np.float32)
    mean = xf.mean(1).astype(np.float32)
    rstd = (1 / np.sqrt(xf.var(1) + 1e-5)).astype(np.float32)
    dx = np.full((m, n), np.nan, np.float16)
    # Zeros where the partial sums go: the kernel (the tutorial's) races, a thread loading the
    # count after thread 0 set it adds to the rows instead of writing them (gpu_sim's threads
    # do that; a GPU's rarely).  Past the group rows 7s, which must stay.
    pdw = np.full((group, block), 7, np.float32)
    pdb = np.full((group, block), 7, np.float32)
    pdw.reshape(-1)[:group * n] = 0
    pdb.reshape(-1)[:group * n] = 0
    lock = np.zeros(2 * group, np.int32)
    gpu_sim.run(ck, (m,), dx, dy, pdw, pdb, x, w, mean, rstd, lock, n, n)
    ref_dx, ref_pdw, ref_pdb = _reference(x, dy, w, mean, rstd, group)
    # (the kernel indexes the partial sums by group * N: row g starts at g * n)
    got_pdw = pdw.reshape(-1)[:group * n].reshape(group, n)
    got_pdb = pdb.reshape(-1)[:group * n].reshape(group, n)
    np.testing.assert_allclose(dx.astype(np.float32), ref_dx, atol=2e-2, rtol=1e-2)
    np.testing.assert_allclose(got_pdw, ref_pdw, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(got_pdb, ref_pdb, atol=1e-4, rtol=1e-4)
    assert (pdw.reshape(-1)[group * n:] == 7).all() and (pdb.reshape(-1)[group * n:] == 7).all()
    return lock


@pytest.mark.parametrize("n", [1024, 992])
def test_ln_bwd_dx_runs_in_gpu_sim(n):
    """6 rows into 4 groups (two groups add to partial sums already written), fp16 rows of n
    columns in a 1024-column block (992: the masked tail), the compiled code on the CPU."""
    m, group, block = 6, 4, 1024
    ck = _compile(block, 4, group)
    assert "array<i32: 4>, array<i32: 32>, array<i32: 4>" in _f32_stores(ck.asm["tilegpu"])[0]
    lock = _run_ln_bwd_dx(ck, np.random.default_rng(n), m, n, group, block)
    assert (lock[:group] == 0).all() and (lock[group:] == 1).all()


# ---- tile-speculate-loads (CompileOptions.speculate_loads, off by default) --------------------

def _compile_spec(block, warps, group, on):
    names = ("DX", "DY", "PDW", "PDB", "X", "W", "Mean", "Rstd", "Lock", "stride", "N")
    return tilework.compile(tts.tutorial_style.build("tilework").ln_bwd_dx, target="sm_90a",
                            signature=dict(zip(names, SIG)), num_warps=warps, cache=False,
                            constexprs={"GROUP_SIZE_M": group, "BLOCK_SIZE_N": block},
                            speculate_loads=on)


@pytest.mark.parametrize("on", [False, True])
def test_partial_sums_loaded_with_the_count(on):
    """Speculated, the partial sums' loads are issued before the branch on the count (both in
    flight at once); not, after it."""
    ptx = _compile_spec(1024, 4, 256, on).asm["ptx"]
    cs = _critical_section(ptx)
    count = re.search(r"ld\.global\.b32", cs).start()
    branch = re.search(r"\bbra", cs[count:]).start() + count
    first_v4 = re.search(r"ld\.global\.v4\.b32", cs).start()
    assert (first_v4 < branch) == on, cs[:3000]
    assert len(re.findall(r"ld\.global\.v4\.b32", cs)) == 4


def test_speculated_ln_bwd_dx_runs_in_gpu_sim():
    """The speculated kernel against numpy, rows adding to partial sums already written (zeros
    where they go: the kernel's own race, `_run_ln_bwd_dx`)."""
    m, group, block, n = 6, 4, 1024, 992
    ck = _compile_spec(block, 4, group, True)
    _run_ln_bwd_dx(ck, np.random.default_rng(5), m, n, group, block)


@tilework.jit
def _flagged_add(P, F, V, N, BLOCK: tl.constexpr):
    # a program's row: v where its flag is 0, else v plus what the row held (read in the else)
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    p = P + pid * N + offs
    v = tl.load(V + offs, mask=mask)
    if tl.load(F + pid) == 0:
        acc = v
    else:
        acc = v + tl.load(p, mask=mask)
    tl.store(p, acc, mask=mask)


@pytest.mark.parametrize("on", [False, True])
def test_speculated_load_not_used_on_the_other_path(on):
    """Race-free: the flag is read-only.  Speculated, the row's load sits before the if (tile
    stage) and its value is added only where the flag is set (gpu_sim, against numpy)."""
    ck = tilework.compile(_flagged_add, target="sm_90a", num_warps=2, cache=False,
                          signature={"P": "*fp32:16", "F": "*i32:16", "V": "*fp32:16",
                                     "N": "i32:16"},
                          constexprs={"BLOCK": 256}, speculate_loads=on)
    tile = ck.asm["tilegpu"]
    loads_before_if = tile[:tile.index("scf.if")].count('"tile.load"')
    assert loads_before_if == (3 if on else 2), tile  # v, the flag (and the row)
    rng = np.random.default_rng(3)
    n, rows = 240, 4
    v = rng.standard_normal(256).astype(np.float32)
    flags = np.array([0, 1, 0, 1], np.int32)
    held = rng.standard_normal((rows, n)).astype(np.float32)
    p = np.concatenate([held.reshape(-1), np.full(64, 9, np.float32)])
    gpu_sim.run(ck, (rows,), p, flags, v, n)
    want = v[None, :n] + np.where(flags[:, None] == 1, held, 0)
    np.testing.assert_allclose(p[:rows * n].reshape(rows, n), want, rtol=1e-6)
    assert (p[rows * n:] == 9).all()


def test_speculate_loads_option(monkeypatch):
    from tilework import CompileOptions
    from tilework.backends import get_backend
    with pytest.raises(ValueError, match="speculate_loads must be a bool, got 1"):
        CompileOptions(speculate_loads=1)
    monkeypatch.setenv("TILEWORK_SPECULATE_LOADS", "1")
    on = CompileOptions.from_env()
    assert on.speculate_loads is True
    assert "tile-speculate-loads" in get_backend("sm_90a").tilegpu_passes(on)
    assert "tile-speculate-loads" not in get_backend("sm_90a").tilegpu_passes(CompileOptions())
