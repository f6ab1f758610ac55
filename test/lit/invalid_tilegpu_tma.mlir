// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed TMA ops (tile.descriptor_load/store, tilegpu.tma_load/store,
// tilegpu.mbarrier_*), one error per chunk.

// The tensor map is a `!tile.ptr<i8>` parameter, not a tensor's base pointer.
// CHECK: error: {{.*}}'tile.descriptor_load' op descriptor_load desc must be a scalar !tile.ptr<i8> (the tensor map parameter), got !tile.ptr<f16>
func.func @wrong_desc(%d: !tile.ptr<f16>, %r: i32) {
  %v = "tile.descriptor_load"(%d, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<f16>, i32, i32) -> tensor<16x16xf16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_load' op descriptor_load needs one coordinate per dimension (2), got 1
func.func @few_coords(%d: !tile.ptr<i8>, %r: i32) {
  %v = "tile.descriptor_load"(%d, %r) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, i32) -> tensor<16x16xf16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_load' op descriptor_load block [512, 16] exceeds TMA's box of 256 per dimension
func.func @big_box(%d: !tile.ptr<i8>, %r: i32) {
  %v = "tile.descriptor_load"(%d, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<512x16xf16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_load' op descriptor_load rows must have at least 16 bytes, got 8
func.func @narrow_rows(%d: !tile.ptr<i8>, %r: i32) {
  %v = "tile.descriptor_load"(%d, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<16x4xf16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_load' op descriptor_load swizzle 128 needs a 2-D block of 8/16/32-bit elements with rows of at least 128 bytes
func.func @swizzle_too_wide(%d: !tile.ptr<i8>, %r: i32) {
  %v = "tile.descriptor_load"(%d, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<16x32xf16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.tma_load' op tma_load writes a row-major or a swizzled, untransposed #tilegpu.nvmma_shared buffer, got #tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>
func.func @swizzled_dst(%d: !tile.ptr<i8>, %r: i32) {
  %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>, 1 : i32>
  %bar = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
  "tilegpu.tma_load"(%d, %buf, %bar, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>, 1 : i32>, !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.tma_load' op tma_load to a memdesc of 3 buffers: select one with memdesc_index
func.func @ring_dst(%d: !tile.ptr<i8>, %r: i32) {
  %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, unit, 3 : i32>
  %bar = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
  "tilegpu.tma_load"(%d, %buf, %bar, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 64>, f16, unit, 3 : i32>, !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.mbarrier_init' op mbarrier_init barrier must be one [1] x i64 buffer, got !tilegpu.memdesc<array<i64: 2>, i64, unit, 1 : i32>
func.func @wide_barrier() {
  %bar = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 2>, i64, unit, 1 : i32>
  "tilegpu.mbarrier_init"(%bar) {count = 1 : i32} : (!tilegpu.memdesc<array<i64: 2>, i64, unit, 1 : i32>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.mbarrier_init' op mbarrier_init count must be >= 1
func.func @no_arrivals() {
  %bar = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
  "tilegpu.mbarrier_init"(%bar) {count = 0 : i32} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.mbarrier_wait' op mbarrier_wait barrier must be one [1] x i64 buffer, got !tilegpu.memdesc<array<i64: 1>, i32, unit, 1 : i32>
func.func @i32_barrier(%p: i32) {
  %bar = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i32, unit, 1 : i32>
  "tilegpu.mbarrier_wait"(%bar, %p) : (!tilegpu.memdesc<array<i64: 1>, i32, unit, 1 : i32>, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_store' op descriptor_store desc must be a scalar !tile.ptr<i8> (the tensor map parameter), got !tile.ptr<f16>
func.func @store_wrong_desc(%d: !tile.ptr<f16>, %r: i32, %v: tensor<16x16xf16>) {
  "tile.descriptor_store"(%d, %v, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<f16>, tensor<16x16xf16>, i32, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_store' op descriptor_store needs one coordinate per dimension (2), got 3
func.func @store_many_coords(%d: !tile.ptr<i8>, %r: i32, %v: tensor<16x16xf16>) {
  "tile.descriptor_store"(%d, %v, %r, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, tensor<16x16xf16>, i32, i32, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_store' op descriptor_store rows must have at least 16 bytes, got 8
func.func @store_narrow_rows(%d: !tile.ptr<i8>, %r: i32, %v: tensor<16x4xf16>) {
  "tile.descriptor_store"(%d, %v, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, tensor<16x4xf16>, i32, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_load' op descriptor_load fallback needs ptr, mask and other together
func.func @load_fallback_partial(%d: !tile.ptr<i8>, %r: i32, %p: tensor<16x16x!tile.ptr<f16>>, %m: tensor<16x16xi1>) {
  %v = "tile.descriptor_load"(%d, %r, %r, %p, %m) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, i32, i32, tensor<16x16x!tile.ptr<f16>>, tensor<16x16xi1>) -> tensor<16x16xf16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_load' op descriptor_load fallback other must be a tile of the block's shape [16, 16] and type f16; got tensor<16x16xf32>
func.func @load_fallback_other(%d: !tile.ptr<i8>, %r: i32, %p: tensor<16x16x!tile.ptr<f16>>, %m: tensor<16x16xi1>, %o: tensor<16x16xf32>) {
  %v = "tile.descriptor_load"(%d, %r, %r, %p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 0 : i32} : (!tile.ptr<i8>, i32, i32, tensor<16x16x!tile.ptr<f16>>, tensor<16x16xi1>, tensor<16x16xf32>) -> tensor<16x16xf16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_store' op descriptor_store fallback needs ptr, mask and width together
func.func @store_fallback_partial(%d: !tile.ptr<i8>, %r: i32, %v: tensor<16x16xf16>, %p: tensor<16x16x!tile.ptr<f16>>) {
  "tile.descriptor_store"(%d, %v, %r, %r, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, tensor<16x16xf16>, i32, i32, tensor<16x16x!tile.ptr<f16>>) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_store' op descriptor_store fallback ptr must be a tile of pointers to the block's elements, of its shape [16, 16]; got tensor<16x16x!tile.ptr<f32>>
func.func @store_fallback_ptr_type(%d: !tile.ptr<i8>, %r: i32, %v: tensor<16x16xf16>, %p: tensor<16x16x!tile.ptr<f32>>, %m: tensor<16x16xi1>) {
  "tile.descriptor_store"(%d, %v, %r, %r, %p, %m, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 0 : i32} : (!tile.ptr<i8>, tensor<16x16xf16>, i32, i32, tensor<16x16x!tile.ptr<f32>>, tensor<16x16xi1>, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_store' op descriptor_store fallback mask must be an i1 tile of the block's shape [16, 16]; got tensor<16x8xi1>
func.func @store_fallback_mask_shape(%d: !tile.ptr<i8>, %r: i32, %v: tensor<16x16xf16>, %p: tensor<16x16x!tile.ptr<f16>>, %m: tensor<16x8xi1>) {
  "tile.descriptor_store"(%d, %v, %r, %r, %p, %m, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 0 : i32} : (!tile.ptr<i8>, tensor<16x16xf16>, i32, i32, tensor<16x16x!tile.ptr<f16>>, tensor<16x8xi1>, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.descriptor_store' op descriptor_store swizzle 64 needs a 2-D block of 8/16/32-bit elements with rows of at least 64 bytes
func.func @store_swizzle_too_wide(%d: !tile.ptr<i8>, %r: i32, %v: tensor<16x16xf16>) {
  "tile.descriptor_store"(%d, %v, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<16x16xf16>, i32, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.tma_store' op tma_store from a memdesc of 2 buffers: select one with memdesc_index
func.func @store_ring(%d: !tile.ptr<i8>, %r: i32) {
  %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 16>, f16, unit, 2 : i32>
  "tilegpu.tma_store"(%d, %buf, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 16, 16>, f16, unit, 2 : i32>, i32, i32) -> ()
  return
}

// -----

// The copy engine reads only the tensor map's box layouts: not a swizzled_shared buffer.
// CHECK-NEXT: error: {{.*}}'tilegpu.tma_store' op tma_store reads a row-major or a swizzled, untransposed #tilegpu.nvmma_shared buffer, got #tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>
func.func @store_swizzled_shared(%d: !tile.ptr<i8>, %r: i32) {
  %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>, 1 : i32>
  "tilegpu.tma_store"(%d, %buf, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>, 1 : i32>, i32, i32) -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.tma_store' op tma_store desc must be a scalar !tile.ptr<i8> (the tensor map parameter), got i32
func.func @store_no_map(%r: i32) {
  %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 16>, f16, unit, 1 : i32>
  "tilegpu.tma_store"(%r, %buf, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (i32, !tilegpu.memdesc<array<i64: 16, 16>, f16, unit, 1 : i32>, i32, i32) -> ()
  return
}

// -----

// tile.make_tensormap: the map's slot lies in the program's scratch, 128-byte aligned.
// CHECK-NEXT: error: {{.*}}'tile.make_tensormap' op make_tensormap offset 128 must be a multiple of 128 with the map within the program's 128 bytes (a multiple of 128)
func.func @map_outside(%s: !tile.ptr<i8>, %b: !tile.ptr<f16>, %n: i32, %st: i64) {
  %m = "tile.make_tensormap"(%s, %b, %n, %n, %st) {box = array<i32: 64, 64>, offset = 128 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 128 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.make_tensormap' op make_tensormap needs one dimension per box dimension (2) and one stride fewer, got 2 and 0
func.func @map_no_stride(%s: !tile.ptr<i8>, %b: !tile.ptr<f16>, %n: i32) {
  %m = "tile.make_tensormap"(%s, %b, %n, %n) {box = array<i32: 64, 64>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 128 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32) -> !tile.ptr<i8>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.make_tensormap' op make_tensormap block [512, 64] exceeds TMA's box of 256 per dimension
func.func @map_big_box(%s: !tile.ptr<i8>, %b: !tile.ptr<f16>, %n: i32, %st: i64) {
  %m = "tile.make_tensormap"(%s, %b, %n, %n, %st) {box = array<i32: 512, 64>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 128 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
  return
}

// -----

// The map's address is a `!tile.ptr<i8>`, as a tensor-map parameter is.
// CHECK-NEXT: error: {{.*}}'tile.make_tensormap' op make_tensormap result desc must be a scalar !tile.ptr<i8> (the tensor map parameter), got !tile.ptr<f16>
func.func @map_result(%s: !tile.ptr<i8>, %b: !tile.ptr<f16>, %n: i32, %st: i64) {
  %m = "tile.make_tensormap"(%s, %b, %n, %n, %st) {box = array<i32: 64, 64>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 128 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<f16>
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tile.make_tensormap' op make_tensormap base must be a scalar pointer, got i32
func.func @map_base(%s: !tile.ptr<i8>, %n: i32, %st: i64) {
  %m = "tile.make_tensormap"(%s, %n, %n, %n, %st) {box = array<i32: 64, 64>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32, i32, i64) -> !tile.ptr<i8>
  return
}
