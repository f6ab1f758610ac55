# RUN: %python %s | FileCheck %s
#
# The tile IR of atomics (compiled ahead of time, no GPU): every tl.atomic_* becomes one
# "tile.atomic_rmw" with its `kind` (add/fadd, max/umax, min/umin, and, or, xor, xchg), its
# `sem` (default acq_rel) and `scope` (default gpu), the mask as the optional third operand
# (operandSegmentSizes), and the value cast to the pointee type and splat; tl.atomic_cas is
# "tile.atomic_cas" (no mask).  Float max/min use Triton's integer trick: a signed max on the
# bits where the value is non-negative, an unsigned min where it is negative, merged by a
# select.  A scalar pointer gives a scalar atomic.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type


@tilework.jit
def int_atomics(i_ptr, u_ptr, o_ptr, n):
    offs = tl.arange(0, 32)
    m = offs < n
    r = tl.atomic_add(i_ptr + offs, 1, mask=m)
    r += tl.atomic_max(i_ptr + offs, offs, sem="acquire")
    r += tl.atomic_min(i_ptr + offs, offs, mask=m, sem="release", scope="cta")
    r += tl.atomic_and(i_ptr + offs, 7, sem="relaxed", scope="sys")
    r += tl.atomic_or(i_ptr + offs, 8, mask=m)
    r += tl.atomic_xor(i_ptr + offs, offs)
    r += tl.atomic_xchg(i_ptr + offs, 0, mask=m)
    r += tl.atomic_cas(i_ptr + offs, 0, 1, sem="relaxed", scope="cta")
    r += tl.atomic_max(u_ptr + offs, 3, mask=m).to(tl.int32)
    r += tl.atomic_min(u_ptr + offs, 4).to(tl.int32)
    r += tl.atomic_add(i_ptr, 1)
    tl.store(o_ptr + offs, r)


@tilework.jit
def float_atomics(f_ptr, d_ptr, h_ptr, n):
    offs = tl.arange(0, 32)
    m = offs < n
    a = tl.atomic_add(f_ptr + offs, 1, mask=m)
    b = tl.atomic_max(f_ptr + offs, 2.0, mask=m)
    c = tl.atomic_min(d_ptr + offs, a)
    d = tl.atomic_xchg(d_ptr + offs, b)
    e = tl.atomic_add(h_ptr + offs, 0.5)
    f = tl.atomic_cas(h_ptr + offs, e, 1.0)
    tl.store(f_ptr + offs, c + d + f)


def show(title, fn, sig, constants=None):
    print(f"// ---- {title}")
    print(compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False).asm["tile"])


show("int_atomics", int_atomics, {"i_ptr": P(tl.int32), "u_ptr": P(tl.uint32),
                                  "o_ptr": P(tl.int32), "n": tl.int32})
# CHECK-LABEL: // ---- int_atomics
# CHECK: %[[R:.+]] = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32>
# CHECK: %[[M:.+]] = arith.cmpi slt, %[[R]], %{{.+}} : tensor<32xi32>
# CHECK: %[[P1:.+]] = "tile.addptr"
# CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i32
# CHECK-NEXT: %[[ONES:.+]] = "tile.splat"(%[[ONE]]) : (i32) -> tensor<32xi32>
# CHECK-NEXT: "tile.atomic_rmw"(%[[P1]], %[[ONES]], %[[M]]) {kind = "add", operandSegmentSizes = array<i32: 1, 1, 1>, scope = "gpu", sem = "acq_rel"} : (tensor<32x!tile.ptr<i32>>, tensor<32xi32>, tensor<32xi1>) -> tensor<32xi32>
# CHECK: "tile.atomic_rmw"(%{{.+}}, %[[R]]) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "acquire"} : (tensor<32x!tile.ptr<i32>>, tensor<32xi32>) -> tensor<32xi32>
# CHECK: "tile.atomic_rmw"(%{{.+}}, %[[R]], %[[M]]) {kind = "min", operandSegmentSizes = array<i32: 1, 1, 1>, scope = "cta", sem = "release"}
# CHECK: "tile.atomic_rmw"(%{{.+}}, %{{.+}}) {kind = "and", operandSegmentSizes = array<i32: 1, 1, 0>, scope = "sys", sem = "relaxed"}
# CHECK: "tile.atomic_rmw"(%{{.+}}, %{{.+}}, %[[M]]) {kind = "or", operandSegmentSizes = array<i32: 1, 1, 1>, scope = "gpu", sem = "acq_rel"}
# CHECK: "tile.atomic_rmw"(%{{.+}}, %[[R]]) {kind = "xor", operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "acq_rel"}
# CHECK: "tile.atomic_rmw"(%{{.+}}, %{{.+}}, %[[M]]) {kind = "xchg", operandSegmentSizes = array<i32: 1, 1, 1>, scope = "gpu", sem = "acq_rel"}
# CHECK: %[[CMP:.+]] = "tile.splat"(%{{.+}}) : (i32) -> tensor<32xi32>
# CHECK: %[[NEW:.+]] = "tile.splat"(%{{.+}}) : (i32) -> tensor<32xi32>
# CHECK-NEXT: "tile.atomic_cas"(%{{.+}}, %[[CMP]], %[[NEW]]) {scope = "cta", sem = "relaxed"} : (tensor<32x!tile.ptr<i32>>, tensor<32xi32>, tensor<32xi32>) -> tensor<32xi32>
# unsigned pointees: unsigned max/min
# CHECK: "tile.atomic_rmw"(%{{.+}}, %{{.+}}, %[[M]]) {kind = "umax", {{.*}} -> tensor<32xi32>
# CHECK: "tile.atomic_rmw"(%{{.+}}, %{{.+}}) {kind = "umin", {{.*}} -> tensor<32xi32>
# a scalar pointer: a scalar atomic
# CHECK: "tile.atomic_rmw"(%arg0, %{{.+}}) {kind = "add", operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "acq_rel"} : (!tile.ptr<i32>, i32) -> i32

