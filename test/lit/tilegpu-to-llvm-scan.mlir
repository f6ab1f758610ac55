// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s --check-prefix=LOWERED

// tile.scan in tilegpu-to-llvm (lowering/rules/scan.py): each thread scans its elements along
// the axis in order, the thread totals go through an inclusive Hillis-Steele scan across the
// distinct lanes (gpu.shuffle up, `down` for reverse; a lane with no lane at the distance keeps
// its value through a select), one more shuffle gives each lane the exclusive prefix; the last
// lane of each warp stores the warp total in shared memory, a barrier (another one before
// the stores only where an earlier user of the buffer may still be reading), and every
// thread combines the totals of the warps before its own, in order.  The combine function is
// inlined (earlier elements on the left) and disappears with the rest of the tile stage.

// LOWERED-NOT: {{func\.func|"tile\.|!tile\.ptr|tensor<|@add|@mul|@affine}}

// 256 fp32, 2 contiguous elements a thread, 4 warps of 32 lanes: one repetition.
// CHECK-LABEL: gpu.func @cumsum_256(
// CHECK: %[[A:.+]] = llvm.load %{{.+}} : !llvm.ptr<1> -> f32
// CHECK: %[[B:.+]] = llvm.load %{{.+}} : !llvm.ptr<1> -> f32
// CHECK: %[[T:.+]] = arith.addf %[[A]], %[[B]] : f32
// CHECK: %[[LANE:.+]] = arith.remui %{{.+}}, %c32_i32 : i32
// CHECK: %[[OK1:.+]] = arith.cmpi uge, %[[LANE]], %c1_i32 : i32
// CHECK: %[[FIRST:.+]] = arith.cmpi ne, %[[LANE]], %c0_i32 : i32
// CHECK: %[[S1:.+]], %{{.+}} = gpu.shuffle up %[[T]], %c1_i32, %c32_i32 : f32
// CHECK-NEXT: %[[C1:.+]] = arith.addf %[[S1]], %[[T]] : f32
// CHECK-NEXT: %[[I1:.+]] = arith.select %[[OK1]], %[[C1]], %[[T]] : f32
// CHECK-NEXT: gpu.shuffle up %[[I1]], %c2_i32, %c32_i32 : f32
// CHECK: gpu.shuffle up %{{.+}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle up %{{.+}}, %c8_i32, %c32_i32 : f32
// CHECK: gpu.shuffle up %{{.+}}, %c16_i32, %c32_i32 : f32
// CHECK: %[[INCL:.+]] = arith.select
// CHECK-NEXT: %[[EXCL:.+]], %{{.+}} = gpu.shuffle up %[[INCL]], %c1_i32, %c32_i32 : f32
// CHECK-NOT: gpu.barrier
// CHECK: %[[LAST:.+]] = arith.cmpi eq, %{{.+}}, %c31_i32 : i32
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK: llvm.store %[[INCL]], %{{.+}} : f32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-COUNT-3: llvm.load %{{.+}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load %{{.+}} : !llvm.ptr<3>
// CHECK: %[[PRE:.+]] = arith.select %[[FIRST]],
// CHECK: %[[E0:.+]] = arith.addf %[[PRE]], %[[A]] : f32
// CHECK: %[[E1:.+]] = arith.addf %[[PRE]], %[[T]] : f32
// CHECK: gpu.return

#L = #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @cumsum_256(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xi32, #L>) -> tensor<256x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<256x!tile.ptr<f32>, #L>) -> tensor<256xf32, #L>
    %s = "tile.scan"(%v) {axis = 0 : i32, reverse = 0 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<256xf32, #L>) -> tensor<256xf32, #L>
    %op = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>, #L>
    %oa = "tile.addptr"(%op, %r) : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xi32, #L>) -> tensor<256x!tile.ptr<f32>, #L>
    "tile.store"(%oa, %s) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xf32, #L>) -> ()
    return
  }
  func.func private @add(%a: f32, %b: f32) -> f32 {
    %s = arith.addf %a, %b : f32
    return %s : f32
  }
}

