// RUN: tilework-opt %s --split-input-file --tile-speculate-loads | FileCheck %s

// LayerNorm backward's critical section: the else branch loads the partial sums that the code
// after the if stores under the same mask.  Both loads (the second after a pure add) move
// before the if; the adds stay in the branch.

// CHECK-LABEL: func.func @partial_sums
// CHECK: %[[C:.+]] = "tile.load"(%arg1)
// CHECK: %[[A:.+]] = "tile.load"(%[[P:.+]], %[[M:.+]]) {operandSegmentSizes = array<i32: 1, 1, 0>}
// CHECK-NEXT: %[[B:.+]] = "tile.load"(%[[Q:.+]], %[[M]]) {operandSegmentSizes = array<i32: 1, 1, 0>}
// CHECK-NEXT: scf.if
// CHECK: "tile.atomic_rmw"
// CHECK: } else {
// CHECK-NEXT: arith.addf %{{.+}}, %[[A]]
// CHECK-NEXT: arith.addf %{{.+}}, %[[B]]
// CHECK-NEXT: scf.yield
// CHECK: "tile.store"(%[[P]], %{{.+}}, %[[M]])
// CHECK: "tile.store"(%[[Q]], %{{.+}}, %[[M]])
func.func @partial_sums(%pw: !tile.ptr<f32>, %cnt: !tile.ptr<i32>, %n: i32, %v: tensor<256xf32>) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<256xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
  %s = "tile.splat"(%pw) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>>
  %p = "tile.addptr"(%s, %r) : (tensor<256x!tile.ptr<f32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32>>
  %q = "tile.addptr"(%p, %ns) : (tensor<256x!tile.ptr<f32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32>>
  %c = "tile.load"(%cnt) {operandSegmentSizes = array<i32: 1, 0, 0>} : (!tile.ptr<i32>) -> i32
  %z = arith.constant 0 : i32
  %first = arith.cmpi eq, %c, %z : i32
  %res:2 = scf.if %first -> (tensor<256xf32>, tensor<256xf32>) {
    %one = arith.constant 1 : i32
    %old = "tile.atomic_rmw"(%cnt, %one) {kind = "xchg", operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "acq_rel"} : (!tile.ptr<i32>, i32) -> i32
    scf.yield %v, %v : tensor<256xf32>, tensor<256xf32>
  } else {
    %a = "tile.load"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %x = arith.addf %v, %a : tensor<256xf32>
    %b = "tile.load"(%q, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %y = arith.addf %v, %b : tensor<256xf32>
    scf.yield %x, %y : tensor<256xf32>, tensor<256xf32>
  }
  "tile.store"(%p, %res#0, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<256x!tile.ptr<f32>>, tensor<256xf32>, tensor<256xi1>) -> ()
  "tile.store"(%q, %res#1, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<256x!tile.ptr<f32>>, tensor<256xf32>, tensor<256xi1>) -> ()
  return
}

// -----

// What stays: a load after a side effect in its branch (%a, after the atomic), a load whose
// pointers are stored to under another mask (%b: the store's mask %m2 does not cover %m), a
// load nothing after the if stores to (%c2), a load whose pointers the if computes (%e), a
// volatile load (%d) and, after it, a load that could move (%f).

// CHECK-LABEL: func.func @stays
// CHECK: arith.cmpi eq
// CHECK-NEXT: scf.if
// CHECK: "tile.atomic_rmw"
// CHECK-NEXT: "tile.load"(%[[P:[0-9]+]], %[[M:[0-9]+]])
// CHECK: } else {
// CHECK-NEXT: "tile.load"
// CHECK-NEXT: "tile.load"
// CHECK-NEXT: "tile.addptr"
// CHECK-NEXT: "tile.load"
// CHECK-NEXT: "tile.load"
// CHECK-SAME: volatile
// CHECK-NEXT: "tile.load"(%[[P]], %[[M]])
// CHECK: scf.yield
func.func @stays(%pw: !tile.ptr<f32>, %cnt: !tile.ptr<i32>, %n: i32, %v: tensor<256xf32>) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<256xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
  %m2 = arith.cmpi sgt, %r, %ns : tensor<256xi32>
  %s = "tile.splat"(%pw) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>>
  %p = "tile.addptr"(%s, %r) : (tensor<256x!tile.ptr<f32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32>>
  %q = "tile.addptr"(%p, %ns) : (tensor<256x!tile.ptr<f32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32>>
  %t = "tile.addptr"(%q, %ns) : (tensor<256x!tile.ptr<f32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32>>
  %c = "tile.load"(%cnt) {operandSegmentSizes = array<i32: 1, 0, 0>} : (!tile.ptr<i32>) -> i32
  %z = arith.constant 0 : i32
  %first = arith.cmpi eq, %c, %z : i32
  %res:2 = scf.if %first -> (tensor<256xf32>, tensor<256xf32>) {
    %one = arith.constant 1 : i32
    %old = "tile.atomic_rmw"(%cnt, %one) {kind = "xchg", operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "acq_rel"} : (!tile.ptr<i32>, i32) -> i32
    %a = "tile.load"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    scf.yield %a, %v : tensor<256xf32>, tensor<256xf32>
  } else {
    %b = "tile.load"(%q, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %c2 = "tile.load"(%t, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %u = "tile.addptr"(%p, %r) : (tensor<256x!tile.ptr<f32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32>>
    %e = "tile.load"(%u, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %d = "tile.load"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0>, volatile} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %f = "tile.load"(%p, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xi1>) -> tensor<256xf32>
    %x = arith.addf %b, %c2 : tensor<256xf32>
    %w = arith.addf %d, %e : tensor<256xf32>
    %y = arith.addf %w, %f : tensor<256xf32>
    scf.yield %x, %y : tensor<256xf32>, tensor<256xf32>
  }
  "tile.store"(%p, %res#0, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<256x!tile.ptr<f32>>, tensor<256xf32>, tensor<256xi1>) -> ()
  "tile.store"(%q, %res#1, %m2) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<256x!tile.ptr<f32>>, tensor<256xf32>, tensor<256xi1>) -> ()
  return
}

// -----

// A store after the if that another side effect precedes (the lock's release) proves nothing.

// CHECK-LABEL: func.func @store_after_atomic
// CHECK: scf.if
// CHECK: } else {
// CHECK-NEXT: "tile.load"
func.func @store_after_atomic(%pw: !tile.ptr<f32>, %cnt: !tile.ptr<i32>, %n: i32, %v: tensor<256xf32>) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32>
  %s = "tile.splat"(%pw) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>>
  %p = "tile.addptr"(%s, %r) : (tensor<256x!tile.ptr<f32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32>>
  %c = "tile.load"(%cnt) {operandSegmentSizes = array<i32: 1, 0, 0>} : (!tile.ptr<i32>) -> i32
  %z = arith.constant 0 : i32
  %first = arith.cmpi eq, %c, %z : i32
  %res = scf.if %first -> (tensor<256xf32>) {
    scf.yield %v : tensor<256xf32>
  } else {
    %a = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<256x!tile.ptr<f32>>) -> tensor<256xf32>
    scf.yield %a : tensor<256xf32>
  }
  %one = arith.constant 1 : i32
  %old = "tile.atomic_rmw"(%cnt, %one) {kind = "xchg", operandSegmentSizes = array<i32: 1, 1, 0>, scope = "gpu", sem = "acq_rel"} : (!tile.ptr<i32>, i32) -> i32
  "tile.store"(%p, %res) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xf32>) -> ()
  return
}
