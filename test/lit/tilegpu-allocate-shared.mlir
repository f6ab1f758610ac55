// RUN: tilework-opt %s --split-input-file --tilegpu-allocate-shared --target sm_90a | FileCheck %s

// tilegpu-allocate-shared gives every shared buffer a byte offset (`tilegpu.smem_offset`) by
// liveness, first fit, 16-byte aligned, and the module its total (`tilegpu.shared`): explicit
// local_allocs live from the alloc to their last use (through memdesc_index), ops with scratch
// (convert_layout, cross-warp reduce, ...) at the op itself.  Disjoint lifetimes share bytes.

// %a ([16, 32] f32: 2048 bytes) dies at its local_load, so the first conversion reuses its
// bytes; %b (3 buffers of [16, 32] f16: 3072 bytes) lives to its dealloc, so it takes the
// next free bytes and the conversions after the dealloc are at 0 again.
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared = 5120 : i32, tilegpu.warp_size = 32 : i32}
// CHECK-LABEL: func.func @sharing(
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_alloc"(%arg0) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"() {tilegpu.smem_offset = 2048 : i32} : () -> !tilegpu.memdesc<array<i64: 16, 32>, f16, unit, 3 : i32>
// CHECK-NEXT: %[[YA:.+]] = "tilegpu.local_load"(%[[A]]) :
// CHECK-NEXT: %[[C:.+]] = "tilegpu.convert_layout"(%[[YA]]) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: %[[I:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[B2:.+]] = "tilegpu.memdesc_index"(%[[B]], %[[I]]) :
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[C]]
// CHECK-NEXT: "tilegpu.local_store"(%[[H]], %[[B2]]) :
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[B]]) :
// CHECK-NEXT: %[[D:.+]] = "tilegpu.convert_layout"(%arg0) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: %[[E:.+]] = "tilegpu.convert_layout"(%[[D]]) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: return %[[E]]
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 4, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @sharing(%x: tensor<16x32xf32, #A>) -> tensor<16x32xf32, #A> attributes {tile.kernel} {
    %a = "tilegpu.local_alloc"(%x) : (tensor<16x32xf32, #A>) -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
    %b = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f16, unit, 3 : i32>
    %ya = "tilegpu.local_load"(%a) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> tensor<16x32xf32, #B>
    %c = "tilegpu.convert_layout"(%ya) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
    %i = arith.constant 2 : i32
    %b2 = "tilegpu.memdesc_index"(%b, %i) : (!tilegpu.memdesc<array<i64: 16, 32>, f16, unit, 3 : i32>, i32) -> !tilegpu.memdesc<array<i64: 16, 32>, f16, unit, 1 : i32>
    %h = arith.truncf %c : tensor<16x32xf32, #A> to tensor<16x32xf16, #A>
    "tilegpu.local_store"(%h, %b2) : (tensor<16x32xf16, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f16, unit, 1 : i32>) -> ()
    "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 16, 32>, f16, unit, 3 : i32>) -> ()
    %d = "tilegpu.convert_layout"(%x) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #B>
    %e = "tilegpu.convert_layout"(%d) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
    return %e : tensor<16x32xf32, #A>
  }
}

// -----

// A buffer used inside a loop it was allocated before lives for the whole loop: the
// conversions in the body (after its last use in program order) must not take its bytes.
// The cross-warp reduce after the loop (4 warps along axis 0: 4 x 32 f32 partials) reuses
// offset 0; the reduce along axis 1 stays within warps and needs no scratch.
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared = 4096 : i32, tilegpu.warp_size = 32 : i32}
// CHECK-LABEL: func.func @loop(
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_alloc"(%arg0) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[R:.+]] = scf.for
// CHECK-NEXT: %[[Y:.+]] = "tilegpu.local_load"(%[[A]]) :
// CHECK-NEXT: %[[S:.+]] = arith.addf
// CHECK-NEXT: %[[C:.+]] = "tilegpu.convert_layout"(%[[S]]) {tilegpu.smem_offset = 2048 : i32}
// CHECK-NEXT: %[[D:.+]] = "tilegpu.convert_layout"(%[[C]]) {tilegpu.smem_offset = 2048 : i32}
// CHECK-NEXT: scf.yield %[[D]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[SUM:.+]] = "tile.reduce"(%[[R]]) {axis = 0 : i32, {{.*}}tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: %[[ROW:.+]] = "tile.reduce"(%[[R]]) {axis = 1 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} :
// CHECK-NEXT: return %[[SUM]]
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 4, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @loop(%x: tensor<16x32xf32, #A>, %n: i32) -> tensor<32xf32, #tilegpu.slice<0 : i32, #A>> attributes {tile.kernel} {
    %a = "tilegpu.local_alloc"(%x) : (tensor<16x32xf32, #A>) -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<16x32xf32, #A>) : i32 {
      %y = "tilegpu.local_load"(%a) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> tensor<16x32xf32, #A>
      %s = arith.addf %acc, %y : tensor<16x32xf32, #A>
      %c = "tilegpu.convert_layout"(%s) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #B>
      %d = "tilegpu.convert_layout"(%c) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
      scf.yield %d : tensor<16x32xf32, #A>
    }
    %sum = "tile.reduce"(%r) {axis = 0 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<16x32xf32, #A>) -> tensor<32xf32, #tilegpu.slice<0 : i32, #A>>
    %row = "tile.reduce"(%r) {axis = 1 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<16x32xf32, #A>) -> tensor<16xf32, #tilegpu.slice<1 : i32, #A>>
    return %sum : tensor<32xf32, #tilegpu.slice<0 : i32, #A>>
  }
  func.func private @add(%a: f32, %b: f32) -> f32 {
    %s = arith.addf %a, %b : f32
    return %s : f32
  }
}

// -----

// Nothing in shared memory: a total of 0, no offsets.
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared = 0 : i32, tilegpu.warp_size = 32 : i32}
// CHECK-LABEL: func.func @none(
// CHECK-NOT: tilegpu.smem_offset
// CHECK: return
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @none(%x: tensor<16x32xf32, #A>) -> tensor<16x32xf32, #A> attributes {tile.kernel} {
    %c = "tilegpu.convert_layout"(%x) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #A>
    %y = arith.addf %c, %c : tensor<16x32xf32, #A>
    return %y : tensor<16x32xf32, #A>
  }
}

