"""The math builtins: API and dtype rules (Triton 3.6's), rejections, the tile IR they emit,
compilation for sm_80/sm_90a/gfx942 without library calls, interpreter accuracy, and the
accuracy of the device expansions (lowering/rules/math_approx.py) JIT-compiled for the CPU."""
import ctypes
import math
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile

import math_kernels as K

TARGETS = ["sm_80", "sm_90a", "gfx942"]
interp = {k: tilework.jit(interpret=True)(k.fn) for k in
          (K.unary_kernel, K.unary_2d_kernel, K.binary_kernel, K.ternary_kernel)}


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


def ptr(d):
    return tl.pointer_type(tl.str_to_ty(d))


# ---- API ----------------------------------------------------------------------------------------

def test_names_and_math_namespace():
    for name in tl.math.__all__:
        assert getattr(tl, name) is getattr(tl.math, name), name
    for name in ("exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "sqrt_rn", "rsqrt", "abs",
                 "fdiv", "div_rn", "erf", "floor", "ceil", "fma", "umulhi", "clamp", "sigmoid",
                 "cdiv", "PropagateNan"):
        assert name in tl.math.__all__
        assert getattr(tl.math, name).__doc__
    assert tl.PropagateNan.ALL.value == 0xFFFF and tl.PropagateNan.NONE.value == 0


def test_cdiv_on_host_and_constexprs():
    assert tl.cdiv(10, 3) == 4 and tl.cdiv(9, 3) == 3 and tl.math.cdiv(1, 1024) == 1
    assert tl.cdiv(tl.constexpr(1000), 256) == 4

    @tilework.jit(interpret=True)
    def k(o_ptr, N: tl.constexpr, B: tl.constexpr):
        tl.store(o_ptr + tl.arange(0, 4), tl.full((4,), tl.cdiv(N, B), tl.int32))

    out = np.zeros(4, np.int32)
    k[(1,)](out, N=1000, B=256)
    assert (out == 4).all()
    src = ASTSource(tilework.jit(k.fn), {"o_ptr": ptr("int32")},
                    {"N": 1000, "B": 256}, {})
    assert "dense<4> : tensor<4xi32>" in compile(src, "sm_90a", cache=False).asm["tile"]


# ---- rejections (Triton's messages) -------------------------------------------------------------

