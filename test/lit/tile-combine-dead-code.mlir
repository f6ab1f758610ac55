// BUG: dead tile ops are never erased.  The tile/tilegpu ops are defined through IRDL, which
// gives them no memory-effect information, so MLIR treats every tile op as possibly
// side-effecting: neither the greedy driver of tile-combine nor canonicalize/cse ever erase a
// dead one.  tile-combine therefore leaves behind the ops its rewrites bypass (the size-1
// splat under a folded broadcast; the inner addptrs of a folded chain and the offsets summed
// for them).  The function bodies below are what is left once dead ops are erased.

// RUN: tilework-opt %s --split-input-file --tile-combine | FileCheck %s

// CHECK-LABEL: func.func @broadcast_of_splat
// CHECK-SAME: (%[[X:.+]]: i32)
// CHECK-NEXT: %[[S:.+]] = "tile.splat"(%[[X]]) : (i32) -> tensor<32x64xi32>
// CHECK-NEXT: return %[[S]] : tensor<32x64xi32>
func.func @broadcast_of_splat(%x: i32) -> tensor<32x64xi32> {
  %s = "tile.splat"(%x) : (i32) -> tensor<1x64xi32>
  %b = "tile.broadcast"(%s) : (tensor<1x64xi32>) -> tensor<32x64xi32>
  return %b : tensor<32x64xi32>
}

// -----

// CHECK-LABEL: func.func @addptr_of_addptr
// CHECK-SAME: (%[[P:[^:]+]]: !tile.ptr<f16>, %[[A:[^:]+]]: tensor<64xi32>, %[[B:[^:]+]]: tensor<64xi32>)
// CHECK-NEXT: %[[S:.+]] = "tile.splat"(%[[P]])
// CHECK-NEXT: %[[SUM:.+]] = arith.addi %[[A]], %[[B]] : tensor<64xi32>
// CHECK-NEXT: %[[R:.+]] = "tile.addptr"(%[[S]], %[[SUM]])
// CHECK-NEXT: return %[[R]]
func.func @addptr_of_addptr(%p: !tile.ptr<f16>, %a: tensor<64xi32>, %b: tensor<64xi32>) -> tensor<64x!tile.ptr<f16>> {
  %s = "tile.splat"(%p) : (!tile.ptr<f16>) -> tensor<64x!tile.ptr<f16>>
  %0 = "tile.addptr"(%s, %a) : (tensor<64x!tile.ptr<f16>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f16>>
  %1 = "tile.addptr"(%0, %b) : (tensor<64x!tile.ptr<f16>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f16>>
  return %1 : tensor<64x!tile.ptr<f16>>
}

// -----

// CHECK-LABEL: func.func @addptr_chain_of_three
// CHECK-SAME: (%[[P:[^:]+]]: !tile.ptr<f32>, %[[A:[^:]+]]: i32, %[[B:[^:]+]]: i32, %[[C:[^:]+]]: i32)
// CHECK-NEXT: %[[BC:.+]] = arith.addi %[[B]], %[[C]] : i32
// CHECK-NEXT: %[[ABC:.+]] = arith.addi %[[A]], %[[BC]] : i32
// CHECK-NEXT: %[[R:.+]] = "tile.addptr"(%[[P]], %[[ABC]]) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
// CHECK-NEXT: return %[[R]] : !tile.ptr<f32>
func.func @addptr_chain_of_three(%p: !tile.ptr<f32>, %a: i32, %b: i32, %c: i32) -> !tile.ptr<f32> {
  %0 = "tile.addptr"(%p, %a) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
  %1 = "tile.addptr"(%0, %b) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
  %2 = "tile.addptr"(%1, %c) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
  return %2 : !tile.ptr<f32>
}

// -----

// tile.inline_asm carries an effect; unused, it is erased only when marked pure.
// CHECK-LABEL: func.func @dead_inline_asm
// CHECK-NOT: pure = 1
// CHECK: "tile.inline_asm"{{.*}}pure = 0 : i32
// CHECK-NEXT: return
func.func @dead_inline_asm(%x: tensor<16xi32>) {
  %a = "tile.inline_asm"(%x) {asm = "a", constraints = "=r,r", pack = 1 : i32, pure = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xi32>) -> tensor<16xi32>
  %b = "tile.inline_asm"(%x) {asm = "b", constraints = "=r,r", pack = 1 : i32, pure = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<16xi32>) -> tensor<16xi32>
  return
}
