// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed shared-memory ops (tilegpu.local_*, memdesc_index, memdesc_trans, async_copy,
// async_wait), one error per chunk.

#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>

// A memdesc of no buffers.
// CHECK: error: {{.*}}'tilegpu.local_alloc' op memdesc needs at least one buffer, got 0
func.func @no_buffers() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 0 : i32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.local_alloc' op memdesc shape must be non-empty and positive, got [16, 0]
func.func @empty_shape() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 0>, f32, unit, 1 : i32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.local_alloc' op memdesc elements must be integers or floats, got !tile.ptr<f32>
func.func @pointer_elements() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16>, !tile.ptr<f32>, unit, 1 : i32>
  return
}

// -----

// The initial value must be the buffer's shape and element type.
// CHECK-NEXT: error: {{.*}}'tilegpu.local_alloc' op local_alloc initial value tensor<16x32xf16, {{.+}}> does not match the buffer ([16, 32] x f32)
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @alloc_mismatch(%x: tensor<16x32xf16, #A>) {
  %m = "tilegpu.local_alloc"(%x) : (tensor<16x32xf16, #A>) -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.local_alloc' op local_alloc initializes a memdesc of 2 buffers: select one with memdesc_index
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @alloc_init_multibuffer(%x: tensor<16x32xf32, #A>) {
  %m = "tilegpu.local_alloc"(%x) : (tensor<16x32xf32, #A>) -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.local_store' op local_store value tensor<32x16xf32, {{.+}}> does not match the buffer ([16, 32] x f32)
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @store_shape(%x: tensor<32x16xf32, #A>) {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
  "tilegpu.local_store"(%x, %m) : (tensor<32x16xf32, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.local_load' op local_load from a memdesc of 2 buffers: select one with memdesc_index
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @load_multibuffer() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>
  %v = "tilegpu.local_load"(%m) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>) -> tensor<16x32xf32, #A>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.memdesc_index' op memdesc_index must give one buffer of !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>
func.func @index_shape(%i: i32) {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>
  %b = "tilegpu.memdesc_index"(%m, %i) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>, i32) -> !tilegpu.memdesc<array<i64: 32, 16>, f32, unit, 1 : i32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.local_dealloc' op local_dealloc takes the result of a local_alloc
func.func @dealloc_view(%i: i32) {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>
  %b = "tilegpu.memdesc_index"(%m, %i) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>, i32) -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
  "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> ()
  return
}

// -----

// memdesc_trans: a [b, a] view of a 2-D swizzled buffer, in the layout holding its bytes.
// CHECK-NEXT: error: {{.*}}'tilegpu.memdesc_trans' op memdesc_trans takes a 2-D memdesc, got shape [4, 16, 32]
func.func @trans_rank() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 4, 16, 32>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 4 : i32, array<i32: 2, 1, 0>>, 1 : i32>
  %t = "tilegpu.memdesc_trans"(%m) : (!tilegpu.memdesc<array<i64: 4, 16, 32>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 4 : i32, array<i32: 2, 1, 0>>, 1 : i32>) -> !tilegpu.memdesc<array<i64: 32, 16, 4>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 4 : i32, array<i32: 0, 1, 2>>, 1 : i32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.memdesc_trans' op memdesc_trans needs a swizzled_shared or nvmma_shared buffer (a row-major one has no transposed view), got unit
func.func @trans_row_major() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
  %t = "tilegpu.memdesc_trans"(%m) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> !tilegpu.memdesc<array<i64: 32, 16>, f32, unit, 1 : i32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.memdesc_trans' op memdesc_trans of !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 2 : i32> must give a [64, 64] memdesc of f16 and 2 buffer(s)
func.func @trans_buffers() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 2 : i32>
  %t = "tilegpu.memdesc_trans"(%m) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 2 : i32>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>, 1 : i32>
  return
}

// -----

// The shape is transposed but the layout is not flipped: other bytes.
// CHECK-NEXT: error: {{.*}}'tilegpu.memdesc_trans' op memdesc_trans result layout #tilegpu.nvmma_shared<128 : i32, false, 16 : i32> does not hold the bytes of #tilegpu.nvmma_shared<128 : i32, false, 16 : i32> transposed
func.func @trans_layout() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
  %t = "tilegpu.memdesc_trans"(%m) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>) -> !tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
  return
}

// -----

// Flipped, but a narrower swizzle: the 16-byte chunks are xor-ed with other rows.
// CHECK-NEXT: error: {{.*}}'tilegpu.memdesc_trans' op memdesc_trans result layout #tilegpu.nvmma_shared<64 : i32, true, 16 : i32> does not hold the bytes of #tilegpu.nvmma_shared<128 : i32, false, 16 : i32> transposed
func.func @trans_swizzle() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
  %t = "tilegpu.memdesc_trans"(%m) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>) -> !tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<64 : i32, true, 16 : i32>, 1 : i32>
  return
}

// -----

// swizzled_shared: the order must be reversed with the shape.
// CHECK-NEXT: error: {{.*}}'tilegpu.memdesc_trans' op memdesc_trans result layout #tilegpu.swizzled_shared<8 : i32, 1 : i32, 4 : i32, array<i32: 1, 0>> does not hold the bytes of #tilegpu.swizzled_shared<8 : i32, 1 : i32, 4 : i32, array<i32: 1, 0>> transposed
func.func @trans_order() {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 32>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 4 : i32, array<i32: 1, 0>>, 1 : i32>
  %t = "tilegpu.memdesc_trans"(%m) : (!tilegpu.memdesc<array<i64: 32, 32>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 4 : i32, array<i32: 1, 0>>, 1 : i32>) -> !tilegpu.memdesc<array<i64: 32, 32>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 4 : i32, array<i32: 1, 0>>, 1 : i32>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.async_copy' op async_copy needs pointers to f32 (or a type of its width), got tensor<16x32x!tile.ptr<f16>, {{.+}}>
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @copy_pointee(%p: tensor<16x32x!tile.ptr<f16>, #A>) {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
  "tilegpu.async_copy"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<16x32x!tile.ptr<f16>, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.async_copy' op async_copy mask must be i1, got i32
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @copy_mask(%p: tensor<16x32x!tile.ptr<f32>, #A>, %k: tensor<16x32xi32, #A>) {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
  "tilegpu.async_copy"(%p, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (tensor<16x32x!tile.ptr<f32>, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>, tensor<16x32xi32, #A>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.async_copy' op async_copy other needs a mask
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @copy_other(%p: tensor<16x32x!tile.ptr<f32>, #A>, %o: tensor<16x32xf32, #A>) {
  %m = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
  "tilegpu.async_copy"(%p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (tensor<16x32x!tile.ptr<f32>, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>, tensor<16x32xf32, #A>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.async_wait' op async_wait num must be >= 0
func.func @wait_negative() {
  "tilegpu.async_wait"() {num = -1 : i32} : () -> ()
  return
}

// -----

// IRDL: a tile where a memdesc belongs.
// CHECK-NEXT: error: {{.*}}expected base type 'tilegpu.memdesc' but got 'builtin.tensor'
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
func.func @load_tile(%x: tensor<16x32xf32, #A>) {
  %v = "tilegpu.local_load"(%x) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #A>
  return
}
