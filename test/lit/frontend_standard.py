# RUN: %python %s | FileCheck %s
#
# The builtins of language/standard.py in the tile IR: tl.flip of an 8-element tile views it as
# a [1, 2, 2, 2, 1] hypercube (one reshape), swaps each element with its partner along each
# size-2 axis (the xor of the pair, an xor reduction kept as a dimension, xor-ed back), and
# reshapes back: two reshapes, three reductions.  tl.debug_barrier is "tile.debug_barrier".
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile


@tilework.jit
def flip8(x_ptr, y_ptr):
    offs = tl.arange(0, 8)
    v = tl.load(x_ptr + offs)
    tl.debug_barrier()
    tl.store(y_ptr + offs, tl.flip(v))


src = ASTSource(flip8, {"x_ptr": tl.pointer_type(tl.int32), "y_ptr": tl.pointer_type(tl.int32)},
                {}, {})
print(compile(src, "sm_90a", cache=False).asm["tile"])
# CHECK: func.func @flip8(
# CHECK: %[[X:.+]] = "tile.load"{{.*}} -> tensor<8xi32>
# CHECK-NEXT: "tile.debug_barrier"() : () -> ()
# CHECK: %[[C:.+]] = "tile.reshape"(%[[X]]) : (tensor<8xi32>) -> tensor<1x2x2x2x1xi32>
# CHECK-NEXT: %[[R1:.+]] = "tile.reduce"(%[[C]]) {axis = 1 : i32, {{.*}} -> tensor<1x2x2x1xi32>
# CHECK-NEXT: %[[E1:.+]] = "tile.expand_dims"(%[[R1]]) {axis = 1 : i32} : (tensor<1x2x2x1xi32>) -> tensor<1x1x2x2x1xi32>
# CHECK-NEXT: %[[B1:.+]] = "tile.broadcast"(%[[E1]]) : (tensor<1x1x2x2x1xi32>) -> tensor<1x2x2x2x1xi32>
# CHECK-NEXT: %[[S1:.+]] = arith.xori %[[C]], %[[B1]] : tensor<1x2x2x2x1xi32>
# CHECK-NEXT: %[[R2:.+]] = "tile.reduce"(%[[S1]]) {axis = 2 : i32, {{.*}} -> tensor<1x2x2x1xi32>
# CHECK-NEXT: %[[E2:.+]] = "tile.expand_dims"(%[[R2]]) {axis = 2 : i32}
# CHECK-NEXT: %[[B2:.+]] = "tile.broadcast"(%[[E2]])
# CHECK-NEXT: %[[S2:.+]] = arith.xori %[[S1]], %[[B2]] : tensor<1x2x2x2x1xi32>
# CHECK-NEXT: %[[R3:.+]] = "tile.reduce"(%[[S2]]) {axis = 3 : i32, {{.*}} -> tensor<1x2x2x1xi32>
# CHECK-NEXT: %[[E3:.+]] = "tile.expand_dims"(%[[R3]]) {axis = 3 : i32}
# CHECK-NEXT: %[[B3:.+]] = "tile.broadcast"(%[[E3]])
# CHECK-NEXT: %[[S3:.+]] = arith.xori %[[S2]], %[[B3]] : tensor<1x2x2x2x1xi32>
# CHECK-NEXT: %[[R:.+]] = "tile.reshape"(%[[S3]]) : (tensor<1x2x2x2x1xi32>) -> tensor<8xi32>
# CHECK-NEXT: "tile.store"(%{{.+}}, %[[R]])
# CHECK-NEXT: return
