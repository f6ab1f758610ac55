// RUN: not tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx1100 --num-warps 1 2>&1 | FileCheck %s
// RUN: not tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx1201 --num-warps 1 2>&1 | FileCheck %s --check-prefix=G12

// A WMMA layout with operand types the architecture's WMMA lacks: an error naming it
// (dot_amd_layout.wmma_kind; tilegpu-assign-layouts itself keeps such dots on FMAs).
// (the WMMA version of a chunk does not match the other target: the first chunks are gfx11's)

// OCP fp8: gfx12 only
// CHECK: error: {{.*}}tile.dot: gfx1100 has no fp8 WMMA (f8E4M3FN x f8E4M3FN)
#wmma = #tilegpu.wmma<1 : i32, array<i32: 1, 1>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.wmma<1 : i32, array<i32: 1, 1>>, 16 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<1 : i32, array<i32: 1, 1>>, 16 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @fp8(%x: f8E4M3FN, %y: f8E4M3FN, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f8E4M3FN) -> tensor<16x16xf8E4M3FN, #a>
    %b = "tile.splat"(%y) : (f8E4M3FN) -> tensor<16x16xf8E4M3FN, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x16xf32, #wmma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf8E4M3FN, #a>, tensor<16x16xf8E4M3FN, #b>, tensor<16x16xf32, #wmma>) -> tensor<16x16xf32, #wmma>
    return
  }
}

// -----

// fp32 operands: RDNA has no xf32 WMMA
// CHECK: error: {{.*}}tile.dot: gfx1100 has no WMMA for f32 x f32 -> f32
#wmma = #tilegpu.wmma<1 : i32, array<i32: 1, 1>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.wmma<1 : i32, array<i32: 1, 1>>, 16 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<1 : i32, array<i32: 1, 1>>, 16 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @f32(%x: f32, %y: f32, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f32) -> tensor<16x16xf32, #a>
    %b = "tile.splat"(%y) : (f32) -> tensor<16x16xf32, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x16xf32, #wmma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32, #a>, tensor<16x16xf32, #b>, tensor<16x16xf32, #wmma>) -> tensor<16x16xf32, #wmma>
    return
  }
}

// -----

// fnuz fp8 (gfx942's formats) on gfx12, whose WMMA reads OCP bytes
// G12: error: {{.*}}tile.dot: gfx1201's fp8 WMMA reads the OCP formats, not fnuz f8E4M3FNUZ x f8E4M3FNUZ
#wmma = #tilegpu.wmma<2 : i32, array<i32: 1, 1>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.wmma<2 : i32, array<i32: 1, 1>>, 8 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<2 : i32, array<i32: 1, 1>>, 8 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @fnuz(%x: f8E4M3FNUZ, %y: f8E4M3FNUZ, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f8E4M3FNUZ) -> tensor<16x16xf8E4M3FNUZ, #a>
    %b = "tile.splat"(%y) : (f8E4M3FNUZ) -> tensor<16x16xf8E4M3FNUZ, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x16xf32, #wmma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf8E4M3FNUZ, #a>, tensor<16x16xf8E4M3FNUZ, #b>, tensor<16x16xf32, #wmma>) -> tensor<16x16xf32, #wmma>
    return
  }
}

// -----

// fp32 operands on gfx12 too
// G12: error: {{.*}}tile.dot: gfx1201 has no WMMA for f32 x f32 -> f32
#wmma = #tilegpu.wmma<2 : i32, array<i32: 1, 1>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.wmma<2 : i32, array<i32: 1, 1>>, 8 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<2 : i32, array<i32: 1, 1>>, 8 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @f32_v2(%x: f32, %y: f32, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f32) -> tensor<16x16xf32, #a>
    %b = "tile.splat"(%y) : (f32) -> tensor<16x16xf32, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x16xf32, #wmma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32, #a>, tensor<16x16xf32, #b>, tensor<16x16xf32, #wmma>) -> tensor<16x16xf32, #wmma>
    return
  }
}
