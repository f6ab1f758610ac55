// RUN: tilework-opt %s --split-input-file --tilegpu-tma-loads --target sm_90a | FileCheck %s

// tilegpu-tma-loads: a tile.descriptor_load (a host descriptor's block, copied by TMA) becomes
// a buffer in the layout of its swizzle and a [1] x i64 mbarrier, the barrier's init, the
// copy, the wait on phase 0, the read into the load's layout, the barrier's inval and the
// deallocs.

// CHECK-LABEL: func.func @read_back(
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[BAR:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[BAR]]) {count = 1 : i32}
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[BUF]], %[[BAR]], %arg1, %arg2) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0>}
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: "tilegpu.mbarrier_wait"(%[[BAR]], %[[ZERO]])
// CHECK-NEXT: %[[V:.+]] = "tilegpu.local_load"(%[[BUF]]) : ({{.*}}) -> tensor<64x64xf16, #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>>
// CHECK-NEXT: "tilegpu.mbarrier_inval"(%[[BAR]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BAR]])
// CHECK-NEXT: return %[[V]]
// CHECK-NEXT: }
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @read_back(%d: !tile.ptr<i8> {tile.tma}, %r: i32, %c: i32) -> tensor<64x64xf16, #B> attributes {tile.kernel} {
    %v = "tile.descriptor_load"(%d, %r, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
    return %v : tensor<64x64xf16, #B>
  }
}

// -----

// Unswizzled (swizzle 0): a row-major buffer; a 3-D block.
// CHECK-LABEL: func.func @row_major(
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>
// CHECK-NEXT: %[[BAR:.+]] = "tilegpu.local_alloc"()
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[BAR]]) {count = 1 : i32}
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[BUF]], %[[BAR]], %arg1, %arg1, %arg1) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>}
#C = #tilegpu.blocked<array<i32: 1, 1, 4>, array<i32: 2, 4, 4>, array<i32: 1, 1, 4>, array<i32: 2, 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @row_major(%d: !tile.ptr<i8> {tile.tma}, %r: i32) -> tensor<2x4x8xf32, #C> attributes {tile.kernel} {
    %v = "tile.descriptor_load"(%d, %r, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, i32, i32, i32) -> tensor<2x4x8xf32, #C>
    return %v : tensor<2x4x8xf32, #C>
  }
}

// -----

// A local_alloc of the value in the buffer's own layout (the wgmma operand buffer of
// tilegpu-warpgroup-dot) reads the TMA buffer itself: no read back, no copy; its dealloc
// frees the TMA buffer.
// CHECK-LABEL: func.func @to_wgmma_buffer(
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[BAR:.+]] = "tilegpu.local_alloc"()
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[BAR]]) {count = 1 : i32}
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[BUF]], %[[BAR]], %arg1, %arg1)
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: "tilegpu.mbarrier_wait"(%[[BAR]], %[[ZERO]])
// CHECK-NEXT: "tilegpu.mbarrier_inval"(%[[BAR]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BAR]])
// CHECK-NEXT: %[[W:.+]] = "tilegpu.local_load"(%[[BUF]]) : ({{.*}}) -> tensor<64x64xf16, #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>>
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: return %[[W]]
// CHECK-NEXT: }
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#T = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @to_wgmma_buffer(%d: !tile.ptr<i8> {tile.tma}, %r: i32) -> tensor<64x64xf16, #T> attributes {tile.kernel} {
    %v = "tile.descriptor_load"(%d, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
    %m = "tilegpu.local_alloc"(%v) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
    %w = "tilegpu.local_load"(%m) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>) -> tensor<64x64xf16, #T>
    "tilegpu.local_dealloc"(%m) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>) -> ()
    return %w : tensor<64x64xf16, #T>
  }
}

// -----

// A tile.trans of the value whose only reader is a local_alloc in the buffer's transposed
// view (the K tile of attention's q @ k.T) reads the TMA buffer through memdesc_trans: no
// read back, no second buffer; that alloc's dealloc frees the TMA buffer.
// CHECK-LABEL: func.func @to_transposed_wgmma_buffer(
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[BAR:.+]] = "tilegpu.local_alloc"()
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[BAR]]) {count = 1 : i32}
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[BUF]], %[[BAR]], %arg1, %arg1)
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: "tilegpu.mbarrier_wait"(%[[BAR]], %[[ZERO]])
// CHECK-NEXT: "tilegpu.mbarrier_inval"(%[[BAR]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BAR]])
// CHECK-NEXT: %[[VIEW:.+]] = "tilegpu.memdesc_trans"(%[[BUF]]) : ({{.*}}) -> !tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[W:.+]] = "tilegpu.local_load"(%[[VIEW]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: return %[[W]]
// CHECK-NEXT: }
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#BT = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @to_transposed_wgmma_buffer(%d: !tile.ptr<i8> {tile.tma}, %r: i32) -> tensor<128x64xf16, #BT> attributes {tile.kernel} {
    %v = "tile.descriptor_load"(%d, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x128xf16, #B>
    %t = "tile.trans"(%v) {order = array<i32: 1, 0>} : (tensor<64x128xf16, #B>) -> tensor<128x64xf16, #BT>
    %m = "tilegpu.local_alloc"(%t) : (tensor<128x64xf16, #BT>) -> !tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>, 1 : i32>
    %w = "tilegpu.local_load"(%m) : (!tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>, 1 : i32>) -> tensor<128x64xf16, #BT>
    "tilegpu.local_dealloc"(%m) : (!tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>, 1 : i32>) -> ()
    return %w : tensor<128x64xf16, #BT>
  }
}
