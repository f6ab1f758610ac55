// RUN: tilework-opt %s --tilegpu-allocate-shared --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --tilegpu-allocate-shared --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD

// tile.gather (tl.gather) along axis 1 of a 16x8 tile: src is stored row-major in shared
// memory (thread t holds row t/8, column t%8: index 8*row + col), a barrier, then each result
// element loads src at its own row and the column its index names (here index = row & 7):
// 8*row + index.

// CHECK-LABEL: gpu.func @gather(
// CHECK-SAME: tilegpu.shared = 512 : i32
// CHECK: %[[COL:.+]] = arith.andi %[[TID:.+]], %c7_i32 : i32
// CHECK-NEXT: %[[ROW:.+]] = arith.shrui %[[TID]], %c3_i32 : i32
// CHECK-NEXT: %[[SMEM:.+]] = llvm.mlir.addressof @tilework_smem : !llvm.ptr<3>
// CHECK: %[[IDX:.+]] = arith.andi %[[ROW]], %{{.+}} : i32
// CHECK-NEXT: %[[R8:.+]] = arith.muli %[[ROW]], %c8_i32 : i32
// CHECK-NEXT: %[[AT:.+]] = arith.addi %[[R8]], %[[COL]] : i32
// CHECK-NEXT: %[[SP:.+]] = llvm.getelementptr %[[SMEM]][%[[AT]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
// CHECK-NEXT: llvm.store %[[COL]], %[[SP]] : i32, !llvm.ptr<3>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[R8B:.+]] = arith.muli %[[ROW]], %c8_i32 : i32
// CHECK-NEXT: %[[FROM:.+]] = arith.addi %[[R8B]], %[[IDX]] : i32
// CHECK-NEXT: %[[LP:.+]] = llvm.getelementptr %[[SMEM]][%[[FROM]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
// CHECK-NEXT: %[[V:.+]] = llvm.load %[[LP]] : !llvm.ptr<3> -> i32
// CHECK-NEXT: %[[GP:.+]] = llvm.getelementptr %arg0[%[[ROW]]]
// CHECK-NEXT: llvm.store %[[V]], %[[GP]]
// CHECK-NEXT: gpu.return

// AMD-LABEL: gpu.func @gather(
// AMD: llvm.store %{{.+}}, %{{.+}} : i32, !llvm.ptr<3>
// AMD-NEXT: gpu.barrier
// AMD: llvm.load %{{.+}} : !llvm.ptr<3> -> i32

#L = #tilegpu.blocked<array<i32: 1, 1>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.slice<0 : i32, #L>
#R = #tilegpu.slice<1 : i32, #L>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @gather(%y: !tile.ptr<i32>) attributes {tile.kernel} {
    %c = "tile.make_range"() {start = 0 : i32, end = 8 : i32} : () -> tensor<8xi32, #S>
    %ce = "tile.expand_dims"(%c) {axis = 0 : i32} : (tensor<8xi32, #S>) -> tensor<1x8xi32, #L>
    %src = "tile.broadcast"(%ce) : (tensor<1x8xi32, #L>) -> tensor<16x8xi32, #L>
    %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32, #R>
    %re = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<16xi32, #R>) -> tensor<16x1xi32, #L>
    %idx = "tile.broadcast"(%re) : (tensor<16x1xi32, #L>) -> tensor<16x8xi32, #L>
    %seven = arith.constant dense<7> : tensor<16x8xi32, #L>
    %i = arith.andi %idx, %seven : tensor<16x8xi32, #L>
    %g = "tile.gather"(%src, %i) {axis = 1 : i32} : (tensor<16x8xi32, #L>, tensor<16x8xi32, #L>) -> tensor<16x8xi32, #L>
    %yp = "tile.splat"(%y) : (!tile.ptr<i32>) -> tensor<16x8x!tile.ptr<i32>, #L>
    %ya = "tile.addptr"(%yp, %idx) : (tensor<16x8x!tile.ptr<i32>, #L>, tensor<16x8xi32, #L>) -> tensor<16x8x!tile.ptr<i32>, #L>
    "tile.store"(%ya, %g) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x8x!tile.ptr<i32>, #L>, tensor<16x8xi32, #L>) -> ()
    return
  }
}
