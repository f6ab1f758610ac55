// RUN: tilework-opt %s --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: not tilework-opt %s --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-to-llvm --target sm_90 2>&1 | FileCheck %s --check-prefix=SM90

// tilegpu.warpgroup_dot of a [64, 32] f16 a (K-major, 64-byte swizzle) and a [32, 64] f16 b
// (N-major, 128-byte swizzle), 4 warps: the operands' stores, the proxy fence, the barrier the
// pass placed, wgmma.fence, two m64n64k16 (K = 32) chained on the 32 accumulators, commit and
// wait.  Descriptors: the start address >> 4 (14 bits) or-ed with the constant fields:
//   a: LBO 16 (unused) << 16 | SBO 512 (8 rows of 64 bytes) >> 4 << 32 | 2 (64-byte) << 62
//      = 0x8000002000010000
//   b: LBO 4096 (the next 128-byte column block: 32 rows, unused at N = 64) >> 4 << 16 |
//      SBO 1024 (8 rows of 128 bytes) >> 4 << 32 | 1 (128-byte) << 62 = 0x4000004001000000
// The second K step starts 32 bytes further into a's rows and 16 rows (2048 bytes) into b:
// b's descriptor is the first plus 2048 >> 4 = 128 (b's k offset shares no bit with its n
// offsets); a's 32 bytes share bits with its rows' 64-byte swizzle, so it is computed afresh.
// The accumulator is the constant 0: the first mma_async has scale-d 0 (D = A B) and a poison
// input, so no register is written between the wgmma fence and it; @acc1 (a non-zero constant)
// accumulates from the first step.
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#SA = #tilegpu.nvmma_shared<64 : i32, false, 16 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
// CHECK: llvm.mlir.global external @tilework_smem() {addr_space = 3 : i32, alignment = 1024 : i64}
// CHECK-LABEL: gpu.func @k(
// CHECK: llvm.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: %[[POISON:.+]] = llvm.mlir.poison : !llvm.struct<(f32,
// CHECK: %[[DA0:.+]] = arith.ori %{{.+}}, %c-9223371899415756800_i64 : i64
// CHECK: %[[DB0:.+]] = arith.ori %{{.+}}, %c4611686293322072064_i64 : i64
// CHECK-NEXT: %[[D0:.+]] = nvvm.wgmma.mma_async %[[DA0]], %[[DB0]], %[[POISON]], <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !llvm.struct<(f32,
// CHECK: %[[DA1:.+]] = arith.ori %{{.+}}, %c-9223371899415756800_i64 : i64
// CHECK: %[[DB1:.+]] = arith.addi %[[DB0]], %c128_i64 : i64
// CHECK-NEXT: %[[D1:.+]] = nvvm.wgmma.mma_async %[[DA1]], %[[DB1]], %[[D0]], <m = 64, n = 64, k = 16>, D[<f32>, <one>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.extractvalue %[[D1]][0]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @acc1(
// CHECK-NOT: llvm.mlir.poison : !llvm.struct<(f32,
// CHECK: nvvm.wgmma.mma_async {{.+}}, D[<f32>, <one>]
// CHECK: nvvm.wgmma.mma_async {{.+}}, D[<f32>, <one>]
// CHECK: gpu.return

// SM90: error: {{.*}}tilegpu.warpgroup_dot needs sm_90a (wgmma), not sm_90
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @k(%out: !tile.ptr<f32>) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x32xf16, #B>
  %y = arith.constant dense<2.0> : tensor<32x64xf16, #B>
  %c = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %a = "tilegpu.local_alloc"(%x) : (tensor<64x32xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>
  %b = "tilegpu.local_alloc"(%y) : (tensor<32x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>
  %d = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  "tilegpu.local_dealloc"(%a) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>) -> ()
  %p = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C>
  "tile.store"(%p, %d) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
func.func @acc1(%out: !tile.ptr<f32>) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x32xf16, #B>
  %y = arith.constant dense<2.0> : tensor<32x64xf16, #B>
  %c = arith.constant dense<1.0> : tensor<64x64xf32, #C>
  %a = "tilegpu.local_alloc"(%x) : (tensor<64x32xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>
  %b = "tilegpu.local_alloc"(%y) : (tensor<32x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>
  %d = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  "tilegpu.local_dealloc"(%a) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>) -> ()
  %p = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C>
  "tile.store"(%p, %d) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
}
