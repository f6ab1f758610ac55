// RUN: not tilework-opt %s --split-input-file --tilegpu-to-llvm 2>&1 | FileCheck %s

// What tilegpu-to-llvm refuses, one error per chunk (the pass fails; no crash, no output).

// Tiles must have layouts: tilegpu-assign-layouts runs first.
// CHECK: error: {{.*}}tile tensor<128xi32> has no layout; run tilegpu-assign-layouts first
func.func @no_layout(%x: i32) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32>
  return
}

// -----

// A broadcast keeps the layout of its operand.
// CHECK-NEXT: error: {{.*}}broadcast between different layouts needs a convert_layout first
#A = #tilegpu.blocked<array<i32: 1, 1>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 1, 1>, array<i32: 8, 4>, array<i32: 4, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @broadcast_between_layouts(%x: i32) attributes {tile.kernel} {
    %s = "tile.splat"(%x) : (i32) -> tensor<1x32xi32, #A>
    %b = "tile.broadcast"(%s) : (tensor<1x32xi32, #A>) -> tensor<32x32xi32, #B>
    return
  }
}

// -----

// CHECK-NEXT: error: {{.*}}non-splat tile constants are not supported yet
#A = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @non_splat_constant() attributes {tile.kernel} {
    %c = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi32, #A>
    return
  }
}

// -----

// An op without a lowering rule is named with the target.
// CHECK-NEXT: error: {{.*}}no lowering rule for 'math.atan' on target 'nvidia'
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @no_rule(%x: f32) attributes {tile.kernel} {
    %c = math.atan %x : f32
    return
  }
}

// -----

// Tiles live in registers: a shared-memory layout describes a buffer, not a tile's values.
// CHECK-NEXT: error: {{.*}}convert_layout between #tilegpu.blocked<array<i32: 1, 1>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>> and #tilegpu.swizzled_shared<4 : i32, 1 : i32, 4 : i32, array<i32: 1, 0>>: tiles live in registers, shared-memory layouts only describe buffers
#A = #tilegpu.blocked<array<i32: 1, 1>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.swizzled_shared<4 : i32, 1 : i32, 4 : i32, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @to_shared(%x: f32) attributes {tile.kernel} {
    %s = "tile.splat"(%x) : (f32) -> tensor<32x32xf32, #A>
    %c = "tilegpu.convert_layout"(%s) : (tensor<32x32xf32, #A>) -> tensor<32x32xf32, #S>
    return
  }
}

// -----

// A tile.dot in mma layouts whose operand packing is not an mma.sync's (f16 needs k_width 2).
// CHECK-NEXT: error: {{.*}}tile.dot: no mma.sync for f16 x f16 -> f32 (tf32, k_width 1) on sm_90a
#M = #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>
#A = #tilegpu.dot_operand<0 : i32, #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>, 1 : i32>
#B = #tilegpu.dot_operand<1 : i32, #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>, 1 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @mma_k_width(%x: f16, %z: f32) attributes {tile.kernel} {
    %a = "tile.splat"(%x) : (f16) -> tensor<16x16xf16, #A>
    %b = "tile.splat"(%x) : (f16) -> tensor<16x8xf16, #B>
    %c = "tile.splat"(%z) : (f32) -> tensor<16x8xf32, #M>
    %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16, #A>, tensor<16x8xf16, #B>, tensor<16x8xf32, #M>) -> tensor<16x8xf32, #M>
    return
  }
}

// -----

// A scan walks a thread's chunk, then lanes, then warps, then repetitions in logical order:
// along the rows of an mma accumulator the registers (row 8) come between the lanes (rows
// 1-4) and the warps (row 16).
// CHECK-NEXT: error: {{.*}}cannot scan along axis 0: warps along dim 0 of {{.*}} do not follow the thread's chunk
#M = #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @scan_mma_rows(%x: f32) attributes {tile.kernel} {
    %v = "tile.splat"(%x) : (f32) -> tensor<32x16xf32, #M>
    %s = "tile.scan"(%v) {axis = 0 : i32, reverse = 0 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<32x16xf32, #M>) -> tensor<32x16xf32, #M>
    return
  }
  func.func private @add(%a: f32, %b: f32) -> f32 {
    %s = arith.addf %a, %b : f32
    return %s : f32
  }
}

// Nothing else: one error per chunk, no IR printed.
// CHECK-NOT: {{.+}}
