// RUN: tilework-opt %s --split-input-file --tilegpu-hoist-loop-converts | FileCheck %s

// An accumulator carried through two nested loops in #b, converted to #c for the work and back
// for the yield, is carried in #c by both: one conversion before the outer loop, one after it
// (for the return), none inside.
// CHECK-LABEL: func.func @nested
// CHECK-NEXT: %[[I:.+]] = "tilegpu.convert_layout"(%arg0) : (tensor<512xf32, #tilegpu.blocked<array<i32: 4>{{.*}}) -> tensor<512xf32, #tilegpu.blocked<array<i32: 1>
// CHECK-NEXT: %[[O:.+]] = scf.for %{{.+}} = %arg2 to %arg3 step %arg4 iter_args(%[[A:.+]] = %[[I]]) -> (tensor<512xf32, #tilegpu.blocked<array<i32: 1>
// CHECK-NEXT: %[[R:.+]] = scf.for %{{.+}} = %arg2 to %arg3 step %arg4 iter_args(%[[B:.+]] = %[[A]]) -> (tensor<512xf32, #tilegpu.blocked<array<i32: 1>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[B]], %arg1
// CHECK-NEXT: scf.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[BACK:.+]] = "tilegpu.convert_layout"(%[[O]]) : (tensor<512xf32, #tilegpu.blocked<array<i32: 1>{{.*}}) -> tensor<512xf32, #tilegpu.blocked<array<i32: 4>
// CHECK-NEXT: return %[[BACK]]
#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
#c = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @nested(%x: tensor<512xf32, #b>, %y: tensor<512xf32, #c>, %lo: index, %hi: index, %st: index) -> tensor<512xf32, #b> {
  %o = scf.for %i = %lo to %hi step %st iter_args(%a = %x) -> (tensor<512xf32, #b>) {
    %a2 = "tilegpu.convert_layout"(%a) : (tensor<512xf32, #b>) -> tensor<512xf32, #c>
    %r = scf.for %j = %lo to %hi step %st iter_args(%acc = %a2) -> (tensor<512xf32, #c>) {
      %s = arith.addf %acc, %y : tensor<512xf32, #c>
      scf.yield %s : tensor<512xf32, #c>
    }
    %r2 = "tilegpu.convert_layout"(%r) : (tensor<512xf32, #c>) -> tensor<512xf32, #b>
    scf.yield %r2 : tensor<512xf32, #b>
  }
  return %o : tensor<512xf32, #b>
}
}

// -----

// The inner loop's own conversions: the argument converted on entry, the result converted for
// the yield.  Carried in #c; the users of the result that want #c read it directly.
// CHECK-LABEL: func.func @inner
// CHECK-NEXT: %[[I:.+]] = "tilegpu.convert_layout"(%arg0)
// CHECK-NEXT: %[[R:.+]] = scf.for %{{.+}} iter_args(%[[B:.+]] = %[[I]]) -> (tensor<512xf32, #tilegpu.blocked<array<i32: 1>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[B]], %arg1
// CHECK-NEXT: scf.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[BACK:.+]] = "tilegpu.convert_layout"(%[[R]])
// CHECK-NEXT: %[[T:.+]] = arith.mulf %[[R]], %arg1
// CHECK-NEXT: return %[[BACK]], %[[T]]
#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
#c = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @inner(%x: tensor<512xf32, #b>, %y: tensor<512xf32, #c>, %lo: index, %hi: index, %st: index) -> (tensor<512xf32, #b>, tensor<512xf32, #c>) {
  %r = scf.for %j = %lo to %hi step %st iter_args(%acc = %x) -> (tensor<512xf32, #b>) {
    %a = "tilegpu.convert_layout"(%acc) : (tensor<512xf32, #b>) -> tensor<512xf32, #c>
    %s = arith.addf %a, %y : tensor<512xf32, #c>
    %s2 = "tilegpu.convert_layout"(%s) : (tensor<512xf32, #c>) -> tensor<512xf32, #b>
    scf.yield %s2 : tensor<512xf32, #b>
  }
  %rc = "tilegpu.convert_layout"(%r) : (tensor<512xf32, #b>) -> tensor<512xf32, #c>
  %t = arith.mulf %rc, %y : tensor<512xf32, #c>
  return %r, %t : tensor<512xf32, #b>, tensor<512xf32, #c>
}
}

// -----

// Left alone: the argument has a use that is not a conversion (the body also reads it in #b).
// CHECK-LABEL: func.func @mixed_use
// CHECK: scf.for {{.+}} -> (tensor<512xf32, #tilegpu.blocked<array<i32: 4>
// CHECK: "tilegpu.convert_layout"(%{{.+}}) : (tensor<512xf32, #tilegpu.blocked<array<i32: 4>
#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
#c = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @mixed_use(%x: tensor<512xf32, #b>, %y: tensor<512xf32, #c>, %z: tensor<512xf32, #b>, %lo: index, %hi: index, %st: index) -> tensor<512xf32, #b> {
  %r = scf.for %j = %lo to %hi step %st iter_args(%acc = %x) -> (tensor<512xf32, #b>) {
    %a = "tilegpu.convert_layout"(%acc) : (tensor<512xf32, #b>) -> tensor<512xf32, #c>
    %s = arith.addf %a, %y : tensor<512xf32, #c>
    %s2 = "tilegpu.convert_layout"(%s) : (tensor<512xf32, #c>) -> tensor<512xf32, #b>
    %m = arith.maximumf %s2, %acc : tensor<512xf32, #b>
    scf.yield %m : tensor<512xf32, #b>
  }
  return %r : tensor<512xf32, #b>
}
}
