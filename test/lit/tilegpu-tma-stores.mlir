// RUN: tilework-opt %s --split-input-file --tilegpu-tma-stores --target sm_90a | FileCheck %s

// tilegpu-tma-stores: a tile.descriptor_store (a host descriptor's block stored by TMA,
// `tma_store`) becomes a buffer initialized from the value in the layout of the plan's swizzle
// (the tensor map's box layout, as a descriptor_load's buffer), the tma_store of that buffer at
// the coordinates, and the buffer's dealloc.  The value keeps its own layout (here a wgmma
// accumulator's): the local_alloc's rule writes it to the swizzled places.

// CHECK-LABEL: func.func @swizzled(
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"(%arg3) : (tensor<128x64xf16, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>>) -> !tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: "tilegpu.tma_store"(%arg0, %[[BUF]], %arg1, %arg2) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>}
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: return
// CHECK-NOT: tile.descriptor_store
#A = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @swizzled(%d: !tile.ptr<i8> {tile.tma}, %r: i32, %c: i32, %v: tensor<128x64xf16, #A>) attributes {tile.kernel} {
    "tile.descriptor_store"(%d, %v, %r, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, tensor<128x64xf16, #A>, i32, i32) -> ()
    return
  }
}

// -----

// Unswizzled (swizzle 0): a row-major buffer; a 3-D block.
// CHECK-LABEL: func.func @row_major(
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"(%arg2) : ({{.*}}) -> !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>
// CHECK-NEXT: "tilegpu.tma_store"(%arg0, %[[BUF]], %arg1, %arg1, %arg1) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
#C = #tilegpu.blocked<array<i32: 1, 1, 4>, array<i32: 2, 4, 4>, array<i32: 1, 1, 4>, array<i32: 2, 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @row_major(%d: !tile.ptr<i8> {tile.tma}, %r: i32, %v: tensor<2x4x8xf32, #C>) attributes {tile.kernel} {
    "tile.descriptor_store"(%d, %v, %r, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>, swizzle = 0 : i32} : (!tile.ptr<i8>, tensor<2x4x8xf32, #C>, i32, i32, i32) -> ()
    return
  }
}

// -----

// Other ops are left alone; a kernel without descriptor stores is unchanged.
// CHECK-LABEL: func.func @untouched(
// CHECK-NEXT: "tile.store"
// CHECK-NEXT: return
#B = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @untouched(%p: tensor<512x!tile.ptr<f32>, #B>, %v: tensor<512xf32, #B>) attributes {tile.kernel} {
    "tile.store"(%p, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<512x!tile.ptr<f32>, #B>, tensor<512xf32, #B>) -> ()
    return
  }
}

// -----

// Under tile-tma-guard's run-time branch (coordinates of unknown sign): the store is rewritten
// inside the then branch, its buffer allocated and freed there; the fallback stays.
// CHECK-LABEL: func.func @guarded(
// CHECK: scf.if %{{.+}} {
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"(%arg3) : (tensor<128x64xf16, #{{.+}}>) -> !tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: "tilegpu.tma_store"(%arg0, %[[BUF]], %arg1, %arg2)
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: } else {
// CHECK-NEXT: "tile.store"(%arg4, %arg3, %arg5)
// CHECK-NOT: tile.descriptor_store
#A = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @guarded(%d: !tile.ptr<i8> {tile.tma}, %r: i32, %c: i32, %v: tensor<128x64xf16, #A>, %p: tensor<128x64x!tile.ptr<f16>, #A>, %m: tensor<128x64xi1, #A>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %ok = arith.cmpi sge, %r, %c0 : i32
    scf.if %ok {
      "tile.descriptor_store"(%d, %v, %r, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, tensor<128x64xf16, #A>, i32, i32) -> ()
    } else {
      "tile.store"(%p, %v, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<128x64x!tile.ptr<f16>, #A>, tensor<128x64xf16, #A>, tensor<128x64xi1, #A>) -> ()
    }
    return
  }
}
