"""Atomics (tl.atomic_add/max/min/and/or/xor/xchg/cas): compiled for sm_80, sm_90a and gfx942
(checking the instructions), run in the interpreter against numpy (random inputs, masks,
non-power-of-two tails, poisoned outputs), and every rejection with its message and line."""
import os
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile
from tilework.compiler.options import CompileOptions
from located import assert_located, line_of  # noqa: E402

THIS = os.path.abspath(__file__)
TARGETS = ["sm_80", "sm_90a", "gfx942"]
interpreted = tilework.jit(interpret=True)

NP = {"int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
      "fp32": np.float32, "fp64": np.float64, "fp16": np.float16}
TL = {"int32": tl.int32, "uint32": tl.uint32, "int64": tl.int64, "uint64": tl.uint64,
      "fp32": tl.float32, "fp64": tl.float64, "fp16": tl.float16, "bf16": tl.bfloat16}


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def rand(rng, n, dtype, nonzero=True):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = (rng.standard_normal(n) * 10).astype(dtype)
        return np.where(x == 0, dtype.type(1.5), x) if nonzero else x
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return np.where(x == 0, dtype.type(3), x) if nonzero else x


def poison(n, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.full(n, np.nan, dtype)
    return np.full(n, np.array(-777).astype(dtype), dtype)


# ---- kernels ---------------------------------------------------------------------------------

def _rmw(x, y, old, n, OP: tl.constexpr, BLOCK: tl.constexpr, SEM: tl.constexpr,
         SCOPE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(y + offs, mask=m)
    o = getattr(tl, OP)(x + offs, v, mask=m, sem=SEM, scope=SCOPE)
    tl.store(old + offs, o, mask=m)


OPS = ["atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
       "atomic_xchg"]
RMW = tilework.jit(_rmw)
RMW_I = interpreted(_rmw)


def _u(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "i" else a


def expected(op, x, y):
    """numpy of the new memory for each op (no two lanes share an address)."""
    if op == "atomic_add":
        return (x + y).astype(x.dtype)
    if op == "atomic_max":
        return np.maximum(x, y)
    if op == "atomic_min":
        return np.minimum(x, y)
    if op == "atomic_and":
        return (_u(x) & _u(y)).view(x.dtype)
    if op == "atomic_or":
        return (_u(x) | _u(y)).view(x.dtype)
    if op == "atomic_xor":
        return (_u(x) ^ _u(y)).view(x.dtype)
    return y.copy()


def sig_of(dt):
    p = tl.pointer_type(TL[dt])
    return {"x": p, "y": p, "old": p, "n": tl.int32}


def aot(fn, sig, target, constants, options=None):
    return compile(ASTSource(fn, sig, constants, {}), target, options, cache=False)


def asm_of(ck):
    return ck.asm.get("ptx") or ck.asm["amdgcn"]


# ---- compiled: the instructions ---------------------------------------------------------------

PTX_OP = {"atomic_add": {"int32": "add.u32", "uint32": "add.u32", "int64": "add.u64",
                         "fp32": "add.f32", "fp64": "add.f64", "fp16": "add.noftz.f16"},
          "atomic_max": {"int32": "max.s32", "uint32": "max.u32", "int64": "max.s64",
                         "uint64": "max.u64"},
          "atomic_min": {"int32": "min.s32", "uint32": "min.u32"},
          "atomic_and": {"int32": "and.b32", "uint64": "and.b64"},
          "atomic_or": {"int32": "or.b32"}, "atomic_xor": {"int64": "xor.b64"},
          "atomic_xchg": {"int32": "exch.b32", "fp32": "exch.b32", "int64": "exch.b64"}}
AMD_OP = {("atomic_add", "int32"): "global_atomic_add ", ("atomic_add", "fp32"):
          "global_atomic_add_f32", ("atomic_add", "int64"): "global_atomic_add_x2",
          ("atomic_add", "fp64"): "global_atomic_add_f64", ("atomic_max", "int32"):
          "global_atomic_smax ", ("atomic_max", "uint32"): "global_atomic_umax ",
          ("atomic_min", "int32"): "global_atomic_smin ", ("atomic_and", "int32"):
          "global_atomic_and ", ("atomic_or", "int32"): "global_atomic_or ",
          ("atomic_xor", "int64"): "global_atomic_xor_x2", ("atomic_xchg", "int32"):
          "global_atomic_swap ", ("atomic_xchg", "fp32"): "global_atomic_swap ",
          ("atomic_max", "uint64"): "global_atomic_umax_x2"}

CASES = [(op, dt) for op, d in PTX_OP.items() for dt in d]


@pytest.mark.parametrize("op, dt", CASES)
def test_ptx_instruction(op, dt):
    ck = aot(RMW, sig_of(dt), "sm_90a", {"OP": op, "BLOCK": 256, "SEM": "acq_rel", "SCOPE": "gpu"})
    ptx = asm_of(ck)
    want = f"atom.global.gpu.acq_rel.{PTX_OP[op][dt]}"
    assert want in ptx, [ln for ln in ptx.splitlines() if "atom" in ln]
    assert "cubin" in ck.asm or ck.metadata.get("cubin_note")  # ptxas accepted it


@pytest.mark.parametrize("op, dt", sorted(AMD_OP))
def test_amdgcn_instruction(op, dt):
    asm = asm_of(aot(RMW, sig_of(dt), "gfx942",
                     {"OP": op, "BLOCK": 256, "SEM": "acq_rel", "SCOPE": "gpu"}))
    assert AMD_OP[op, dt] in asm, [ln for ln in asm.splitlines() if "atomic" in ln]
    # acq_rel at agent scope: release before (write back L2), acquire after (invalidate)
    assert "buffer_wbl2" in asm and "buffer_inv" in asm


@pytest.mark.parametrize("sem", ["acq_rel", "acquire", "release", "relaxed"])
@pytest.mark.parametrize("scope", ["gpu", "cta", "sys"])
def test_sem_and_scope_reach_the_instruction(sem, scope):
    ck = aot(RMW, sig_of("int32"), "sm_80",
             {"OP": "atomic_add", "BLOCK": 128, "SEM": sem, "SCOPE": scope})
    assert f"atom.global.{scope}.{sem}.add.u32" in asm_of(ck)


@pytest.mark.parametrize("scope, amd", [("gpu", "agent"), ("cta", "workgroup"), ("sys", None)])
def test_amd_syncscope(scope, amd):
    ck = aot(RMW, sig_of("int32"), "gfx942",
             {"OP": "atomic_max", "BLOCK": 128, "SEM": "relaxed", "SCOPE": scope})
    llvm = ck.asm["llvm"]
    line = next(ln for ln in llvm.splitlines() if "llvm.atomicrmw" in ln)
    assert (f'syncscope("{amd}")' in line) if amd else ("syncscope" not in line), line
    assert "monotonic" in line


@pytest.mark.parametrize("target", TARGETS)
def test_bf16_add(target):
    asm = asm_of(aot(RMW, sig_of("bf16"), target,
                     {"OP": "atomic_add", "BLOCK": 128, "SEM": "acq_rel", "SCOPE": "gpu"}))
    if target == "sm_90a":
        assert "atom.global.gpu.acq_rel.add.noftz.bf16" in asm
    elif target == "sm_80":  # no bf16 atomic add before sm_90: LLVM's cmpxchg loop
        assert re.search(r"atom\.acq_rel\.gpu\.global\.cas\.b32", asm)
    else:
        assert "global_atomic_cmpswap" in asm


def _unused_result(x, y, n, BLOCK: tl.constexpr, SEM: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(x + offs, tl.load(y + offs, mask=offs < n), mask=offs < n, sem=SEM)


def test_unused_result_is_a_reduction_when_the_semantic_allows():
    fn = tilework.jit(_unused_result)
    sig = {"x": tl.pointer_type(tl.float32), "y": tl.pointer_type(tl.float32), "n": tl.int32}
    ptx = asm_of(aot(fn, sig, "sm_90a", {"BLOCK": 128, "SEM": "relaxed"}))
    assert "red.global.gpu.relaxed.add.f32" in ptx and "atom." not in ptx
    ptx = asm_of(aot(fn, sig, "sm_90a", {"BLOCK": 128, "SEM": "acquire"}))
    assert "atom.global.gpu.acquire.add.f32" in ptx  # red has no acquire form


def _scalar_counter(counter, out):
    old = tl.atomic_add(counter, 1)
    tl.store(out + tl.program_id(0), old)


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_atomic_is_issued_once_and_broadcast(target):
    sig = {"counter": tl.pointer_type(tl.int32), "out": tl.pointer_type(tl.int32)}
    ck = aot(tilework.jit(_scalar_counter), sig, target, {})
    llvm = ck.asm["llvm"]
    assert llvm.count("atom.global.gpu.acq_rel.add.u32" if target != "gfx942"
                      else "llvm.atomicrmw") == 1
    # thread 0 does it, then the old value goes through shared memory to every thread: one
    # barrier between the store and the loads (the kernel's first use of the buffer needs none
    # before the store)
    asm = asm_of(ck)
    assert "tilework_smem" in llvm and "tilegpu.shared = 4" in llvm
    if target == "gfx942":
        assert asm.count("s_barrier") == 1 and "ds_write_b32" in asm and "ds_read_b32" in asm
        assert asm.index("ds_write_b32") < asm.index("s_barrier") < asm.index("ds_read_b32")
    else:
        assert asm.count("bar.sync") == 1 and "st.shared.b32" in asm and "ld.shared.b32" in asm
        assert asm.index("st.shared.b32") < asm.index("bar.sync") < asm.index("ld.shared.b32")


def test_replicated_tile_elements_apply_once():
    """32 elements on 128 threads: four threads hold each element; only the owner (the
    thread whose copy is not wrapped around) issues the atomic, the others get the old value
    through shared memory."""
    ck = aot(RMW, sig_of("int32"), "sm_90a", {"OP": "atomic_add", "BLOCK": 32, "SEM": "relaxed", "SCOPE": "gpu"})
    llvm = ck.asm["llvm"]
    assert llvm.count("atom.global.gpu.relaxed.add.u32") == 1
    assert "icmp ult" in ck.asm["llir"] or "arith.cmpi ult" in llvm
    assert "tilework_smem" in llvm


def _cas_kernel(x, cmp, val, old, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    o = tl.atomic_cas(x + offs, tl.load(cmp + offs, mask=m), tl.load(val + offs, mask=m))
    tl.store(old + offs, o, mask=m)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dt", ["int32", "int64", "fp32", "fp16"])
def test_cas_compiles(target, dt):
    p = tl.pointer_type(TL[dt])
    ck = aot(tilework.jit(_cas_kernel), {"x": p, "cmp": p, "val": p, "old": p, "n": tl.int32},
             target, {"BLOCK": 128})
    asm = asm_of(ck)
    if target.startswith("sm"):
        bits = {"int32": 32, "int64": 64, "fp32": 32, "fp16": 16}[dt]
        assert re.search(rf"atom\.global\.acq_rel\.gpu\.cas\.b{bits}", asm) or \
            (bits == 16 and "cas.b32" in asm), [ln for ln in asm.splitlines() if "atom" in ln]
    else:
        assert "global_atomic_cmpswap" in asm


def test_float_max_uses_the_integer_trick():
    ptx = asm_of(aot(RMW, sig_of("fp32"), "sm_80",
                     {"OP": "atomic_max", "BLOCK": 128, "SEM": "acq_rel", "SCOPE": "gpu"}))
    assert "atom.global.gpu.acq_rel.max.s32" in ptx and "atom.global.gpu.acq_rel.min.u32" in ptx
    ptx = asm_of(aot(RMW, sig_of("fp64"), "sm_80",
                     {"OP": "atomic_min", "BLOCK": 128, "SEM": "acq_rel", "SCOPE": "gpu"}))
    assert "atom.global.gpu.acq_rel.min.s64" in ptx and "atom.global.gpu.acq_rel.max.u64" in ptx


# ---- interpreted: against numpy ----------------------------------------------------------------

DTYPE_CASES = {
    "atomic_add": ["int32", "uint32", "int64", "uint64", "fp32", "fp64", "fp16"],
    "atomic_max": ["int32", "uint32", "int64", "uint64", "fp32", "fp64"],
    "atomic_min": ["int32", "uint32", "int64", "uint64", "fp32", "fp64"],
    "atomic_and": ["int32", "uint32", "int64", "uint64"],
    "atomic_or": ["int32", "uint64"],
    "atomic_xor": ["int32", "int64"],
    "atomic_xchg": ["int32", "int64", "fp32", "fp64"],
}


@pytest.mark.parametrize("op, dt", [(op, dt) for op, dts in DTYPE_CASES.items() for dt in dts])
@pytest.mark.parametrize("n", [1000, 37])
def test_interpreter_matches_numpy(rng, op, dt, n):
    x, y = rand(rng, n, NP[dt]), rand(rng, n, NP[dt])
    x0 = x.copy()
    old = poison(n, NP[dt])
    RMW_I[(-(-n // 256),)](x, y, old, n, OP=op, BLOCK=256, SEM="acq_rel", SCOPE="gpu")
    np.testing.assert_array_equal(old, x0)
    np.testing.assert_array_equal(x, expected(op, x0, y))


def test_masked_lanes_are_untouched_and_return_zero(rng):
    @interpreted
    def k(x, y, old, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        o = tl.atomic_add(x + offs, tl.load(y + offs), mask=(offs % 3 == 0) & (offs < n))
        tl.store(old + offs, o)

    x, y = rand(rng, 64, np.int32), rand(rng, 64, np.int32)
    x0, old = x.copy(), poison(64, np.int32)
    k[(1,)](x, y, old, 50, BLOCK=64)
    on = (np.arange(64) % 3 == 0) & (np.arange(64) < 50)
    np.testing.assert_array_equal(x, np.where(on, x0 + y, x0))
    np.testing.assert_array_equal(old, np.where(on, x0, 0))


def test_float_max_min_on_mixed_signs(rng):
    """Triton's integer trick gives the numeric max/min for every sign combination."""
    n = 500
    for op, ref in (("atomic_max", np.maximum), ("atomic_min", np.minimum)):
        for dt in (np.float32, np.float64):
            x = rand(rng, n, dt)
            y = np.where(rng.random(n) < 0.5, -np.abs(rand(rng, n, dt)), np.abs(rand(rng, n, dt)))
            x0, old = x.copy(), poison(n, dt)
            RMW_I[(2,)](x, y, old, n, OP=op, BLOCK=256, SEM="relaxed", SCOPE="cta")
            np.testing.assert_array_equal(x, ref(x0, y))
            np.testing.assert_array_equal(old, x0)


def test_colliding_lanes_apply_in_lane_order(rng):
    """A histogram: lanes sharing an address see each other's effects (lane order)."""
    @interpreted
    def hist(bins, idx, old, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        o = tl.atomic_add(bins + tl.load(idx + offs, mask=m), 1, mask=m)
        tl.store(old + offs, o, mask=m)

    n = 300
    idx = rng.integers(0, 7, n).astype(np.int32)
    bins = rng.integers(1, 100, 7).astype(np.int32)
    b0, old = bins.copy(), poison(n, np.int32)
    hist[(1,)](bins, idx, old, n, BLOCK=512)
    np.testing.assert_array_equal(bins, b0 + np.bincount(idx, minlength=7))
    seen = np.zeros(7, np.int64)
    for i in range(n):
        assert old[i] == b0[idx[i]] + seen[idx[i]]
        seen[idx[i]] += 1


def test_scalar_atomics_count_programs():
    counter = np.array([5], np.int32)
    out = poison(6, np.int32)
    interpreted(_scalar_counter)[(6,)](counter, out)
    assert counter[0] == 11
    np.testing.assert_array_equal(out, np.arange(5, 11, dtype=np.int32))


@pytest.mark.parametrize("dt", ["int32", "int64", "uint32", "fp32", "fp64", "fp16"])
def test_cas_matches_numpy(rng, dt):
    n = 128  # atomic_cas has no mask (as in Triton): the whole tile is in bounds
    x = rand(rng, n, NP[dt])
    cmp = np.where(rng.random(n) < 0.5, x, rand(rng, n, NP[dt]))
    val, old = rand(rng, n, NP[dt]), poison(n, NP[dt])
    x0 = x.copy()
    interpreted(_cas_kernel)[(1,)](x, cmp, val, old, n, BLOCK=128)
    np.testing.assert_array_equal(old, x0)
    np.testing.assert_array_equal(x, np.where(x0 == cmp, val, x0))


def test_cas_spin_lock():
    """The classic lock: each program takes it with a CAS, adds, releases with xchg."""
    @interpreted
    def locked_add(lock, total, v):
        while_taken = tl.atomic_cas(lock, 0, 1, sem="acquire")
        tl.device_assert(while_taken == 0, "the lock was free")
        t = tl.load(total)
        tl.store(total, t + v)
        tl.atomic_xchg(lock, 0, sem="release")

    lock, total = np.zeros(1, np.int32), np.array([3], np.int32)
    locked_add[(5,)](lock, total, 7, debug=True)
    assert lock[0] == 0 and total[0] == 3 + 5 * 7


def test_out_of_bounds_atomic_is_reported():
    @interpreted
    def k(x, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.atomic_add(x + offs, 1, mask=offs < n)

    with pytest.raises(IndexError, match="out-of-bounds atomic_add"):
        k[(1,)](np.zeros(8, np.int32), 9, BLOCK=16)


# ---- rejections ------------------------------------------------------------------------------



def expect_error(fn, sig, message, constants=None):
    with pytest.raises(CompilationError) as ei:
        compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False)
    assert_located(ei.value, message, THIS, line_of(fn, "# ERR"))


@tilework.jit
def k_bad_sem(x, n):
    tl.atomic_add(x, 1, sem="seq_cst")  # ERR


@tilework.jit
def k_bad_scope(x, n):
    tl.atomic_or(x, 1, scope="device")  # ERR


@tilework.jit
def k_bad_cas_sem(x, n):
    tl.atomic_cas(x, 1, 2, sem="strong")  # ERR


@tilework.jit
def k_value_shape(x, n):
    tl.atomic_add(x, tl.arange(0, 16))  # ERR


@tilework.jit
def k_not_pointer(x, n):
    tl.atomic_add(n, 1)  # ERR


@tilework.jit
def k_block_pointer(x, n):
    bp = tl.make_block_ptr(x, (n,), (1,), (0,), (16,), (0,))
    tl.atomic_add(bp, 1.0)  # ERR


P32, P16, PI8, PF16 = (tl.pointer_type(t) for t in (tl.int32, tl.int16, tl.int8, tl.float16))


@pytest.mark.parametrize("fn, sig, message", [
    (k_bad_sem, {"x": P32, "n": tl.int32},
     "atomic_add sem must be one of 'acq_rel', 'acquire', 'release', 'relaxed'; got 'seq_cst'"),
    (k_bad_scope, {"x": P32, "n": tl.int32},
     "atomic_or scope must be one of 'gpu', 'cta', 'sys'; got 'device'"),
    (k_bad_cas_sem, {"x": P32, "n": tl.int32}, "atomic_cas sem must be one of"),
    (k_bad_sem, {"x": P16, "n": tl.int32}, "atomic_add sem must be one of"),
    (k_value_shape, {"x": P32, "n": tl.int32},
     "atomic_add value of shape [16] does not match pointer shape []"),
    (k_not_pointer, {"x": P32, "n": tl.int32},
     "atomic_add expects a pointer or a tile of pointers, got int32"),
    (k_block_pointer, {"x": tl.pointer_type(tl.float32), "n": tl.int32},
     "atomic_add does not take block pointers"),
])
def test_rejections(fn, sig, message):
    expect_error(fn, sig, message)


@tilework.jit
def k_add(x, n):
    tl.atomic_add(x, 1)  # ERR


@tilework.jit
def k_max(x, n):
    tl.atomic_max(x, 1)  # ERR


@tilework.jit
def k_and(x, n):
    tl.atomic_and(x, 1)  # ERR


@tilework.jit
def k_xchg(x, n):
    tl.atomic_xchg(x, 1)  # ERR


@tilework.jit
def k_cas(x, n):
    tl.atomic_cas(x, 1, 2)  # ERR


@pytest.mark.parametrize("fn, elem, message", [
    (k_add, tl.int16, "atomic_add does not support int16"),
    (k_add, tl.uint8, "atomic_add does not support uint8"),
    (k_add, tl.int1, "atomic_add does not support int1"),
    (k_add, tl.float8e4nv, "atomic_add does not support fp8e4nv"),
    (k_max, tl.float16, "atomic_max does not support fp16 (only atomic_add does)"),
    (k_max, tl.bfloat16, "atomic_max does not support bf16"),
    (k_xchg, tl.float16, "atomic_xchg does not support fp16"),
    (k_and, tl.float32, "atomic_and does not support fp32: bitwise atomics take integers"),
    (k_cas, tl.int8, "atomic_cas does not support int8: it takes 16-, 32- or 64-bit elements"),
])
def test_dtype_rejections(fn, elem, message):
    expect_error(fn, {"x": tl.pointer_type(elem), "n": tl.int32}, message)


def test_verifier_rejects_bad_attributes():
    import mlir.ir as ir
    from tilework.dialects import new_context, verify
    from tilework.dialects.verify import VerificationError
    text = """func.func @f(%p: !tile.ptr<f32>, %v: f32) {
      %0 = "tile.atomic_rmw"(%p, %v) {kind = "KIND", sem = "SEM", scope = "gpu",
           operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> f32
      return }"""
    ctx = new_context()
    with ctx, ir.Location.unknown():
        for kind, sem, msg in (("fadd", "weird", "atomic_rmw sem must be one of"),
                               ("add", "relaxed", "atomic_rmw add does not apply to f32"),
                               ("nand", "relaxed", "atomic_rmw kind must be one of")):
            m = ir.Module.parse(text.replace("KIND", kind).replace("SEM", sem))
            with pytest.raises(VerificationError, match=msg):
                verify(m)


def test_debug_option_reaches_the_lock_kernel():
    """(CompileOptions plumbing used by test_cas_spin_lock's device_assert, compiled.)"""
    @tilework.jit
    def k(lock):
        t = tl.atomic_cas(lock, 0, 1, sem="acquire")
        tl.device_assert(t == 0, "taken")
    sig = {"lock": tl.pointer_type(tl.int32)}
    assert "__assertfail" in asm_of(aot(k, sig, "sm_90a", {}, CompileOptions(debug=True)))
    assert "__assertfail" not in asm_of(aot(k, sig, "sm_90a", {}))
