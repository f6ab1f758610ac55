"""tl.dot on Hopper's warpgroup MMA (sm_90a): which dots take it (dot_wgmma_layout), the
compiled kernels run on the SIMT emulator against float64 numpy (every operand type, both B
majors, masked tails, loop-carried accumulators, fp8's split accumulation), the emulator's own
checks (proxy fence, wgmma.fence, descriptor sensitivity), and compile-only checks of the PTX
(wgmma, fences, ptxas, no spills at 128x128x64 and 128x256x64 with 8 warps)."""
import re

import numpy as np
import pytest

import mlir.ir as ir

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends import parse_target
from tilework.compiler.driver import ASTSource, compile
from tilework.dialects import tile as T
from tilework.lowering import PassContext, run_pipeline
from tilework.lowering.dot_wgmma_layout import wgmma_eligible, wgmma_layout, warps_for
from tilework.lowering.registry import LoweringError

from dot_kernels import dot_tile, matmul_kernel
from simt_emulator import Emulator
from simt_wgmma import WgmmaError
from test_dot import tf32_round

SM90A = "sm_90a"


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def ptr(d):
    return tl.pointer_type(d)


# ---- operands: numpy arrays passed to the kernel, and their float64 values ----------------

def _e4m3_values(bits):
    """float64 values of e4m3fn bytes (written from the format: 1.4.3, bias 7, no infinities)."""
    b = bits.astype(np.int64)
    s = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> 3) & 0xF
    m = (b & 7).astype(np.float64)
    return s * np.where(e == 0, m / 8 * 2.0**-6, (1 + m / 8) * np.exp2(e - 7.0))


def _e5m2_values(bits):
    """e5m2 is the high byte of an fp16."""
    return (bits.astype(np.uint16) << 8).view(np.float16).astype(np.float64)


def _bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


# kind -> (tl dtype, how to make [r, c] inputs: (kernel array, float64 values))
def _fp16(rng, shape):
    x = rng.standard_normal(shape).astype(np.float16)
    return x, x.astype(np.float64)


def _bf16(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)  # truncated to bf16
    return bits, _bf16_values(bits)


