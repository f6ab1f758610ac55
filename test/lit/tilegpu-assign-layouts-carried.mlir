// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target sm_80 --num-warps 4 | FileCheck %s

// A loop-carried tile started from a constant adopts the layout of its first user in the body
// even when read more than once (attention's running max: by the new max, then by the
// rescale): the later readers see the adopted layout, the constant is converted once before
// the loop, and the loop converts nothing but the dot's operands.
// CHECK-LABEL: func.func @running_max
// CHECK: %[[INIT:.+]] = "tilegpu.convert_layout"(%cst) : (tensor<32x32xf32, #tilegpu.blocked<{{.*}}>>) -> tensor<32x32xf32, [[MMA:#tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>]]>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[M:arg[0-9]+]] = %[[INIT]]) -> (tensor<32x32xf32, [[MMA]]>)
// CHECK: "tile.dot"
// CHECK-NOT: "tilegpu.convert_layout"
// CHECK: %[[NEW:.+]] = arith.maximumf %[[M]], %{{.+}} : tensor<32x32xf32, [[MMA]]>
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[M]], %[[NEW]] : tensor<32x32xf32, [[MMA]]>
// CHECK-NEXT: %{{.+}} = math.exp2 %[[D]] : tensor<32x32xf32, [[MMA]]>
// CHECK: scf.yield %[[NEW]] : tensor<32x32xf32, [[MMA]]>
module {
  func.func @running_max(%a: tensor<32x16xf16>, %b: tensor<16x32xf16>, %n: i32) -> tensor<32x32xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ninf = arith.constant dense<0xFF800000> : tensor<32x32xf32>
    %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf) -> (tensor<32x32xf32>) : i32 {
      %s = "tile.dot"(%a, %b, %zero) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16>, tensor<16x32xf16>, tensor<32x32xf32>) -> tensor<32x32xf32>
      %mn = arith.maximumf %m, %s : tensor<32x32xf32>
      %d = arith.subf %m, %mn : tensor<32x32xf32>
      %e = math.exp2 %d : tensor<32x32xf32>
      scf.yield %mn : tensor<32x32xf32>
    }
    return %r : tensor<32x32xf32>
  }
}

// -----

// A carried constant-started tile read first by an op that keeps another operand's layout
// for it is not retargeted by a later reader: here the first reader (an add of two carried
// tiles, neither fixed) leads with it, so it keeps its layout and the dot's result is
// converted to it.
// CHECK-LABEL: func.func @first_reader_leads
// CHECK: scf.for %{{.+}} iter_args(%[[X:arg[0-9]+]] = %cst, %[[Y:arg[0-9]+]] = %cst) -> (tensor<32x32xf32, [[B:#tilegpu.blocked<array<i32: 1, 1>, array<i32: 1, 32>, array<i32: 4, 1>, array<i32: 1, 0>>]]>, tensor<32x32xf32, [[B]]>)
// CHECK: arith.addf %[[X]], %[[Y]] : tensor<32x32xf32, [[B]]>
// CHECK: "tilegpu.convert_layout"
// CHECK: arith.maximumf %[[X]], %{{.+}} : tensor<32x32xf32, [[B]]>
module {
  func.func @first_reader_leads(%a: tensor<32x16xf16>, %b: tensor<16x32xf16>, %n: i32) -> tensor<32x32xf32> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %zero, %y = %zero) -> (tensor<32x32xf32>, tensor<32x32xf32>) : i32 {
      %t = arith.addf %x, %y : tensor<32x32xf32>
      %s = "tile.dot"(%a, %b, %zero) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16>, tensor<16x32xf16>, tensor<32x32xf32>) -> tensor<32x32xf32>
      %mn = arith.maximumf %x, %s : tensor<32x32xf32>
      scf.yield %mn, %t : tensor<32x32xf32>, tensor<32x32xf32>
    }
    return %r#0 : tensor<32x32xf32>
  }
}
