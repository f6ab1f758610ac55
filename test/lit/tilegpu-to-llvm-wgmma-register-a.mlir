// RUN: tilework-opt %s --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-to-llvm --target sm_90a | FileCheck %s

// tilegpu.warpgroup_dot with a [64, 32] f16 a in registers (wgmma's A fragment) and a [32, 64]
// b in shared memory, 4 warps: A's 2 x 4 registers (two elements each, vector<2xf16> as i32)
// are packed before wgmma.fence (a register written after it would make ptxas insert a
// warpgroup.arrive), then per K step one inline-PTX mma_async: the 32 accumulators tied
// ($0..$31 in, "0".."31"), {$64..$67} A, $68 b's descriptor, $69 the scale-d source.
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#A = #tilegpu.dot_operand<0 : i32, #C, 2 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C8 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 32>>
#A8 = #tilegpu.dot_operand<0 : i32, #C8, 4 : i32>
#SB8 = #tilegpu.nvmma_shared<64 : i32, true, 8 : i32>
// CHECK-LABEL: gpu.func @k(
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-8: llvm.bitcast %{{.+}} : vector<2xf16> to i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: llvm.bitcast
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, $1, {{.+}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;\0A}", "=f,{{.+}},=f,0,1,{{.+}},31,r,r,r,r,l,r"
// CHECK: llvm.inline_asm has_side_effects {{.+}}wgmma.mma_async
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: wgmma.mma_async
// CHECK: gpu.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @k(%out: !tile.ptr<f32>) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x32xf16, #A>
  %y = arith.constant dense<2.0> : tensor<32x64xf16, #B>
  %c = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %b = "tilegpu.local_alloc"(%y) : (tensor<32x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>
  %d = "tilegpu.warpgroup_dot"(%x, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16, #A>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>) -> ()
  %p = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C>
  "tile.store"(%p, %d) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}

// e4m3 A [64, 64] in registers (`dot_operand<0, C8, 4>`): four bytes a 32-bit register (k32),
// 2 K steps x 4 registers packed before the fence; the mma_async is m64n64k32.e4m3.e4m3 with
// no imm-trans-b (fp8 B is K-major).
// CHECK-LABEL: gpu.func @fp8(
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: vector<2xf16>
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {$0, $1, {{.+}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1;\0A}", "=f,{{.+}},=f,0,1,{{.+}},31,r,r,r,r,l,r"
// CHECK: llvm.inline_asm has_side_effects {{.+}}m64n64k32.f32.e4m3.e4m3
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: gpu.return
func.func @fp8(%out: !tile.ptr<f32>, %v: f8E4M3FN) attributes {tile.kernel} {
  %x = "tile.splat"(%v) : (f8E4M3FN) -> tensor<64x64xf8E4M3FN, #A8>
  %y = "tile.splat"(%v) : (f8E4M3FN) -> tensor<64x64xf8E4M3FN, #B>
  %c = arith.constant dense<0.0> : tensor<64x64xf32, #C8>
  %b = "tilegpu.local_alloc"(%y) : (tensor<64x64xf8E4M3FN, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f8E4M3FN, #SB8, 1 : i32>
  %d = "tilegpu.warpgroup_dot"(%x, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf8E4M3FN, #A8>, !tilegpu.memdesc<array<i64: 64, 64>, f8E4M3FN, #SB8, 1 : i32>, tensor<64x64xf32, #C8>) -> tensor<64x64xf32, #C8>
  "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 64, 64>, f8E4M3FN, #SB8, 1 : i32>) -> ()
  %p = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C8>
  "tile.store"(%p, %d) : (tensor<64x64x!tile.ptr<f32>, #C8>, tensor<64x64xf32, #C8>) -> ()
  return
}
}
