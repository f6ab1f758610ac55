# RUN: %python %s | FileCheck %s
#
# The tile IR of the random builtins (compiled ahead of time, no GPU).  They are tile-language
# @jit functions inlined into the kernel: Philox-4x32 on uint32 words (i32 in the IR), each
# round's two multiplies by 0xD2511F53 / 0xCD9E8D57 (high halves through a 64-bit product:
# extui, muli by 3528531795 / 3449720151, shrui 32, trunci; low halves as i32 muli by their
# signed views -766435501 / -845247145), the key bumped by 0x9E3779B9 / 0xBB67AE85 (signed
# -1640531527 / -1150833019) once per round; n_rounds unrolled (10 by default).  The key is
# the seed's low and high 32 bits.  rand folds the word onto non-negatives and scales by
# 4.6566127342e-10 (sitofp, mulf); randn adds Box-Muller (log, sqrt, cos, sin).
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type


@tilework.jit
def k_randint(o_ptr, seed):
    offs = tl.arange(0, 16)
    tl.store(o_ptr + offs, tl.randint(seed, offs))


@tilework.jit
def k_randint4x(o_ptr, seed):
    offs = tl.arange(0, 16)
    a, b, c, d = tl.randint4x(seed, offs, n_rounds=7)
    tl.store(o_ptr + offs, a ^ b ^ c ^ d)


@tilework.jit
def k_rand(o_ptr, seed):
    offs = tl.arange(0, 16)
    tl.store(o_ptr + offs, tl.rand(seed, offs))


@tilework.jit
def k_randn(o_ptr, seed):
    offs = tl.arange(0, 16)
    tl.store(o_ptr + offs, tl.randn(seed, offs))


def show(title, fn, elem):
    print(f"// ---- {title}")
    src = ASTSource(fn, {"o_ptr": P(elem), "seed": tl.int32}, {}, {})
    print(compile(src, "sm_90a", cache=False).asm["tile"])


show("randint", k_randint, tl.uint32)
# CHECK-LABEL: // ---- randint
# CHECK: %[[OFFS:.+]] = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32>
# the key: low and high 32 bits of the (sign-extended) seed
# CHECK: %[[SEED:.+]] = arith.extsi %arg1 : i32 to i64
# CHECK: arith.andi %[[SEED]], %{{.+}} : i64
# CHECK: arith.shrui %[[SEED]], %{{.+}} : i64
# the first round: a 64-bit product's high half
# CHECK: %[[W:.+]] = arith.extui %{{.+}} : tensor<16xi32> to tensor<16xi64>
# CHECK-NEXT: %[[K:.+]] = arith.constant 3528531795 : i64
# CHECK-NEXT: %[[KS:.+]] = "tile.splat"(%[[K]]) : (i64) -> tensor<16xi64>
# CHECK-NEXT: %[[PR:.+]] = arith.muli %[[W]], %[[KS]] : tensor<16xi64>
# CHECK: %[[HI:.+]] = arith.shrui %[[PR]], %{{.+}} : tensor<16xi64>
# CHECK-NEXT: arith.trunci %[[HI]] : tensor<16xi64> to tensor<16xi32>
# CHECK: arith.constant 3449720151 : i64
# CHECK: arith.constant -766435501 : i32
# CHECK: arith.constant -845247145 : i32
# ten rounds, each bumping the key once
# CHECK-COUNT-10: arith.constant -1640531527 : i32
# CHECK-NOT: arith.constant -1640531527 : i32
# randint is the first word: stored as is
# CHECK: "tile.store"(%{{.+}}, %{{.+}}) {{.*}} : (tensor<16x!tile.ptr<i32>>, tensor<16xi32>) -> ()

show("randint4x", k_randint4x, tl.uint32)
# CHECK-LABEL: // ---- randint4x
# n_rounds=7: seven key bumps
# CHECK-COUNT-7: arith.constant -1150833019 : i32
# CHECK-NOT: arith.constant -1150833019 : i32
# CHECK: %[[X1:.+]] = arith.xori %{{.+}}, %{{.+}} : tensor<16xi32>
# CHECK-NEXT: %[[X2:.+]] = arith.xori %[[X1]], %{{.+}} : tensor<16xi32>
# CHECK-NEXT: %[[X3:.+]] = arith.xori %[[X2]], %{{.+}} : tensor<16xi32>
# CHECK-NEXT: "tile.store"(%{{.+}}, %[[X3]])

show("rand", k_rand, tl.float32)
# CHECK-LABEL: // ---- rand
# CHECK-COUNT-10: arith.constant -1640531527 : i32
# uint_to_uniform_float: x < 0 ? -x - 1 : x, then * 4.6566127342e-10
# CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[V:.+]], %{{.+}} : tensor<16xi32>
# CHECK: %[[F:.+]] = arith.select %[[NEG]], %{{.+}}, %[[V]] : tensor<16xi1>, tensor<16xi32>
# CHECK-NEXT: %[[SCALE:.+]] = arith.constant 4.6566{{[0-9]+}}E-10 : f32
# CHECK-NEXT: %[[SS:.+]] = "tile.splat"(%[[SCALE]]) : (f32) -> tensor<16xf32>
# CHECK-NEXT: %[[FF:.+]] = arith.sitofp %[[F]] : tensor<16xi32> to tensor<16xf32>
# CHECK-NEXT: %[[U:.+]] = arith.mulf %[[FF]], %[[SS]] {{.*}}: tensor<16xf32>
# CHECK-NEXT: "tile.store"(%{{.+}}, %[[U]])

show("randn", k_randn, tl.float32)
# CHECK-LABEL: // ---- randn
# CHECK-COUNT-10: arith.constant -1640531527 : i32
# two uniforms, then Box-Muller
# CHECK: arith.sitofp %{{.+}} : tensor<16xi32> to tensor<16xf32>
# CHECK: arith.sitofp %{{.+}} : tensor<16xi32> to tensor<16xf32>
# CHECK: math.log %{{.+}} : tensor<16xf32>
# CHECK: math.sqrt %{{.+}} : tensor<16xf32>
# CHECK: math.cos %{{.+}} : tensor<16xf32>
# CHECK: "tile.store"(%{{.+}}, %{{.+}}) {{.*}} : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>) -> ()
