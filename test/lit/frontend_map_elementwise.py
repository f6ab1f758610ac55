# RUN: %python %s | FileCheck %s
#
# tl.map_elementwise is one tile.map_elementwise on the broadcast arguments naming a private
# func.func: the @jit scalar function compiled on scalar arguments (with pack=2, each
# argument's two elements in turn) with its control flow (an `if` with returns: scf.if), its
# results (with pack=2, each result's two elements in turn).
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P = tl.pointer_type


@tilework.jit
def clip_neg(x, lo):
    if x < 0:
        return lo
    return x


@tilework.jit
def swap2(a0, a1, b0, b1):
    return b0, b1, a0 + a1, a0 + a1


@tilework.jit
def kernel(x_ptr, i_ptr, o_ptr, p_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.map_elementwise(clip_neg, x, 0.5))
    i = tl.load(i_ptr + offs)
    s, t = tl.map_elementwise(swap2, i, x, pack=2)
    tl.store(p_ptr + offs, s + t.to(tl.float32))


print(compile(ASTSource(kernel, {"x_ptr": P(tl.float32), "i_ptr": P(tl.int32),
                                 "o_ptr": P(tl.float32), "p_ptr": P(tl.float32)}, {}, {}),
              "sm_90a", cache=False).asm["tile"])
# CHECK: %[[X:.+]] = "tile.load"{{.*}} -> tensor<16xf32>
# CHECK: %[[LO:.+]] = "tile.splat"(%{{.+}}) : (f32) -> tensor<16xf32>
# CHECK: "tile.map_elementwise"(%[[X]], %[[LO]]) {fn = @kernel__map1, {{.*}}pack = 1 : i32{{.*}} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
# CHECK: %[[I:.+]] = "tile.load"{{.*}} -> tensor<16xi32>
# CHECK: %{{.+}}:2 = "tile.map_elementwise"(%[[I]], %[[X]]) {fn = @kernel__map2, {{.*}}pack = 2 : i32{{.*}} : (tensor<16xi32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xi32>)
# CHECK: func.func private @kernel__map1(%[[A:.+]]: f32, %[[B:.+]]: f32) -> f32
# CHECK: arith.cmpf olt, %[[A]]
# CHECK: scf.if
# CHECK: func.func private @kernel__map2(%[[A0:.+]]: i32, %[[A1:.+]]: i32, %[[B0:.+]]: f32, %[[B1:.+]]: f32) -> (f32, f32, i32, i32)
# CHECK: %[[S:.+]] = arith.addi %[[A0]], %[[A1]] : i32
# CHECK: return %[[B0]], %[[B1]], %[[S]], %{{.+}} : f32, f32, i32, i32
