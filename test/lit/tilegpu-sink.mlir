// RUN: tilework-opt %s --split-input-file --tilegpu-sink | FileCheck %s

// tilegpu-sink: a side-effect-free tile op defined before a loop and used only after it moves
// to just before its first use (its per-thread registers are no longer live across the loop);
// a chain follows its users down.

// CHECK-LABEL: func.func @sinks_a_store_address_chain_past_the_loop
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: arith.constant dense<0.0
// CHECK-NEXT: %[[ACC:.+]] = scf.for
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[P:.+]] = "tile.splat"(%arg0)
// CHECK-NEXT: %[[S:.+]] = "tile.splat"(%arg1)
// CHECK-NEXT: %[[R:.+]] = "tile.make_range"()
// CHECK-NEXT: %[[O:.+]] = arith.addi %[[S]], %[[R]]
// CHECK-NEXT: %[[A:.+]] = "tile.addptr"(%[[P]], %[[O]])
// CHECK-NEXT: "tile.store"(%[[A]], %[[ACC]])
func.func @sinks_a_store_address_chain_past_the_loop(%p: !tile.ptr<f32>, %b: i32, %n: index) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
  %s = "tile.splat"(%b) : (i32) -> tensor<64xi32>
  %o = arith.addi %s, %r : tensor<64xi32>
  %ps = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<64x!tile.ptr<f32>>
  %a = "tile.addptr"(%ps, %o) : (tensor<64x!tile.ptr<f32>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f32>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%x = %z) -> (tensor<64xf32>) {
    %y = arith.addf %x, %x : tensor<64xf32>
    scf.yield %y : tensor<64xf32>
  }
  "tile.store"(%a, %acc) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x!tile.ptr<f32>>, tensor<64xf32>) -> ()
  return
}

// -----

// A value also used inside the loop stays; so do scalars, loads (they read memory) and what
// the loads use; a tile op used only after the loop (the returned %q) moves.
// CHECK-LABEL: func.func @keeps_values_the_loop_uses_scalars_and_loads
// CHECK-NEXT: %[[R:.+]] = "tile.make_range"()
// CHECK-NEXT: %[[M:.+]] = arith.muli %arg1, %arg1 : i32
// CHECK-NEXT: %[[P:.+]] = "tile.splat"(%arg0)
// CHECK-NEXT: %[[A:.+]] = "tile.addptr"(%[[P]], %[[R]])
// CHECK-NEXT: %[[L:.+]] = "tile.load"(%[[A]])
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: scf.for {{.+}} iter_args(%{{.+}} = %[[R]])
// CHECK-NEXT: arith.addi %{{.+}}, %[[R]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "tile.store"(%[[A]], %[[L]])
// CHECK-NEXT: %[[S:.+]] = "tile.splat"(%[[M]])
// CHECK-NEXT: %[[Q:.+]] = arith.addi %[[S]], %[[R]]
// CHECK-NEXT: return %[[Q]]
func.func @keeps_values_the_loop_uses_scalars_and_loads(%p: !tile.ptr<i32>, %b: i32, %n: index) -> tensor<64xi32> attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
  %m = arith.muli %b, %b : i32
  %ps = "tile.splat"(%p) : (!tile.ptr<i32>) -> tensor<64x!tile.ptr<i32>>
  %a = "tile.addptr"(%ps, %r) : (tensor<64x!tile.ptr<i32>>, tensor<64xi32>) -> tensor<64x!tile.ptr<i32>>
  %l = "tile.load"(%a) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x!tile.ptr<i32>>) -> tensor<64xi32>
  %s = "tile.splat"(%m) : (i32) -> tensor<64xi32>
  %q = arith.addi %s, %r : tensor<64xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%x = %r) -> (tensor<64xi32>) {
    %y = arith.addi %x, %r : tensor<64xi32>
    scf.yield %y : tensor<64xi32>
  }
  "tile.store"(%a, %l) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x!tile.ptr<i32>>, tensor<64xi32>) -> ()
  return %q : tensor<64xi32>
}
