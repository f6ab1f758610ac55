# RUN: %python %s | FileCheck %s
#
# The tile IR of the math builtins (compiled ahead of time, no GPU): each unary function is
# one upstream `math` op on the tile (tl.sqrt with fastmath<afn>, tl.sqrt_rn without), abs is
# math.absf/absi, sigmoid is 1 / (1 + exp(-x)), fma math.fma, fdiv/div_rn arith.divf,
# clamp maxnumf+minnumf (maximumf+minimumf with PropagateNan.ALL), maximum/minimum
# arith.maxnumf (maximumf with PropagateNan.ALL)/minsi/maxui, where arith.select, umulhi tile.umulhi, cdiv (x + d - 1) // d,
# softmax max-reduce, exp, sum-reduce, divf.  And the elementwise promotion on the way:
# fp16 with fp32 extends to fp32, int with float converts (sitofp / uitofp), fp16/bf16
# division computes in fp32, clamp of bf16 computes in fp32, umulhi of int32 and uint32 is
# unsigned 32-bit, Python scalars take the tile's type.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type


@tilework.jit
def unary(x_ptr, o_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.exp(x))
    tl.store(o_ptr + offs, tl.exp2(x))
    tl.store(o_ptr + offs, tl.log(x))
    tl.store(o_ptr + offs, tl.log2(x))
    tl.store(o_ptr + offs, tl.sqrt(x))
    tl.store(o_ptr + offs, tl.sqrt_rn(x))
    tl.store(o_ptr + offs, tl.rsqrt(x))
    tl.store(o_ptr + offs, tl.sin(x))
    tl.store(o_ptr + offs, tl.cos(x))
    tl.store(o_ptr + offs, tl.abs(x))
    tl.store(o_ptr + offs, tl.floor(x))
    tl.store(o_ptr + offs, tl.ceil(x))
    tl.store(o_ptr + offs, tl.erf(x))
    tl.store(o_ptr + offs, tl.sigmoid(x))
    tl.store(o_ptr + offs, x.exp())          # tile member
    tl.store(o_ptr + offs, tl.math.log(x))   # tl.math namespace


@tilework.jit
def fp64(d_ptr):
    offs = tl.arange(0, 16)
    d = tl.load(d_ptr + offs)
    tl.store(d_ptr + offs, tl.exp(d) + tl.rsqrt(d))


@tilework.jit
def multi(x_ptr, h_ptr, b_ptr, i_ptr, u_ptr, o_ptr, oi_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)  # fp32
    h = tl.load(h_ptr + offs)  # fp16
    bf = tl.load(b_ptr + offs)  # bf16
    i = tl.load(i_ptr + offs)  # int32
    u = tl.load(u_ptr + offs)  # uint32
    tl.store(o_ptr + offs, tl.fma(x, h, 1.0))
    tl.store(o_ptr + offs, tl.maximum(x, h))
    tl.store(o_ptr + offs, tl.minimum(x, h, propagate_nan=tl.PropagateNan.ALL))
    tl.store(oi_ptr + offs, tl.minimum(i, 3))
    tl.store(oi_ptr + offs, tl.maximum(u, i).to(tl.int32))
    tl.store(o_ptr + offs, tl.clamp(x, 0.0, 6.0))
    tl.store(o_ptr + offs, tl.clamp(bf, bf, bf, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + offs, tl.where(i > 0, x, h))
    tl.store(o_ptr + offs, tl.div_rn(x, x))
    tl.store(o_ptr + offs, tl.fdiv(h, h))
    tl.store(oi_ptr + offs, tl.umulhi(u, i).to(tl.int32))
    tl.store(oi_ptr + offs, tl.cdiv(i, 4))
    tl.store(oi_ptr + offs, tl.abs(i))
    tl.store(oi_ptr + offs, tl.abs(u).to(tl.int32))
    tl.store(o_ptr + offs, tl.softmax(x))
    tl.store(o_ptr + offs, h + x)   # promotion: fp16 + fp32 -> fp32
    tl.store(o_ptr + offs, i * x)   # int32 * fp32 -> fp32
    tl.store(o_ptr + offs, u + h)   # uint32 + fp16 -> fp16
    tl.store(o_ptr + offs, h * 2)   # a Python int takes fp16


def show(title, fn, sig, constants=None):
    print(f"// ---- {title}")
    print(compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False).asm["tile"])


