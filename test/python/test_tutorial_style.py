"""The kernels of benchmarks/tutorial_style.py (written the way Triton's tutorials write them)
without a GPU: interpreted on small shapes against numpy, compiled for sm_90a without spills
and with vectorized global accesses; the compiler fixes they needed (a hint on a loop-carried
value, `acc += tl.dot(a, b)` accumulating in place, the interpreter reaching arrays through
pointers loaded from memory); and the examples' host code calling no kernel builtin (which
fails under Triton when a tutorial loads the example with its imports swapped)."""
import ast
import importlib.util
import pathlib
import re
import sys

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.runtime.interpreter import reachable

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_benchmark():
    """benchmarks/tutorial_style.py by its path (benchmarks/ on sys.path would shadow the
    examples' modules of the same names, e.g. vector_add)."""
    spec = importlib.util.spec_from_file_location("tutorial_style",
                                                  ROOT / "benchmarks" / "tutorial_style.py")
    mod = sys.modules.get("tutorial_style")
    if mod is None:
        mod = importlib.util.module_from_spec(spec)
        sys.modules["tutorial_style"] = mod
        spec.loader.exec_module(mod)
    return mod


tutorial_style = _load_benchmark()

KERNELS = ("ln_fwd", "ln_bwd_dx", "ln_bwd_dwdb", "softmax_kernel", "seeded_dropout",
           "grouped_matmul")


@pytest.fixture(scope="module")
def mod():
    return tutorial_style.build("tilework")


@pytest.fixture
def interp(mod):
    for k in KERNELS:
        getattr(mod, k).interpret = True
    yield mod
    for k in KERNELS:
        getattr(mod, k).interpret = False


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


# ---- interpreted against numpy ------------------------------------------------------------

def _layer_norm_ref(x, w, eps=1e-5):
    x = x.astype(np.float64)
    mu = x.mean(1, keepdims=True)
    rs = 1 / np.sqrt(x.var(1, keepdims=True) + eps)
    return mu[:, 0], rs[:, 0], (x - mu) * rs


@pytest.mark.parametrize("M, N, block, group, bm, bn", [(9, 50, 16, 4, 2, 32),
                                                         (6, 64, 64, 8, 4, 16)])
def test_layer_norm_forward_and_backward_interpreted(interp, rng, M, N, block, group, bm, bn):
    x = rng.standard_normal((M, N)).astype(np.float16)
    dy = rng.standard_normal((M, N)).astype(np.float16)
    w = rng.random(N).astype(np.float16)
    b = rng.standard_normal(N).astype(np.float16)
    y = np.zeros_like(x)
    mean, rstd = np.zeros(M, np.float32), np.zeros(M, np.float32)
    interp.ln_fwd[(M,)](x, y, w, b, mean, rstd, N, N, 1e-5, BLOCK_SIZE=block)
    mu, rs, xhat = _layer_norm_ref(x, w)
    np.testing.assert_allclose(mean, mu, atol=1e-3)
    np.testing.assert_allclose(rstd, rs, rtol=1e-3)
    np.testing.assert_allclose(y.astype(np.float64), xhat * w + b, atol=2e-2)

    lock = np.zeros(2 * group, np.int32)
    pdw, pdb = np.full((group, N), np.nan, np.float32), np.full((group, N), np.nan, np.float32)
    dx, dw, db = np.zeros_like(x), np.zeros(N, np.float16), np.zeros(N, np.float16)
    interp.ln_bwd_dx[(M,)](dx, dy, pdw, pdb, x, w, mean, rstd, lock, N, N, GROUP_SIZE_M=group,
                           BLOCK_SIZE_N=tilework.next_power_of_2(N))
    assert (lock[:group] == 0).all() and (lock[group:] == (np.arange(group) < M)).all()
    interp.ln_bwd_dwdb[(tilework.cdiv(N, bn),)](pdw, pdb, dw, db, min(group, M), N,
                                                BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn)
    dyf, wf = dy.astype(np.float64), w.astype(np.float64)
    wdy = wf * dyf
    want = (wdy - (xhat * (xhat * wdy).mean(1, keepdims=True) + wdy.mean(1, keepdims=True))) * rs[:, None]
    np.testing.assert_allclose(dx.astype(np.float64), want, atol=1e-2)
    np.testing.assert_allclose(dw.astype(np.float64), (dyf * xhat).sum(0), atol=2e-2, rtol=1e-2)
    np.testing.assert_allclose(db.astype(np.float64), dyf.sum(0), atol=2e-2, rtol=1e-2)