def _fp32(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    return x, tf32_round(x).astype(np.float64)  # what the tensor cores multiply


def _int8(rng, shape):
    x = rng.integers(-128, 128, shape, dtype=np.int8)
    return x, x.astype(np.float64)


def _fp8(values, nan):
    def make(rng, shape):
        bits = rng.integers(0, 256, shape, dtype=np.uint8)
        bits = np.where(np.isin(bits & 0x7F, nan), bits & 0xF0, bits).astype(np.uint8)
        return bits, values(bits)
    return make


KINDS = {
    "fp16": (tl.float16, _fp16),
    "bf16": (tl.bfloat16, _bf16),
    "fp32": (tl.float32, _fp32),
    "int8": (tl.int8, _int8),
    "e4m3": (tl.float8e4nv, _fp8(_e4m3_values, [0x7F])),
    "e5m2": (tl.float8e5, _fp8(_e5m2_values, list(range(0x7C, 0x80)))),
}


def _tolerance(kind, av, bv, out_f16=False):
    """An error bound for an fp32 (or fp16) result: the sum of |products| times the
    accumulator's unit roundoff (a few times over)."""
    mag = np.abs(av) @ np.abs(bv)
    eps = 2.0**-10 if out_f16 else 2.0**-22
    return mag * eps * 8 + 1e-6


def _check(d, ref, kind, av, bv, out_f16=False):
    if kind == "int8":
        np.testing.assert_array_equal(d, ref.astype(np.int64).astype(np.int32))
        return
    err = np.abs(d.astype(np.float64) - ref)
    tol = _tolerance(kind, av, bv, out_f16)
    assert (err <= tol).all(), f"max error {err.max()} (bound {tol[err > tol].min()})"


# ---- which dots take wgmma ----------------------------------------------------------------

def test_warps_for():
    assert warps_for(64, 64, 4) == (4, 1)
    assert warps_for(128, 128, 8) == (8, 1)
    assert warps_for(64, 256, 8) == (4, 2)
    assert warps_for(128, 256, 8) == (8, 1)
    assert warps_for(64, 64, 8) == (4, 2)


def _types(ctx, a, b, c):
    with ctx, ir.Location.unknown():
        return [ir.RankedTensorType.get(s, ir.Type.parse(e)) for s, e in (a, b, c)]


@pytest.mark.parametrize("target, a, b, c, prec, nw, why", [
    ("sm_90a", ((64, 32), "f16"), ((32, 64), "f16"), ((64, 64), "f32"), "tf32", 4, None),
    ("sm_90", ((64, 32), "f16"), ((32, 64), "f16"), ((64, 64), "f32"), "tf32", 4,
     "sm_90 has no wgmma"),
    ("sm_90a", ((64, 32), "f16"), ((32, 64), "f16"), ((64, 64), "f32"), "tf32", 2,
     "num_warps 2 is not whole warpgroups"),
    ("sm_90a", ((32, 32), "f16"), ((32, 64), "f16"), ((32, 64), "f32"), "tf32", 4,
     "M 32 is less than the 64 rows of one warpgroup"),
    ("sm_90a", ((64, 8), "f16"), ((8, 64), "f16"), ((64, 64), "f32"), "tf32", 4,
     "K 8 is narrower than one instruction (16)"),
    ("sm_90a", ((64, 32), "f16"), ((32, 8), "f16"), ((64, 8), "f32"), "tf32", 4,
     "N 8 is narrower than a 32-byte swizzled row"),
    ("sm_90a", ((64, 32), "f32"), ((32, 64), "f32"), ((64, 64), "f32"), "ieee", 4,
     "fp32 operands with input_precision 'ieee' (wgmma computes in tf32)"),
    ("sm_90a", ((64, 32), "f64"), ((32, 64), "f64"), ((64, 64), "f64"), "tf32", 4,
     "operand type f64 has no wgmma"),
    ("sm_90a", ((2, 64, 32), "f16"), ((2, 32, 64), "f16"), ((2, 64, 64), "f32"), "tf32", 4,
     "only 2-D dots"),
    ("sm_90a", ((64, 32), "bf16"), ((32, 64), "bf16"), ((64, 64), "f16"), "tf32", 4,
     "accumulator f16 for operands bf16"),
    ("sm_90a", ((64, 32), "f8E4M3FN"), ((32, 64), "f8E5M2"), ((64, 64), "f32"), "tf32", 4,
     None),
])
def test_eligibility(target, a, b, c, prec, nw, why):
    ctx = T.new_context()
    ta, tb, tc = _types(ctx, a, b, c)
    with ctx:
        assert wgmma_eligible(parse_target(target), ta, tb, tc, prec, nw) == why


def _tilegpu(kernel, sig, const, nw=4, target=SM90A):
    ck = compile(ASTSource(kernel, sig, const, {}), target, CompileOptions(num_warps=nw),
                 cache=False)
    return ck


def test_layout_of_a_dot():
    """The accumulator layout chosen for a 128x256 fp16 dot with 8 warps: two warpgroups along
    M, one m64n256k16 instruction each; tf32 takes k8, 8-bit types k32."""
    ctx = T.new_context()
    with ctx, ir.Location.unknown():
        m = ir.Module.parse("""
          func.func @f(%a: tensor<128x64xf16>, %b: tensor<64x256xf16>, %c: tensor<128x256xf32>,
                       %x: tensor<64x32xf32>, %y: tensor<32x64xf32>, %z: tensor<64x64xf32>,
                       %p: tensor<64x64xi8>, %q: tensor<64x64xi8>, %r: tensor<64x64xi32>) {
            %0 = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<128x64xf16>, tensor<64x256xf16>, tensor<128x256xf32>) -> tensor<128x256xf32>
            %1 = "tile.dot"(%x, %y, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
            %2 = "tile.dot"(%p, %q, %r) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xi8>, tensor<64x64xi8>, tensor<64x64xi32>) -> tensor<64x64xi32>
            return
          }""")
        dots = [op for op in T.walk_ops(m.operation) if op.name == "tile.dot"]
        tgt = parse_target(SM90A)
        assert wgmma_layout(tgt, dots[0], 8).text() == \
            "#tilegpu.mma<3 : i32, array<i32: 8, 1>, array<i32: 64, 256, 16>>"
        assert wgmma_layout(tgt, dots[1], 4).instr_shape == (64, 64, 8)
        assert wgmma_layout(tgt, dots[2], 4).instr_shape == (64, 64, 32)
        assert wgmma_layout(parse_target("sm_80"), dots[0], 8) is None


# ---- emulated: one dot of whole tiles ------------------------------------------------------

def _emulate_tile(rng, ka, kb, m, n, k, nw, mode="plain", out=None, rewrite=None):
    (da, mk_a), (db, mk_b) = KINDS[ka], KINDS[kb]
    out = out or (tl.int32 if ka == "int8" else tl.float32)
    a, av = mk_a(rng, (m, k))
    if mode == "trans_b":
        b, bv = mk_b(rng, (n, k))
        bv = bv.T
    else:
        b, bv = mk_b(rng, (k, n))
    npo = {tl.int32: np.int32, tl.float32: np.float32, tl.float16: np.float16}[out]
    c = (rng.standard_normal((m, n)) * 4).astype(npo) if mode == "acc" else np.zeros((m, n), npo)
    d = np.zeros((m, n), npo)
    emu = Emulator.from_kernel(dot_tile, dict(a_ptr=ptr(da), b_ptr=ptr(db), c_ptr=ptr(out),
                                              d_ptr=ptr(out)),
                               dict(M=m, N=n, K=k, MODE=mode, OUT=out, PRECISION="tf32"),
                               SM90A, num_warps=nw, rewrite=rewrite)
    assert '"tilegpu.warpgroup_dot"' in emu.compiled.asm["tilegpu"]
    emu.run((1,), a, b, c, d)
    ref = av @ bv + (c.astype(np.float64) if mode == "acc" else 0)
    return emu, d, ref, av, bv


@pytest.mark.parametrize("ka, kb, m, n, k, nw", [
    ("fp16", "fp16", 64, 64, 32, 4),
    ("fp16", "fp16", 128, 128, 64, 8),   # two warpgroups along M
    ("fp16", "fp16", 64, 256, 32, 8),    # two along N
    ("fp16", "fp16", 64, 64, 32, 8),     # b's second warpgroup starts mid swizzle row
    ("fp16", "fp16", 256, 64, 16, 4),    # the CTA tile repeated along M
    ("fp16", "fp16", 64, 16, 16, 4),     # 32-byte swizzles
    ("bf16", "bf16", 64, 64, 64, 4),
    ("fp32", "fp32", 64, 32, 32, 4),     # tf32, b K-major
    ("fp32", "fp32", 128, 64, 16, 8),
    ("int8", "int8", 64, 64, 64, 4),
    ("e4m3", "e4m3", 64, 32, 64, 4),
    ("e5m2", "e5m2", 64, 64, 32, 4),
    ("e4m3", "e5m2", 64, 64, 128, 4),
])
def test_dot_tile_emulated(ka, kb, m, n, k, nw, rng):
    _, d, ref, av, bv = _emulate_tile(rng, ka, kb, m, n, k, nw)
    _check(d, ref, ka, av, bv)


@pytest.mark.parametrize("mode", ["acc", "trans_b"])
@pytest.mark.parametrize("kind", ["fp16", "fp32"])
def test_dot_tile_modes_emulated(mode, kind, rng):
    """An accumulator operand; b given transposed (its tile in a transposed layout)."""
    _, d, ref, av, bv = _emulate_tile(rng, kind, kind, 64, 64, 32, 4, mode=mode)
    _check(d, ref, kind, av, bv)


def test_fp16_accumulator_emulated(rng):
    """out_dtype fp16: accumulated in fp32 and rounded once."""
    _, d, ref, av, bv = _emulate_tile(rng, "fp16", "fp16", 64, 64, 64, 4, out=tl.float16)
    _check(d, ref, "fp16", av, bv, out_f16=True)


def _k_major_b(text):
    """fp16 b stored K-major (nvmma_shared transposed) instead of N-major: the other B
    descriptor form (LBO unused, SBO the 8-row stride along N)."""
    m = re.search(r"!tilegpu\.memdesc<array<i64: 32, 64>, f16, "
                  r"#tilegpu\.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>", text)
    assert m, "b's buffer"
    return text.replace(m.group(0), m.group(0).replace("<128 : i32, false", "<64 : i32, true"))


def test_k_major_b_emulated(rng):
    emu, d, ref, av, bv = _emulate_tile(rng, "fp16", "fp16", 64, 64, 32, 4, rewrite=_k_major_b)
    assert "B[<f16>, <one>, <col>]" in str(emu.module)  # K-major B (PTX's imm-trans-b 0)
    _check(d, ref, "fp16", av, bv)


# ---- emulated: the tiled matmul (masked tails, loop-carried accumulator) -------------------

MATMUL_SIG = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
              "stride_cn")


