// RUN: tilework-opt %s --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD

// tile.debug_barrier (tl.debug_barrier) is one gpu.barrier where it stands, between the load
// and the (thread 0's) store, on both backends.

// CHECK-LABEL: gpu.func @barrier(
// CHECK: %[[V:.+]] = llvm.load %arg0 {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[FIRST:.+]] = arith.cmpi eq,
// CHECK-NEXT: %[[W:.+]] = llvm.bitcast %[[V]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.*}}"@$0 st.global.b32 [$1], $2;"{{.*}} %[[FIRST]], %arg1, %[[W]]
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// AMD-LABEL: gpu.func @barrier(
// AMD: %[[V:.+]] = llvm.load %arg0
// AMD-NEXT: gpu.barrier
// AMD-NEXT: %[[FIRST:.+]] = arith.cmpi eq,
// AMD-NEXT: scf.if %[[FIRST]] {
// AMD-NEXT: llvm.store %[[V]], %arg1
// AMD-NOT: gpu.barrier
// AMD: gpu.return

module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @barrier(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) attributes {tile.kernel} {
    %v = "tile.load"(%x) {operandSegmentSizes = array<i32: 1, 0, 0>} : (!tile.ptr<f32>) -> f32
    "tile.debug_barrier"() : () -> ()
    "tile.store"(%y, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
    return
  }
}
