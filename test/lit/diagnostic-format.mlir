// BUG: tilework-opt documents errors as `<loc>: error: <msg>` (the MLIR convention that editors
// and lit tests match), and errors from MLIR's own verifier come out that way, but errors of
// tilework.dialects.verify come out as `error: <loc>: <msg>`: run_chunk prints
// f"error: {e}" and the VerificationError's text already starts with the location.

// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// The IRDL error (from MLIR) has the documented form...
// CHECK: {{^}}loc({{.+}}): error: expected 'i32' but got 'i64'
func.func @irdl_error() {
  %0 = "tile.get_program_id"() {axis = 0 : i32} : () -> i64
  return
}

// -----

// ...and so should the tile verifier's.
// CHECK-NEXT: {{^}}loc({{.+}}): error: 'tile.load' op load mask must be i1, got i8
func.func @verifier_error(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<16xi8>) {
  %v = "tile.load"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<16xi8>) -> tensor<16xf32>
  return
}
