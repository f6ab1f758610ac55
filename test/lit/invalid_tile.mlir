// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed tile ops, one per chunk: each chunk fails on its own, with one error naming the op
// and what is wrong.  Most messages come from tilework.dialects.verify (relations IRDL cannot
// express); the last chunks are rejected by the IRDL definitions when MLIR parses them.
// `error: {{.*}}` accepts both `<loc>: error: <msg>` and the `error: <loc>: <msg>` that
// verifier errors print today (see diagnostic-format.mlir).

// The loaded elements must be the pointee type.
// CHECK: error: {{.*}}'tile.load' op load of !tile.ptr<f32> must have elements of f32, got f16
func.func @load_wrong_result_type(%p: tensor<16x!tile.ptr<f32>>) {
  %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!tile.ptr<f32>>) -> tensor<16xf16>
  return
}

// -----

// A tile of pointers loads a tile of the same shape.
// CHECK-NEXT: error: {{.*}}'tile.load' op load pointer shape [16] differs from value shape [32]
func.func @load_wrong_result_shape(%p: tensor<16x!tile.ptr<f32>>) {
  %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!tile.ptr<f32>>) -> tensor<32xf32>
  return
}

// -----

// libdevice's brev and byte_perm take 32/64-bit and 32-bit integers.
// CHECK-NEXT: error: {{.*}}'tile.bitreverse' op bitreverse takes 32- or 64-bit integers, got i16
func.func @bitreverse_i16(%x: tensor<16xi16>) {
  %v = "tile.bitreverse"(%x) : (tensor<16xi16>) -> tensor<16xi16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.byte_perm' op byte_perm takes 32-bit integers, got i64
func.func @byte_perm_i64(%x: i64) {
  %v = "tile.byte_perm"(%x, %x, %x) : (i64, i64, i64) -> i64
  return
}

// -----

// inline_asm packs at least one element, and its tiles have one shape.
// CHECK-NEXT: error: {{.*}}'tile.inline_asm' op inline_asm pack must be at least 1, got 0
func.func @inline_asm_pack0(%x: tensor<16xi32>) {
  %v = "tile.inline_asm"(%x) {asm = "", constraints = "=r,r", pack = 0 : i32, pure = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xi32>) -> tensor<16xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.inline_asm' op inline_asm operands and results must have one shape, got [(16,), (32,)]
func.func @inline_asm_shapes(%x: tensor<16xi32>) {
  %v = "tile.inline_asm"(%x) {asm = "", constraints = "=r,r", pack = 1 : i32, pure = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xi32>) -> tensor<32xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.map_elementwise' op map_elementwise pack must be at least 1, got 0
func.func @map_pack0(%x: tensor<16xi32>) {
  %v = "tile.map_elementwise"(%x) {fn = @f, pack = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xi32>) -> tensor<16xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.load' op load takes pointers, got tensor<16xi64>
func.func @load_from_non_pointer(%p: tensor<16xi64>) {
  %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16xi64>) -> tensor<16xi64>
  return
}

// -----

// Masks are i1.
// CHECK-NEXT: error: {{.*}}'tile.load' op load mask must be i1, got i8
func.func @load_mask_not_i1(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<16xi8>) {
  %v = "tile.load"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<16xi8>) -> tensor<16xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.load' op load mask shape [8] differs from pointer shape [16]
func.func @load_mask_shape(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<8xi1>) {
  %v = "tile.load"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<8xi1>) -> tensor<16xf32>
  return
}

// -----

// `other` fills masked-off elements, so it needs a mask.
// CHECK-NEXT: error: {{.*}}'tile.load' op load with `other` needs a mask
func.func @load_other_without_mask(%p: tensor<16x!tile.ptr<f32>>, %o: tensor<16xf32>) {
  %v = "tile.load"(%p, %o) {operandSegmentSizes = array<i32: 1, 0, 1>} : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>) -> tensor<16xf32>
  return
}

// -----

// `other` has the result type.
// CHECK-NEXT: error: {{.*}}'tile.load' op load `other` must have the result type tensor<16xf32>, got tensor<16xf16>
func.func @load_other_type(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<16xi1>, %o: tensor<16xf16>) {
  %v = "tile.load"(%p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x!tile.ptr<f32>>, tensor<16xi1>, tensor<16xf16>) -> tensor<16xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.store' op store mask must be i1, got i32
func.func @store_mask_not_i1(%p: tensor<16x!tile.ptr<f32>>, %v: tensor<16xf32>, %m: tensor<16xi32>) {
  "tile.store"(%p, %v, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>, tensor<16xi32>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.store' op store mask shape [4, 4] differs from pointer shape [16]
func.func @store_mask_shape(%p: tensor<16x!tile.ptr<f32>>, %v: tensor<16xf32>, %m: tensor<4x4xi1>) {
  "tile.store"(%p, %v, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>, tensor<4x4xi1>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.store' op store of !tile.ptr<f32> must have elements of f32, got f16
func.func @store_value_type(%p: tensor<16x!tile.ptr<f32>>, %v: tensor<16xf16>) {
  "tile.store"(%p, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<16xf16>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.store' op store pointer shape [16] differs from value shape [32]
func.func @store_value_shape(%p: tensor<16x!tile.ptr<f32>>, %v: tensor<32xf32>) {
  "tile.store"(%p, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!tile.ptr<f32>>, tensor<32xf32>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.addptr' op addptr pointer tensor<16x!tile.ptr<f32>> and offset tensor<32xi32> must have the same shape
func.func @addptr_shape(%p: tensor<16x!tile.ptr<f32>>, %o: tensor<32xi32>) {
  %r = "tile.addptr"(%p, %o) : (tensor<16x!tile.ptr<f32>>, tensor<32xi32>) -> tensor<16x!tile.ptr<f32>>
  return
}

// -----

// A tile of pointers needs a tile of offsets (splat the scalar first).
// CHECK-NEXT: error: {{.*}}'tile.addptr' op addptr pointer tensor<16x!tile.ptr<f32>> and offset i32 must have the same shape
func.func @addptr_tile_scalar(%p: tensor<16x!tile.ptr<f32>>, %o: i32) {
  %r = "tile.addptr"(%p, %o) : (tensor<16x!tile.ptr<f32>>, i32) -> tensor<16x!tile.ptr<f32>>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.addptr' op addptr offsets must be integers, got tensor<16xf32>
func.func @addptr_float_offset(%p: tensor<16x!tile.ptr<f32>>, %o: tensor<16xf32>) {
  %r = "tile.addptr"(%p, %o) : (tensor<16x!tile.ptr<f32>>, tensor<16xf32>) -> tensor<16x!tile.ptr<f32>>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.addptr' op addptr takes pointers, got tensor<16xi64>
func.func @addptr_non_pointer(%p: tensor<16xi64>, %o: tensor<16xi32>) {
  %r = "tile.addptr"(%p, %o) : (tensor<16xi64>, tensor<16xi32>) -> tensor<16xi64>
  return
}

// -----

// Tile sizes are powers of two.
// CHECK-NEXT: error: {{.*}}'tile.make_range' op make_range length 12 is not a power of two
func.func @make_range_not_pow2() {
  %r = "tile.make_range"() {start = 0 : i32, end = 12 : i32} : () -> tensor<12xi32>
  return
}

// -----

// The result has end - start elements.
// CHECK-NEXT: error: {{.*}}'tile.make_range' op make_range [0, 16) must produce 16 elements, not shape [32]
func.func @make_range_length() {
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<32xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.make_range' op make_range needs start < end, got [16, 16)
func.func @make_range_empty() {
  %r = "tile.make_range"() {start = 16 : i32, end = 16 : i32} : () -> tensor<0xi32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.make_range' op make_range produces i32 elements
func.func @make_range_i64() {
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi64>
  return
}

// -----

// splat takes a scalar; broadcast grows a tile.
// CHECK-NEXT: error: {{.*}}'tile.splat' op splat takes a scalar
func.func @splat_of_tensor(%x: tensor<16xf32>) {
  %s = "tile.splat"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.splat' op splat of f32 cannot produce elements of f16
func.func @splat_type(%x: f32) {
  %s = "tile.splat"(%x) : (f32) -> tensor<16xf16>
  return
}

// -----

// broadcast grows size-1 dimensions only.
// CHECK-NEXT: error: {{.*}}'tile.broadcast' op broadcast of shape [2, 64] to [32, 64]: only size-1 dimensions grow
func.func @broadcast_grows_non_one(%x: tensor<2x64xf32>) {
  %b = "tile.broadcast"(%x) : (tensor<2x64xf32>) -> tensor<32x64xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.broadcast' op broadcast must keep the rank (1 vs 2)
func.func @broadcast_rank(%x: tensor<64xf32>) {
  %b = "tile.broadcast"(%x) : (tensor<64xf32>) -> tensor<32x64xf32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.broadcast' op broadcast must keep the element type
func.func @broadcast_elem(%x: tensor<1x64xf32>) {
  %b = "tile.broadcast"(%x) : (tensor<1x64xf32>) -> tensor<32x64xf16>
  return
}

// -----

// IRDL-level constraints (checked by MLIR when parsing): program ids are i32.
// CHECK-NEXT: error: {{.*}}expected 'i32' but got 'i64'
func.func @pid_i64() {
  %0 = "tile.get_program_id"() {axis = 0 : i32} : () -> i64
  return
}

// -----

// The axis attribute is required.
// CHECK-NEXT: error: {{.*}}'tile.get_program_id' op attribute "axis" is expected but not provided
func.func @pid_no_axis() {
  %0 = "tile.get_program_id"() : () -> i32
  return
}

// -----

// make_range produces a tensor.
// CHECK-NEXT: error: {{.*}}expected base type 'builtin.tensor' but got 'builtin.integer'
func.func @make_range_scalar() {
  %r = "tile.make_range"() {start = 0 : i32, end = 16 : i32} : () -> i32
  return
}

// -----

// int_to_ptr takes an i64.
// CHECK-NEXT: error: {{.*}}'tile.int_to_ptr' op int_to_ptr takes an i64 address, got i32
func.func @int_to_ptr_i32(%x: i32) {
  %p = "tile.int_to_ptr"(%x) : (i32) -> !tile.ptr<f32>
  return
}

// -----

// ptr_to_int takes pointers.
// CHECK-NEXT: error: {{.*}}'tile.ptr_to_int' op ptr_to_int takes a pointer, got f32
func.func @ptr_to_int_float(%x: tensor<16xf32>) {
  %p = "tile.ptr_to_int"(%x) : (tensor<16xf32>) -> tensor<16xi64>
  return
}

// -----

// The address casts keep the tile's shape.
// CHECK-NEXT: error: {{.*}}'tile.int_to_ptr' op int_to_ptr keeps the shape: [16] -> [32]
func.func @int_to_ptr_shape(%x: tensor<16xi64>) {
  %p = "tile.int_to_ptr"(%x) : (tensor<16xi64>) -> tensor<32x!tile.ptr<f32>>
  return
}

// -----

// addptr returns the type of its pointer operand.
// CHECK-NEXT: error: {{.*}}expected '!tile.ptr<f32>' but got '!tile.ptr<f16>'
func.func @addptr_result_type(%p: !tile.ptr<f32>, %o: i32) {
  %r = "tile.addptr"(%p, %o) : (!tile.ptr<f32>, i32) -> !tile.ptr<f16>
  return
}

// -----

// store has no results.
// CHECK-NEXT: error: {{.*}}op expects exactly 0 results, but got 1
func.func @store_with_result(%p: !tile.ptr<f32>, %v: f32) {
  %r = "tile.store"(%p, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> i32
  return
}

// -----

// mask and other are optional: at most one each.
// CHECK-NEXT: error: {{.*}}element 1 in 'operandSegmentSizes' attribute must be equal to 0 or 1
func.func @load_two_masks(%p: !tile.ptr<f32>, %m: i1) {
  %r = "tile.load"(%p, %m, %m) {operandSegmentSizes = array<i32: 1, 2, 0>} : (!tile.ptr<f32>, i1, i1) -> f32
  return
}

// -----

// The tile dialect has no unknown ops.
// CHECK-NEXT: error: {{.*}}unregistered operation 'tile.frobnicate' found in dialect ('tile') that does not allow unknown operations
func.func @unknown_op() {
  "tile.frobnicate"() : () -> ()
  return
}

// Nothing else: one error per chunk, and no chunk printed as valid IR.
// CHECK-NOT: {{.+}}