def test_softmax_interpreted_strides_over_rows(interp, rng):
    x = (rng.standard_normal((7, 37)) * 3).astype(np.float32)
    y = np.full_like(x, np.nan)
    interp.softmax_kernel[(3,)](y, x, 37, 37, 7, 37, BLOCK_SIZE=64, num_stages=2)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_seeded_dropout_interpreted(interp, rng):
    x = rng.standard_normal(3000).astype(np.float32)
    x[x == 0] = 1.0
    a, b = np.zeros_like(x), np.zeros_like(x)
    interp.seeded_dropout[(3,)](x, a, 3000, 0.3, 42, BLOCK_SIZE=1024)
    interp.seeded_dropout[(3,)](x, b, 3000, 0.3, 42, BLOCK_SIZE=1024)
    kept = a != 0
    assert 0.66 < kept.mean() < 0.74
    np.testing.assert_allclose(a[kept], x[kept] / np.float32(0.7), rtol=1e-6)
    np.testing.assert_array_equal(a, b)  # one seed, one mask
    interp.seeded_dropout[(3,)](x, b, 3000, 0.3, 43, BLOCK_SIZE=1024)
    assert (a != b).any()


def _groups(rng, dims):
    A = [rng.standard_normal((m, k)).astype(np.float16) for m, n, k in dims]
    B = [rng.standard_normal((k, n)).astype(np.float16) for m, n, k in dims]
    C = [np.full((m, n), np.nan, np.float16) for m, n, k in dims]
    ptrs = lambda ts: np.array([t.ctypes.data for t in ts], np.int64)  # noqa: E731
    sizes = np.array([v for d in dims for v in d], np.int32)
    lds = np.array([v for a, b, c in zip(A, B, C) for v in (a.shape[1], b.shape[1],
                                                           c.shape[1])], np.int32)
    return A, B, C, (ptrs(A), ptrs(B), ptrs(C), sizes, lds, len(dims))


def test_grouped_gemm_over_pointer_arrays_interpreted(interp, rng):
    A, B, C, args = _groups(rng, [(32, 48, 16), (16, 16, 32), (48, 32, 16), (16, 64, 48)])
    with reachable(*A, *B, *C):
        interp.grouped_matmul[(3,)](*args, NUM_SM=3, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16,
                                    BLOCK_SIZE_K=16)
    for a, b, c in zip(A, B, C):
        np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @
                                   b.astype(np.float32), atol=2e-2, rtol=1e-2)


def test_interpreter_refuses_arrays_not_made_reachable(interp, rng):
    A, B, C, args = _groups(rng, [(16, 16, 16)])
    with pytest.raises(IndexError, match="outside every array argument"):
        interp.grouped_matmul[(1,)](*args, NUM_SM=1, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16,
                                    BLOCK_SIZE_K=16)
    with pytest.raises(TypeError, match="reachable takes numpy arrays and CPU torch tensors, "
                                        "got list"):
        reachable([1, 2])


# ---- compiled for sm_90a (no GPU) ------------------------------------------------------------

