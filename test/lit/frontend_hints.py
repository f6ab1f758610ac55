# RUN: %python %s | FileCheck %s
#
# The compiler hints (compiled ahead of time, no GPU): tl.multiple_of, tl.max_contiguous and
# tl.max_constancy put `tile.divisibility`, `tile.contiguity` and `tile.constancy` (one value
# per dimension) on the op that computes their operand, and return the same value;
# tl.assume is a "tile.assume" of an i1 scalar or tile.  In the tilegpu stage the axis
# analysis reads them: a mask hinted constant on runs of 4 lets loads and stores use
# 4-wide accesses although `n` is not known divisible by 16.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P32 = tl.pointer_type(tl.float32)


@tilework.jit
def hints(x_ptr, o_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    offs = tl.multiple_of(offs, 16)
    offs = tl.max_contiguous(offs, B)
    m = tl.max_constancy(offs < n, 8)
    tl.assume(n > 0)
    tl.assume(offs >= 0)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


@tilework.jit
def hints_2d(x_ptr, M, N: tl.constexpr):
    r = tl.arange(0, 16)[:, None]
    c = tl.arange(0, N)[None, :]
    m = tl.max_constancy(tl.broadcast_to(r < M, (16, N)), (1, N))
    idx = tl.multiple_of(r * N + c, (N, 1))
    tl.store(x_ptr + idx, 0.0, mask=m)


@tilework.jit
def vector(x_ptr, o_ptr, n, B: tl.constexpr, HINT: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    if HINT:
        m = tl.max_constancy(m, 4)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


def compiled(fn, sig, constants, attrs=None):
    return compile(ASTSource(fn, sig, constants, attrs or {}), "sm_90a", cache=False)


print("// ---- hints")
print(compiled(hints, {"x_ptr": P32, "o_ptr": P32, "n": tl.int32}, {"B": 128}).asm["tile"])
# CHECK-LABEL: // ---- hints
# CHECK: %[[R:.+]] = "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32>
# CHECK: %[[OFFS:.+]] = arith.addi %{{.+}}, %[[R]] {tile.contiguity = array<i32: 128>, tile.divisibility = array<i32: 16>} : tensor<128xi32>
# CHECK: %[[M:.+]] = arith.cmpi slt, %[[OFFS]], %{{.+}} {tile.constancy = array<i32: 8>} : tensor<128xi32>
# CHECK: %[[NPOS:.+]] = arith.cmpi sgt, %arg2, %{{.+}} : i32
# CHECK-NEXT: "tile.assume"(%[[NPOS]]) : (i1) -> ()
# CHECK: %[[OPOS:.+]] = arith.cmpi sge, %[[OFFS]], %{{.+}} : tensor<128xi32>
# CHECK-NEXT: "tile.assume"(%[[OPOS]]) : (tensor<128xi1>) -> ()
# the hinted values are used as they are (no copies)
# CHECK: "tile.load"(%{{.+}}, %[[M]])
# CHECK: "tile.store"(%{{.+}}, %{{.+}}, %[[M]])

print("// ---- hints_2d")
print(compiled(hints_2d, {"x_ptr": P32, "M": tl.int32}, {"N": 32}).asm["tile"])
# CHECK-LABEL: // ---- hints_2d
# CHECK: "tile.broadcast"(%{{.+}}) {tile.constancy = array<i32: 1, 32>} : (tensor<16x1xi1>) -> tensor<16x32xi1>
# CHECK: arith.addi %{{.+}}, %{{.+}} {tile.divisibility = array<i32: 32, 1>} : tensor<16x32xi32>

for hint in (False, True):
    print(f"// ---- vector hint={hint}")
    ck = compiled(vector, {"x_ptr": P32, "o_ptr": P32, "n": tl.int32}, {"B": 512, "HINT": hint},
                  {"x_ptr": {"tile.divisibility": 16}, "o_ptr": {"tile.divisibility": 16}})
    print(ck.asm["tilegpu"])
# CHECK-LABEL: // ---- vector hint=False
# CHECK: "tile.load"({{.*}}tilegpu.vector_width = 1 : i32
# CHECK: "tile.store"({{.*}}tilegpu.vector_width = 1 : i32
# CHECK-LABEL: // ---- vector hint=True
# CHECK: arith.cmpi slt, {{.*}}tile.constancy = array<i32: 4>
# CHECK: "tile.load"({{.*}}tilegpu.vector_width = 4 : i32
# CHECK: "tile.store"({{.*}}tilegpu.vector_width = 4 : i32