// -----

// A reverse scan of 16 elements over 128 threads: 16 distinct lanes (the others hold copies),
// shuffles down by 1, 2, 4 and 8 only, mirrored positions, no warp step and no shared memory.
// CHECK-LABEL: gpu.func @reverse_copies(
// CHECK-SAME: tilegpu.shared = 0 : i32
// CHECK: %[[POS:.+]] = arith.subi %c15_i32, %{{.+}} : i32
// CHECK-NEXT: arith.cmpi uge, %[[POS]], %c1_i32 : i32
// CHECK: gpu.shuffle down %{{.+}}, %c1_i32, %c32_i32 : i32
// CHECK-NEXT: arith.muli
// CHECK: gpu.shuffle down %{{.+}}, %c2_i32, %c32_i32 : i32
// CHECK: gpu.shuffle down %{{.+}}, %c4_i32, %c32_i32 : i32
// CHECK: gpu.shuffle down %{{.+}}, %c8_i32, %c32_i32 : i32
// CHECK-NOT: %c16_i32, %c32_i32
// CHECK: gpu.shuffle down %{{.+}}, %c1_i32, %c32_i32 : i32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

#L = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @reverse_copies(%x: !tile.ptr<i32>, %o: !tile.ptr<i32>) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<i32>) -> tensor<16x!tile.ptr<i32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<16x!tile.ptr<i32>, #L>, tensor<16xi32, #L>) -> tensor<16x!tile.ptr<i32>, #L>
    %v = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!tile.ptr<i32>, #L>) -> tensor<16xi32, #L>
    %s = "tile.scan"(%v) {axis = 0 : i32, reverse = 1 : i32, combine = @mul, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<16xi32, #L>) -> tensor<16xi32, #L>
    %op = "tile.splat"(%o) : (!tile.ptr<i32>) -> tensor<16x!tile.ptr<i32>, #L>
    %oa = "tile.addptr"(%op, %r) : (tensor<16x!tile.ptr<i32>, #L>, tensor<16xi32, #L>) -> tensor<16x!tile.ptr<i32>, #L>
    "tile.store"(%oa, %s) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<i32>, #L>, tensor<16xi32, #L>) -> ()
    return
  }
  func.func private @mul(%a: i32, %b: i32) -> i32 {
    %s = arith.muli %a, %b : i32
    return %s : i32
  }
}

// -----

// 64 elements on one warp: two repetitions.  The first repetition's total reaches every lane
// from the last one (gpu.shuffle idx) and is the carry of the second.
// CHECK-LABEL: gpu.func @reps_one_warp(
// CHECK: gpu.shuffle up %{{.+}}, %c16_i32, %c32_i32 : i32
// CHECK: %[[INCL0:.+]] = arith.select
// CHECK-NEXT: %[[EX0:.+]], %{{.+}} = gpu.shuffle up %[[INCL0]], %c1_i32, %c32_i32 : i32
// CHECK: gpu.shuffle up %{{.+}}, %c16_i32, %c32_i32 : i32
// CHECK: %[[INCL1:.+]] = arith.select
// CHECK-NEXT: %[[EX1:.+]], %{{.+}} = gpu.shuffle up %[[INCL1]], %c1_i32, %c32_i32 : i32
// CHECK: %[[SRC:.+]] = arith.addi
// CHECK-NEXT: %[[TOT0:.+]], %{{.+}} = gpu.shuffle idx %[[INCL0]], %[[SRC]], %c32_i32 : i32
// CHECK-NOT: gpu.shuffle
// CHECK: arith.addi %[[TOT0]], %[[EX1]] : i32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

