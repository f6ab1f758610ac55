// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target sm_80 --num-warps 4 | FileCheck %s

// A 16-bit tile.dot on sm_80+ goes to tensor cores (lowering/dot_layouts.py): the accumulator
// and the result in #tilegpu.mma v2 (warps along M and N as Triton: [2, 2] for 32x32 and 4
// warps), a and b converted to its dot operands (k_width 2: two 16-bit K elements per
// register).  fp32 with input_precision "ieee" stays on the FMA path: the result takes the
// accumulator's layout, a and b keep theirs (the lowering moves them through shared memory).
// tile.join adds a last dimension of 2 that each thread holds (spt 2, order new dimension
// first), tile.split removes it again, and tile.cat of tiles spanning a whole CTA tile keeps
// their layout: all three only relabel registers.

// CHECK-LABEL: func.func @dot_f16
// CHECK-NEXT: %[[A:.+]] = "tilegpu.convert_layout"(%arg0) : (tensor<32x16xf16, [[L:#tilegpu.blocked<array<i32: 1, 1>, array<i32: 1, 32>, array<i32: 4, 1>, array<i32: 1, 0>>]]>) -> tensor<32x16xf16, [[DA:#tilegpu.dot_operand<0 : i32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>, 2 : i32>]]>
// CHECK-NEXT: %[[B:.+]] = "tilegpu.convert_layout"(%arg1) : (tensor<16x32xf16, [[L]]>) -> tensor<16x32xf16, [[DB:#tilegpu.dot_operand<1 : i32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>, 2 : i32>]]>
// CHECK-NEXT: %[[C:.+]] = "tilegpu.convert_layout"(%arg2) : (tensor<32x32xf16, [[L]]>) -> tensor<32x32xf16, [[MMA:#tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>]]>
// CHECK-NEXT: "tile.dot"(%[[A]], %[[B]], %[[C]]) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16, [[DA]]>, tensor<16x32xf16, [[DB]]>, tensor<32x32xf16, [[MMA]]>) -> tensor<32x32xf16, [[MMA]]>
module {
  func.func @dot_f16(%a: tensor<32x16xf16>, %b: tensor<16x32xf16>, %c: tensor<32x32xf16>) -> tensor<32x32xf16> attributes {tile.kernel} {
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16>, tensor<16x32xf16>, tensor<32x32xf16>) -> tensor<32x32xf16>
    return %d : tensor<32x32xf16>
  }
}

// -----

// CHECK-LABEL: func.func @dot_f32_ieee
// CHECK-NEXT: "tile.dot"(%arg0, %arg1, %arg2) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf32, [[L:#tilegpu.blocked<array<i32: 1, 1>, array<i32: 1, 32>, array<i32: 4, 1>, array<i32: 1, 0>>]]>, tensor<16x32xf32, [[L]]>, tensor<32x32xf32, [[L]]>) -> tensor<32x32xf32, [[L]]>
module {
  func.func @dot_f32_ieee(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> attributes {tile.kernel} {
    %d = "tile.dot"(%a, %b, %c) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf32>, tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    return %d : tensor<32x32xf32>
  }
}

// -----

// A loop-carried accumulator started from zeros adopts the mma layout: the zeros are converted
// once before the loop, nothing inside the loop but the operands, and the loop's result (the
// store's conversion is after the loop) is in the mma layout.
// CHECK-LABEL: func.func @dot_loop
// CHECK: %[[Z:.+]] = "tilegpu.convert_layout"(%{{.+}}) : (tensor<64x64xf32, #tilegpu.blocked<{{.+}}>>) -> tensor<64x64xf32, [[MMA:#tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>]]>
// CHECK-NEXT: %[[R:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[Z]]) -> (tensor<64x64xf32, [[MMA]]>) {{ *}}: i32 {
// CHECK-NEXT: "tilegpu.convert_layout"(%arg0) {{.+}} -> tensor<64x32xf16, #tilegpu.dot_operand<0 : i32, [[MMA]], 2 : i32>>
// CHECK-NEXT: "tilegpu.convert_layout"(%arg1) {{.+}} -> tensor<32x64xf16, #tilegpu.dot_operand<1 : i32, [[MMA]], 2 : i32>>
// CHECK-NEXT: %[[D:.+]] = "tile.dot"(%{{.+}}, %{{.+}}, %[[ACC]]) {{.+}} -> tensor<64x64xf32, [[MMA]]>
// CHECK-NEXT: scf.yield %[[D]] : tensor<64x64xf32, [[MMA]]>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : tensor<64x64xf32, [[MMA]]>
module {
  func.func @dot_loop(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>, %n: i32) -> tensor<64x64xf32> attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %d = "tile.dot"(%a, %b, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32>) -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    return %r : tensor<64x64xf32>
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