P16, I16 = "*fp16:16", "i32:16"  # pointers and ints as launches specialize them (16 | value)
SIG = {
    "ln_fwd": ((P16, P16, P16, P16, "*fp32:16", "*fp32:16", I16, I16, "fp32"), {}),
    "ln_bwd_dx": ((P16, P16, "*fp32:16", "*fp32:16", P16, P16, "*fp32:16", "*fp32:16",
                   "*i32:16", I16, I16), {"GROUP_SIZE_M": 128}),
    "ln_bwd_dwdb": (("*fp32:16", "*fp32:16", P16, P16, I16, I16),
                    {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128}),
    "softmax_kernel": (("*fp32:16", "*fp32:16", I16, I16, "i32", I16), {"num_stages": 4}),
    "seeded_dropout": (("*fp32:16", "*fp32:16", I16, "fp32", "i32"), {"BLOCK_SIZE": 1024}),
    "grouped_matmul": (("*i64:16", "*i64:16", "*i64:16", "*i32:16", "*i32:16", "i32"),
                       {"NUM_SM": 132, "BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128}),
}
CASES = [("ln_fwd", {"BLOCK_SIZE": 1024}, 4), ("ln_fwd", {"BLOCK_SIZE": 8192}, 8),
         ("ln_bwd_dx", {"BLOCK_SIZE_N": 1024}, 4), ("ln_bwd_dx", {"BLOCK_SIZE_N": 8192}, 8),
         ("ln_bwd_dwdb", {}, 4),
         ("softmax_kernel", {"BLOCK_SIZE": 1024}, 8), ("softmax_kernel", {"BLOCK_SIZE": 32768}, 8),
         ("seeded_dropout", {}, 4),
         ("grouped_matmul", {"BLOCK_SIZE_K": 64}, 8),   # the benchmark's config
         ("grouped_matmul", {"BLOCK_SIZE_K": 32}, 4)]   # the tutorial's


def _compile(mod, name, consts, warps, **opts):
    sig, fixed = SIG[name]
    return getattr(mod, name).warmup(*sig, **fixed, **consts, num_warps=warps,
                                     target="sm_90a", **opts)


def _global_accesses(ptx):
    return re.findall(r"\b(ld|st)\.global(\.v[24])?\.b(16|32|64)\b", ptx)


@pytest.mark.parametrize("name, consts, warps", CASES,
                         ids=[f"{n}-{'-'.join(map(str, c.values()))}-w{w}" for n, c, w in CASES])
def test_compiles_for_sm90a_without_spills_and_vectorized(mod, name, consts, warps):
    ck = _compile(mod, name, consts, warps, **({"num_stages": 3} if "matmul" in name else {}))
    if ck.n_spills is None:
        pytest.skip("no ptxas")
    assert ck.n_spills == 0, ck.metadata["ptxas_info"]
    ptx = ck.asm["ptx"]
    if name == "grouped_matmul":
        # operands in 16-byte cp.async copies (the loop-carried pointers' multiple_of hint) and
        # accumulated in place by wgmma (acc += tl.dot(a, b)): no second accumulator
        assert "cp.async.cg.shared.global" in ptx and "wgmma.mma_async" in ptx
        assert not re.search(r"cp\.async\.ca\.shared\.global \[[^]]+\], \[[^]]+\], (4|8)", ptx)
        # (a second accumulator shows as 64 fp32 adds of the dot's result; a register cap
        # no longer tells: the coalesced epilogue's 64 row addresses peak at 254, as Triton)
        assert not re.search(r"\badd(\.rn)?\.f32\b", ptx)
    else:
        # every tile access is 16 bytes wide (the scalars: mean, rstd, the lock's count); in
        # ln_bwd_dx the fp16 rows 8 bytes a thread, in the layout that keeps the fp32 partial
        # sums' 16-byte stores coalesced (test_ln_bwd_coalescing.py)
        ok = (".v4", ".v2") if name == "ln_bwd_dx" else (".v4",)
        wide = [a for a in _global_accesses(ptx) if a[1] in ok]
        narrow = [a for a in _global_accesses(ptx) if a[1] not in ok]
        assert wide, ptx[-2000:]
        assert len(narrow) <= 4, narrow


def test_softmax_occupancy_inputs_from_warmup(mod):
    """What the fused-softmax tutorial sizes its grid from: n_regs, n_spills and
    metadata.shared of the kernel that warmup compiles."""
    ck = _compile(mod, "softmax_kernel", {"BLOCK_SIZE": 4096}, 8)
    if ck.n_regs is None:
        pytest.skip("no ptxas")
    assert 16 <= ck.n_regs <= 128 and ck.n_spills == 0
    assert isinstance(ck.metadata.shared, int) and ck.metadata.shared >= 0


def test_ln_backward_lock_is_acquired_and_released_with_ordering(mod):
    ptx = _compile(mod, "ln_bwd_dx", {"BLOCK_SIZE_N": 1024}, 4).asm["ptx"]
    assert re.search(r"atom\.global\.acq_rel\.gpu\.cas\.b32", ptx)
    assert re.search(r"atom\.global\.gpu\.acq_rel\.exch\.b32", ptx)


# ---- the compiler fixes ------------------------------------------------------------------------

@tilework.jit
def _hinted_loop(x_ptr, y_ptr, stride, n, HINT: tl.constexpr):
    p = x_ptr + tl.program_id(0) * stride + tl.arange(0, 512)
    acc = tl.zeros([512], dtype=tl.float32)
    for _ in range(n):
        if HINT:
            tl.multiple_of(p, 16)  # the result unused: the hint is on the carried value itself
        acc += tl.load(p)
        p += 512
    tl.store(y_ptr + tl.arange(0, 512), acc)


@pytest.mark.parametrize("hint, width", [(False, 1), (True, 4)])
def test_multiple_of_a_loop_carried_value(hint, width):
    ck = _hinted_loop.warmup("*fp32:16", "*fp32:16", "i32", "i32", HINT=hint, target="sm_90a")
    assert ("tile.divisibility.region0.arg" in ck.asm["tile"]) == hint
    widths = re.findall(r'"tile.load".*tilegpu.vector_width = (\d+)', ck.asm["tilegpu"])
    assert widths == [str(width)]


@tilework.jit
def _hint_on_argument(x_ptr):
    tl.multiple_of(x_ptr, 16)


def test_multiple_of_a_kernel_argument_is_refused():
    with pytest.raises(CompilationError, match="divisibility hints apply to computed values, "
                                               "not to arguments"):
        _hint_on_argument.warmup("*fp32", target="sm_90a")


@tilework.jit
def _plus_eq_dot(a_ptr, b_ptr, c_ptr, K, PLUS_EQ: tl.constexpr):
    r = tl.arange(0, 64)
    k = tl.arange(0, 32)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for kk in range(0, K, 32):
        a = tl.load(a_ptr + r[:, None] * K + kk + k[None, :])
        b = tl.load(b_ptr + (kk + k[:, None]) * 64 + r[None, :])
        if PLUS_EQ:
            acc += tl.dot(a, b)
        else:
            acc = tl.dot(a, b, acc)
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], acc)


