// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target gfx1201 --num-warps 4 | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target gfx1100 --num-warps 8 | FileCheck %s --check-prefix=V1

// A chain of WMMA dots (attention's S = q k^T, then P @ V with P computed from S) gets the same
// warps for both, along M as far as the 16-row tiles go (lowering/dot_amd_layout.py's
// chained_dot): alone, the 64x32 dot would take [4, 1] and the 64x128 one [2, 2], and P and
// the row statistics would move between the two layouts through LDS in every iteration.
// CHECK-LABEL: func.func @chain
// CHECK: "tile.dot"{{.*}} -> tensor<64x32xf32, #tilegpu.wmma<2 : i32, array<i32: 4, 1>>>
// CHECK: arith.truncf {{.*}} : tensor<64x32xf32, #tilegpu.wmma<2 : i32, array<i32: 4, 1>>> to tensor<64x32xf16, #tilegpu.wmma<2 : i32, array<i32: 4, 1>>>
// CHECK: "tile.dot"{{.*}} -> tensor<64x128xf32, #tilegpu.wmma<2 : i32, array<i32: 4, 1>>>
// 8 waves: 4 along M (64 rows of 16), 2 along N, for both dots
// V1-LABEL: func.func @chain
// V1: "tile.dot"{{.*}} -> tensor<64x32xf32, #tilegpu.wmma<1 : i32, array<i32: 4, 2>>>
// V1: "tile.dot"{{.*}} -> tensor<64x128xf32, #tilegpu.wmma<1 : i32, array<i32: 4, 2>>>
module {
  func.func @chain(%q: tensor<64x128xf16>, %kt: tensor<128x32xf16>, %v: tensor<32x128xf16>) -> tensor<64x128xf32> attributes {tile.kernel} {
    %z0 = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
    %z1 = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
    %s = "tile.dot"(%q, %kt, %z0) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<64x128xf16>, tensor<128x32xf16>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %e = math.exp2 %s : tensor<64x32xf32>
    %p = arith.truncf %e : tensor<64x32xf32> to tensor<64x32xf16>
    %o = "tile.dot"(%p, %v, %z1) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16>, tensor<32x128xf16>, tensor<64x128xf32>) -> tensor<64x128xf32>
    return %o : tensor<64x128xf32>
  }
}

// -----

// Not a chain: the 64x128 dot's own choice (both dimensions split, [2, 2]).
// CHECK-LABEL: func.func @alone
// CHECK: "tile.dot"{{.*}} -> tensor<64x128xf32, #tilegpu.wmma<2 : i32, array<i32: 2, 2>>>
// V1-LABEL: func.func @alone
// V1: "tile.dot"{{.*}} -> tensor<64x128xf32, #tilegpu.wmma<1 : i32, array<i32: 2, 4>>>
module {
  func.func @alone(%p: tensor<64x32xf16>, %v: tensor<32x128xf16>) -> tensor<64x128xf32> attributes {tile.kernel} {
    %z1 = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
    %o = "tile.dot"(%p, %v, %z1) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16>, tensor<32x128xf16>, tensor<64x128xf32>) -> tensor<64x128xf32>
    return %o : tensor<64x128xf32>
  }
}
