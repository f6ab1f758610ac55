// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s

// `splat(b) + make_range` lowers as (b + the thread part) + a constant per element where the
// constants' bits are disjoint from the thread part's: b + (thread part + c) would leave the
// thread-only sums loop-invariant, and LLVM hoists every one of them to the kernel's entry
// (one register each, live through the whole kernel).

// CHECK-LABEL: gpu.func @offsets
// CHECK-DAG: %[[C130:.+]] = arith.constant 130 : i32
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : i32
// CHECK: %[[T:.+]] = arith.index_cast %thread_id_x
// CHECK: %[[PID:.+]] = arith.index_cast %block_id_x
// CHECK: %[[B:.+]] = arith.addi %[[PID]], %[[T]] : i32
// CHECK-NEXT: %[[O0:.+]] = arith.addi %[[B]], %[[C2]] : i32
// CHECK-NEXT: %[[O1:.+]] = arith.addi %[[B]], %[[C130]] : i32
// CHECK: llvm.store %[[O0]],
// CHECK-NEXT: llvm.store %[[O1]],
#L = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @offsets(%o: !tile.ptr<i32>) attributes {tile.kernel} {
    %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    %r = "tile.make_range"() {start = 2 : i32, end = 258 : i32} : () -> tensor<256xi32, #L>
    %ss = "tile.splat"(%pid) : (i32) -> tensor<256xi32, #L>
    %off = arith.addi %ss, %r : tensor<256xi32, #L>
    %op = "tile.splat"(%o) : (!tile.ptr<i32>) -> tensor<256x!tile.ptr<i32>, #L>
    %oa = "tile.addptr"(%op, %off) : (tensor<256x!tile.ptr<i32>, #L>, tensor<256xi32, #L>) -> tensor<256x!tile.ptr<i32>, #L>
    "tile.store"(%oa, %off) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<256x!tile.ptr<i32>, #L>, tensor<256xi32, #L>) -> ()
    return
  }
}