def test_plus_eq_dot_compiles_as_dot_with_acc():
    """`acc += tl.dot(a, b)` (the tutorials' form) gives the kernel `tl.dot(a, b, acc)` gives."""
    asm = [_plus_eq_dot.warmup("*fp16:16", "*fp16:16", "*fp32:16", "i32:16", PLUS_EQ=p,
                               target="sm_90a", num_warps=4).asm for p in (True, False)]
    assert "arith.addf" in asm[0]["tile"]  # (the frontend's form: dot(a, b, 0) + acc)
    for a in asm:
        assert a["tilegpu"].count("tilegpu.warpgroup_dot") == 1
        assert "arith.addf" not in a["tilegpu"]
    assert len(asm[0]["ptx"].splitlines()) == len(asm[1]["ptx"].splitlines())


def test_plus_eq_dot_interpreted_matches_numpy(rng):
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    tilework.jit(interpret=True)(_plus_eq_dot.fn)[(1,)](a, b, c, 64, PLUS_EQ=True)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3,
                               atol=1e-2)


# ---- the examples' host code under Triton ----------------------------------------------------

HOST_TL_OK = {"pointer_type", "str_to_ty", "constexpr", "dtype", "block_type"}


def _host_tl_calls(path):
    """`tl.<fn>(...)` calls in functions that are not @jit kernels."""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        if any("jit" in ast.unparse(d) for d in node.decorator_list):
            continue
        for c in ast.walk(node):
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and \
                    isinstance(c.func.value, ast.Name) and c.func.value.id == "tl" and \
                    c.func.attr not in HOST_TL_OK:
                out.append(f"{path.name}:{c.lineno} {node.name}: tl.{c.func.attr}")
    return out


def test_examples_host_code_calls_no_kernel_builtin():
    """docs/tutorials load examples/*.py for Triton with `import triton.language as tl`: host
    code calling `tl.cdiv` there fails ("Cannot call @triton.jit'd outside of the scope of a
    kernel"); host code uses `tilework.cdiv` (-> `triton.cdiv`)."""
    files = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "docs" / "tutorials")
                                                             .glob("*.py"))
    assert len(files) > 10
    assert [c for f in files for c in _host_tl_calls(f)] == []


def test_host_tl_call_check_finds_tl_cdiv(tmp_path):
    p = tmp_path / "k.py"
    p.write_text("import tilework.language as tl\n\ndef grid(meta):\n"
                 "    return (tl.cdiv(meta['M'], 64), tl.pointer_type(tl.float16))\n")
    assert _host_tl_calls(p) == ["k.py:4 grid: tl.cdiv"]


# ---- tilegpu-pipeline on a loop without dots (the softmax's tl.range(num_stages=)) ------------

