// RUN: tilework-opt %s --split-input-file --tile-cse | FileCheck %s

// tile-cse: MLIR's cse leaves IRDL ops alone (their effects are unknown); this pass merges the
// tile ops declared pure.

// Identical pure tile ops (same name, operands, attributes, result types) merge into the first.
// CHECK-LABEL: func.func @merges_identical_pure_ops
// CHECK-NEXT: %[[R:.+]] = "tile.make_range"() {end = 64 : i32, start = 0 : i32}
// CHECK-NEXT: %[[S:.+]] = "tile.splat"(%arg0)
// CHECK-NEXT: %[[A:.+]] = "tile.addptr"(%[[S]], %[[R]])
// CHECK-NEXT: return %[[R]], %[[R]], %[[A]], %[[A]] :
func.func @merges_identical_pure_ops(%p: !tile.ptr<f32>) -> (tensor<64xi32>, tensor<64xi32>, tensor<64x!tile.ptr<f32>>, tensor<64x!tile.ptr<f32>>) {
  %r0 = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
  %r1 = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
  %s0 = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<64x!tile.ptr<f32>>
  %s1 = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<64x!tile.ptr<f32>>
  %a0 = "tile.addptr"(%s0, %r0) : (tensor<64x!tile.ptr<f32>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f32>>
  %a1 = "tile.addptr"(%s1, %r1) : (tensor<64x!tile.ptr<f32>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f32>>
  return %r0, %r1, %a0, %a1 : tensor<64xi32>, tensor<64xi32>, tensor<64x!tile.ptr<f32>>, tensor<64x!tile.ptr<f32>>
}

// -----

// Different attributes stay apart, and loads (which read memory) are never merged.
// CHECK-LABEL: func.func @keeps_different_attributes_and_loads
// CHECK-NEXT: %[[R0:.+]] = "tile.make_range"() {end = 64 : i32, start = 0 : i32}
// CHECK-NEXT: %[[R1:.+]] = "tile.make_range"() {end = 128 : i32, start = 64 : i32}
// CHECK-NEXT: "tile.splat"
// CHECK-NEXT: %[[A:.+]] = "tile.addptr"
// CHECK-NEXT: %[[L0:.+]] = "tile.load"(%[[A]])
// CHECK-NEXT: %[[L1:.+]] = "tile.load"(%[[A]])
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[L0]], %[[L1]] :
func.func @keeps_different_attributes_and_loads(%p: !tile.ptr<f32>) -> (tensor<64xi32>, tensor<64xi32>, tensor<64xf32>, tensor<64xf32>) {
  %r0 = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
  %r1 = "tile.make_range"() {start = 64 : i32, end = 128 : i32} : () -> tensor<64xi32>
  %s = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<64x!tile.ptr<f32>>
  %a = "tile.addptr"(%s, %r0) : (tensor<64x!tile.ptr<f32>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f32>>
  %l0 = "tile.load"(%a) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x!tile.ptr<f32>>) -> tensor<64xf32>
  %l1 = "tile.load"(%a) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x!tile.ptr<f32>>) -> tensor<64xf32>
  return %r0, %r1, %l0, %l1 : tensor<64xi32>, tensor<64xi32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// An op inside a loop body merges with an identical one before the loop (it dominates); the
// loop's own values do not leak out: the range after the loop merges with the first one.
// CHECK-LABEL: func.func @outer_values_reach_into_regions
// CHECK: %[[R:.+]] = "tile.make_range"() {end = 16 : i32, start = 0 : i32}
// CHECK-NEXT: %[[F:.+]] = scf.for {{.*}} iter_args(%[[ACC:.+]] = %[[R]])
// CHECK-NEXT: arith.addi %[[ACC]], %[[R]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: arith.addi %[[F]], %[[R]]
// CHECK-NOT: tile.make_range
func.func @outer_values_reach_into_regions(%p: !tile.ptr<i32>, %n: i32) -> tensor<16xi32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r0 = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %r0) -> (tensor<16xi32>) : i32 {
    %r1 = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
    %s = arith.addi %a, %r1 : tensor<16xi32>
    scf.yield %s : tensor<16xi32>
  }
  %r2 = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
  %t = arith.addi %acc, %r2 : tensor<16xi32>
  return %t : tensor<16xi32>
}
