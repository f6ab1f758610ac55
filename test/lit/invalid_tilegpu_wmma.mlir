// RUN: not tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx1100 --num-warps 1 2>&1 | FileCheck %s

// A WMMA layout with operand types the lowering has no WMMA for: an error naming the target.
// CHECK: error: {{.*}}tile.dot: gfx1100 has no WMMA for bf16 x bf16 -> f32 here (f16 x f16 -> f32/f16)
#wmma = #tilegpu.wmma<1 : i32, array<i32: 1, 1>>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.wmma<1 : i32, array<i32: 1, 1>>, 16 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<1 : i32, array<i32: 1, 1>>, 16 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @wmma_bf16(%x: bf16, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (bf16) -> tensor<16x16xbf16, #a>
    %b = "tile.splat"(%x) : (bf16) -> tensor<16x16xbf16, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x16xf32, #wmma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xbf16, #a>, tensor<16x16xbf16, #b>, tensor<16x16xf32, #wmma>) -> tensor<16x16xf32, #wmma>
    return
  }
}
