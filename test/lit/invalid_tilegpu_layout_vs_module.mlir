// BUG: a layout is not checked against the module's warp size and warp count.
// Blocked.verify(shape, warp_size, num_warps) can check that threads_per_warp multiplies to
// the warp size and warps_per_cta to num_warps, but tilework.dialects.verify calls it with the
// shape only, so tilegpu IR whose layouts disagree with `tilegpu.warp_size`/`tilegpu.num_warps`
// verifies, and tilegpu-to-llvm silently emits wrong thread geometry (lane = tid % 32 for a
// layout of 64 threads per warp; known_block_size 128 for a layout spread over 8 warps).

// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// CHECK: error: {{.*}}layout threads_per_warp [64] does not multiply to the warp size 32
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @threads_per_warp(%x: i32) {
    %s = "tile.splat"(%x) : (i32) -> tensor<256xi32, #tilegpu.blocked<array<i32: 1>, array<i32: 64>, array<i32: 4>, array<i32: 0>>>
    return
  }
}

// -----

// CHECK-NEXT: error: {{.*}}layout warps_per_cta [2, 4] does not multiply to num_warps=4
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @warps_per_cta(%x: i32) {
    %s = "tile.splat"(%x) : (i32) -> tensor<32x32xi32, #tilegpu.blocked<array<i32: 1, 1>, array<i32: 4, 8>, array<i32: 2, 4>, array<i32: 1, 0>>>
    return
  }
}
