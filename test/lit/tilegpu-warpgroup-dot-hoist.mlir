// RUN: tilework-opt %s --tilegpu-warpgroup-dot --target sm_90a | FileCheck %s

// tilegpu-warpgroup-dot's hoisting (lowering/dot_wgmma_hoist.py).
#BL = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#V3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>

// Loop-invariant operands (attention's q) are written to their buffers once, before the
// scf.for directly around the dot, and freed after it; one buffer serves both dots of the loop
// that read q in one layout; a value of the loop body is written every iteration.
// CHECK-LABEL: func.func @hoisted(
// CHECK: %[[Q:.+]] = "tilegpu.local_alloc"(%arg0) : (tensor<64x32xf16, {{.+}}>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16,
// CHECK-NEXT: %[[VS:.+]] = "tilegpu.local_alloc"(%arg1) : (tensor<32x64xf16, {{.+}}>) -> !tilegpu.memdesc<array<i64: 32, 64>, f16,
// CHECK-NEXT: %[[R:.+]] = scf.for
// CHECK-NEXT: %[[K:.+]] = arith.addf %arg1, %arg1
// CHECK-NEXT: %[[KS:.+]] = "tilegpu.local_alloc"(%[[K]])
// CHECK-NEXT: %[[D1:.+]] = "tilegpu.warpgroup_dot"(%[[Q]], %[[KS]],
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[KS]])
// CHECK-NEXT: %[[D2:.+]] = "tilegpu.warpgroup_dot"(%[[Q]], %[[VS]], %[[D1]])
// CHECK-NEXT: scf.yield %[[D2]]
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[VS]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[Q]])
// CHECK-NEXT: return %[[R]]
func.func @hoisted(%q: tensor<64x32xf16, #BL>, %kv: tensor<32x64xf16, #BL>, %c: tensor<64x64xf32, #V3>, %n: index) -> tensor<64x64xf32, #V3> attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %c) -> (tensor<64x64xf32, #V3>) {
    %k = arith.addf %kv, %kv : tensor<32x64xf16, #BL>
    %d1 = "tile.dot"(%q, %k, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16, #BL>, tensor<32x64xf16, #BL>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
    %d2 = "tile.dot"(%q, %kv, %d1) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16, #BL>, tensor<32x64xf16, #BL>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
    scf.yield %d2 : tensor<64x64xf32, #V3>
  }
  return %r : tensor<64x64xf32, #V3>
}

// In nested loops the buffer is written before the outermost loop in which the value is
// invariant (its registers die there), and freed after it.
// CHECK-LABEL: func.func @nested(
// CHECK: %[[Q:.+]] = "tilegpu.local_alloc"(%arg0)
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"(%arg1)
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: "tilegpu.warpgroup_dot"(%[[Q]], %[[B]],
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[B]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[Q]])
func.func @nested(%q: tensor<64x32xf16, #BL>, %kv: tensor<32x64xf16, #BL>, %c: tensor<64x64xf32, #V3>, %n: index) -> tensor<64x64xf32, #V3> attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o = scf.for %i = %c0 to %n step %c1 iter_args(%acc0 = %c) -> (tensor<64x64xf32, #V3>) {
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %acc0) -> (tensor<64x64xf32, #V3>) {
      %d = "tile.dot"(%q, %kv, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16, #BL>, tensor<32x64xf16, #BL>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
      scf.yield %d : tensor<64x64xf32, #V3>
    }
    scf.yield %r : tensor<64x64xf32, #V3>
  }
  return %o : tensor<64x64xf32, #V3>
}

// A value computed in the outer loop is written before the inner loop only.
// CHECK-LABEL: func.func @nested_outer_variant(
// CHECK: %[[Q:.+]] = "tilegpu.local_alloc"(%arg0)
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[K:.+]] = arith.addf %arg1, %arg1
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"(%[[K]])
// CHECK-NEXT: scf.for
// CHECK-NEXT: "tilegpu.warpgroup_dot"(%[[Q]], %[[B]],
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[B]])
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[Q]])
func.func @nested_outer_variant(%q: tensor<64x32xf16, #BL>, %kv: tensor<32x64xf16, #BL>, %c: tensor<64x64xf32, #V3>, %n: index) -> tensor<64x64xf32, #V3> attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o = scf.for %i = %c0 to %n step %c1 iter_args(%acc0 = %c) -> (tensor<64x64xf32, #V3>) {
    %k = arith.addf %kv, %kv : tensor<32x64xf16, #BL>
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %acc0) -> (tensor<64x64xf32, #V3>) {
      %d = "tile.dot"(%q, %k, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16, #BL>, tensor<32x64xf16, #BL>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
      scf.yield %d : tensor<64x64xf32, #V3>
    }
    scf.yield %r : tensor<64x64xf32, #V3>
  }
  return %o : tensor<64x64xf32, #V3>
}

// One value, one buffer type, in one block (attention's q: the peeled first key block, then
// the key loops): the allocs hoisted before each loop and the peeled dot's become the first,
// freed after the last loop; q's registers die at that one write.  (q @ q: as B, N-major, q
// has the same type, so the same buffer too.)
// CHECK-LABEL: func.func @peeled_and_loops(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[Q:.+]] = "tilegpu.local_alloc"(%arg0) : (tensor<64x64xf16, {{.+}}>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[K:.+]] = "tilegpu.local_alloc"(%arg1)
// CHECK-NEXT: %[[D0:.+]] = "tilegpu.warpgroup_dot"(%[[Q]], %[[K]], %arg2)
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[K]])
// CHECK-NEXT: scf.for
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[KS:.+]] = "tilegpu.local_alloc"
// CHECK-NEXT: "tilegpu.warpgroup_dot"(%[[Q]], %[[KS]],
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[KS]])
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK-NEXT: "tilegpu.warpgroup_dot"(%[[Q]], %[[Q]],
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[Q]])
// CHECK-NEXT: return
#BLq = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#BTq = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
#W3q = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
func.func @peeled_and_loops(%q: tensor<64x64xf16, #BLq>, %kv: tensor<64x64xf16, #BLq>, %c: tensor<64x64xf32, #W3q>, %n: index) -> tensor<64x64xf32, #W3q> attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = "tile.dot"(%q, %kv, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BLq>, tensor<64x64xf16, #BLq>, tensor<64x64xf32, #W3q>) -> tensor<64x64xf32, #W3q>
  %r1 = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %d0) -> (tensor<64x64xf32, #W3q>) {
    %k = arith.addf %kv, %kv : tensor<64x64xf16, #BLq>
    %d = "tile.dot"(%q, %k, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BLq>, tensor<64x64xf16, #BLq>, tensor<64x64xf32, #W3q>) -> tensor<64x64xf32, #W3q>
    scf.yield %d : tensor<64x64xf32, #W3q>
  }
  %r2 = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %r1) -> (tensor<64x64xf32, #W3q>) {
    %d = "tile.dot"(%q, %q, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BLq>, tensor<64x64xf16, #BLq>, tensor<64x64xf32, #W3q>) -> tensor<64x64xf32, #W3q>
    scf.yield %d : tensor<64x64xf32, #W3q>
  }
  return %r2 : tensor<64x64xf32, #W3q>
}