#L = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 1>, array<i32: 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @reps_one_warp(%o: !tile.ptr<i32>) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32, #L>
    %s = "tile.scan"(%r) {axis = 0 : i32, reverse = 0 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<64xi32, #L>) -> tensor<64xi32, #L>
    %op = "tile.splat"(%o) : (!tile.ptr<i32>) -> tensor<64x!tile.ptr<i32>, #L>
    %oa = "tile.addptr"(%op, %r) : (tensor<64x!tile.ptr<i32>, #L>, tensor<64xi32, #L>) -> tensor<64x!tile.ptr<i32>, #L>
    "tile.store"(%oa, %s) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x!tile.ptr<i32>, #L>, tensor<64xi32, #L>) -> ()
    return
  }
  func.func private @add(%a: i32, %b: i32) -> i32 {
    %s = arith.addi %a, %b : i32
    return %s : i32
  }
}

// -----

// Two tiles scanned together with a non-commutative combine (affine maps), along an axis
// held entirely by each thread (4 repetitions of 1 element): no shuffle, no barrier; the
// carry is always the left operand.
// CHECK-LABEL: gpu.func @in_thread_pair(
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: %[[P:.+]] = arith.mulf %[[A:.+]], %[[C:.+]] : f32
// CHECK-NEXT: %[[Q:.+]] = arith.mulf %[[B:.+]], %[[C]] : f32
// CHECK-NEXT: arith.addf %[[Q]], %[[B]] : f32
// CHECK: gpu.return

#L = #tilegpu.blocked<array<i32: 1, 1>, array<i32: 1, 32>, array<i32: 1, 4>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @in_thread_pair(%o: !tile.ptr<f32>) attributes {tile.kernel} {
    %a = arith.constant dense<2.0> : tensor<4x128xf32, #L>
    %b = arith.constant dense<1.0> : tensor<4x128xf32, #L>
    %s:2 = "tile.scan"(%a, %b) {axis = 0 : i32, reverse = 0 : i32, combine = @affine, operandSegmentSizes = array<i32: 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<4x128xf32, #L>, tensor<4x128xf32, #L>) -> (tensor<4x128xf32, #L>, tensor<4x128xf32, #L>)
    return
  }
  func.func private @affine(%a: f32, %b: f32, %c: f32, %d: f32) -> (f32, f32) {
    %ac = arith.mulf %a, %c : f32
    %bc = arith.mulf %b, %c : f32
    %r = arith.addf %bc, %d : f32
    return %ac, %r : f32, f32
  }
}

// -----

// Warps of 64 lanes (gfx942): offsets up to 32, the warp's last lane is 63.
// AMD-LABEL: gpu.func @wave64(
// AMD: gpu.shuffle up %{{.+}}, %c1_i32, %c64_i32 : i32
// AMD: gpu.shuffle up %{{.+}}, %c32_i32, %c64_i32 : i32
// AMD: gpu.shuffle up %{{.+}}, %c1_i32, %c64_i32 : i32
// AMD-NOT: gpu.barrier
// AMD: arith.cmpi eq, %{{.+}}, %c63_i32 : i32
// AMD: llvm.store %{{.+}}, %{{.+}} : i32, !llvm.ptr<3>
// AMD: gpu.barrier
// AMD: llvm.load %{{.+}} : !llvm.ptr<3> -> i32
// AMD: gpu.return

#L = #tilegpu.blocked<array<i32: 1>, array<i32: 64>, array<i32: 2>, array<i32: 0>>
module attributes {tilegpu.num_warps = 2 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @wave64(%o: !tile.ptr<i32>) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #L>
    %s = "tile.scan"(%r) {axis = 0 : i32, reverse = 0 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<128xi32, #L>) -> tensor<128xi32, #L>
    %op = "tile.splat"(%o) : (!tile.ptr<i32>) -> tensor<128x!tile.ptr<i32>, #L>
    %oa = "tile.addptr"(%op, %r) : (tensor<128x!tile.ptr<i32>, #L>, tensor<128xi32, #L>) -> tensor<128x!tile.ptr<i32>, #L>
    "tile.store"(%oa, %s) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<i32>, #L>, tensor<128xi32, #L>) -> ()
    return
  }
  func.func private @add(%a: i32, %b: i32) -> i32 {
    %s = arith.addi %a, %b : i32
    return %s : i32
  }
}
