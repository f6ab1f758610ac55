// RUN: tilework-opt %s --tilegpu-vector-width --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --tilegpu-vector-width --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-to-llvm --target sm_75 | FileCheck %s --check-prefixes=SYNC,SYNCNV
// RUN: tilework-opt %s --tilegpu-vector-width --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefixes=SYNC,SYNCAMD

// The shared-memory ops lowered: buffer 1 of a double buffer of 128 f32 is the kernel's
// shared memory + 512 bytes; each thread's 4 contiguous elements (16-byte aligned, the mask
// uniform over them) are one 16-byte cp.async (.cg), src-size 0 where masked off; commit,
// wait, the barrier the pass placed, then each thread reads its elements of the other layout.
// CHECK: module attributes {gpu.container_module, tilegpu.num_warps = 1 : i32, tilegpu.shared = 1024 : i32
// CHECK: llvm.mlir.global external @tilework_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: gpu.func @copy(
// CHECK: %[[SMEM:.+]] = llvm.mlir.addressof @tilework_smem : !llvm.ptr<3>
// CHECK: %[[SRC:.+]] = llvm.getelementptr %arg0[%[[OFF:.+]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: %[[M:.+]] = arith.cmpi slt, %[[OFF]], %arg2 : i32
// CHECK: %[[BYTES:.+]] = arith.muli %{{.+}}, %c512_i32 : i32
// CHECK-NEXT: %[[B1:.+]] = llvm.getelementptr %[[SMEM]][%[[BYTES]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[DST:.+]] = llvm.getelementptr %[[B1]][%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: %[[N:.+]] = arith.select %[[M]], %c16_i32, %c0_i32 : i32
// CHECK-NEXT: nvvm.cp.async.shared.global %[[DST]], %[[SRC]], 16, cache = cg, %[[N]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[P0:.+]] = llvm.getelementptr %[[B1]][%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.load %[[P0]] : !llvm.ptr<3> -> f32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// Below sm_80 and on AMD: a (vector) load under the mask (predicated on NVIDIA, a branch on
// AMD), zero elsewhere, and one 16-byte
// store of the thread's 4 contiguous elements; commit and wait are nothing; the barrier
// stays.  The reads in the other layout are one element each.
// SYNC-LABEL: gpu.func @copy(
// SYNC-NOT: cp.async
// SYNCNV: llvm.inline_asm has_side_effects {{.*}}"@$4 ld.global.v4.b32 {$0, $1, $2, $3}, [$5];"
// SYNCAMD: scf.if %{{.+}} -> (vector<4xf32>) {
// SYNCAMD-NEXT: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// SYNC: %[[V:.+]] = llvm.insertelement %{{.+}}[%c3_i32 : i32] : vector<4xf32>
// SYNC-NEXT: %[[P:.+]] = llvm.getelementptr %{{.+}} : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// SYNC-NEXT: llvm.store %[[V]], %[[P]] {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// SYNC-NEXT: gpu.barrier
// SYNC-NEXT: llvm.getelementptr
// SYNC-NEXT: llvm.load %{{.+}} : !llvm.ptr<3> -> f32
// SYNC-NOT: cp.async
// SYNC: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 1>, array<i32: 0>>
#R = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 1>, array<i32: 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @copy(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32>, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #L>
    %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #L>
    %xp = "tile.addptr"(%xs, %r) : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xi32, #L>) -> tensor<128x!tile.ptr<f32>, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<128xi32, #L>
    %m = arith.cmpi slt, %r, %ns : tensor<128xi32, #L>
    %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 128>, f32, unit, 2 : i32>
    %i = arith.constant 1 : i32
    %b = "tilegpu.memdesc_index"(%buf, %i) : (!tilegpu.memdesc<array<i64: 128>, f32, unit, 2 : i32>, i32) -> !tilegpu.memdesc<array<i64: 128>, f32, unit, 1 : i32>
    "tilegpu.async_copy"(%xp, %b, %m) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (tensor<128x!tile.ptr<f32>, #L>, !tilegpu.memdesc<array<i64: 128>, f32, unit, 1 : i32>, tensor<128xi1, #L>) -> ()
    "tilegpu.async_commit_group"() : () -> ()
    "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
    %v = "tilegpu.local_load"(%b) : (!tilegpu.memdesc<array<i64: 128>, f32, unit, 1 : i32>) -> tensor<128xf32, #R>
    %r2 = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #R>
    %os = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #R>
    %op = "tile.addptr"(%os, %r2) : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi32, #R>) -> tensor<128x!tile.ptr<f32>, #R>
    "tile.store"(%op, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xf32, #R>) -> ()
    return
  }
}
