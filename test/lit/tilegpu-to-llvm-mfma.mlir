// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 --num-warps 1 | FileCheck %s

// tile.dot with its operands in dot_operand layouts of an MFMA accumulator (rules/dot_mfma.py):
// per instruction tile and K block one rocdl.mfma.*; a lane's k_width operand elements packed
// into the instruction's operand (four f16 as vector<4xf16>, eight i8 as an i64), the
// accumulator's values gathered into a vector and taken out of the result.

// One 32x32x8 f16 MFMA: 16 accumulator values in, 16 out.
// CHECK-LABEL: gpu.func @mfma_f16(
// CHECK: llvm.mlir.poison : vector<16xf32>
// CHECK-COUNT-15: llvm.insertelement %arg2, %{{.+}} : vector<16xf32>
// CHECK-NEXT: %[[C:.+]] = llvm.insertelement %arg2, %{{.+}} : vector<16xf32>
// CHECK-NEXT: llvm.mlir.poison : vector<4xf16>
// CHECK-COUNT-3: llvm.insertelement %arg0, %{{.+}} : vector<4xf16>
// CHECK-NEXT: %[[A:.+]] = llvm.insertelement %arg0, %{{.+}} : vector<4xf16>
// CHECK-NEXT: llvm.mlir.poison : vector<4xf16>
// CHECK-COUNT-3: llvm.insertelement %arg1, %{{.+}} : vector<4xf16>
// CHECK-NEXT: %[[B:.+]] = llvm.insertelement %arg1, %{{.+}} : vector<4xf16>
// CHECK-NEXT: %[[D:.+]] = rocdl.mfma.f32.32x32x8f16 %[[A]], %[[B]], %[[C]], %[[Z:.+]], %[[Z]], %[[Z]] : (vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK-COUNT-16: llvm.extractelement %[[D]]
// CHECK-NEXT: gpu.return
// CHECK-NOT: rocdl.mfma
#mfma = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 4 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 4 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @mfma_f16(%x: f16, %y: f16, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f16) -> tensor<32x8xf16, #a>
    %b = "tile.splat"(%y) : (f16) -> tensor<8x32xf16, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<32x32xf32, #mfma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x8xf16, #a>, tensor<8x32xf16, #b>, tensor<32x32xf32, #mfma>) -> tensor<32x32xf32, #mfma>
    return
  }
}

// -----

// kpack 2 on 16x16x16: a lane holds 8 consecutive K elements, which feed two MFMAs (its first
// and second four); K = 32 is one K block.
// CHECK-LABEL: gpu.func @mfma_kpack2(
// CHECK-COUNT-2: rocdl.mfma.f32.16x16x16f16 {{.+}} : (vector<4xf16>, vector<4xf16>, vector<4xf32>, i32, i32, i32) -> vector<4xf32>
// CHECK-NOT: rocdl.mfma
#mfma = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 16, 16>, false>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 16, 16>, false>, 8 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 16, 16>, false>, 8 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @mfma_kpack2(%x: f16, %y: f16, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f16) -> tensor<16x32xf16, #a>
    %b = "tile.splat"(%y) : (f16) -> tensor<32x16xf16, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x16xf32, #mfma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x32xf16, #a>, tensor<32x16xf16, #b>, tensor<16x16xf32, #mfma>) -> tensor<16x16xf32, #mfma>
    return
  }
}

// -----

// int8 on gfx942: 32x32x16, eight i8 of a lane packed into an i64; K = 32 is two K blocks.
// CHECK-LABEL: gpu.func @mfma_i8(
// CHECK: llvm.bitcast %{{.+}} : vector<8xi8> to i64
// CHECK-COUNT-2: rocdl.mfma.i32.32x32x16.i8 {{.+}} : (i64, i64, vector<16xi32>, i32, i32, i32) -> vector<16xi32>
// CHECK-NOT: rocdl.mfma
#mfma = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 8 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 8 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @mfma_i8(%x: i8, %y: i8, %z: i32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (i8) -> tensor<32x32xi8, #a>
    %b = "tile.splat"(%y) : (i8) -> tensor<32x32xi8, #b>
    %c = "tile.splat"(%z) : (i32) -> tensor<32x32xi32, #mfma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x32xi8, #a>, tensor<32x32xi8, #b>, tensor<32x32xi32, #mfma>) -> tensor<32x32xi32, #mfma>
    return
  }
}
