// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target sm_90a --num-warps 4 | FileCheck %s

// tile.dot takes its accumulator's layout (a and b keep theirs: the lowering moves them through
// shared memory).  tile.join adds a last dimension of 2 that each thread holds (spt 2, order
// new dimension first), tile.split removes it again, and tile.cat of tiles spanning a whole CTA
// tile keeps their layout: all three only relabel registers.

// CHECK-LABEL: func.func @dot_f16
// CHECK: "tile.dot"(%arg0, %arg1, %arg2) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16, [[L:#tilegpu.blocked<array<i32: 1, 1>, array<i32: 1, 32>, array<i32: 4, 1>, array<i32: 1, 0>>]]>, tensor<16x32xf16, [[L]]>, tensor<32x32xf16, [[L]]>) -> tensor<32x32xf16, [[L]]>
module {
  func.func @dot_f16(%a: tensor<32x16xf16>, %b: tensor<16x32xf16>, %c: tensor<32x32xf16>) -> tensor<32x32xf16> attributes {tile.kernel} {
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16>, tensor<16x32xf16>, tensor<32x32xf16>) -> tensor<32x32xf16>
    return %d : tensor<32x32xf16>
  }
}

// -----

// CHECK-LABEL: func.func @join_split_cat
// CHECK: "tile.join"(%arg0, %arg1) : (tensor<256xf32, [[L1:#tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>]]>, tensor<256xf32, [[L1]]>) -> tensor<256x2xf32, [[J:#tilegpu.blocked<array<i32: 1, 2>, array<i32: 32, 1>, array<i32: 4, 1>, array<i32: 1, 0>>]]>
// CHECK-NEXT: "tile.split"(%{{.+}}) : (tensor<256x2xf32, [[J]]>) -> (tensor<256xf32, [[L1]]>, tensor<256xf32, [[L1]]>)
// CHECK-NEXT: arith.addf %{{.+}}, %{{.+}} : tensor<256xf32, [[L1]]>
// CHECK-NEXT: "tile.cat"(%arg0, %arg1) : (tensor<256xf32, [[L1]]>, tensor<256xf32, [[L1]]>) -> tensor<512xf32, [[L1]]>
// CHECK-NOT: tilegpu.convert_layout
module {
  func.func @join_split_cat(%a: tensor<256xf32>, %b: tensor<256xf32>) -> (tensor<256xf32>, tensor<512xf32>) attributes {tile.kernel} {
    %j = "tile.join"(%a, %b) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256x2xf32>
    %lo, %hi = "tile.split"(%j) : (tensor<256x2xf32>) -> (tensor<256xf32>, tensor<256xf32>)
    %s = arith.addf %lo, %hi : tensor<256xf32>
    %c = "tile.cat"(%a, %b) : (tensor<256xf32>, tensor<256xf32>) -> tensor<512xf32>
    return %s, %c : tensor<256xf32>, tensor<512xf32>
  }
}

// -----

// A split whose operand has lanes along the last dimension is converted first to the join
// layout of the result's default.
// CHECK-LABEL: func.func @split_converted
// CHECK: tilegpu.convert_layout
// CHECK-SAME: -> tensor<64x2xf32, #tilegpu.blocked<array<i32: 1, 2>, array<i32: 32, 1>, array<i32: 4, 1>, array<i32: 1, 0>>>
// CHECK-NEXT: "tile.split"
module {
  func.func @split_converted(%x: tensor<64x2xf32>) -> tensor<64xf32> attributes {tile.kernel} {
    %lo, %hi = "tile.split"(%x) : (tensor<64x2xf32>) -> (tensor<64xf32>, tensor<64xf32>)
    return %lo : tensor<64xf32>
  }
}
