// RUN: not tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx90a --num-warps 1 2>&1 | FileCheck %s
// RUN: not tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 --num-warps 1 2>&1 | FileCheck %s --check-prefix=G942
// RUN: not tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx950 --num-warps 1 2>&1 | FileCheck %s --check-prefix=G950

// A dot laid out for MFMA with operand types the architecture's MFMA lacks: an error naming
// the architecture (rules/dot_mfma.py; tilegpu-assign-layouts itself keeps such dots on FMAs).

// CHECK: error: {{.*}}tile.dot: gfx90a has no fp8 MFMA (f8E4M3FN x f8E4M3FN)
// G942: error: {{.*}}tile.dot: gfx942's fp8 MFMA reads the fnuz formats, not OCP f8E4M3FN x f8E4M3FN
// G950-NOT: error: {{.*}}OCP f8E4M3FN
#mfma = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 8 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 8 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @fp8(%x: f8E4M3FN, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f8E4M3FN) -> tensor<32x16xf8E4M3FN, #a>
    %b = "tile.splat"(%x) : (f8E4M3FN) -> tensor<16x32xf8E4M3FN, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<32x32xf32, #mfma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf8E4M3FN, #a>, tensor<16x32xf8E4M3FN, #b>, tensor<32x32xf32, #mfma>) -> tensor<32x32xf32, #mfma>
    return
  }
}

// -----

// CHECK: error: {{.*}}tile.dot: gfx90a has no xf32 MFMA
// G942-NOT: error: {{.*}}xf32
// G950: error: {{.*}}tile.dot: gfx950 has no xf32 MFMA
#mfma = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 2 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 2 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @xf32(%x: f32, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f32) -> tensor<32x4xf32, #a>
    %b = "tile.splat"(%x) : (f32) -> tensor<4x32xf32, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<32x32xf32, #mfma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x4xf32, #a>, tensor<4x32xf32, #b>, tensor<32x32xf32, #mfma>) -> tensor<32x32xf32, #mfma>
    return
  }
}

// -----

// fnuz fp8 (gfx942's formats) on an architecture whose MFMA reads OCP bytes, or none, and an
// fnuz operand with an OCP one
// CHECK: error: {{.*}}tile.dot: gfx90a has no fp8 MFMA (f8E4M3FNUZ x f8E5M2FNUZ)
// G942-NOT: error: {{.*}}f8E4M3FNUZ x f8E5M2FNUZ
// G950: error: {{.*}}tile.dot: gfx950's fp8 MFMA reads the OCP formats, not fnuz f8E4M3FNUZ x f8E5M2FNUZ
#mfma = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 8 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 8 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @fnuz(%x: f8E4M3FNUZ, %y: f8E5M2FNUZ, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f8E4M3FNUZ) -> tensor<32x16xf8E4M3FNUZ, #a>
    %b = "tile.splat"(%y) : (f8E5M2FNUZ) -> tensor<16x32xf8E5M2FNUZ, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<32x32xf32, #mfma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf8E4M3FNUZ, #a>, tensor<16x32xf8E5M2FNUZ, #b>, tensor<32x32xf32, #mfma>) -> tensor<32x32xf32, #mfma>
    return
  }
}

// -----

// CHECK: error: {{.*}}tile.dot: gfx90a has no fp8 MFMA (f8E4M3FNUZ x f8E4M3FN)
// G942: error: {{.*}}tile.dot: gfx942 has no MFMA for f8E4M3FNUZ x f8E4M3FN (an fnuz and an OCP fp8 format)
// G950: error: {{.*}}tile.dot: gfx950 has no MFMA for f8E4M3FNUZ x f8E4M3FN (an fnuz and an OCP fp8 format)
#mfma = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#a = #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 8 : i32>
#b = #tilegpu.dot_operand<1 : i32, #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>, 8 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @mixed(%x: f8E4M3FNUZ, %y: f8E4M3FN, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f8E4M3FNUZ) -> tensor<32x16xf8E4M3FNUZ, #a>
    %b = "tile.splat"(%y) : (f8E4M3FN) -> tensor<16x32xf8E4M3FN, #b>
    %c = "tile.splat"(%z) : (f32) -> tensor<32x32xf32, #mfma>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf8E4M3FNUZ, #a>, tensor<16x32xf8E4M3FN, #b>, tensor<32x32xf32, #mfma>) -> tensor<32x32xf32, #mfma>
    return
  }
}
