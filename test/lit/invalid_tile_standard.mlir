// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed tile.histogram and tile.gather ops (tl.histogram, tl.gather), one per chunk, each rejected with one error naming what is wrong.

// CHECK: error: {{.*}}'tile.histogram' op histogram input must be a 1-D tile of i32 or i64, got tensor<8x8xi32>
func.func @two_dims(%x: tensor<8x8xi32>) {
  %h = "tile.histogram"(%x) {num_bins = 16 : i32, operandSegmentSizes = array<i32: 1, 0>} : (tensor<8x8xi32>) -> tensor<16xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.histogram' op histogram input must be a 1-D tile of i32 or i64, got tensor<8xf32>
func.func @floats(%x: tensor<8xf32>) {
  %h = "tile.histogram"(%x) {num_bins = 16 : i32, operandSegmentSizes = array<i32: 1, 0>} : (tensor<8xf32>) -> tensor<16xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.histogram' op histogram mask must be i1 of the input's shape, got tensor<4xi1>
func.func @mask_shape(%x: tensor<8xi32>, %m: tensor<4xi1>) {
  %h = "tile.histogram"(%x, %m) {num_bins = 16 : i32, operandSegmentSizes = array<i32: 1, 1>} : (tensor<8xi32>, tensor<4xi1>) -> tensor<16xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.histogram' op histogram result must be tensor<16xi32>, got tensor<8xi32>
func.func @result_bins(%x: tensor<8xi32>) {
  %h = "tile.histogram"(%x) {num_bins = 16 : i32, operandSegmentSizes = array<i32: 1, 0>} : (tensor<8xi32>) -> tensor<8xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.gather' op gather index shape [4, 4] must match src shape [8, 8] except along axis 0
func.func @gather_shape(%s: tensor<8x8xf32>, %i: tensor<4x4xi32>) {
  %g = "tile.gather"(%s, %i) {axis = 0 : i32} : (tensor<8x8xf32>, tensor<4x4xi32>) -> tensor<4x4xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.gather' op gather result must have the index's shape and src's elements, got tensor<8x8xf16>
func.func @gather_result(%s: tensor<8x8xf32>, %i: tensor<8x8xi64>) {
  %g = "tile.gather"(%s, %i) {axis = 1 : i32} : (tensor<8x8xf32>, tensor<8x8xi64>) -> tensor<8x8xf16>
  return
}

// Nothing else: one error per chunk, and no chunk printed as valid IR.
// CHECK-NOT: {{.+}}
