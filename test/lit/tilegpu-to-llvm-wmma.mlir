// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx1100 --num-warps 1 | FileCheck %s --check-prefix=V1
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx1201 --num-warps 1 | FileCheck %s --check-prefix=V2

// tile.dot in WMMA layouts (rules/dot_wmma.py): one rocdl.wmma per 16x16 tile and K block of
// 16; gfx11 passes 16 halves a lane, gfx12 eight; 8 f32 accumulators in and out.

// V1-LABEL: gpu.func @wmma_v1(
// V1: llvm.mlir.poison : vector<8xf32>
// V1-COUNT-8: llvm.insertelement %arg2
// V1-NEXT: llvm.mlir.poison : vector<16xf16>
// V1-COUNT-16: llvm.insertelement %arg0
// V1-NEXT: llvm.mlir.poison : vector<16xf16>
// V1-COUNT-16: llvm.insertelement %arg1
// V1-NEXT: %[[D:.+]] = rocdl.wmma.f32.16x16x16.f16 %{{.+}}, %{{.+}}, %{{.+}} : (vector<16xf16>, vector<16xf16>, vector<8xf32>) -> vector<8xf32>
// V1-COUNT-8: llvm.extractelement %[[D]]
// V1-NEXT: gpu.return
#wmma = #tilegpu.wmma<1 : i32, array<i32: 1, 1>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.wmma<1 : i32, array<i32: 1, 1>>, 16 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<1 : i32, array<i32: 1, 1>>, 16 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @wmma_v1(%x: f16, %y: f16, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f16) -> tensor<16x16xf16, #a>
    %b = "tile.splat"(%y) : (f16) -> tensor<16x16xf16, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x16xf32, #wmma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16, #a>, tensor<16x16xf16, #b>, tensor<16x16xf32, #wmma>) -> tensor<16x16xf32, #wmma>
    return
  }
}

// -----

// gfx12: K = 32 is two K blocks, each of 8 halves a lane: two WMMAs.
// V2-LABEL: gpu.func @wmma_v2(
// V2-COUNT-2: rocdl.wmma.f32.16x16x16.f16 {{.+}} : (vector<8xf16>, vector<8xf16>, vector<8xf32>) -> vector<8xf32>
// V2-NOT: rocdl.wmma
#wmma = #tilegpu.wmma<2 : i32, array<i32: 1, 1>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.wmma<2 : i32, array<i32: 1, 1>>, 8 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<2 : i32, array<i32: 1, 1>>, 8 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @wmma_v2(%x: f16, %y: f16, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f16) -> tensor<16x32xf16, #a>
    %b = "tile.splat"(%y) : (f16) -> tensor<32x16xf16, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x16xf32, #wmma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x32xf16, #a>, tensor<32x16xf16, #b>, tensor<16x16xf32, #wmma>) -> tensor<16x16xf32, #wmma>
    return
  }
}