show("float_atomics", float_atomics, {"f_ptr": P(tl.float32), "d_ptr": P(tl.float64),
                                      "h_ptr": P(tl.float16), "n": tl.int32})
# CHECK-LABEL: // ---- float_atomics
# CHECK: %[[M:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<32xi32>
# the int 1 becomes an f32 value; the add is a float add
# CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
# CHECK-NEXT: %[[ONES:.+]] = "tile.splat"(%[[ONE]]) : (f32) -> tensor<32xf32>
# CHECK-NEXT: %[[A:.+]] = "tile.atomic_rmw"(%{{.+}}, %[[ONES]], %[[M]]) {kind = "fadd", {{.*}} -> tensor<32xf32>
# float max: signed max on the bits of the non-negative values, unsigned min on the others
# CHECK: %[[IV:.+]] = arith.bitcast %[[V:.+]] : tensor<32xf32> to tensor<32xi32>
# CHECK-NEXT: %[[UV:.+]] = arith.bitcast %[[V]] : tensor<32xf32> to tensor<32xi32>
# CHECK: %[[SIGN:.+]] = arith.shrui %[[UV]], %{{.+}} : tensor<32xi32>
# CHECK: %[[NEG:.+]] = arith.cmpi ne, %[[SIGN]], %{{.+}} : tensor<32xi32>
# CHECK: %[[POS:.+]] = arith.cmpi eq, %[[NEG]], %{{.+}} : tensor<32xi1>
# CHECK-NEXT: %[[PM:.+]] = arith.andi %[[M]], %[[POS]] : tensor<32xi1>
# CHECK-NEXT: %[[POLD:.+]] = "tile.atomic_rmw"(%[[FP:.+]], %[[IV]], %[[PM]]) {kind = "max", {{.*}} : (tensor<32x!tile.ptr<f32>>, tensor<32xi32>, tensor<32xi1>) -> tensor<32xi32>
# CHECK-NEXT: %[[NM:.+]] = arith.andi %[[M]], %[[NEG]] : tensor<32xi1>
# CHECK-NEXT: %[[NOLD:.+]] = "tile.atomic_rmw"(%[[FP]], %[[UV]], %[[NM]]) {kind = "umin", {{.*}} -> tensor<32xi32>
# CHECK-NEXT: %[[OLD:.+]] = arith.select %[[POS]], %[[POLD]], %[[NOLD]] : tensor<32xi1>, tensor<32xi32>
# CHECK-NEXT: %[[B:.+]] = arith.bitcast %[[OLD]] : tensor<32xi32> to tensor<32xf32>
# fp64 min of an fp32 tile: the value is extended; 64-bit integer trick, umax for negatives
# CHECK: %[[AD:.+]] = arith.extf %[[A]] : tensor<32xf32> to tensor<32xf64>
# CHECK: "tile.atomic_rmw"({{.*}}) {kind = "min", {{.*}} : (tensor<32x!tile.ptr<f64>>, tensor<32xi64>, tensor<32xi1>) -> tensor<32xi64>
# CHECK: "tile.atomic_rmw"({{.*}}) {kind = "umax", {{.*}} : (tensor<32x!tile.ptr<f64>>, tensor<32xi64>, tensor<32xi1>) -> tensor<32xi64>
# CHECK: %[[BD:.+]] = arith.extf %[[B]] : tensor<32xf32> to tensor<32xf64>
# CHECK-NEXT: "tile.atomic_rmw"(%{{.+}}, %[[BD]]) {kind = "xchg", {{.*}} -> tensor<32xf64>
# fp16 add and cas
# CHECK: %[[E:.+]] = "tile.atomic_rmw"(%{{.+}}, %{{.+}}) {kind = "fadd", {{.*}} : (tensor<32x!tile.ptr<f16>>, tensor<32xf16>) -> tensor<32xf16>
# CHECK: "tile.atomic_cas"(%{{.+}}, %[[E]], %{{.+}}) {scope = "gpu", sem = "acq_rel"} : (tensor<32x!tile.ptr<f16>>, tensor<32xf16>, tensor<32xf16>) -> tensor<32xf16>
