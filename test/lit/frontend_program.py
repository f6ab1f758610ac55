# RUN: %python %s | FileCheck %s
#
# The programming model in the tile IR (compiled ahead of time, no GPU): program_id and
# num_programs (one op per axis), casts (.to, tl.cast, bitcast) with the arith op each pair
# of types needs, and the Python operators: `//` and `%` truncate toward zero on integers
# (divsi/remsi, divui/remui on unsigned: C semantics, as in Triton), `//` on floats is
# floor(x / y) and `%` remf; `<<`, `>>` (arithmetic on signed, logical on unsigned), `&`, `|`,
# `^`; comparisons with signed, unsigned or ordered float predicates (`!=` unordered); unary
# `-` (subi from 0, negf), `~` (xori with all ones) and `not` (== 0).
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type


@tilework.jit
def grid(o_ptr):
    pid0 = tl.program_id(0)
    pid1 = tl.program_id(axis=1)
    pid2 = tl.program_id(2)
    n0 = tl.num_programs(0)
    n1 = tl.num_programs(axis=1)
    n2 = tl.num_programs(2)
    tl.store(o_ptr, pid0 + pid1 * n0 + pid2 * n0 * n1 + n2)


@tilework.jit
def operators(i_ptr, u_ptr, f_ptr, oi_ptr, ou_ptr, of_ptr, ob_ptr, n):
    offs = tl.arange(0, 16)
    i = tl.load(i_ptr + offs)  # int32
    u = tl.load(u_ptr + offs)  # uint32
    f = tl.load(f_ptr + offs)  # fp32
    tl.store(oi_ptr + offs, i // 3)
    tl.store(oi_ptr + offs, i % -3)
    tl.store(ou_ptr + offs, u // 3)
    tl.store(ou_ptr + offs, u % 3)
    tl.store(of_ptr + offs, f // 2.0)
    tl.store(of_ptr + offs, f % 2.0)
    tl.store(oi_ptr + offs, i << 2)
    tl.store(oi_ptr + offs, i >> 1)
    tl.store(ou_ptr + offs, u >> 1)
    tl.store(oi_ptr + offs, (i & 7) | (i ^ 5))
    tl.store(ob_ptr + offs, i < n)
    tl.store(ob_ptr + offs, i <= n)
    tl.store(ob_ptr + offs, u > 4)
    tl.store(ob_ptr + offs, u >= 4)
    tl.store(ob_ptr + offs, f == 1.0)
    tl.store(ob_ptr + offs, f != 0.0)
    tl.store(ob_ptr + offs, f < 1.0)
    tl.store(oi_ptr + offs, -i)
    tl.store(of_ptr + offs, -f)
    tl.store(oi_ptr + offs, ~i)
    tl.store(ou_ptr + offs, ~u)
    tl.store(ob_ptr + offs, not (i < n))


@tilework.jit
def casts(i_ptr, f_ptr, o8_ptr, o64_ptr, oh_ptr, od_ptr, ob_ptr, oi_ptr, ou_ptr):
    offs = tl.arange(0, 16)
    i = tl.load(i_ptr + offs)  # int32
    f = tl.load(f_ptr + offs)  # fp32
    tl.store(o8_ptr + offs, i.to(tl.int8))
    tl.store(o64_ptr + offs, i.to(tl.int64))
    tl.store(o64_ptr + offs, i.to(tl.uint32).to(tl.int64))
    tl.store(oh_ptr + offs, f.to(tl.float16))
    tl.store(oh_ptr + offs, f.to(tl.bfloat16).to(tl.float16))
    tl.store(od_ptr + offs, tl.cast(f, tl.float64))
    tl.store(od_ptr + offs, i.to(tl.float64))
    tl.store(od_ptr + offs, i.to(tl.uint32).to(tl.float64))
    tl.store(oi_ptr + offs, f.to(tl.int32))
    tl.store(ou_ptr + offs, f.to(tl.uint32))
    tl.store(ob_ptr + offs, f.to(tl.int1))
    tl.store(oi_ptr + offs, f.to(tl.int32, bitcast=True))
    tl.store(oh_ptr + offs, (i.to(tl.int16)).to(tl.float16, bitcast=True))
    tl.store(oi_ptr + offs, i.to(tl.int32))  # same type: nothing


def show(title, fn, sig, constants=None):
    print(f"// ---- {title}")
    print(compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False).asm["tile"])


show("grid", grid, {"o_ptr": P(tl.int32)})
# CHECK-LABEL: // ---- grid
# CHECK: "tile.get_program_id"() {axis = 0 : i32} : () -> i32
# CHECK-NEXT: "tile.get_program_id"() {axis = 1 : i32} : () -> i32
# CHECK-NEXT: "tile.get_program_id"() {axis = 2 : i32} : () -> i32
# CHECK-NEXT: "tile.get_num_programs"() {axis = 0 : i32} : () -> i32
# CHECK-NEXT: "tile.get_num_programs"() {axis = 1 : i32} : () -> i32
# CHECK-NEXT: "tile.get_num_programs"() {axis = 2 : i32} : () -> i32

show("operators", operators, {"i_ptr": P(tl.int32), "u_ptr": P(tl.uint32), "f_ptr": P(tl.float32),
                              "oi_ptr": P(tl.int32), "ou_ptr": P(tl.uint32),
                              "of_ptr": P(tl.float32), "ob_ptr": P(tl.int1), "n": tl.int32})
# CHECK-LABEL: // ---- operators
# CHECK: %[[I:.+]] = "tile.load"{{.*}} -> tensor<16xi32>
# CHECK: %[[U:.+]] = "tile.load"{{.*}} -> tensor<16xi32>
# CHECK: %[[F:.+]] = "tile.load"{{.*}} -> tensor<16xf32>
# CHECK: arith.divsi %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: %[[M3:.+]] = arith.constant -3 : i32
# CHECK-NEXT: %[[M3S:.+]] = "tile.splat"(%[[M3]]) : (i32) -> tensor<16xi32>
# CHECK-NEXT: arith.remsi %[[I]], %[[M3S]] : tensor<16xi32>
# CHECK: arith.divui %[[U]], %{{.+}} : tensor<16xi32>
# CHECK: arith.remui %[[U]], %{{.+}} : tensor<16xi32>
# CHECK: %[[Q:.+]] = arith.divf %[[F]], %{{.+}} : tensor<16xf32>
# CHECK-NEXT: math.floor %[[Q]] : tensor<16xf32>
# CHECK: arith.remf %[[F]], %{{.+}} : tensor<16xf32>
# CHECK: arith.shli %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: arith.shrsi %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: arith.shrui %[[U]], %{{.+}} : tensor<16xi32>
# CHECK: %[[A:.+]] = arith.andi %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: %[[X:.+]] = arith.xori %[[I]], %{{.+}} : tensor<16xi32>
# CHECK-NEXT: arith.ori %[[A]], %[[X]] : tensor<16xi32>
# CHECK: arith.cmpi slt, %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: arith.cmpi sle, %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: arith.cmpi ugt, %[[U]], %{{.+}} : tensor<16xi32>
# CHECK: arith.cmpi uge, %[[U]], %{{.+}} : tensor<16xi32>
# CHECK: arith.cmpf oeq, %[[F]], %{{.+}} : tensor<16xf32>
# CHECK: arith.cmpf une, %[[F]], %{{.+}} : tensor<16xf32>
# CHECK: arith.cmpf olt, %[[F]], %{{.+}} : tensor<16xf32>
# unary minus: 0 - i on ints, negf on floats
# CHECK: %[[Z:.+]] = "tile.splat"(%{{.+}}) : (i32) -> tensor<16xi32>
# CHECK-NEXT: arith.subi %[[Z]], %[[I]] : tensor<16xi32>
# CHECK: arith.negf %[[F]] : tensor<16xf32>
# ~: xor with all ones
# CHECK: %[[ONES:.+]] = arith.constant -1 : i32
# CHECK-NEXT: %[[ONESS:.+]] = "tile.splat"(%[[ONES]]) : (i32) -> tensor<16xi32>
# CHECK-NEXT: arith.xori %[[I]], %[[ONESS]] : tensor<16xi32>
# CHECK: %[[UONES:.+]] = arith.constant -1 : i32
# CHECK-NEXT: %[[UONESS:.+]] = "tile.splat"(%[[UONES]]) : (i32) -> tensor<16xi32>
# CHECK-NEXT: arith.xori %[[U]], %[[UONESS]] : tensor<16xi32>
# not: == false
# CHECK: %[[LT:.+]] = arith.cmpi slt, %[[I]], %{{.+}} : tensor<16xi32>
# CHECK-NEXT: %[[FALSE:.+]] = arith.constant false
# CHECK-NEXT: %[[FS:.+]] = "tile.splat"(%[[FALSE]]) : (i1) -> tensor<16xi1>
# CHECK-NEXT: arith.cmpi eq, %[[LT]], %[[FS]] : tensor<16xi1>

show("casts", casts, {"i_ptr": P(tl.int32), "f_ptr": P(tl.float32), "o8_ptr": P(tl.int8),
                      "o64_ptr": P(tl.int64), "oh_ptr": P(tl.float16), "od_ptr": P(tl.float64),
                      "ob_ptr": P(tl.int1), "oi_ptr": P(tl.int32), "ou_ptr": P(tl.uint32)})
# CHECK-LABEL: // ---- casts
# CHECK: %[[I:.+]] = "tile.load"{{.*}} -> tensor<16xi32>
# CHECK: %[[F:.+]] = "tile.load"{{.*}} -> tensor<16xf32>
# CHECK: arith.trunci %[[I]] : tensor<16xi32> to tensor<16xi8>
# CHECK: arith.extsi %[[I]] : tensor<16xi32> to tensor<16xi64>
# int32 -> uint32 changes no bits; uint32 -> int64 zero-extends
# CHECK: arith.extui %[[I]] : tensor<16xi32> to tensor<16xi64>
# CHECK: arith.truncf %[[F]] : tensor<16xf32> to tensor<16xf16>
# bf16 -> fp16 goes through fp32
# CHECK: %[[BF:.+]] = arith.truncf %[[F]] : tensor<16xf32> to tensor<16xbf16>
# CHECK-NEXT: %[[BF32:.+]] = arith.extf %[[BF]] : tensor<16xbf16> to tensor<16xf32>
# CHECK-NEXT: arith.truncf %[[BF32]] : tensor<16xf32> to tensor<16xf16>
# CHECK: arith.extf %[[F]] : tensor<16xf32> to tensor<16xf64>
# CHECK: arith.sitofp %[[I]] : tensor<16xi32> to tensor<16xf64>
# CHECK: arith.uitofp %[[I]] : tensor<16xi32> to tensor<16xf64>
# CHECK: arith.fptosi %[[F]] : tensor<16xf32> to tensor<16xi32>
# CHECK: arith.fptoui %[[F]] : tensor<16xf32> to tensor<16xi32>
# to int1: != 0
# CHECK: arith.cmpf une, %[[F]], %{{.+}} : tensor<16xf32>
# CHECK: arith.bitcast %[[F]] : tensor<16xf32> to tensor<16xi32>
# CHECK: %[[I16:.+]] = arith.trunci %[[I]] : tensor<16xi32> to tensor<16xi16>
# CHECK-NEXT: arith.bitcast %[[I16]] : tensor<16xi16> to tensor<16xf16>
# the cast to the same type emits nothing: the loaded tile is stored
# CHECK: "tile.store"(%{{.+}}, %[[I]]) {{.*}} : (tensor<16x!tile.ptr<i32>>, tensor<16xi32>) -> ()
# CHECK-NEXT: return
