"""Every declared tile/tilegpu op (dialects/opdefs) is complete: it lowers on every backend (or
is declared unsupported there and fails with the registry's error), the interpreter
evaluates it, and its purity/effects are declared so tile-cse and dead-op erasure see it.
Also the declaration machinery itself: builders, generated IRDL, its rejecting paths."""
import mlir.ir as ir
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.dialects import builders as B
from tilework.dialects import new_context, opdefs, verify
from tilework.dialects.opdefs import base
from tilework.lowering import registry
from tilework.lowering import rules  # noqa: F401  (registers the rules)
from tilework.lowering.tile_passes import PURE_OPS
from tilework.runtime import interpreter

OPS = opdefs.all_ops()
NAMES = [d.name for d in OPS]


def test_every_op_is_declared_once_and_in_the_irdl():
    assert len(NAMES) == len(set(NAMES))
    text = opdefs.irdl_text()
    for d in OPS:
        assert f"irdl.operation @{d.short} {{" in text
    assert {"tile.load", "tile.umulhi", "tilegpu.convert_layout"} <= set(NAMES)


# ---- lowering rules ------------------------------------------------------------------------

@pytest.mark.parametrize("target", base.TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_lowering_rule_exists(name, target):
    d = opdefs.get(name)
    if target in d.unsupported:
        with pytest.raises(registry.LoweringError,
                           match=f"no lowering rule for '{name}' on target '{target}'"):
            registry.lookup(name, target)
    else:
        assert callable(registry.lookup(name, target)), \
            f"{name} has no lowering rule for {target}: add @lower({name!r}) in lowering/rules/ " \
            f"or declare it unsupported=({{{target!r}: why}})"


def test_unsupported_targets_are_known():
    for d in OPS:
        assert set(d.unsupported) <= set(base.TARGETS), d.name


# ---- interpreter ---------------------------------------------------------------------------

def test_interpreter_has_a_row_for_every_emitted_op():
    rows = interpreter.supported_ops()
    for d in OPS:
        if d.interp == "row":
            assert d.name in rows, f"the interpreter has no row for {d.name} " \
                                   f"(runtime/interp_<family>.py ROWS)"
        else:
            assert d.interp in ("builtin", None), d.name
            assert d.name not in rows, f"{d.name} has a row but is declared interp={d.interp!r}"
        if d.interp is None:  # only ops of the GPU form are never emitted by the frontend
            assert d.dialect == "tilegpu", d.name
    declared = set(NAMES)
    stale = {n for n in rows if n.split(".")[0] in ("tile", "tilegpu")} - declared
    assert not stale, f"interpreter rows of undeclared ops: {sorted(stale)}"


# Ops whose builtins compute directly under the interpreter (never emitting the op): one
# kernel each, run and checked against numpy while recording the ops the interpreter sees.
interpreted = tilework.jit(interpret=True)


@interpreted
def _reduce_kernel(x, out, N: tl.constexpr):
    tl.store(out, tl.sum(tl.load(x + tl.arange(0, N)), axis=0))


@interpreted
def _scan_kernel(x, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, tl.cumsum(tl.load(x + offs), axis=0))


@interpreted
def _split_kernel(x, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    lo, hi = tl.split(tl.reshape(tl.load(x + offs), (N // 2, 2)))
    tl.store(out + tl.arange(0, N // 2), lo - hi)


@interpreted
def _descriptor_kernel(x_desc, out, N: tl.constexpr):
    tl.store(out + tl.arange(0, N), x_desc.load([N]) * 3)  # (tile.descriptor_load on sm_90)


@interpreted
def _descriptor_store_kernel(x, out_desc, N: tl.constexpr):
    out_desc.store([N], tl.load(x + tl.arange(0, N)) * 3)  # (tile.descriptor_store, tma_store)


@interpreted
def _make_descriptor_kernel(x, out, N: tl.constexpr):
    d = tl.make_tensor_descriptor(x, [2 * N], [1], [N])  # (tile.make_tensormap on sm_90a)
    tl.store(out + tl.arange(0, N), d.load([N]) * 3)


@tilework.jit
def _triple_if_negative(v):
    if v < 0:
        return v * 3
    return v


@interpreted
def _map_kernel(x, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, tl.map_elementwise(_triple_if_negative, tl.load(x + offs)))


def _ref_reduce(x):
    return np.array([x.sum()], np.float32)


def _ref_split(x):
    return x[0::2] - x[1::2]


BUILTIN_KERNELS = {
    "tile.reduce": (_reduce_kernel, 1, _ref_reduce),
    "tile.scan": (_scan_kernel, 16, np.cumsum),
    "tile.split": (_split_kernel, 8, _ref_split),
    "tile.descriptor_load": (_descriptor_kernel, 8, lambda x: x[8:] * 3),
    "tile.descriptor_store": (_descriptor_store_kernel, 16,
                              lambda x: np.concatenate([np.full(8, np.nan), x[:8] * 3])),
    "tile.make_tensormap": (_make_descriptor_kernel, 8, lambda x: x[8:] * 3),
    "tile.map_elementwise": (_map_kernel, 16, lambda x: np.where(x < 0, x * 3, x)),
}


def test_builtin_evaluated_ops_have_kernels():
    assert set(BUILTIN_KERNELS) == {d.name for d in OPS if d.interp == "builtin"}


@pytest.mark.parametrize("name", sorted(BUILTIN_KERNELS))
def test_builtin_evaluated_op(name, monkeypatch):
    kernel, n_out, ref = BUILTIN_KERNELS[name]
    seen = []
    create = interpreter.InterpreterBuilder.create

    def recording(self, opname, *args, **kwargs):
        seen.append(opname)
        return create(self, opname, *args, **kwargs)
    monkeypatch.setattr(interpreter.InterpreterBuilder, "create", recording)
    rng = np.random.default_rng(7)
    x = rng.integers(-8, 8, 16).astype(np.float32)
    out = np.full(n_out, np.nan, np.float32)
    if name == "tile.descriptor_load":
        from tilework.tools.tensor_descriptor import TensorDescriptor
        kernel[(1,)](TensorDescriptor.from_tensor(x, [8]), out, N=8)
    elif name == "tile.descriptor_store":
        from tilework.tools.tensor_descriptor import TensorDescriptor
        kernel[(1,)](x, TensorDescriptor.from_tensor(out, [8]), N=8)
    elif name == "tile.make_tensormap":
        kernel[(1,)](x, out, N=8)
    else:
        kernel[(1,)](x, out, N=16)
    np.testing.assert_allclose(out, ref(x), rtol=1e-6)
    assert seen and name not in seen


# ---- purity and effects --------------------------------------------------------------------

def test_purity_set_is_the_declared_one():
    assert set(PURE_OPS) == {d.name for d in OPS if base.PURE in d.traits}
    assert len(PURE_OPS) == len(set(PURE_OPS))


@pytest.mark.parametrize("name", NAMES)
def test_op_is_pure_or_declares_its_effects(name):
    d = opdefs.get(name)
    effects = d.traits & set(base.EFFECTS)
    assert (base.PURE in d.traits) != bool(effects), \
        f"{name}: declare it PURE (so tile-cse/dead-op erasure handle it) or its effects " \
        f"({', '.join(base.EFFECTS)}), not both"


def test_effectful_ops_survive_tile_combine():
    """The effects matter: a dead load is kept, dead pure ops are erased."""
    from tilework import CompileOptions
    from tilework.backends import parse_target
    from tilework.lowering import PassContext, run_pipeline
    ctx = new_context()
    with ctx, ir.Location.unknown():
        m = ir.Module.parse("""
func.func @f(%p: !tile.ptr<i32>, %a: i32) {
  %l = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (!tile.ptr<i32>) -> i32
  %u = "tile.umulhi"(%a, %a) : (i32, i32) -> i32
  return
}""")
        run_pipeline(m, ["tile-combine"], PassContext(parse_target("sm_90a"), CompileOptions()))
        text = str(m)
    assert "tile.load" in text and "tile.umulhi" not in text


# ---- builders ------------------------------------------------------------------------------

def _func(ctx, arg_types):
    from mlir.dialects import func
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        f = func.FuncOp("f", ir.FunctionType.get([ir.Type.parse(t) for t in arg_types], []))
        block = f.add_entry_block()
    return m, block


def test_builders_fill_segments_attributes_and_result_types():
    ctx = new_context()
    with ctx, ir.Location.unknown():
        m, blk = _func(ctx, ["tensor<8x!tile.ptr<f32>>", "tensor<8xi1>", "tensor<8xi32>",
                             "tensor<8xf32>"])
        ptr, mask, off, val = blk.arguments
        with ir.InsertionPoint(blk):
            p = B.build_addptr(None, ptr, off)  # the result type is the pointer's
            v = B.build_load(None, p, mask, result_type=val.type,
                             attributes={"volatile": ir.UnitAttr.get()})
            hi = B.build_umulhi(None, off, off)
            lo, hi2 = B.build_split(None, B.build_join(None, v, val, result_type=ir.Type.parse(
                "tensor<8x2xf32>")), lhs_type=val.type, rhs_type=val.type)
            s = B.build_reduce(None, [v], result_types=[ir.F32Type.get()], axis=0, combine="c")
            B.build_store(None, p, v)
            B.build_print(None, prefix=" x", hex=0, is_signed=0, operand=-1)
            from mlir.dialects import func
            func.ReturnOp([])
        text = str(m)
    assert p.type == ptr.type and hi.type == off.type and lo.type == hi2.type == val.type
    assert len(s) == 1
    assert ('"tile.load"(%0, %arg1) {operandSegmentSizes = array<i32: 1, 1, 0>, volatile}'
            in text)
    assert ('"tile.reduce"(%1) {axis = 0 : i32, combine = @c, operandSegmentSizes = '
            'array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>}') in text
    assert '"tile.store"(%0, %1) {operandSegmentSizes = array<i32: 1, 1, 0>}' in text
    assert '"tile.print"() {hex = 0 : i32, is_signed = 0 : i32, operand = -1 : i32, ' \
           'prefix = " x"} : () -> ()' in text


def test_builder_errors():
    ctx = new_context()
    with ctx, ir.Location.unknown():
        m, blk = _func(ctx, ["tensor<8xf32>"])
        x = blk.arguments[0]
        with ir.InsertionPoint(blk):
            with pytest.raises(TypeError, match="build_reduce: at most 4 src values, got 5"):
                B.build_reduce(None, [x] * 5, result_types=[x.type] * 5, axis=0, combine="c")
            with pytest.raises(TypeError, match="build_reduce: src0 is required"):
                B.build_reduce(None, [], result_types=[], axis=0, combine="c")
            with pytest.raises(TypeError, match=r"build_load\(\) missing 1 required "
                                                 r"keyword-only argument: 'result_type'"):
                B.build_load(None, x)


def test_declaration_errors():
    reg = {}
    d = base.Dialect("scratch", registry=reg)
    d.op("a", "doc", traits={base.PURE})
    with pytest.raises(ValueError, match="op scratch.a is declared twice"):
        d.op("a", "doc")
    with pytest.raises(ValueError, match=r"op scratch.b: unknown traits \['nothrow'\]"):
        d.op("b", "doc", traits={"nothrow"})
    for bad in ("attrs", "from", "2x"):
        with pytest.raises(ValueError, match=f"op scratch.c: '{bad}' cannot name an operand, "
                                             f"result or attribute"):
            d.op("c", "doc", operands=[base.operand(bad, base.any_type())])
    with pytest.raises(ValueError, match="dialect scratch is declared twice"):
        base.Dialect("scratch", registry=reg)
    assert "scratch" not in opdefs.DIALECTS


def test_new_op_end_to_end_in_a_scratch_dialect():
    """What the docs' worked example does: declare, load the generated IRDL, build, verify."""
    reg = {}
    d = base.Dialect("scratch", registry=reg)
    box = d.type("box", "a boxed value", params=[("shape", base.base("#builtin.dense_array")),
                                                 ("inner", base.any_type())])
    d.op("unbox", "the value in a box", operands=[base.operand("b", base.base(box))],
         results=[base.result("r", base.any_type())], traits={base.READS})
    t = base.any_type()
    d.op("twice", "x + x", operands=[base.operand("x", t)], results=[base.result("r", t)],
         attrs=[base.Attr("mode", base.STRING, ("wrap", "sat"))], traits={base.PURE},
         verify=lambda op: None if str(op.operands[0].type) != "f64" else "twice of f64")
    from mlir.dialects import irdl
    ctx = new_context()
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(reg["scratch"].irdl()))
        build = base.make_builder(d.ops["scratch.twice"])
        for ty, mode, err in (("i32", "wrap", None), ("f64", "wrap", "twice of f64"),
                              ("i32", "odd", "twice mode must be one of wrap, sat; got 'odd'")):
            m, blk = _func(ctx, [ty])
            with ir.InsertionPoint(blk):
                r = build(None, blk.arguments[0], mode=mode)
            assert r.type == blk.arguments[0].type
            assert d.ops["scratch.twice"].check(r.owner) == err
        m = ir.Module.parse('func.func @f(%b: !scratch.box<array<i32: 4>, i8>) {\n'
                            '  %r = "scratch.unbox"(%b) : (!scratch.box<array<i32: 4>, i8>) -> i8\n'
                            '  return\n}')
        m.operation.verify()
        with pytest.raises(ir.MLIRError):  # the operand must be a box
            ir.Module.parse('func.func @f(%b: i8) {\n  %r = "scratch.unbox"(%b) : (i8) -> i8\n'
                            '  return\n}').operation.verify()
    # a declared op verifies through dialects.verify as well (tile ops are loaded there)
    with new_context(), ir.Location.unknown():
        m = ir.Module.parse('func.func @f(%a: i32) {\n  %u = "tile.umulhi"(%a, %a) : '
                            '(i32, i32) -> i32\n  return\n}')
        verify(m)


def test_named_operands_without_segment_sizes():
    """Hand-written IR may leave out operandSegmentSizes where one operand is optional (IRDL
    accepts it): the verifier and the lowering still find the operands by name."""
    from tilework.dialects.verify import VerificationError, named_operands
    with new_context(), ir.Location.unknown():
        m = ir.Module.parse("""
func.func @f(%p: tensor<4x!tile.ptr<f32>>, %v: tensor<4xf32>, %m: tensor<4xi1>, %w: tensor<4xi8>) {
  "tile.store"(%p, %v) : (tensor<4x!tile.ptr<f32>>, tensor<4xf32>) -> ()
  "tile.store"(%p, %v, %m) : (tensor<4x!tile.ptr<f32>>, tensor<4xf32>, tensor<4xi1>) -> ()
  return
}""")
        verify(m)
        stores = [o for o in m.body.operations[0].regions[0].blocks[0].operations
                  if o.operation.name == "tile.store"]
        assert named_operands(stores[0].operation)["mask"] is None
        assert named_operands(stores[1].operation)["mask"] is not None
        bad = ir.Module.parse("""
func.func @f(%p: tensor<4x!tile.ptr<f32>>, %v: tensor<4xf32>, %w: tensor<4xi8>) {
  "tile.store"(%p, %v, %w) : (tensor<4x!tile.ptr<f32>>, tensor<4xf32>, tensor<4xi8>) -> ()
  return
}""")
        with pytest.raises(VerificationError, match="'tile.store' op store mask must be i1, got i8"):
            verify(bad)


# ---- shared memory (opdefs/shared.py) --------------------------------------------------------

SHARED_OPS = {"tilegpu.local_alloc", "tilegpu.local_store", "tilegpu.local_load",
              "tilegpu.local_dealloc", "tilegpu.memdesc_index", "tilegpu.memdesc_trans",
              "tilegpu.async_copy",
              "tilegpu.async_commit_group", "tilegpu.async_wait", "tilegpu.barrier"}


def test_shared_memory_ops_are_declared_with_effects():
    assert SHARED_OPS <= set(NAMES)
    assert not SHARED_OPS & set(PURE_OPS)
    assert opdefs.OPERAND_SEGMENTS["tilegpu.async_copy"] == ("ptr", "dst", "mask", "other")
    assert "tilegpu.local_alloc" not in opdefs.OPERAND_SEGMENTS  # one optional operand


def test_shared_memory_builders_and_memdesc_text():
    """The builders make the IR the passes and lit files write; the memdesc type keeps its
    textual form (read back by memdesc_of); a verifier message comes through verify()."""
    from tilework.dialects import tile as T
    from tilework.dialects.verify import VerificationError
    from mlir.dialects import func
    md_text = "!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>"
    ctx = new_context()
    with ctx, ir.Location.unknown():
        m, blk = _func(ctx, ["tensor<16x32xf32>", "tensor<16x32x!tile.ptr<f32>>",
                             "tensor<16x32xi1>", "i32"])
        x, p, mask, i = blk.arguments
        md2 = T.memdesc_type((16, 32), ir.F32Type.get(), "unit", 2)
        assert str(md2) == md_text
        d = T.memdesc_of(md2)
        assert (d.shape, str(d.elem), d.layout, d.buffers) == ((16, 32), "f32", "unit", 2)
        with ir.InsertionPoint(blk):
            a = B.build_local_alloc(None, x,
                                    result_type=T.memdesc_type((16, 32), ir.F32Type.get()))
            bufs = B.build_local_alloc(None, result_type=md2)
            one = B.build_memdesc_index(None, bufs, i, result_type=d.with_buffers(1).type())
            B.build_async_copy(None, p, one, mask)
            B.build_async_commit_group(None)
            B.build_async_wait(None, num=0)
            B.build_barrier(None)
            B.build_local_store(None, x, a)
            y = B.build_local_load(None, one, result_type=x.type)
            B.build_local_dealloc(None, a)
            func.ReturnOp([])
        verify(m)
        text = str(m)
        assert y.type == x.type
        assert '"tilegpu.local_alloc"(%arg0) : (tensor<16x32xf32>) -> !tilegpu.memdesc<' \
               'array<i64: 16, 32>, f32, unit, 1 : i32>' in text
        assert f'"tilegpu.local_alloc"() : () -> {md_text}' in text
        assert '"tilegpu.async_copy"(%arg1, %2, %arg2) {operandSegmentSizes = ' \
               'array<i32: 1, 1, 1, 0>}' in text
        assert '"tilegpu.async_wait"() {num = 0 : i32} : () -> ()' in text
        assert '"tilegpu.barrier"() : () -> ()' in text
        m2, blk2 = _func(ctx, [])
        with ir.InsertionPoint(blk2):
            B.build_async_wait(None, num=-1)
            func.ReturnOp([])
        with pytest.raises(VerificationError,
                           match="'tilegpu.async_wait' op async_wait num must be >= 0"):
            verify(m2)