@pytest.mark.parametrize("stages, buffers", [(1, 0), (2, 2), (3, 2), (4, 3)])
@pytest.mark.parametrize("n_cols, stride", [(37, 40), (48, 48)])
def test_softmax_row_loop_pipelined_runs_in_the_simt_emulator(mod, rng, stages, buffers,
                                                               n_cols, stride):
    """Rows copied ahead by cp.async into num_stages - 1 buffers (the -inf fill of the masked
    columns put back by a select); run by the SIMT emulator (copies land at their wait)."""
    from simt_emulator import Emulator
    s16 = ":16" if stride % 16 == 0 else ""
    ck = mod.softmax_kernel.warmup("*fp32:16", "*fp32:16", "i32" + s16, "i32" + s16, "i32",
                                   "i32", BLOCK_SIZE=64, num_stages=stages, num_warps=2,
                                   target="sm_80")
    text = ck.asm["tilegpu"]
    assert text.count('"tilegpu.async_copy"') == buffers
    if buffers:
        assert re.search(rf'"tilegpu.local_alloc"\(\) .*-> !tilegpu.memdesc<array<i64: 64>, '
                         rf'f32, #tilegpu.swizzled_shared<.*?>, {buffers} : i32>', text)
    x = (rng.standard_normal((7, stride)) * 3).astype(np.float32)
    y = np.full_like(x, np.nan)
    Emulator.from_tilegpu(text, "sm_80", 2).run((3,), y, x, stride, stride, 7, n_cols)
    xs = x[:, :n_cols].astype(np.float64)
    e = np.exp(xs - xs.max(1, keepdims=True))
    np.testing.assert_allclose(y[:, :n_cols], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert np.isnan(y[:, n_cols:]).all()


def test_softmax_shared_memory_as_tritons(mod):
    """num_stages=4: 3 row buffers (Triton's count), so the tutorial's occupancy (which divides
    the shared memory by metadata.shared) comes out as Triton's; 16-byte copies on sm_90a;
    a row too long for two buffers is not pipelined (the loop says why)."""
    for block, want in ((1024, 3 * 4096), (8192, 3 * 32768)):
        ck = _compile(mod, "softmax_kernel", {"BLOCK_SIZE": block}, 8)
        assert want <= ck.metadata.shared < want + 1024
        assert "cp.async.cg.shared.global" in ck.asm["ptx"]
    ck = _compile(mod, "softmax_kernel", {"BLOCK_SIZE": 32768}, 8)
    assert ck.metadata.shared < 1024 and "cp.async" not in ck.asm["ptx"]
    assert "num_stages 3 -> 1" in ck.asm["tilegpu"]


# ---- the grouped GEMM's K loop against Triton's (issue 14) -----------------------------------

def _k_loop(ptx):
    """The instructions of the loop with the wgmmas (the K loop), from its label to the branch
    back to it."""
    for m in re.finditer(r"^(\$L__BB\d+_\d+):", ptx, re.M):
        back = re.search(rf"bra(\.uni)?\s+{re.escape(m.group(1))};", ptx[m.end():])
        if back and "wgmma.mma_async" in ptx[m.end():m.end() + back.start()]:
            return ptx[m.end():m.end() + back.start()]
    raise AssertionError("no K loop")


def _start_encodings(loop):  # a wgmma descriptor's start address encoded from an address
    return re.findall(r"bfe\.u32\s+%r\d+, %r\d+, 4, 14;", loop)


@pytest.mark.parametrize("fence, ring_k_step", [(True, False), (False, True)])
def test_grouped_gemm_k_loop_options(mod, monkeypatch, fence, ring_k_step):
    """The benchmark's config (128x128x64, 8 warps, 3 stages).  Default: a fence.proxy.async
    a K step (SASS MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S) and A's slot encoded afresh for each
    of its 4 wgmmas (SASS 105 instructions a K step, Triton 88).  wgmma_cp_async_fence off and
    wgmma_ring_k_step on: no fence, A's slot encoded once and its K steps added (SASS 90);
    254 registers, no spills either way (as Triton).  (The options through their environment
    variables: launch arguments take only Triton's.)"""
    monkeypatch.setenv("TILEWORK_WGMMA_CP_ASYNC_FENCE", str(int(fence)))
    monkeypatch.setenv("TILEWORK_WGMMA_RING_K_STEP", str(int(ring_k_step)))
    ck = _compile(mod, "grouped_matmul", {"BLOCK_SIZE_K": 64}, 8, num_stages=3)
    loop = _k_loop(ck.asm["ptx"])
    assert loop.count("wgmma.mma_async") == 4
    assert ("fence.proxy.async" in loop) == fence
    assert len(_start_encodings(loop)) == (1 if ring_k_step else 4), _start_encodings(loop)
    if ck.n_spills is not None:
        assert ck.n_spills == 0, ck.metadata["ptxas_info"]


def test_wgmma_ring_k_step_option(monkeypatch):
    """CompileOptions.wgmma_ring_k_step: off by default, filled from
    TILEWORK_WGMMA_RING_K_STEP, a bool only (part of the cache key)."""
    assert not tilework.CompileOptions().wgmma_ring_k_step
    monkeypatch.setenv("TILEWORK_WGMMA_RING_K_STEP", "1")
    on = tilework.CompileOptions.from_env()
    assert on.wgmma_ring_k_step and on.key() != tilework.CompileOptions().key()
    with pytest.raises(ValueError, match="wgmma_ring_k_step must be a bool, got 1"):
        tilework.CompileOptions(wgmma_ring_k_step=1)
