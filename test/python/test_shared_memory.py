"""Shared memory in the IR without a GPU: hand-written tilegpu kernels with
`tilegpu.local_alloc/local_store/local_load/memdesc_index/async_copy/async_wait`, allocated
(`tilegpu-allocate-shared`), synchronized (`tilegpu-insert-barriers`), lowered and run by the
SIMT emulator (race-checked shared memory) on random data against numpy; and the passes'
decisions on the IR.
"""
import re

import numpy as np
import pytest

import mlir.ir as ir

from tilework import CompileOptions
from tilework.backends import parse_target
from tilework.dialects import tile as T
from tilework.dialects.layout import parse_layout
from tilework.dialects.verify import VerificationError, verify
from tilework.lowering import PassContext, run_pipeline
from tilework.lowering.smem_alloc import first_fit

from simt_emulator import EmulationError, Emulator

PIPELINE = ("tilegpu-vector-width", "tilegpu-allocate-shared", "tilegpu-insert-barriers",
            "tilegpu-to-llvm")
NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i8": np.int8}


def arr(xs):
    return "array<i32: " + ", ".join(str(x) for x in xs) + ">"


def blocked(spt, tpw, wpc, order):
    return f"#tilegpu.blocked<{arr(spt)}, {arr(tpw)}, {arr(wpc)}, {arr(order)}>"


