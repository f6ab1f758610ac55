// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s

// `tile.ptr_to_int` / `tile.int_to_ptr` on tiles (Triton's `x.to(tl.int64)` of a pointer tile
// and `.to(tl.pi32_t)` of loaded addresses) lower element by element: one llvm.ptrtoint and
// one llvm.inttoptr per element a thread holds (2 here: 256 elements over 128 threads).

// CHECK-LABEL: gpu.func @round_trip
// CHECK-COUNT-2: llvm.ptrtoint %{{.+}} : !llvm.ptr<1> to i64
// CHECK-NOT: llvm.ptrtoint
// CHECK-COUNT-2: llvm.inttoptr %{{.+}} : i64 to !llvm.ptr<1>
// CHECK-NOT: llvm.inttoptr
#L = #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @round_trip(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xi32, #L>) -> tensor<256x!tile.ptr<f32>, #L>
    %i = "tile.ptr_to_int"(%xa) : (tensor<256x!tile.ptr<f32>, #L>) -> tensor<256xi64, #L>
    %p = "tile.int_to_ptr"(%i) : (tensor<256xi64, #L>) -> tensor<256x!tile.ptr<f32>, #L>
    %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 1 : i32} : (tensor<256x!tile.ptr<f32>, #L>) -> tensor<256xf32, #L>
    %op = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>, #L>
    %oa = "tile.addptr"(%op, %r) : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xi32, #L>) -> tensor<256x!tile.ptr<f32>, #L>
    "tile.store"(%oa, %v) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xf32, #L>) -> ()
    return
  }
}