show("unary", unary, {"x_ptr": P(tl.float32), "o_ptr": P(tl.float32)})
# CHECK-LABEL: // ---- unary
# CHECK: %[[X:.+]] = "tile.load"{{.*}} -> tensor<16xf32>
# CHECK: math.exp %[[X]] : tensor<16xf32>
# CHECK: math.exp2 %[[X]] : tensor<16xf32>
# CHECK: math.log %[[X]] : tensor<16xf32>
# CHECK: math.log2 %[[X]] : tensor<16xf32>
# CHECK: math.sqrt %[[X]] fastmath<afn> : tensor<16xf32>
# CHECK: math.sqrt %[[X]] : tensor<16xf32>
# CHECK: math.rsqrt %[[X]] : tensor<16xf32>
# CHECK: math.sin %[[X]] : tensor<16xf32>
# CHECK: math.cos %[[X]] : tensor<16xf32>
# CHECK: math.absf %[[X]] : tensor<16xf32>
# CHECK: math.floor %[[X]] : tensor<16xf32>
# CHECK: math.ceil %[[X]] : tensor<16xf32>
# CHECK: math.erf %[[X]] : tensor<16xf32>
# sigmoid: 1 / (1 + exp(-x))
# CHECK: %[[NX:.+]] = arith.negf %[[X]] : tensor<16xf32>
# CHECK-NEXT: %[[E:.+]] = math.exp %[[NX]] : tensor<16xf32>
# CHECK: %[[D:.+]] = arith.addf %{{.+}}, %[[E]] {{.*}}: tensor<16xf32>
# CHECK: arith.divf %{{.+}}, %[[D]] : tensor<16xf32>
# CHECK: math.exp %[[X]] : tensor<16xf32>
# CHECK: math.log %[[X]] : tensor<16xf32>

show("fp64", fp64, {"d_ptr": P(tl.float64)})
# CHECK-LABEL: // ---- fp64
# CHECK: %[[D:.+]] = "tile.load"{{.*}} -> tensor<16xf64>
# CHECK: math.exp %[[D]] : tensor<16xf64>
# CHECK-NEXT: math.rsqrt %[[D]] : tensor<16xf64>

show("multi", multi, {"x_ptr": P(tl.float32), "h_ptr": P(tl.float16), "b_ptr": P(tl.bfloat16),
                      "i_ptr": P(tl.int32), "u_ptr": P(tl.uint32), "o_ptr": P(tl.float32),
                      "oi_ptr": P(tl.int32)})
