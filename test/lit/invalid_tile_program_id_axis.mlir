// BUG: the axis of tile.get_program_id / tile.get_num_programs is not range-checked.  A grid
// has 3 axes, but axis = 3 verifies, and tilegpu-to-llvm then fails with a bare
// "IndexError: tuple index out of range" (no location) when it picks gpu.block_id's dimension.
// Expected: a verifier error naming the op and its axis.

// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// CHECK: error: {{.*}}'tile.get_program_id' op {{.*}}axis
func.func @program_id_axis_3() {
  %0 = "tile.get_program_id"() {axis = 3 : i32} : () -> i32
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.get_num_programs' op {{.*}}axis
func.func @num_programs_negative_axis() {
  %0 = "tile.get_num_programs"() {axis = -1 : i32} : () -> i32
  return
}