// -----

// A TMA store's buffer (tilegpu-tma-stores) is an ordinary local_alloc: once the buffers of a
// loop are dead it takes their bytes (offset 0, not after them); one TMA reads starts 128-byte
// aligned (a 48-byte %k live across it pushes it to 128, not 48).
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared = 24576 : i32
// CHECK-LABEL: func.func @tma_store_buffers(
// CHECK: "tilegpu.local_alloc"() {tilegpu.smem_offset = 0 : i32} : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 3 : i32>
// CHECK: "tilegpu.local_alloc"(%{{.+}}) {tilegpu.smem_offset = 0 : i32} : ({{.*}}) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK: "tilegpu.local_alloc"(%{{.+}}) {tilegpu.smem_offset = 0 : i32} : ({{.*}}) -> !tilegpu.memdesc<array<i64: 12>, f32, unit, 1 : i32>
// CHECK: "tilegpu.local_alloc"(%{{.+}}) {tilegpu.smem_offset = 128 : i32} : ({{.*}}) -> !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>
#N = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.blocked<array<i32: 1, 1, 4>, array<i32: 2, 4, 4>, array<i32: 1, 1, 4>, array<i32: 2, 1, 0>>
#K = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @tma_store_buffers(%d: !tile.ptr<i8> {tile.tma}, %v: tensor<64x64xf16, #B>, %u: tensor<2x4x8xf32, #C>, %w: tensor<12xf32, #K>) -> tensor<12xf32, #K> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %ring = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 3 : i32>
    %s = "tilegpu.memdesc_index"(%ring, %c0) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 3 : i32>, i32) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 1 : i32>
    %x = "tilegpu.local_load"(%s) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 1 : i32>) -> tensor<64x64xf16, #B>
    "tilegpu.local_dealloc"(%ring) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 3 : i32>) -> ()
    %a = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 1 : i32>
    "tilegpu.tma_store"(%d, %a, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 1 : i32>, i32, i32) -> ()
    "tilegpu.local_dealloc"(%a) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 1 : i32>) -> ()
    %k = "tilegpu.local_alloc"(%w) : (tensor<12xf32, #K>) -> !tilegpu.memdesc<array<i64: 12>, f32, unit, 1 : i32>
    %b = "tilegpu.local_alloc"(%u) : (tensor<2x4x8xf32, #C>) -> !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>
    "tilegpu.tma_store"(%d, %b, %c0, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>, i32, i32, i32) -> ()
    "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>) -> ()
    %r = "tilegpu.local_load"(%k) : (!tilegpu.memdesc<array<i64: 12>, f32, unit, 1 : i32>) -> tensor<12xf32, #K>
    return %r : tensor<12xf32, #K>
  }
}

// -----

// A buffer read through a memdesc_trans view lives until the view's last use: the conversion
// between (scratch) takes other bytes (after the 4096 bytes of %a, whose nvmma layout starts
// it 1 KiB-aligned), the one after the read reuses offset 0.
// CHECK-LABEL: func.func @view(
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_alloc"(%arg0) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: %[[T:.+]] = "tilegpu.memdesc_trans"(%[[A]]) :
// CHECK-NEXT: %[[C:.+]] = "tilegpu.convert_layout"(%arg0) {tilegpu.smem_offset = 4096 : i32}
// CHECK-NEXT: %[[Y:.+]] = "tilegpu.local_load"(%[[T]]) :
// CHECK-NEXT: %[[D:.+]] = "tilegpu.convert_layout"(%[[C]]) {tilegpu.smem_offset = 0 : i32}
#A = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#ST = #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @view(%x: tensor<32x64xf16, #A>) -> (tensor<64x32xf16, #A>, tensor<32x64xf16, #A>) attributes {tile.kernel} {
    %a = "tilegpu.local_alloc"(%x) : (tensor<32x64xf16, #A>) -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #S, 1 : i32>
    %t = "tilegpu.memdesc_trans"(%a) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, #S, 1 : i32>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, #ST, 1 : i32>
    %c = "tilegpu.convert_layout"(%x) : (tensor<32x64xf16, #A>) -> tensor<32x64xf16, #B>
    %y = "tilegpu.local_load"(%t) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #ST, 1 : i32>) -> tensor<64x32xf16, #A>
    %d = "tilegpu.convert_layout"(%c) : (tensor<32x64xf16, #B>) -> tensor<32x64xf16, #A>
    return %y, %d : tensor<64x32xf16, #A>, tensor<32x64xf16, #A>
  }
}
