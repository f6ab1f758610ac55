// RUN: tilework-opt %s --tilegpu-allocate-shared --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --tilegpu-allocate-shared --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD

// tile.histogram (tl.histogram) counts in shared memory: each thread zeroes its bins (64 bins
// on 128 threads: threads below 64), a barrier, one atomic add per element whose value is a
// bin (one unsigned compare) and whose mask bit is set, a barrier, then each thread reads the
// counts of its result elements.

// CHECK-LABEL: gpu.func @hist(
// CHECK-SAME: tilegpu.shared = 256 : i32
// CHECK: %[[TID:.+]] = arith.index_cast %thread_id_x : index to i32
// CHECK-NEXT: %[[SMEM:.+]] = llvm.mlir.addressof @tilework_smem : !llvm.ptr<3>
// CHECK-NEXT: %[[RI:.+]] = arith.andi %[[TID]], %c63_i32 : i32
// CHECK-NEXT: %[[M:.+]] = arith.cmpi slt, %[[TID]], %arg1 : i32
// CHECK-NEXT: %[[Z:.+]] = arith.cmpi ult, %[[TID]], %c64_i32 : i32
// CHECK-NEXT: scf.if %[[Z]] {
// CHECK-NEXT: %[[ZP:.+]] = llvm.getelementptr %[[SMEM]][%[[TID]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
// CHECK-NEXT: llvm.store %c0_i32, %[[ZP]] : i32, !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[IN:.+]] = arith.cmpi ult, %[[TID]], %c64_i32 : i32
// CHECK-NEXT: %[[OK:.+]] = arith.andi %[[IN]], %[[M]] : i1
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK-NEXT: %[[BP:.+]] = llvm.getelementptr %[[SMEM]][%[[TID]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
// CHECK-NEXT: llvm.atomicrmw add %[[BP]], %c1_i32 syncscope("block") monotonic {alignment = 4 : i64} : !llvm.ptr<3>, i32
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[RP:.+]] = llvm.getelementptr %[[SMEM]][%[[RI]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
// CHECK-NEXT: %[[C:.+]] = llvm.load %[[RP]] : !llvm.ptr<3> -> i32
// CHECK-NEXT: %[[GP:.+]] = llvm.getelementptr %arg0[%[[RI]]]
// CHECK-NEXT: llvm.store %[[C]], %[[GP]]
// CHECK-NEXT: gpu.return

// AMD-LABEL: gpu.func @hist(
// AMD: gpu.barrier
// AMD: llvm.atomicrmw add %{{.+}}, %c1_i32 syncscope("workgroup") monotonic {alignment = 4 : i64} : !llvm.ptr<3>, i32
// AMD: gpu.barrier
// AMD: llvm.load %{{.+}} : !llvm.ptr<3> -> i32

#L = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @hist(%y: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
    %x = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<128xi32, #L>
    %m = arith.cmpi slt, %x, %ns : tensor<128xi32, #L>
    %h = "tile.histogram"(%x, %m) {num_bins = 64 : i32, operandSegmentSizes = array<i32: 1, 1>} : (tensor<128xi32, #L>, tensor<128xi1, #L>) -> tensor<64xi32, #L>
    %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32, #L>
    %yp = "tile.splat"(%y) : (!tile.ptr<i32>) -> tensor<64x!tile.ptr<i32>, #L>
    %ya = "tile.addptr"(%yp, %r) : (tensor<64x!tile.ptr<i32>, #L>, tensor<64xi32, #L>) -> tensor<64x!tile.ptr<i32>, #L>
    "tile.store"(%ya, %h) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x!tile.ptr<i32>, #L>, tensor<64xi32, #L>) -> ()
    return
  }
}