def layouts(ws):
    """Two 2-D layouts of 4 warps for a warp of `ws` lanes: row-major with 4-element chunks,
    and column-major with 2-element chunks."""
    return (blocked([1, 4], [ws // 8, 8], [4, 1], [1, 0]),
            blocked([2, 1], [8, ws // 8], [1, 4], [0, 1]))


class Kernel:
    """Builds the text of a tilegpu kernel, one SSA line at a time."""

    def __init__(self, shape, elem, ws, md_layout="unit"):
        self.shape, self.elem, self.ws, self.md_layout = tuple(shape), elem, ws, md_layout
        self.lines, self.n = [], 0

    def ty(self, lay, elem=None):
        dims = "x".join(str(s) for s in self.shape)
        return f"tensor<{dims}x{elem or self.elem}, {lay}>"

    def md(self, buffers=1):
        dims = ", ".join(str(s) for s in self.shape)
        return (f"!tilegpu.memdesc<array<i64: {dims}>, {self.elem}, {self.md_layout}, "
                f"{buffers} : i32>")

    def emit(self, text):
        self.n += 1
        name = f"%v{self.n}"
        self.lines.append(f"    {name} = {text}")
        return name

    def stmt(self, text):
        self.lines.append(f"    {text}")

    def index(self, lay):
        """The row-major element index, a tile of i32 in `lay`."""
        m, n = self.shape
        rows = self.emit(f'"tile.make_range"() {{start = 0 : i32, end = {m} : i32}} : () -> '
                         f'tensor<{m}xi32, #tilegpu.slice<1 : i32, {lay}>>')
        cols = self.emit(f'"tile.make_range"() {{start = 0 : i32, end = {n} : i32}} : () -> '
                         f'tensor<{n}xi32, #tilegpu.slice<0 : i32, {lay}>>')
        r2 = self.emit(f'"tile.expand_dims"({rows}) {{axis = 1 : i32}} : (tensor<{m}xi32, '
                       f'#tilegpu.slice<1 : i32, {lay}>>) -> tensor<{m}x1xi32, {lay}>')
        c2 = self.emit(f'"tile.expand_dims"({cols}) {{axis = 0 : i32}} : (tensor<{n}xi32, '
                       f'#tilegpu.slice<0 : i32, {lay}>>) -> tensor<1x{n}xi32, {lay}>')
        it = self.ty(lay, "i32")
        rb = self.emit(f'"tile.broadcast"({r2}) : (tensor<{m}x1xi32, {lay}>) -> {it}')
        cb = self.emit(f'"tile.broadcast"({c2}) : (tensor<1x{n}xi32, {lay}>) -> {it}')
        k = self.emit(f"arith.constant dense<{n}> : {it}")
        rm = self.emit(f"arith.muli {rb}, {k} : {it}")
        return self.emit(f"arith.addi {rm}, {cb} : {it}")

    def ptrs(self, arg, lay, idx=None):
        idx = idx or self.index(lay)
        pt = self.ty(lay, f"!tile.ptr<{self.elem}>")
        s = self.emit(f'"tile.splat"({arg}) : (!tile.ptr<{self.elem}>) -> {pt}')
        return self.emit(f'"tile.addptr"({s}, {idx}) : ({pt}, {self.ty(lay, "i32")}) -> {pt}')

    def load(self, arg, lay):
        p = self.ptrs(arg, lay)
        pt = self.ty(lay, f"!tile.ptr<{self.elem}>")
        return self.emit(f'"tile.load"({p}) {{operandSegmentSizes = array<i32: 1, 0, 0>}} : '
                         f'({pt}) -> {self.ty(lay)}')

    def store(self, arg, value, lay):
        p = self.ptrs(arg, lay)
        pt = self.ty(lay, f"!tile.ptr<{self.elem}>")
        self.stmt(f'"tile.store"({p}, {value}) {{operandSegmentSizes = array<i32: 1, 1, 0>}} : '
                  f'({pt}, {self.ty(lay)}) -> ()')

    def module(self, name, args, layouts_=()):
        params = ", ".join(f"%{a}: {t} {{tile.divisibility = 16 : i32}}"
                           if "ptr" in t or a == "n" else f"%{a}: {t}" for a, t in args)
        body = "\n".join(self.lines)
        return (f"module attributes {{tilegpu.num_warps = 4 : i32, tilegpu.warp_size = "
                f"{self.ws} : i32}} {{\n  func.func @{name}({params}) attributes "
                f"{{tile.kernel}} {{\n{body}\n    return\n  }}\n}}\n")


def ws_of(target):
    return 64 if target.startswith("gfx") else 32


def roundtrip_kernel(shape, elem, target, first, second, md_layout="unit"):
    """x (layout `first`) -> local_alloc -> local_load (`second`) -> buffer 1 of a double
    buffer (local_store) -> local_load (`first`) -> out."""
    k = Kernel(shape, elem, ws_of(target), md_layout)
    x = k.load("%x", first)
    m = k.emit(f'"tilegpu.local_alloc"({x}) : ({k.ty(first)}) -> {k.md()}')
    y = k.emit(f'"tilegpu.local_load"({m}) : ({k.md()}) -> {k.ty(second)}')
    buf = k.emit(f'"tilegpu.local_alloc"() : () -> {k.md(2)}')
    one = k.emit("arith.constant 1 : i32")
    b1 = k.emit(f'"tilegpu.memdesc_index"({buf}, {one}) : ({k.md(2)}, i32) -> {k.md()}')
    k.stmt(f'"tilegpu.local_store"({y}, {b1}) : ({k.ty(second)}, {k.md()}) -> ()')
    z = k.emit(f'"tilegpu.local_load"({b1}) : ({k.md()}) -> {k.ty(first)}')
    k.store("%o", z, first)
    p = f"!tile.ptr<{elem}>"
    return k.module("roundtrip", [("x", p), ("o", p)])


def random_input(shape, elem, seed):
    rng = np.random.default_rng(seed)
    if elem.startswith("f"):
        return rng.standard_normal(shape).astype(NP[elem])
    return rng.integers(-100, 100, shape).astype(NP[elem])


@pytest.mark.parametrize("target", ["sm_80", "gfx942"])
@pytest.mark.parametrize("elem", ["f32", "f16", "i8"])
@pytest.mark.parametrize("swap", [False, True])
def test_local_alloc_store_load_roundtrip(target, elem, swap):
    a, b = layouts(ws_of(target))
    first, second = (b, a) if swap else (a, b)
    shape = (32, 64)
    text = roundtrip_kernel(shape, elem, target, first, second)
    emu = Emulator.from_tilegpu(text, target, 4, PIPELINE)
    llvm = str(emu.module)
    # the row-major layout's 4 contiguous elements are one access; the other's one each
    assert f"vector<4x{elem}>, !llvm.ptr<3>" in llvm
    assert f"!llvm.ptr<3> -> vector<4x{elem}>" in llvm
    assert f": {elem}, !llvm.ptr<3>" in llvm
    x = random_input(shape, elem, hash((target, elem, swap)) % 1000)
    out = np.zeros_like(x)
    emu.run((1,), x, out)
    np.testing.assert_array_equal(out, x)
    # the initialized buffer dies at its load, so the double buffer reuses its bytes
    nbytes = 32 * 64 * np.dtype(NP[elem]).itemsize
    assert emu.shared == 2 * nbytes


SWIZZLED = {
    "f32": ["#tilegpu.swizzled_shared<4 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>",
            "#tilegpu.swizzled_shared<2 : i32, 2 : i32, 4 : i32, array<i32: 0, 1>>",
            "#tilegpu.nvmma_shared<128 : i32, false, 32 : i32>"],
    "f16": ["#tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>",
            "#tilegpu.nvmma_shared<64 : i32, false, 16 : i32>",
            "#tilegpu.nvmma_shared<128 : i32, false, 16 : i32>"],
}


@pytest.mark.parametrize("target", ["sm_80", "gfx942"])
@pytest.mark.parametrize("elem, md_layout",
                         [(e, lay) for e, lays in SWIZZLED.items() for lay in lays])
def test_swizzled_memdesc_roundtrip(target, elem, md_layout):
    """The round trip through buffers in swizzled shared layouts: the elements come back, and
    the buffer holds each at the offset the encoding's own map (offset -> element) gives."""
    a, b = layouts(ws_of(target))
    shape = (32, 64)
    text = roundtrip_kernel(shape, elem, target, a, b, md_layout)
    emu = Emulator.from_tilegpu(text, target, 4, PIPELINE)
    llvm = str(emu.module)
    assert "arith.xori" in llvm or "llvm.xor" in llvm  # the swizzle is applied
    # a thread's chunk stays one access where the layout keeps it contiguous: the row-major
    # layout's 4 elements along dim 1, the column-major one's 2 along dim 0
    vec = 2 if "array<i32: 0, 1>>" in md_layout else 4
    assert f"vector<{vec}x{elem}>, !llvm.ptr<3>" in llvm
    x = random_input(shape, elem, hash((target, elem, md_layout)) % 1000)
    out = np.zeros_like(x)
    emu.run((1,), x, out)
    np.testing.assert_array_equal(out, x)
    nbytes = 32 * 64 * np.dtype(NP[elem]).itemsize
    assert emu.shared == 2 * nbytes
    # buffer 1 of the double buffer (16-byte aligned after buffer 0) holds x, swizzled
    held = emu.smem[nbytes:2 * nbytes].view(NP[elem])
    lin = parse_layout(md_layout).linear(shape)
    want = np.array([x[lin.apply(offset=o)] for o in range(32 * 64)])
    np.testing.assert_array_equal(held, want)


@pytest.mark.parametrize("md_layout, message", [
    ("#tilegpu.swizzled_shared<8 : i32, 1 : i32, 16 : i32, array<i32: 1, 0>>",
     "swizzled_shared vec 8 x max_phase 16 is wider than the contiguous dim (64)"),
    ("#tilegpu.nvmma_shared<128 : i32, false, 8 : i32>",
     "nvmma_shared: the contiguous dim (64) is narrower than the 128-byte swizzle"),
])
def test_swizzled_memdesc_must_fit(md_layout, message):
    text = f"""module {{
  func.func @k() {{
    %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 64>, f32, {md_layout}, 1 : i32>
    return
  }}
}}"""
    with T.new_context():
        m = ir.Module.parse(text)
        with pytest.raises(VerificationError, match=re.escape("memdesc layout: " + message)):
            verify(m)


def test_missing_barrier_is_a_race():
    """Without tilegpu-insert-barriers the threads read what others wrote with no barrier
    between: the emulator reports the race (the round trip above is checked for real)."""
    a, b = layouts(32)
    text = roundtrip_kernel((32, 64), "f32", "sm_80", a, b)
    emu = Emulator.from_tilegpu(text, "sm_80", 4, ("tilegpu-allocate-shared",
                                                   "tilegpu-to-llvm"))
    x = random_input((32, 64), "f32", 0)
    with pytest.raises(EmulationError, match="shared-memory race"):
        emu.run((1,), x, np.zeros_like(x))


def async_kernel(shape, elem, target, lay, read, other):
    """x -> async_copy (masked: index < n; `other` zero or absent) into buffer 0 of two ->
    commit, wait 0 -> local_load in `read` -> out."""
    k = Kernel(shape, elem, ws_of(target))
    idx = k.index(lay)
    p = k.ptrs("%x", lay, idx)
    it = k.ty(lay, "i32")
    n = k.emit(f'"tile.splat"(%n) : (i32) -> {it}')
    mask = k.emit(f"arith.cmpi slt, {idx}, {n} : {it}")
    buf = k.emit(f'"tilegpu.local_alloc"() : () -> {k.md(2)}')
    zero = k.emit("arith.constant 0 : i32")
    b0 = k.emit(f'"tilegpu.memdesc_index"({buf}, {zero}) : ({k.md(2)}, i32) -> {k.md()}')
    pt = k.ty(lay, f"!tile.ptr<{elem}>")
    if other:
        z = "0.000000e+00" if elem.startswith("f") else "0"
        o = k.emit(f"arith.constant dense<{z}> : {k.ty(lay)}")
        k.stmt(f'"tilegpu.async_copy"({p}, {b0}, {mask}, {o}) {{operandSegmentSizes = '
               f'array<i32: 1, 1, 1, 1>}} : ({pt}, {k.md()}, {k.ty(lay, "i1")}, {k.ty(lay)}) '
               f'-> ()')
    else:
        k.stmt(f'"tilegpu.async_copy"({p}, {b0}, {mask}) {{operandSegmentSizes = '
               f'array<i32: 1, 1, 1, 0>}} : ({pt}, {k.md()}, {k.ty(lay, "i1")}) -> ()')
    k.stmt('"tilegpu.async_commit_group"() : () -> ()')
    k.stmt('"tilegpu.async_wait"() {num = 0 : i32} : () -> ()')
    y = k.emit(f'"tilegpu.local_load"({b0}) : ({k.md()}) -> {k.ty(read)}')
    k.store("%o", y, read)
    p = f"!tile.ptr<{elem}>"
    return k.module("copy", [("x", p), ("o", p), ("n", "i32")])


@pytest.mark.parametrize("target", ["sm_80", "sm_75", "gfx942"])
@pytest.mark.parametrize("elem", ["f32", "f16", "i8"])
@pytest.mark.parametrize("other", [False, True])
def test_async_copy_roundtrip(target, elem, other):
    a, b = layouts(ws_of(target))
    shape = (32, 64)
    text = async_kernel(shape, elem, target, a, b, other)
    emu = Emulator.from_tilegpu(text, target, 4, PIPELINE)
    llvm = str(emu.module)
    # 4 elements a thread: 16, 8 or 4 bytes per cp.async on sm_80; synchronous elsewhere
    want = {"f32": 16, "f16": 8, "i8": 4}[elem]
    if target == "sm_80":
        sizes = set(re.findall(r"nvvm.cp.async.shared.global .*?, (\d+), cache", llvm))
        assert sizes == {str(want)}, sizes
        assert "nvvm.cp.async.commit.group" in llvm and "nvvm.cp.async.wait.group 0" in llvm
    else:
        assert "cp.async" not in llvm
    x = random_input(shape, elem, 7)
    for n in (32 * 64, 1008, 0):  # n divisible by 16: whole access groups are masked
        out = np.full_like(x, 5)
        emu.run((1,), x, out, n)
        want_out = np.where(np.arange(x.size).reshape(shape) < n, x, 0).astype(x.dtype)
        np.testing.assert_array_equal(out, want_out)


def test_async_copy_data_lands_at_the_wait():
    """Emulated cp.async writes shared memory when a wait completes its group: a load between
    the copy and the wait (hand-placed, with a barrier) still sees the old bytes."""
    a, b = layouts(32)
    text = async_kernel((32, 64), "f32", "sm_80", a, b, False)
    text = text.replace('    "tilegpu.async_wait"() {num = 0 : i32} : () -> ()\n', "")
    emu = Emulator.from_tilegpu(text, "sm_80", 4, PIPELINE)
    x = random_input((32, 64), "f32", 3)
    out = np.full_like(x, 5)
    emu.run((1,), x, out, 32 * 64)
    np.testing.assert_array_equal(out, np.zeros_like(x))


def pipelined_kernel(target, one_slot=False):
    """A loop over `k` row blocks of a [k*32, 64] input: each iteration copies its block into
    buffer i % 2 of a double buffer (buffer 0 if `one_slot`), waits, reads it back and
    accumulates; the sum is stored.  The reads follow other threads' copies, and with one slot
    the copy overwrites what the previous iteration read: both need barriers in the body."""
    lay, read = layouts(ws_of(target))
    k = Kernel((32, 64), "f32", ws_of(target))
    idx = k.index(lay)
    buf = k.emit(f'"tilegpu.local_alloc"() : () -> {k.md(2)}')
    z = k.emit(f"arith.constant dense<0.000000e+00> : {k.ty(read)}")
    c0, c1, c2 = (k.emit(f"arith.constant {v} : i32") for v in (0, 1, 2))
    it = k.ty(lay, "i32")
    pt = k.ty(lay, "!tile.ptr<f32>")
    k.lines.append(f"    %acc = scf.for %i = {c0} to %k step {c1} iter_args(%a = {z}) -> "
                   f"({k.ty(read)}) : i32 {{")
    off = k.emit(f"arith.muli %i, %c2048 : i32")
    offs = k.emit(f'"tile.splat"({off}) : (i32) -> {it}')
    gi = k.emit(f"arith.addi {idx}, {offs} : {it}")
    p = k.ptrs("%x", lay, gi)
    slot = c0 if one_slot else k.emit(f"arith.remui %i, {c2} : i32")
    b = k.emit(f'"tilegpu.memdesc_index"({buf}, {slot}) : ({k.md(2)}, i32) -> {k.md()}')
    k.stmt(f'"tilegpu.async_copy"({p}, {b}) {{operandSegmentSizes = array<i32: 1, 1, 0, 0>}}'
           f' : ({pt}, {k.md()}) -> ()')
    k.stmt('"tilegpu.async_commit_group"() : () -> ()')
    k.stmt('"tilegpu.async_wait"() {num = 0 : i32} : () -> ()')
    y = k.emit(f'"tilegpu.local_load"({b}) : ({k.md()}) -> {k.ty(read)}')
    s = k.emit(f"arith.addf %a, {y} : {k.ty(read)}")
    k.stmt(f"scf.yield {s} : {k.ty(read)}")
    k.stmt("}")
    k.lines.insert(0, "    %c2048 = arith.constant 2048 : i32")
    k.store("%o", "%acc", read)
    return k.module("pipelined", [("x", "!tile.ptr<f32>"), ("o", "!tile.ptr<f32>"),
                                  ("k", "i32")])


@pytest.mark.parametrize("target", ["sm_80", "gfx942"])
@pytest.mark.parametrize("one_slot", [False, True])
def test_async_copy_in_a_loop(target, one_slot):
    text = pipelined_kernel(target, one_slot)
    emu = Emulator.from_tilegpu(text, target, 4, PIPELINE)
    rng = np.random.default_rng(11)
    for k in (1, 3, 4):
        x = rng.standard_normal((k * 32, 64)).astype(np.float32)
        out = np.zeros((32, 64), np.float32)
        emu.run((1,), x, out, k)
        np.testing.assert_allclose(out, x.reshape(k, 32, 64).sum(0), rtol=1e-5, atol=1e-5)


# ---- the passes' decisions ---------------------------------------------------------------

def _run(text, passes, target="sm_90a"):
    ctx = T.new_context()
    with ctx:
        m = ir.Module.parse(text)
        run_pipeline(m, passes, PassContext(parse_target(target), CompileOptions()))
        return str(m)


def test_first_fit_shares_disjoint_lifetimes():
    # (start, end, bytes): the second overlaps the first in time, the third neither
    offsets, total = first_fit([(0, 5, 100, None), (3, 8, 40, None), (9, 12, 200, None)])
    assert offsets == [0, 112, 0]
    assert total == 200
    # live while both others are: above them (each start 16-byte aligned)
    offsets, total = first_fit([(0, 5, 100, None), (3, 8, 40, None), (4, 9, 200, None)])
    assert offsets == [0, 112, 160] and total == 360
    offsets, total = first_fit([(0, 9, 8, None), (1, 1, 4, None), (2, 2, 20, None)])
    assert offsets == [0, 16, 16] and total == 36


def test_loop_body_barriers():
    """In the loop body: a barrier before the copy (the previous iteration's reads) and one
    after the wait, before the read of other threads' copies."""
    text = pipelined_kernel("sm_80")
    out = _run(text, ("tilegpu-allocate-shared", "tilegpu-insert-barriers"))
    assert "tilegpu.shared = 16384 : i32" in out
    # the double buffer at 0; barriers before the copy and before the read in the body
    body = out[out.index("scf.for"):out.index("scf.yield")]
    assert body.count('"tilegpu.barrier"') == 2
    assert body.index('"tilegpu.barrier"') < body.index("async_copy") < \
        body.rindex('"tilegpu.barrier"') < body.index("local_load")


def test_rerun_is_stable():
    text = pipelined_kernel("sm_80")
    once = _run(text, ("tilegpu-allocate-shared", "tilegpu-insert-barriers"))
    twice = _run(once, ("tilegpu-allocate-shared", "tilegpu-insert-barriers"))
    assert once == twice


@pytest.mark.parametrize("bad, message", [
    ('"tilegpu.local_load"(%m) : (!tilegpu.memdesc<array<i64: 32, 64>, f32, unit, 2 : i32>) '
     '-> tensor<32x64xf32, #A>',
     "local_load from a memdesc of 2 buffers: select one with memdesc_index"),
    ('"tilegpu.local_load"(%m1) : (!tilegpu.memdesc<array<i64: 32, 64>, f32, unit, 1 : i32>) '
     '-> tensor<32x64xf16, #A>',
     "local_load result tensor<32x64xf16"),
])
def test_verifier_messages(bad, message):
    a, _ = layouts(32)
    text = f"""#A = {a}
module attributes {{tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32}} {{
  func.func @k() attributes {{tile.kernel}} {{
    %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 64>, f32, unit, 2 : i32>
    %m1 = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 64>, f32, unit, 1 : i32>
    %v = {bad}
    return
  }}
}}"""
    with T.new_context():
        m = ir.Module.parse(text)
        with pytest.raises(VerificationError, match=re.escape(message)):
            verify(m)


def test_memdesc_through_control_flow_is_rejected():
    text = """
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @k(%n: i32) attributes {tile.kernel} {
    %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32>, f32, unit, 1 : i32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %m) -> (!tilegpu.memdesc<array<i64: 32>, f32, unit, 1 : i32>) : i32 {
      scf.yield %a : !tilegpu.memdesc<array<i64: 32>, f32, unit, 1 : i32>
    }
    return
  }
}"""
    with pytest.raises(ValueError, match="a memdesc can only be used by shared-memory ops, "
                                         "not by 'scf.for'"):
        _run(text, ("tilegpu-allocate-shared",))


def test_barriers_need_the_allocation():
    a, b = layouts(32)
    text = roundtrip_kernel((32, 64), "f32", "sm_80", a, b)
    with pytest.raises(ValueError, match="'tilegpu.local_alloc' has no tilegpu.smem_offset; "
                                         "run tilegpu-allocate-shared first"):
        _run(text, ("tilegpu-insert-barriers",))


def test_rule_and_registered_scratch_must_agree(monkeypatch):
    """ctx.smem checks the bytes a rule uses against its registered scratch size."""
    from tilework.lowering import shared_memory
    from tilework.lowering.registry import LoweringError
    monkeypatch.setitem(shared_memory.SCRATCH, "tilegpu.convert_layout", lambda op: 64)
    a, b = layouts(32)
    k = Kernel((32, 64), "f32", 32)
    x = k.load("%x", a)
    y = k.emit(f'"tilegpu.convert_layout"({x}) : ({k.ty(a)}) -> {k.ty(b)}')
    k.store("%o", y, b)
    text = k.module("conv", [("x", "!tile.ptr<f32>"), ("o", "!tile.ptr<f32>")])
    with pytest.raises(LoweringError, match="'tilegpu.convert_layout' uses 8192 bytes of "
                                            "shared scratch but 64 were allocated"):
        _run(text, PIPELINE)
