// BUG: layouts on block arguments are not verified.  tilework.dialects.verify checks the
// #tilegpu.blocked encoding of every op *result* (_check_layouts), never of block arguments,
// so a function (or loop body) argument with an invalid layout passes --verify-only, and the
// lowering then computes with it.  Expected: the same error as on an op result.

// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// CHECK: error: {{.*}}layout size_per_thread [3] must be powers of two
func.func @function_argument(%x: tensor<16xi32, #tilegpu.blocked<array<i32: 3>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>) {
  return
}

// -----

// CHECK-NEXT: error: {{.*}}layout order [1, 1] is not a permutation of 0..1
func.func @function_argument_2d(%x: tensor<16x16xi32, #tilegpu.blocked<array<i32: 1, 1>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 1>>>) {
  return
}
