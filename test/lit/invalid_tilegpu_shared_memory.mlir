// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed shared-memory ops (tilegpu.local_*, memdesc_index, async_copy, async_wait), one
// error per chunk.

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