# CHECK-LABEL: // ---- multi
# CHECK: %[[X:.+]] = "tile.load"{{.*}} -> tensor<16xf32>
# CHECK: %[[H:.+]] = "tile.load"{{.*}} -> tensor<16xf16>
# CHECK: %[[BF:.+]] = "tile.load"{{.*}} -> tensor<16xbf16>
# CHECK: %[[I:.+]] = "tile.load"{{.*}} -> tensor<16xi32>
# CHECK: %[[U:.+]] = "tile.load"{{.*}} -> tensor<16xi32>
# fma(fp32, fp16, 1.0): the fp16 operand extended, the constant splat
# CHECK: %[[HX:.+]] = arith.extf %[[H]] : tensor<16xf16> to tensor<16xf32>
# CHECK-NEXT: %[[ONE:.+]] = "tile.splat"(%{{.+}}) : (f32) -> tensor<16xf32>
# CHECK-NEXT: math.fma %[[X]], %[[HX]], %[[ONE]] : tensor<16xf32>
# CHECK: %[[HX2:.+]] = arith.extf %[[H]] : tensor<16xf16> to tensor<16xf32>
# CHECK-NEXT: arith.maxnumf %[[X]], %[[HX2]] : tensor<16xf32>
# CHECK: arith.minimumf %[[X]], %{{.+}} : tensor<16xf32>
# CHECK: arith.minsi %[[I]], %{{.+}} : tensor<16xi32>
# uint32 with int32: unsigned (C's rules)
# CHECK: arith.maxui %[[U]], %[[I]] : tensor<16xi32>
# CHECK: %[[LO:.+]] = arith.maxnumf %[[X]], %{{.+}} : tensor<16xf32>
# CHECK-NEXT: arith.minnumf %[[LO]], %{{.+}} : tensor<16xf32>
# bf16 clamp computes in fp32; PropagateNan.ALL propagates NaN
# CHECK: %[[B32:.+]] = arith.extf %[[BF]] : tensor<16xbf16> to tensor<16xf32>
# CHECK: %[[LO2:.+]] = arith.maximumf %[[B32]], %{{.+}} : tensor<16xf32>
# CHECK-NEXT: arith.minimumf %[[LO2]], %{{.+}} : tensor<16xf32>
# CHECK: %[[GT:.+]] = arith.cmpi sgt, %[[I]], %{{.+}} : tensor<16xi32>
# CHECK-NEXT: %[[HX3:.+]] = arith.extf %[[H]] : tensor<16xf16> to tensor<16xf32>
# CHECK-NEXT: arith.select %[[GT]], %[[X]], %[[HX3]] : tensor<16xi1>, tensor<16xf32>
# CHECK: arith.divf %[[X]], %[[X]] {{.*}}: tensor<16xf32>
# fdiv of fp16 divides in fp32
# CHECK: %[[HA:.+]] = arith.extf %[[H]] : tensor<16xf16> to tensor<16xf32>
# CHECK-NEXT: %[[HB:.+]] = arith.extf %[[H]] : tensor<16xf16> to tensor<16xf32>
# CHECK-NEXT: arith.divf %[[HA]], %[[HB]] : tensor<16xf32>
# CHECK: "tile.umulhi"(%[[U]], %[[I]]) : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
# cdiv(i, 4) = (i + 4 - 1) // 4, truncating signed division
# CHECK: %[[S1:.+]] = arith.addi %[[I]], %{{.+}} : tensor<16xi32>
# CHECK: %[[S2:.+]] = arith.subi %[[S1]], %{{.+}} : tensor<16xi32>
# CHECK: arith.divsi %[[S2]], %{{.+}} : tensor<16xi32>
# abs: absi on signed ints, nothing on unsigned ones
# CHECK: math.absi %[[I]] : tensor<16xi32>
# CHECK-NOT: math.absi
# CHECK: "tile.store"(%{{.+}}, %[[U]])
# softmax: max (maxnumf) reduce, subtract, exp, sum reduce, divide
# CHECK: %[[MX:.+]] = "tile.reduce"(%[[X]]) {axis = 0 : i32, combine = @[[MAXF:multi__combine[0-9]+]], {{.*}} : (tensor<16xf32>) -> f32
# CHECK-NEXT: %[[MXS:.+]] = "tile.splat"(%[[MX]]) : (f32) -> tensor<16xf32>
# CHECK-NEXT: %[[Z:.+]] = arith.subf %[[X]], %[[MXS]] {{.*}}: tensor<16xf32>
# CHECK-NEXT: %[[NUM:.+]] = math.exp %[[Z]] : tensor<16xf32>
# CHECK-NEXT: %[[DEN:.+]] = "tile.reduce"(%[[NUM]]) {axis = 0 : i32, combine = @[[SUMF:multi__combine[0-9]+]], {{.*}} : (tensor<16xf32>) -> f32
# CHECK-NEXT: %[[DENS:.+]] = "tile.splat"(%[[DEN]]) : (f32) -> tensor<16xf32>
# CHECK-NEXT: arith.divf %[[NUM]], %[[DENS]] : tensor<16xf32>
# promotions
# CHECK: %[[HP:.+]] = arith.extf %[[H]] : tensor<16xf16> to tensor<16xf32>
# CHECK-NEXT: arith.addf %[[HP]], %[[X]] {{.*}}: tensor<16xf32>
# CHECK: %[[IP:.+]] = arith.sitofp %[[I]] : tensor<16xi32> to tensor<16xf32>
# CHECK-NEXT: arith.mulf %[[IP]], %[[X]] {{.*}}: tensor<16xf32>
# CHECK: %[[UP:.+]] = arith.uitofp %[[U]] : tensor<16xi32> to tensor<16xf16>
# CHECK-NEXT: %[[UH:.+]] = arith.addf %[[UP]], %[[H]] {{.*}}: tensor<16xf16>
# CHECK-NEXT: arith.extf %[[UH]] : tensor<16xf16> to tensor<16xf32>
# CHECK: %[[TWO:.+]] = arith.constant 2.000000e+00 : f16
# CHECK-NEXT: %[[TWOS:.+]] = "tile.splat"(%[[TWO]]) : (f16) -> tensor<16xf16>
# CHECK-NEXT: arith.mulf %[[H]], %[[TWOS]] {{.*}}: tensor<16xf16>
# the combine functions of softmax's reductions
# CHECK: func.func private @[[MAXF]](%[[A:.+]]: f32, %[[B:.+]]: f32) -> f32
# CHECK-NEXT: arith.maxnumf %[[A]], %[[B]] : f32
# CHECK: func.func private @[[SUMF]](%[[C:.+]]: f32, %[[D:.+]]: f32) -> f32
# CHECK-NEXT: arith.addf %[[C]], %[[D]]