@pytest.mark.parametrize("kind, acc, plus_eq", [
    ("fp16", tl.float32, False), ("fp16", tl.float32, True), ("fp16", tl.float16, False),
    ("bf16", tl.float32, False), ("fp32", tl.float32, True), ("int8", tl.int32, False),
])
def test_matmul_emulated(kind, acc, plus_eq, rng):
    m, n, k, bm, bn, bk = 100, 72, 80, 64, 64, 32
    dt, mk = KINDS[kind]
    a, av = mk(rng, (m, k))
    b, bv = mk(rng, (k, n))
    npo = {tl.int32: np.int32, tl.float32: np.float32, tl.float16: np.float16}[acc]
    c = np.full((m, n), 7, npo)
    sig = {"a_ptr": ptr(dt), "b_ptr": ptr(dt), "c_ptr": ptr(acc)}
    sig.update({p: tl.int32 for p in MATMUL_SIG})
    emu = Emulator.from_kernel(matmul_kernel, sig, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                                        ACC=acc, PLUS_EQ=plus_eq), SM90A)
    text = emu.compiled.asm["tilegpu"]
    assert '"tilegpu.warpgroup_dot"' in text
    # the accumulator is carried in the mma v3 layout: no conversion inside the loop
    loop = text[text.index("scf.for"):text.index("scf.yield")]
    assert "convert_layout" not in loop
    emu.run(((m + bm - 1) // bm, (n + bn - 1) // bn), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    ref = av @ bv
    if kind == "int8":
        np.testing.assert_array_equal(c, ref.astype(np.int32))
    elif acc == tl.float16:  # rounded to fp16 after each of the 3 K blocks
        err = np.abs(c.astype(np.float64) - ref)
        bound = (np.abs(av) @ np.abs(bv)) * 3 * 2.0**-11 + 1e-3
        assert (err <= bound).all(), err.max()
    else:
        _check(c, ref, kind, av, bv)


@pytest.mark.parametrize("kind, acc", [("fp16", tl.float32), ("fp32", tl.float32),
                                       ("int8", tl.int32)])
def test_matmul_ring_k_step_emulated(kind, acc, rng, monkeypatch):
    """dot_wgmma.RING_K_STEP on (off by default): the pipelined slots' K steps (64- and
    128-byte swizzles, K-major A) as descriptor additions, same results."""
    from tilework.lowering.rules import dot_wgmma
    monkeypatch.setattr(dot_wgmma, "RING_K_STEP", True)
    test_matmul_emulated(kind, acc, False, rng)


@pytest.mark.parametrize("on, encodings", [(False, 7), (True, 4)])
def test_matmul_ring_k_step_option_emulated(on, encodings, rng):
    """CompileOptions.wgmma_ring_k_step (what tilegpu-to-llvm hands the wgmma rule), on a
    pipelined K loop (unit strides, divisible sizes: the operands in cp.async ring slots,
    128-byte swizzles): on, fewer descriptors encoded from an address (the K steps of A's
    and B's slots added), and the same results on the emulator, 3 K iterations (the ring)."""
    m, n, k, bm, bn, bk = 100, 80, 192, 64, 64, 64
    dt, mk = KINDS["fp16"]
    a, av = mk(rng, (m, k))
    b, bv = mk(rng, (k, n))
    c = np.full((m, n), 7, np.float32)
    sig = {"a_ptr": ptr(dt), "b_ptr": ptr(dt), "c_ptr": ptr(tl.float32)}
    unit = ("stride_ak", "stride_bn", "stride_cn")
    sig.update({p: tl.int32 for p in MATMUL_SIG if p not in unit})
    div = {p: {"tile.divisibility": 16}
           for p in ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm")}
    ck = Emulator.from_kernel(matmul_kernel, sig, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                                       ACC=tl.float32, PLUS_EQ=False,
                                                       **dict.fromkeys(unit, 1)),
                              SM90A, attrs=div).compiled
    assert ck.asm["tilegpu"].count('"tilegpu.async_copy"') == 3
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], SM90A, 4, wgmma_ring_k_step=on)
    assert str(emu.module).count("16383") == encodings  # the start address's 14-bit mask
    emu.run(((m + bm - 1) // bm, (n + bn - 1) // bn), a, b, c, m, n, k, k, n, n)
    _check(c, av @ bv, "fp16", av, bv)


# ---- fp8: max_num_imprecise_acc ------------------------------------------------------------

@tilework.jit
def _fp8_dot(a_ptr, b_ptr, d_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
             IMP: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(d_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, max_num_imprecise_acc=IMP))


@pytest.mark.parametrize("imp, partials", [(0, 1), (128, 1), (32, 4), (64, 2)])
def test_fp8_imprecise_split(imp, partials, rng):
    """Every max_num_imprecise_acc / 32 K steps start a fresh accumulator, added in fp32 after
    the wait: (partials - 1) adds per accumulator register."""
    m, n, k = 64, 32, 128
    a, av = KINDS["e4m3"][1](rng, (m, k))
    b, bv = KINDS["e4m3"][1](rng, (k, n))
    d = np.zeros((m, n), np.float32)
    P8 = ptr(tl.float8e4nv)
    emu = Emulator.from_kernel(_fp8_dot, dict(a_ptr=P8, b_ptr=P8, d_ptr=ptr(tl.float32)),
                               dict(M=m, N=n, K=k, IMP=imp), SM90A)
    llvm = str(emu.module)
    assert llvm.count("nvvm.wgmma.mma_async") == k // 32
    assert llvm.count("arith.addf") == (partials - 1) * n // 2
    emu.run((1,), a, b, d)
    _check(d, av @ bv, "e4m3", av, bv)


# ---- the emulator's checks can fail ----------------------------------------------------------

def _erase(emu, name):
    n = 0
    for op in T.walk_ops(emu.module.operation):
        if op.name == name:
            op.erase()
            n += 1
    assert n


def _fp16_tile_emulator(rng):
    a = rng.standard_normal((64, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    P, PO = ptr(tl.float16), ptr(tl.float32)
    emu = Emulator.from_kernel(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=PO, d_ptr=PO),
                               dict(M=64, N=64, K=32, MODE="plain", OUT=tl.float32,
                                    PRECISION="tf32"), SM90A)
    return emu, (a, b, np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32))


@pytest.mark.parametrize("op, message", [
    ("nvvm.fence.proxy", "with no fence.proxy.async after"),
    ("nvvm.wgmma.fence.aligned", "wgmma.mma_async without a wgmma.fence before it"),
    ("nvvm.wgmma.wait.group.sync.aligned", "read before a wgmma.wait_group completes it"),
])
def test_emulator_catches_missing_fences(op, message, rng):
    emu, args = _fp16_tile_emulator(rng)
    with emu.context:
        _erase(emu, op)
    with pytest.raises(WgmmaError, match=re.escape(message)):
        emu.run((1,), *args)


def test_emulator_catches_missing_barrier(rng):
    emu, args = _fp16_tile_emulator(rng)
    with emu.context:
        ops = T.walk_ops(emu.module.operation)
        first = next(i for i, op in enumerate(ops) if op.name == "nvvm.wgmma.fence.aligned")
        # the barrier between the operands' stores (each fenced after) and the wgmma
        bar = [op for op in ops[:first] if op.name == "gpu.barrier"][-1]
        assert any(op.name == "nvvm.fence.proxy" for op in ops[:first])
        bar.erase()
    with pytest.raises(Exception, match="shared-memory race"):
        emu.run((1,), *args)


def test_wrong_swizzle_mode_gives_wrong_results(monkeypatch, rng):
    """The emulator decodes the descriptor's swizzle: a lowering that named 64-byte swizzling
    for a 128-byte-swizzled buffer computes garbage there."""
    from tilework.lowering.rules import dot_wgmma
    monkeypatch.setitem(dot_wgmma.SWIZZLE_MODE, 128, 2)
    emu, (a, b, c, d) = _fp16_tile_emulator(rng)
    emu.run((1,), a, b, c, d)
    assert not np.allclose(d, a.astype(np.float64) @ b, atol=1e-2)


# ---- lowering errors and shared memory -------------------------------------------------------

_WGDOT = """
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @k() attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x64xf16, #B>
  %y = arith.constant dense<2.0> : tensor<64x64xf16, #B>
  %c = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %u = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32>, f32, unit, 1 : i32>
  %t = "tilegpu.local_load"(%u) : (!tilegpu.memdesc<array<i64: 32>, f32, unit, 1 : i32>) -> tensor<32xf32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
  %a = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
  %r = "tilegpu.local_load"(%a) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> tensor<64x64xf16, #B>
  %b = "tilegpu.local_alloc"(%y) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
  %d = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  "tilegpu.local_dealloc"(%u) : (!tilegpu.memdesc<array<i64: 32>, f32, unit, 1 : i32>) -> ()
  return
}
}
"""


def _run(text, passes, target=SM90A):
    ctx = T.new_context()
    with ctx:
        m = ir.Module.parse(text)
        run_pipeline(m, passes, PassContext(parse_target(target), CompileOptions()))
        return str(m)


def test_nvmma_buffers_are_1k_aligned_and_the_dot_waits_for_both_operands():
    """The nvmma buffers start 1 KiB-aligned (after a 128-byte one still live); a barrier goes
    before the warpgroup_dot although only its second operand was written since the last one
    (a was read by local_load after a barrier)."""
    out = _run(_WGDOT, ("tilegpu-allocate-shared", "tilegpu-insert-barriers"))
    offs = [int(x) for x in re.findall(r"smem_offset = (\d+)", out)]
    assert offs == [0, 1024, 9216], offs
    lines = [ln.strip() for ln in out.splitlines()]
    i = next(j for j, ln in enumerate(lines) if "tilegpu.warpgroup_dot" in ln)
    assert lines[i - 1] == '"tilegpu.barrier"() : () -> ()'


def test_dynamic_shared_memory_alignment():
    out = _run(_WGDOT, ("tilegpu-allocate-shared", "tilegpu-insert-barriers",
                        "tilegpu-to-llvm"))
    assert "alignment = 1024 : i64" in out


@pytest.mark.parametrize("target", ["sm_90", "sm_80"])
def test_warpgroup_dot_needs_sm90a(target):
    with pytest.raises(LoweringError, match="tilegpu.warpgroup_dot needs sm_90a \\(wgmma\\), "
                                            f"not {target}"):
        _run(_WGDOT, ("tilegpu-allocate-shared", "tilegpu-insert-barriers",
                      "tilegpu-to-llvm"), target=target)


# ---- compile-only: PTX for sm_90a ----------------------------------------------------------

@tilework.jit
def mm_contiguous(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B for row-major A, B, C whose sizes are multiples of the blocks."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs + k * BLOCK_K)
        b = tl.load(b_ptrs + k * BLOCK_K * stride_bk)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


def compile_mm(bm, bn, bk, nw, dtype=tl.float16):
    P = ptr(dtype)
    sig = dict(a_ptr=P, b_ptr=P, c_ptr=ptr(tl.float16 if dtype != tl.float32 else tl.float32))
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")})
    attrs = {p: {"tile.divisibility": 16} for p in sig}
    return compile(ASTSource(mm_contiguous, sig, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk),
                             attrs), SM90A, CompileOptions(num_warps=nw), cache=False)


@pytest.mark.parametrize("bm, bn, bk, instr", [(128, 128, 64, "m64n128k16"),
                                               (128, 256, 64, "m64n256k16")])
def test_ptx_no_spills_8_warps(bm, bn, bk, instr):
    ck = compile_mm(bm, bn, bk, 8)
    ptx = ck.asm["ptx"]
    info = ck.metadata["ptxas_info"]
    assert "0 bytes spill stores, 0 bytes spill loads" in info, info
    # two warpgroups along M, one instruction per K step each
    assert len(re.findall(rf"wgmma\.mma_async\.sync\.aligned\.{instr}\.f32\.f16\.f16", ptx)) \
        == bk // 16
    order = [m.group(0) for m in re.finditer(
        r"fence\.proxy\.async\.shared::cta|bar\.sync|wgmma\.fence\.sync\.aligned|"
        r"wgmma\.mma_async|wgmma\.commit_group\.sync\.aligned|wgmma\.wait_group\.sync\.aligned",
        ptx)]
    i = order.index("fence.proxy.async.shared::cta")
    assert order[i:i + 3] == ["fence.proxy.async.shared::cta", "bar.sync",
                              "wgmma.fence.sync.aligned"]
    assert order[i + 3:i + 3 + bk // 16] == ["wgmma.mma_async"] * (bk // 16)
    assert order[i + 3 + bk // 16:i + 5 + bk // 16] == ["wgmma.commit_group.sync.aligned",
                                                        "wgmma.wait_group.sync.aligned"]
    assert ".extern .shared .align 1024" in ptx


@pytest.mark.parametrize("dtype, ptx_types", [
    (tl.bfloat16, "f32.bf16.bf16"), (tl.float32, "f32.tf32.tf32"),
    (tl.int8, "s32.s8.s8"), (tl.float8e4nv, "f32.e4m3.e4m3"), (tl.float8e5, "f32.e5m2.e5m2")])
def test_ptx_operand_types(dtype, ptx_types):
    """Every operand type compiles (ptxas accepts it) to its wgmma flavour."""
    sig = dict(a_ptr=ptr(dtype), b_ptr=ptr(dtype),
               c_ptr=ptr(tl.int32 if dtype == tl.int8 else tl.float32),
               d_ptr=ptr(tl.int32 if dtype == tl.int8 else tl.float32))
    k = 64
    ck = compile(ASTSource(dot_tile, sig, dict(M=64, N=64, K=k, MODE="plain",
                                               OUT=tl.int32 if dtype == tl.int8 else tl.float32,
                                               PRECISION="tf32"), {}),
                 SM90A, CompileOptions(num_warps=4), cache=False)
    assert f".{ptx_types} " in ck.asm["ptx"]
    assert "0 bytes spill stores" in ck.metadata["ptxas_info"]


def test_other_targets_keep_their_paths():
    """sm_90 (no 'a') and sm_80 compile the same dot without wgmma."""
    P = ptr(tl.float16)
    for target in ("sm_90", "sm_80"):
        ck = compile(ASTSource(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=ptr(tl.float32),
                                              d_ptr=ptr(tl.float32)),
                               dict(M=64, N=64, K=32, MODE="plain", OUT=tl.float32,
                                    PRECISION="tf32"), {}), target, cache=False)
        assert "wgmma" not in ck.asm["ptx"]
        assert "warpgroup_dot" not in ck.asm["tilegpu"]
