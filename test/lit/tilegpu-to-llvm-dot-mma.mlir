// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_80 --num-warps 1 | FileCheck %s

// tile.dot with its operands in dot_operand layouts of an mma v2 accumulator (rules/dot_mma.py):
// per 16x8 tile and k-step one nvvm.mma.sync; operand registers packed to 32 bits (two f16 as
// vector<2xf16>, four i8 as an i32), the accumulator's c0..c3 taken out of the result struct.

// CHECK-LABEL: gpu.func @mma_f16(
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : i32
// CHECK-COUNT-7: llvm.insertelement %arg0
// CHECK: %[[A3:.+]] = llvm.insertelement %arg0, %{{.+}}[%[[C1]] : i32] : vector<2xf16>
// CHECK-NEXT: llvm.mlir.poison : vector<2xf16>
// CHECK-NEXT: llvm.insertelement %arg1, %{{.+}}[%[[C0]] : i32] : vector<2xf16>
// CHECK-NEXT: %[[B0:.+]] = llvm.insertelement %arg1, %{{.+}}[%[[C1]] : i32] : vector<2xf16>
// CHECK-NEXT: llvm.mlir.poison : vector<2xf16>
// CHECK-NEXT: llvm.insertelement %arg1, %{{.+}}[%[[C0]] : i32] : vector<2xf16>
// CHECK-NEXT: %[[B1:.+]] = llvm.insertelement %arg1, %{{.+}}[%[[C1]] : i32] : vector<2xf16>
// CHECK-NEXT: %[[D:.+]] = nvvm.mma.sync A[%{{.+}}, %{{.+}}, %{{.+}}, %[[A3]]] B[%[[B0]], %[[B1]]] C[%arg2, %arg2, %arg2, %arg2] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: llvm.extractvalue %[[D]][0] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: llvm.extractvalue %[[D]][1] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: llvm.extractvalue %[[D]][2] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: llvm.extractvalue %[[D]][3] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: gpu.return
#mma = #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>, 2 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>, 2 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @mma_f16(%x: f16, %y: f16, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f16) -> tensor<16x16xf16, #a>
    %b = "tile.splat"(%y) : (f16) -> tensor<16x8xf16, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x8xf32, #mma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16, #a>, tensor<16x8xf16, #b>, tensor<16x8xf32, #mma>) -> tensor<16x8xf32, #mma>
    return
  }
}

// -----

// int8: m16n8k32, s8 x s8 -> s32 wrapping; a 16x16 accumulator in one warp is two n tiles
// sharing the A registers, K = 64 two k-steps: four mma.sync.
// CHECK-LABEL: gpu.func @mma_s8(
// CHECK: llvm.bitcast %{{.+}} : vector<4xi8> to i32
// CHECK-COUNT-4: nvvm.mma.sync A[{{.+}}] B[{{.+}}] C[{{.+}}] {intOverflowBehavior = #nvvm.mma_int_overflow<wrapped>, layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<s8>, multiplicandBPtxType = #nvvm.mma_type<s8>, shape = #nvvm.shape<m = 16, n = 8, k = 32>} : (i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: nvvm.mma.sync
#mma = #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>, 4 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>, 4 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @mma_s8(%x: i8, %y: i8, %z: i32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (i8) -> tensor<16x64xi8, #a>
    %b = "tile.splat"(%y) : (i8) -> tensor<64x16xi8, #b>
    %c = "tile.splat"(%z) : (i32) -> tensor<16x16xi32, #mma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x64xi8, #a>, tensor<64x16xi8, #b>, tensor<16x16xi32, #mma>) -> tensor<16x16xi32, #mma>
    return
  }
}

// -----

// fp32 with input_precision "tf32": m16n8k8 on the operands rounded to tf32 (integer ops on
// the bits, as the FMA path), passed as i32.
// CHECK-LABEL: gpu.func @mma_tf32(
// CHECK: arith.andi %{{.+}}, %{{.+}} : i32
// CHECK: nvvm.mma.sync A[{{.+}}] B[{{.+}}] C[{{.+}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
#mma = #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>, 1 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>, 1 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @mma_tf32(%x: f32, %y: f32, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f32) -> tensor<16x8xf32, #a>
    %b = "tile.splat"(%y) : (f32) -> tensor<8x8xf32, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x8xf32, #mma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x8xf32, #a>, tensor<8x8xf32, #b>, tensor<16x8xf32, #mma>) -> tensor<16x8xf32, #mma>
    return
  }
}
