// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed tilegpu IR, one error per chunk: invalid #tilegpu layouts on tile types
// and tilegpu.convert_layout that changes more than the layout.

// Blocked layouts: every size is a power of two.
// CHECK: error: {{.*}}'tile.make_range' op layout size_per_thread [3] must be powers of two
func.func @spt_not_pow2() {
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32, #tilegpu.blocked<array<i32: 3>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.make_range' op layout threads_per_warp [24] must be powers of two
func.func @tpw_not_pow2() {
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 24>, array<i32: 4>, array<i32: 0>>>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.make_range' op layout warps_per_cta [0] must be powers of two
func.func @wpc_zero() {
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 0>, array<i32: 0>>>
  return
}

// -----

// order is a permutation of the dimensions.
// CHECK-NEXT: error: {{.*}}'tile.splat' op layout order [1, 1] is not a permutation of 0..1
func.func @order_not_perm(%x: i32) {
  %s = "tile.splat"(%x) : (i32) -> tensor<16x16xi32, #tilegpu.blocked<array<i32: 1, 1>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 1>>>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.splat' op layout order [2, 0] is not a permutation of 0..1
func.func @order_out_of_range(%x: i32) {
  %s = "tile.splat"(%x) : (i32) -> tensor<16x16xi32, #tilegpu.blocked<array<i32: 1, 1>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 2, 0>>>
  return
}

// -----

// The layout has the rank of the tile.
// CHECK-NEXT: error: {{.*}}'tile.splat' op layout of rank 1 on a tile of rank 2
func.func @rank_mismatch(%x: i32) {
  %s = "tile.splat"(%x) : (i32) -> tensor<16x16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
  return
}

// -----

// All four arrays have one length.
// CHECK-NEXT: error: {{.*}}'tile.splat' op malformed #tilegpu.blocked attribute: #tilegpu.blocked<array<i32: 1, 1>, array<i32: 32>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @lengths_mismatch(%x: i32) {
  %s = "tile.splat"(%x) : (i32) -> tensor<16x16xi32, #tilegpu.blocked<array<i32: 1, 1>, array<i32: 32>, array<i32: 4, 1>, array<i32: 1, 0>>>
  return
}

// -----

// The arrays are i32 arrays.
// CHECK-NEXT: error: {{.*}}'tile.splat' op malformed #tilegpu.blocked attribute: #tilegpu.blocked<array<i64: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
func.func @i64_arrays(%x: i32) {
  %s = "tile.splat"(%x) : (i32) -> tensor<16xi32, #tilegpu.blocked<array<i64: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
  return
}

// -----

// IRDL-level: #tilegpu.blocked has four dense-array parameters.
// CHECK-NEXT: error: {{.*}}expected 4 type arguments, but had 3
func.func @three_params(%x: i32) {
  %s = "tile.splat"(%x) : (i32) -> tensor<16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>>>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}expected base attribute 'builtin.dense_array' but got 'builtin.integer'
func.func @not_array(%x: i32) {
  %s = "tile.splat"(%x) : (i32) -> tensor<16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, 0 : i32>>
  return
}

// -----

// Tile encodings are tilegpu layouts.
// CHECK-NEXT: error: {{.*}}'tile.splat' op unknown layout encoding: "foo"
func.func @other_encoding(%x: i32) {
  %s = "tile.splat"(%x) : (i32) -> tensor<16xi32, "foo">
  return
}

// -----

// convert_layout changes the layout only.
// CHECK-NEXT: error: {{.*}}'tilegpu.convert_layout' op convert_layout changes only the layout
func.func @convert_shape(%x: tensor<16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>) {
  %c = "tilegpu.convert_layout"(%x) : (tensor<16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>) -> tensor<32xi32, #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.convert_layout' op convert_layout changes only the layout
func.func @convert_elem(%x: tensor<16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>) {
  %c = "tilegpu.convert_layout"(%x) : (tensor<16xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>) -> tensor<16xf32, #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
  return
}

// -----

// IRDL-level: convert_layout takes a tensor.
// CHECK-NEXT: error: {{.*}}expected base type 'builtin.tensor' but got 'builtin.integer'
func.func @convert_scalar(%x: i32) {
  %c = "tilegpu.convert_layout"(%x) : (i32) -> tensor<16xi32>
  return
}

// -----

// An MFMA layout has 64 lanes: not for a module of 32-lane warps.
// CHECK-NEXT: error: {{.*}}'tile.splat' op layout #tilegpu.mfma<array<i32: 2, 2>, array<i32: 32, 32>, false> has 64 lanes, the target's warps have 32
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @mfma_on_32_lanes(%x: f32) {
    %s = "tile.splat"(%x) : (f32) -> tensor<64x64xf32, #tilegpu.mfma<array<i32: 2, 2>, array<i32: 32, 32>, false>>
    return
  }
}

// -----

// wgmma reads B from shared memory: no register layout for it.
// CHECK-NEXT: error: {{.*}}'tile.splat' op wgmma reads operand B from shared memory (#tilegpu.nvmma_shared), not from registers
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @wgmma_b_in_registers(%x: f16) {
    %s = "tile.splat"(%x) : (f16) -> tensor<32x64xf16, #tilegpu.dot_operand<1 : i32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>, 2 : i32>>
    return
  }
}

// -----

// mma v2 is m16n8 per warp.
// CHECK-NEXT: error: {{.*}}'tile.splat' op mma v2 instr_shape [16, 16] must be [16, 8]
func.func @mma_instr(%x: f32) {
  %s = "tile.splat"(%x) : (f32) -> tensor<32x32xf32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 16>>>
  return
}

// Nothing else: one error per chunk, and no chunk printed as valid IR.
// CHECK-NOT: {{.+}}