@tilework.jit
def _call_kernel(x_ptr, y_ptr, FN: tl.constexpr, EXTRA: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if EXTRA == "none":
        y = getattr(tl, FN)(x)
    if EXTRA == "two":
        y = getattr(tl, FN)(x, x)
    if EXTRA == "int":
        y = getattr(tl, FN)(x, 2)
    if EXTRA == "bounds":
        y = tl.clamp(x, 0, 1)
    if EXTRA == "bad_nan":
        y = tl.clamp(x, 0.0, 1.0, propagate_nan=1)
    if EXTRA == "bad_ieee":
        y = tl.fdiv(x, x, ieee_rounding=1)
    if EXTRA == "three":
        y = tl.fma(x, x, x)
    if EXTRA == "ptr":
        y = tl.abs(x_ptr)
    tl.store(y_ptr + tl.arange(0, 16), y)


def _compile_call(fn, d, extra="none", out=None):
    src = ASTSource(_call_kernel, {"x_ptr": ptr(d), "y_ptr": ptr(out or d)},
                    {"FN": fn, "EXTRA": extra}, {})
    return compile(src, "sm_90a", cache=False)


@pytest.mark.parametrize("fn", K.TRANSCENDENTAL)
@pytest.mark.parametrize("d", ["fp16", "bf16", "int32"])
def test_transcendental_rejects_other_dtypes(fn, d):
    with pytest.raises(CompilationError, match=re.escape(
            f"tl.{fn}: Expected dtype ['fp32', 'fp64'] but got {d}")):
        _compile_call(fn, d)


@pytest.mark.parametrize("fn, d, extra, message", [
    ("sqrt_rn", "fp64", "none", "tl.sqrt_rn: Expected dtype ['fp32'] but got fp64"),
    ("div_rn", "fp64", "two", "tl.div_rn: Expected dtype ['fp32'] but got fp64"),
    ("div_rn", "fp16", "two", "tl.div_rn: Expected dtype ['fp32'] but got fp16"),
    ("umulhi", "int16", "two",
     "tl.umulhi: Expected dtype ['int32', 'int64', 'uint32', 'uint64'] but got int16"),
    ("umulhi", "fp32", "two",
     "tl.umulhi: Expected dtype ['int32', 'int64', 'uint32', 'uint64'] but got fp32"),
    ("fdiv", "int32", "two", "tl.fdiv: both operands of fdiv must have floating scalar type"),
    ("fdiv", "fp32", "int", "tl.fdiv: both operands of fdiv must have floating scalar type, "
                            "got fp32 and int32"),
    ("clamp", "int32", "bounds",
     "tl.clamp: Unexpected dtype int32. Only floating point clamp is supported"),
    ("clamp", "fp32", "bad_nan", "propagate_nan must be tl.PropagateNan.NONE or"),
    ("fdiv", "fp32", "bad_ieee", "tl.fdiv: ieee_rounding must be a constexpr bool"),
    ("fma", "int32", "three", "tl.fma: expected fp16, bf16, fp32 or fp64 operands, got int32"),
    ("abs", "fp32", "ptr", "tl.abs is not defined for pointers"),
    ("exp", "fp32", "two", "tl.exp: too many positional arguments"),
    ("fma", "fp32", "two", "tl.fma: missing a required argument: 'z'"),
    ("sigmoid", "fp16", "none", "tl.sigmoid: Expected dtype ['fp32', 'fp64'] but got fp16"),
])
def test_rejections(fn, d, extra, message):
    with pytest.raises(CompilationError, match=re.escape(message)):
        _compile_call(fn, d, extra)


def test_rejection_in_the_interpreter():
    k = tilework.jit(interpret=True)(_call_kernel.fn)
    x = np.ones(16, np.float16)
    with pytest.raises(Exception, match=re.escape("Expected dtype ['fp32', 'fp64'] but got fp16")):
        k[(1,)](x, x.copy(), FN="exp", EXTRA="none")


# ---- the tile IR --------------------------------------------------------------------------------

def _tile_ir(fn, d, extra="none", out=None):
    return _compile_call(fn, d, extra, out).asm["tile"]


def test_ir_sqrt_is_fast_and_sqrt_rn_is_not():
    assert re.search(r"math\.sqrt %\w+ fastmath<afn> : tensor<16xf32>", _tile_ir("sqrt", "fp32"))
    ir_rn = _tile_ir("sqrt_rn", "fp32")
    assert "math.sqrt" in ir_rn and "fastmath" not in ir_rn


def test_ir_clamp_and_promotions():
    ir_bf16 = _compile_call("clamp", "bf16", "bounds", out="fp32").asm["tile"]
    assert "arith.extf" in ir_bf16 and "tensor<16xf32>" in ir_bf16  # bf16 clamps in fp32
    ir_fp16 = _compile_call("fdiv", "fp16", "two", out="fp32").asm["tile"]
    assert re.search(r"arith\.divf %\w+, %\w+ : tensor<16xf32>", ir_fp16)  # fp16 divides in fp32


@pytest.mark.parametrize("pn, ops", [("NONE", ("maxnumf", "minnumf")),
                                     ("ALL", ("maximumf", "minimumf"))])
def test_ir_clamp_nan_modes(pn, ops):
    @tilework.jit
    def k(x_ptr, y_ptr, PN: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, 16))
        tl.store(y_ptr + tl.arange(0, 16),
                 tl.clamp(x, -1.0, 1.0, propagate_nan=getattr(tl.PropagateNan, PN)))
    ir = compile(ASTSource(k, {"x_ptr": ptr("fp32"), "y_ptr": ptr("fp32")}, {"PN": pn}, {}),
                 "sm_90a", cache=False).asm["tile"]
    assert f"arith.{ops[0]}" in ir and f"arith.{ops[1]}" in ir


