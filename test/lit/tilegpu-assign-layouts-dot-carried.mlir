// RUN: tilework-opt %s --tilegpu-assign-layouts --target sm_90a --num-warps 8 | FileCheck %s

// Attention's key loop: the accumulator, started from zeros, is rescaled by a row factor of
// S = q k^T (a 128x64 wgmma: instruction N 64) before P v accumulates into it (128x128:
// instruction N 128).  It is carried in P v's layout from the start (`dot_carried`), so P v's
// result is what the loop yields (tilegpu-overlap-dots keeps that dot in flight across the
// back edge); the factor's broadcast is converted instead (equal maps: no instruction).  Taking
// the layout of its first reader, the rescale, would carry it in S's layout, with a
// conversion before P v and one of its result before the yield.
// CHECK-LABEL: func.func @key_loop
// CHECK: %[[INIT:.+]] = "tilegpu.convert_layout"(%cst{{.*}}) : (tensor<128x128xf32, #tilegpu.blocked<{{.*}}>>) -> tensor<128x128xf32, [[PV:#tilegpu.mma<3 : i32, array<i32: 8, 1>, array<i32: 64, 128, 16>>]]>
// CHECK: scf.for %{{.+}} iter_args(%[[ACC:[a-z0-9_]+]] = %[[INIT]]) -> (tensor<128x128xf32, [[PV]]>)
// CHECK: %[[S:.+]] = "tile.dot"{{.*}} -> tensor<128x64xf32, [[S_MMA:#tilegpu.mma<3 : i32, array<i32: 8, 1>, array<i32: 64, 64, 16>>]]>
// CHECK: %[[B:.+]] = "tile.broadcast"{{.*}} -> tensor<128x128xf32, [[S_MMA]]>
// CHECK-NEXT: %[[BC:.+]] = "tilegpu.convert_layout"(%[[B]]) : (tensor<128x128xf32, [[S_MMA]]>) -> tensor<128x128xf32, [[PV]]>
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[ACC]], %[[BC]] : tensor<128x128xf32, [[PV]]>
// CHECK: %[[O:.+]] = "tile.dot"(%{{.+}}, %{{.+}}, %[[R]]) {{.*}} -> tensor<128x128xf32, [[PV]]>
// CHECK-NEXT: scf.yield %[[O]] : tensor<128x128xf32, [[PV]]>
module {
  func.func @key_loop(%q: tensor<128x128xf16>, %k: tensor<128x64xf16>, %v: tensor<64x128xf16>, %n: i32) -> tensor<128x128xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zs = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
    %zacc = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zacc) -> (tensor<128x128xf32>) : i32 {
      %s = "tile.dot"(%q, %k, %zs) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<128x128xf16>, tensor<128x64xf16>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %m = "tile.reduce"(%s) {axis = 1 : i32, combine = @max, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<128x64xf32>) -> tensor<128xf32>
      %a = math.exp2 %m : tensor<128xf32>
      %e = "tile.expand_dims"(%a) {axis = 1 : i32} : (tensor<128xf32>) -> tensor<128x1xf32>
      %b = "tile.broadcast"(%e) : (tensor<128x1xf32>) -> tensor<128x128xf32>
      %sc = arith.mulf %acc, %b : tensor<128x128xf32>
      %p = arith.truncf %s : tensor<128x64xf32> to tensor<128x64xf16>
      %o = "tile.dot"(%p, %v, %sc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<128x64xf16>, tensor<64x128xf16>, tensor<128x128xf32>) -> tensor<128x128xf32>
      scf.yield %o : tensor<128x128xf32>
    }
    return %r : tensor<128x128xf32>
  }
  func.func private @max(%x: f32, %y: f32) -> f32 {
    %z = arith.maxnumf %x, %y : f32
    return %z : f32
  }
}
