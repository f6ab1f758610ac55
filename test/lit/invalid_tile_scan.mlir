// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed tile.scan ops (dialects/verify.py), one per chunk.

// CHECK: error: {{.*}}'tile.scan' op scan of tensor<16xf32> cannot produce tensor<16xf16>
func.func @scan_wrong_result_type(%x: tensor<16xf32>) {
  %s = "tile.scan"(%x) {axis = 0 : i32, reverse = 0 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<16xf32>) -> tensor<16xf16>
  return
}
func.func private @add(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  return %s : f32
}

// -----

// CHECK: error: {{.*}}'tile.scan' op scan axis 1 is out of range for a tile of rank 1
func.func @scan_bad_axis(%x: tensor<16xf32>) {
  %s = "tile.scan"(%x) {axis = 1 : i32, reverse = 0 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<16xf32>) -> tensor<16xf32>
  return
}
func.func private @add(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  return %s : f32
}

// -----

// CHECK: error: {{.*}}'tile.scan' op scan operands must have the same shape
func.func @scan_shapes(%x: tensor<16xf32>, %y: tensor<32xi32>) {
  %s:2 = "tile.scan"(%x, %y) {axis = 0 : i32, reverse = 0 : i32, combine = @pair, operandSegmentSizes = array<i32: 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<16xf32>, tensor<32xi32>) -> (tensor<16xf32>, tensor<32xi32>)
  return
}
func.func private @pair(%a: f32, %b: i32, %c: f32, %d: i32) -> (f32, i32) {
  return %c, %d : f32, i32
}

// -----

// CHECK: error: {{.*}}'tile.scan' op scan reverse must be 0 or 1
func.func @scan_bad_reverse(%x: tensor<16xf32>) {
  %s = "tile.scan"(%x) {axis = 0 : i32, reverse = 2 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<16xf32>) -> tensor<16xf32>
  return
}
func.func private @add(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  return %s : f32
}