def test_member_functions_and_scalars():
    @tilework.jit
    def k(x_ptr, y_ptr):
        x = tl.load(x_ptr + tl.arange(0, 16))
        s = tl.load(x_ptr)  # a scalar
        tl.store(y_ptr + tl.arange(0, 16), x.exp() + x.sin().cos() + x.erf() + x.rsqrt()
                 + x.floor() + x.ceil() + x.sqrt_rn() + x.abs() + tl.log(s) + x.sigmoid()
                 + x.to(tl.int32).cdiv(2))

    ck = compile(ASTSource(k, {"x_ptr": ptr("fp32"), "y_ptr": ptr("fp32")}, {}, {}), "sm_90a",
                 cache=False)
    assert "math.log %" in ck.asm["tile"] and ": f32" in ck.asm["tile"]
    x = np.linspace(0.5, 2, 16).astype(np.float32)
    y = np.zeros_like(x)
    tilework.jit(interpret=True)(k.fn)[(1,)](x, y)
    want = (np.exp(x) + np.cos(np.sin(x)) + np.vectorize(math.erf)(x) + 1 / np.sqrt(x) + np.floor(x) + np.ceil(x) + np.sqrt(x) + x + np.log(x[0])
            + 1 / (1 + np.exp(-x)) + (x.astype(np.int32) + 1) // 2)
    np.testing.assert_allclose(y, want, rtol=1e-5)


# ---- compilation for every target, without library calls ---------------------------------------

def _signature(kind, fn, d):
    od = K.out_dtype(fn, d)
    n = {"n": tl.int32}
    if kind == "unary":
        return K.unary_kernel, {"x_ptr": ptr(d), "y_ptr": ptr(od), **n}
    if kind == "binary":
        return K.binary_kernel, {"x_ptr": ptr(d), "y_ptr": ptr(d), "o_ptr": ptr(od), **n}
    return K.ternary_kernel, {"x_ptr": ptr(d), "y_ptr": ptr(d), "z_ptr": ptr(d),
                              "o_ptr": ptr(od), **n}


ALL_CASES = ([("unary",) + c for c in K.UNARY_CASES] + [("binary",) + c for c in K.BINARY_CASES]
             + [("ternary",) + c for c in K.TERNARY_CASES])


def assert_no_library_calls(ck):
    llir = ck.asm["llir"]
    decls = [n for n in re.findall(r"declare [^@]*@([\w.$]+)", llir) if not n.startswith("llvm.")]
    assert not decls, decls
    if "ptx" in ck.asm:
        assert not re.search(r"\bcall(\.uni)?\b", ck.asm["ptx"])
        assert ".extern" not in ck.asm["ptx"]
    else:
        assert not re.search(r"s_swappc|s_setpc|\bcall\b", ck.asm["amdgcn"].split(".amdhsa_kernel")[0])
        assert ck.asm["hsaco"][:4] == b"\x7fELF"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind, fn, d", ALL_CASES, ids=[f"{c[1]}-{c[2]}" for c in ALL_CASES])
def test_compiles_without_library_calls(kind, fn, d, target):
    kern, sig = _signature(kind, fn, d)
    ck = compile(ASTSource(kern, sig, {"FN": fn, "BLOCK": 256}, {}), target, cache=False)
    assert_no_library_calls(ck)
    if target.startswith("sm_") and "cubin" in ck.asm:
        assert ck.asm["cubin"]  # ptxas accepted the PTX


@pytest.mark.parametrize("target", TARGETS)
def test_compiles_2d(target):
    src = ASTSource(K.unary_2d_kernel, {"x_ptr": ptr("fp32"), "y_ptr": ptr("fp32"),
                                        "M": tl.int32, "N": tl.int32},
                    {"FN": "sin", "BM": 16, "BN": 32}, {})
    assert_no_library_calls(compile(src, target, cache=False))


@pytest.mark.parametrize("target", TARGETS)
def test_each_stage_text_restarts(target):
    """The tile IR (math ops with fastmath flags), the tilegpu IR and the llvm/llir text (the
    intrinsics by name) all compile again from text."""
    src = ASTSource(K.unary_kernel, {"x_ptr": ptr("fp32"), "y_ptr": ptr("fp32"), "n": tl.int32},
                    {"FN": "sqrt", "BLOCK": 256}, {})
    for fn in ("sqrt", "rsqrt", "sin", "exp"):
        src.constants["FN"] = fn
        ck = compile(src, target, cache=False)
        for stage in ("tile", "tilegpu", "llvm", "llir"):
            again = compile(ck.asm[stage], target, start=stage, cache=False)
            assert_no_library_calls(again)


def test_umulhi_verifier():
    import mlir.ir as ir
    from tilework.dialects import VerificationError, new_context, verify
    text = """func.func @f(%x: tensor<16xf32>) attributes {tile.kernel} {
      %y = "tile.umulhi"(%x, %x) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      return
    }"""
    with new_context():
        m = ir.Module.parse(text)
        with pytest.raises(VerificationError, match="umulhi takes 32- or 64-bit integers, got f32"):
            verify(m.operation)


# The instructions chosen (lowering/rules/math.py's table): Triton's approximations on NVIDIA.
@pytest.mark.parametrize("fn, d, target, pattern", [
    ("exp", "fp32", "sm_90a", r"ex2\.approx\.f32"), ("exp2", "fp32", "sm_80", r"ex2\.approx\.ftz\.f32"),
    ("sqrt", "fp32", "sm_90a", r"sqrt\.approx\.f32"), ("sqrt_rn", "fp32", "sm_90a", r"sqrt\.rn\.f32"),
    ("sqrt", "fp64", "sm_80", r"sqrt\.rn\.f64"), ("rsqrt", "fp32", "sm_90a", r"rsqrt\.approx\.f32"),
    ("floor", "fp32", "sm_90a", r"cvt\.rmi\.f32\.f32"), ("abs", "int32", "sm_90a", r"abs\.s32"),
    ("umulhi", "uint32", "sm_80", r"mul\.hi\.u32"), ("umulhi", "int64", "sm_90a", r"mul\.hi\.u64"),
    ("clamp", "fp32", "sm_90a", r"max\.f32"), ("clamp_all", "fp32", "sm_90a", r"max\.NaN\.f32"),
    ("exp", "fp32", "gfx942", r"v_exp_f32"), ("log2", "fp32", "gfx942", r"v_log_f32"),
    ("sqrt", "fp32", "gfx942", r"v_sqrt_f32"), ("rsqrt", "fp32", "gfx942", r"v_rsq_f32"),
    ("umulhi", "int32", "gfx942", r"v_mul_hi_u32"), ("floor", "fp64", "gfx942", r"v_floor_f64"),
])
def test_instruction_selection(fn, d, target, pattern):
    kind = next(c[0] for c in ALL_CASES if c[1:] == (fn, d))
    kern, sig = _signature(kind, fn, d)
    ck = compile(ASTSource(kern, sig, {"FN": fn, "BLOCK": 256}, {}), target, cache=False)
    assert re.search(pattern, ck.asm.get("ptx") or ck.asm["amdgcn"])


# ---- the interpreter against float64 references -------------------------------------------------

def _torch_bf16(x):
    # numpy has no bfloat16: the interpreter takes bf16 data as CPU torch tensors
    torch = pytest.importorskip("torch", reason="bf16 buffers on the CPU need torch")
    return torch.from_numpy((K.bf16_round(x).view(np.uint32) >> 16).astype(np.uint16).view(np.int16)) \
        .view(torch.bfloat16)


def _arr(x, d):
    return _torch_bf16(x) if d == "bf16" else x


def _back(a, d):
    if d == "bf16":
        import torch
        return (a.view(torch.int16).numpy().view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a


def _out(n, d):
    if d == "bf16":
        return _torch_bf16(np.full(n, np.nan, np.float32))
    dt = K.NP[d]
    return np.full(n, np.nan if np.dtype(dt).kind == "f" else 77, dt)


@pytest.mark.parametrize("n, block", [(1000, 256), (1, 128), (256, 256), (4099, 1024)])
@pytest.mark.parametrize("fn, d", K.UNARY_CASES)
def test_interpreter_unary(fn, d, n, block, rng):
    x = K.inputs(fn, d, n, rng)
    nn = x.size
    y = _out(nn, d)
    interp[K.unary_kernel][(tl.cdiv(nn, block),)](_arr(x, d), y, nn, FN=fn, BLOCK=block)
    y = _back(y, d)
    if np.dtype(K.NP[d]).kind in "iu":
        assert (y == np.abs(x)).all()  # wraps at the minimum; unsigned unchanged
        return
    if fn == "abs":
        assert (y.view(K.NP[d]) == np.abs(x)).all() or np.array_equal(y, np.abs(x), equal_nan=True)
        return
    err = K.ulp_error(y, K.reference(fn, x), d)
    bound = K.interp_bound(fn, d)
    assert err.max() <= bound, (x[np.argmax(err)], y[np.argmax(err)], err.max())
    if fn == "sin" or fn == "erf":
        zeros = x == 0
        assert (np.signbit(y[zeros]) == np.signbit(x[zeros])).all()  # odd: -0 -> -0


@pytest.mark.parametrize("fn, d", K.BINARY_CASES)
def test_interpreter_binary(fn, d, rng):
    n = 1000
    x, y = K.inputs(fn, d, n, rng), K.inputs(fn, d, n, rng)[::-1].copy()
    if fn == "cdiv":
        y = np.where(y == 0, 7, np.abs(y) % 1000 + 1).astype(x.dtype)
    od = K.out_dtype(fn, d)
    o = _out(x.size, od)
    interp[K.binary_kernel][(tl.cdiv(x.size, 256),)](_arr(x, d), _arr(y, d), o, x.size, FN=fn,
                                                      BLOCK=256)
    o = _back(o, od)
    if fn == "umulhi":
        ut = np.uint32 if x.dtype.itemsize == 4 else np.uint64
        want = [(int(a) * int(b)) >> (8 * x.dtype.itemsize) for a, b in zip(x.view(ut), y.view(ut))]
        assert [int(v) for v in o.view(ut)] == want
    elif fn == "cdiv":
        want = [int((int(a) + int(b) - 1) / int(b)) for a, b in zip(x, y)]  # truncating //
        assert o.tolist() == want
    else:
        with np.errstate(all="ignore"):
            exact = x.astype(np.longdouble) / y.astype(np.longdouble)
        assert K.ulp_error(o, exact, od).max() <= 0.5


@pytest.mark.parametrize("fn, d", K.TERNARY_CASES)
def test_interpreter_ternary(fn, d, rng):
    n = 1000
    x, y, z = (K.inputs("fma", d, n, rng) for _ in range(3))
    if fn.startswith("clamp"):
        y, z = np.minimum(y, z), np.maximum(y, z)  # min <= max
        y[np.isnan(y)], z[np.isnan(z)] = -1, 1
    od = K.out_dtype(fn, d)
    o = _out(x.size, od)
    interp[K.ternary_kernel][(tl.cdiv(x.size, 256),)](_arr(x, d), _arr(y, d), _arr(z, d), o,
                                                       x.size, FN=fn, BLOCK=256)
    o = _back(o, od)
    if fn == "fma":
        err = K.ulp_error(o, K.exact_fma(x, y, z), d)
        assert err.max() <= 0.5, (x[np.argmax(err)], y[np.argmax(err)], z[np.argmax(err)])
    else:
        want = np.minimum(np.maximum(x, y), z)  # NaN propagates (numpy)
        if fn == "clamp":
            want = np.where(np.isnan(x), y, want)  # PropagateNan.NONE: a NaN gives min
        assert np.array_equal(o, want.astype(o.dtype), equal_nan=True)


@pytest.mark.parametrize("fn", ["exp", "sin", "erf", "sqrt", "abs"])
def test_interpreter_2d_masked(fn, rng):
    M, N = 37, 50  # masked tails in both dimensions
    x = rng.uniform(0.1, 3, (M, N)).astype(np.float32)
    y = np.full_like(x, np.nan)
    interp[K.unary_2d_kernel][(tl.cdiv(M, 16), tl.cdiv(N, 32))](x, y, M, N, FN=fn, BM=16, BN=32)
    assert K.ulp_error(y.ravel(), K.reference(fn, x.ravel()), "fp32").max() <= 1


# ---- the device expansions, JIT-compiled for this CPU --------------------------------------------

_ENGINES = []


def jit_expansion(fn, tyname):
    """`fn(emitter, x)` of math_approx as a host function over arrays (llvmlite MCJIT)."""
    import llvmlite.binding as lb
    import mlir.ir as ir
    from mlir.dialects import llvm as llvm_d
    from mlir.passmanager import PassManager
    from tilework.dialects import new_context
    from tilework.lowering.rules import math_approx as A
    with new_context(), ir.Location.unknown():
        m = ir.Module.parse(f"""
llvm.func @f(%x: {tyname}) -> {tyname} {{
  llvm.return %x : {tyname}
}}
llvm.func @run(%in: !llvm.ptr, %out: !llvm.ptr, %n: i64) {{
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^loop(%c0 : i64)
^loop(%i: i64):
  %done = llvm.icmp "sge" %i, %n : i64
  llvm.cond_br %done, ^exit, ^body
^body:
  %p = llvm.getelementptr %in[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {tyname}
  %x = llvm.load %p : !llvm.ptr -> {tyname}
  %y = llvm.call @f(%x) : ({tyname}) -> {tyname}
  %q = llvm.getelementptr %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {tyname}
  llvm.store %y, %q : {tyname}, !llvm.ptr
  %i2 = llvm.add %i, %c1 : i64
  llvm.br ^loop(%i2 : i64)
^exit:
  llvm.return
}}""")
        block = m.body.operations[0].regions[0].blocks[0]
        ret = block.operations[0]
        with ir.InsertionPoint(ret):
            ret.operands[0] = fn(A.Emitter(ir.Type.parse(tyname)), block.arguments[0])
        PassManager.parse("builtin.module(convert-scf-to-cf,convert-arith-to-llvm,"
                          "convert-cf-to-llvm,reconcile-unrealized-casts)").run(m.operation)
        text = llvm_d.translate_module_to_llvmir(m.operation)
    lb.initialize_native_target()
    lb.initialize_native_asmprinter()
    tm = lb.Target.from_default_triple().create_target_machine(opt=2)
    mod = lb.parse_assembly(text)
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    engine = lb.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    _ENGINES.append(engine)
    cfn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        engine.get_function_address("run"))
    dt = np.float32 if tyname == "f32" else np.float64

    def run(x):
        x = np.ascontiguousarray(x, dt)
        out = np.empty_like(x)
        cfn(x.ctypes.data, out.ctypes.data, x.size)
        return out
    return run


def _expansions():
    from tilework.lowering.rules import math_approx as A
    return {"exp": A.exp, "exp2": A.exp2, "log": A.log, "log2": A.log2, "erf": A.erf,
            "sin": lambda e, x: A.sincos(e, x, False), "cos": lambda e, x: A.sincos(e, x, True)}


# documented bounds of the expansions (math_approx's docstring)
EXPANSION_ULP = {"exp": 1, "exp2": 1, "log": 1, "log2": 1, "erf": 2, "sin": 2, "cos": 2}


@pytest.mark.parametrize("d", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", list(EXPANSION_ULP))
def test_device_expansion_accuracy(fn, d, rng):
    n = 60000 if d == "fp32" else 3000  # fp64 sin/cos/erf references come from mpmath
    x = K.inputs(fn, d, n, rng)
    if fn in ("sin", "cos"):  # the hardest fp32 cases: floats nearest to multiples of pi/2
        near = (np.arange(1, 3000) * 23 * (np.pi / 2)).astype(K.NP[d])
        x = np.concatenate([x, near, np.nextafter(near, np.inf), np.nextafter(near, -np.inf)])
    y = jit_expansion(_expansions()[fn], "f32" if d == "fp32" else "f64")(x)
    err = K.ulp_error(y, K.reference(fn, x), d)
    if fn in ("sin", "cos") and d == "fp64":  # beyond 2**27: 2 ulp + 2**-62 absolute
        big = np.abs(x) >= 2.0 ** 27
        exact = K.reference(fn, x[big]).astype(np.float64)
        fin = np.isfinite(x[big])
        bound = 2 * np.spacing(np.abs(exact[fin])) + 2.0 ** -62
        assert (np.abs(y[big][fin] - exact[fin]) <= bound).all()
        assert np.isnan(y[big][~fin]).all()
        err = err[~big]
    i = int(np.argmax(err))
    assert err.max() <= EXPANSION_ULP[fn], (x[i], y[i], err.max())
    zeros = x == 0
    if fn in ("sin", "erf"):
        assert (np.signbit(y[zeros]) == np.signbit(x[zeros])).all()
