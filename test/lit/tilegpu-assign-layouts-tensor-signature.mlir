// BUG: tilegpu-assign-layouts (and the axis analysis it runs) mishandle functions whose
// signature has tiles.  The frontend only emits kernels with scalar arguments (nested @jit
// functions are inlined), but tilework-opt runs the passes on any kernel it is given:
// * a rank-2 tensor argument is seeded with rank-1 axis info: IndexError (tuple index out of
//   range) as soon as an op combines it with a rank-2 tile;
// * a tensor argument of a rank that no op result has keeps no layout (an earlier version
//   raised KeyError), so the function is left half in the tile stage;
// * the entry block's arguments and the returned values are retyped, but the function_type is
//   not: "type of return operand 0 (...) doesn't match function result type".
// Expected: the signature carries the layouts like every other tile.

// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --tilegpu-vector-width | FileCheck %s

// CHECK-LABEL: func.func @rank2_tensor_argument(
// CHECK-SAME: tensor<32x64xi32, #tilegpu.blocked<
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: return
func.func @rank2_tensor_argument(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %off: tensor<32x64xi32>) attributes {tile.kernel} {
  %ps = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<32x64x!tile.ptr<f32>>
  %pa = "tile.addptr"(%ps, %off) : (tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>) -> tensor<32x64x!tile.ptr<f32>>
  %v = "tile.load"(%pa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x64x!tile.ptr<f32>>) -> tensor<32x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @tensor_argument_only(
// CHECK-SAME: tensor<128xf32, #tilegpu.blocked<
// CHECK: return
func.func @tensor_argument_only(%x: tensor<128xf32>) attributes {tile.kernel} {
  return
}

// -----

// CHECK-LABEL: func.func @tensor_result(
// CHECK-SAME: -> tensor<128xf32, #tilegpu.blocked<
// CHECK: return %{{.+}} : tensor<128xf32, #tilegpu.blocked<
func.func @tensor_result(%x: f32) -> tensor<128xf32> attributes {tile.kernel} {
  %s = "tile.splat"(%x) : (f32) -> tensor<128xf32>
  return %s : tensor<128xf32>
}
