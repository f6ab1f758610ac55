// RUN: tilework-opt %s --split-input-file --tile-combine | FileCheck %s

// tile-combine: splat(constant) -> dense constant, broadcast(splat x) -> splat x,
// addptr(addptr(p, a), b) -> addptr(p, a + b) when a and b have one type,
// x + dot(a, b, 0) -> dot(a, b, x).

// CHECK-LABEL: func.func @splat_of_f32_constant
// CHECK-SAME: -> tensor<128xf32>
// CHECK-NOT: tile.splat
// CHECK: %[[C:.+]] = arith.constant dense<2.500000e+00> : tensor<128xf32>
// CHECK-NOT: tile.splat
// CHECK: return %[[C]] : tensor<128xf32>
func.func @splat_of_f32_constant() -> tensor<128xf32> {
  %c = arith.constant 2.5 : f32
  %s = "tile.splat"(%c) : (f32) -> tensor<128xf32>
  return %s : tensor<128xf32>
}

// -----

// CHECK-LABEL: func.func @splat_of_i1_constant
// CHECK-NOT: tile.splat
// CHECK: %[[C:.+]] = arith.constant dense<true> : tensor<8xi1>
// CHECK-NOT: tile.splat
// CHECK: return %[[C]]
func.func @splat_of_i1_constant() -> tensor<8xi1> {
  %c = arith.constant true
  %s = "tile.splat"(%c) : (i1) -> tensor<8xi1>
  return %s : tensor<8xi1>
}

// -----

// The constant keeps the layout encoding of the splat's type (tile-combine may run on tilegpu IR).

// CHECK-LABEL: func.func @splat_of_constant_keeps_encoding
// CHECK-NOT: tile.splat
// CHECK: %[[C:.+]] = arith.constant dense<-3> : tensor<256xi32, #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
// CHECK-NOT: tile.splat
// CHECK: return %[[C]]
func.func @splat_of_constant_keeps_encoding() -> tensor<256xi32, #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>> {
  %c = arith.constant -3 : i32
  %s = "tile.splat"(%c) : (i32) -> tensor<256xi32, #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
  return %s : tensor<256xi32, #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
}

// -----

// A splat of a value that is not a constant stays.

// CHECK-LABEL: func.func @splat_of_argument_stays
// CHECK-SAME: (%[[X:.+]]: f32)
// CHECK-NOT: arith.constant
// CHECK: %[[S:.+]] = "tile.splat"(%[[X]]) : (f32) -> tensor<128xf32>
// CHECK: return %[[S]]
func.func @splat_of_argument_stays(%x: f32) -> tensor<128xf32> {
  %s = "tile.splat"(%x) : (f32) -> tensor<128xf32>
  return %s : tensor<128xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_of_splat
// CHECK-SAME: (%[[X:.+]]: i32)
// CHECK-NOT: tile.broadcast
// CHECK: %[[S:.+]] = "tile.splat"(%[[X]]) : (i32) -> tensor<32x64xi32>
// CHECK-NOT: tile.broadcast
// CHECK: return %[[S]] : tensor<32x64xi32>
func.func @broadcast_of_splat(%x: i32) -> tensor<32x64xi32> {
  %s = "tile.splat"(%x) : (i32) -> tensor<1x64xi32>
  %b = "tile.broadcast"(%s) : (tensor<1x64xi32>) -> tensor<32x64xi32>
  return %b : tensor<32x64xi32>
}

// -----

// Pointer tiles fold the same way.

// CHECK-LABEL: func.func @broadcast_of_pointer_splat
// CHECK-SAME: (%[[P:.+]]: !tile.ptr<f16>)
// CHECK-NOT: tile.broadcast
// CHECK: %[[S:.+]] = "tile.splat"(%[[P]]) : (!tile.ptr<f16>) -> tensor<4x16x!tile.ptr<f16>>
// CHECK-NOT: tile.broadcast
// CHECK: return %[[S]]
func.func @broadcast_of_pointer_splat(%p: !tile.ptr<f16>) -> tensor<4x16x!tile.ptr<f16>> {
  %s = "tile.splat"(%p) : (!tile.ptr<f16>) -> tensor<4x1x!tile.ptr<f16>>
  %b = "tile.broadcast"(%s) : (tensor<4x1x!tile.ptr<f16>>) -> tensor<4x16x!tile.ptr<f16>>
  return %b : tensor<4x16x!tile.ptr<f16>>
}

// -----

// broadcast(splat(constant)): both rewrites apply and one constant of the full shape is left.

// CHECK-LABEL: func.func @broadcast_of_splat_of_constant
// CHECK-NOT: tile.
// CHECK: %[[C:.+]] = arith.constant dense<1.500000e+00> : tensor<32x64xf16>
// CHECK-NOT: tile.
// CHECK: return %[[C]] : tensor<32x64xf16>
func.func @broadcast_of_splat_of_constant() -> tensor<32x64xf16> {
  %c = arith.constant 1.5 : f16
  %s = "tile.splat"(%c) : (f16) -> tensor<1x64xf16>
  %b = "tile.broadcast"(%s) : (tensor<1x64xf16>) -> tensor<32x64xf16>
  return %b : tensor<32x64xf16>
}

// -----

// A broadcast of anything but a splat stays.

// CHECK-LABEL: func.func @broadcast_of_argument_stays
// CHECK-SAME: (%[[X:.+]]: tensor<1x64xi32>)
// CHECK-NOT: tile.splat
// CHECK: %[[B:.+]] = "tile.broadcast"(%[[X]]) : (tensor<1x64xi32>) -> tensor<32x64xi32>
// CHECK: return %[[B]]
func.func @broadcast_of_argument_stays(%x: tensor<1x64xi32>) -> tensor<32x64xi32> {
  %b = "tile.broadcast"(%x) : (tensor<1x64xi32>) -> tensor<32x64xi32>
  return %b : tensor<32x64xi32>
}

// -----

// CHECK-LABEL: func.func @addptr_of_addptr
// CHECK-SAME: (%[[P:[^:]+]]: !tile.ptr<f16>, %[[A:[^:]+]]: tensor<64xi32>, %[[B:[^:]+]]: tensor<64xi32>)
// CHECK: %[[S:.+]] = "tile.splat"(%[[P]])
// CHECK: %[[SUM:.+]] = arith.addi %[[A]], %[[B]] : tensor<64xi32>
// CHECK: %[[R:.+]] = "tile.addptr"(%[[S]], %[[SUM]]) : (tensor<64x!tile.ptr<f16>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f16>>
// CHECK: return %[[R]]
func.func @addptr_of_addptr(%p: !tile.ptr<f16>, %a: tensor<64xi32>, %b: tensor<64xi32>) -> tensor<64x!tile.ptr<f16>> {
  %s = "tile.splat"(%p) : (!tile.ptr<f16>) -> tensor<64x!tile.ptr<f16>>
  %0 = "tile.addptr"(%s, %a) : (tensor<64x!tile.ptr<f16>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f16>>
  %1 = "tile.addptr"(%0, %b) : (tensor<64x!tile.ptr<f16>>, tensor<64xi32>) -> tensor<64x!tile.ptr<f16>>
  return %1 : tensor<64x!tile.ptr<f16>>
}

// -----

// A chain of three scalar addptrs: the returned pointer is the base plus one summed offset.

// CHECK-LABEL: func.func @addptr_chain_of_three
// CHECK-SAME: (%[[P:[^:]+]]: !tile.ptr<f32>, %[[A:[^:]+]]: i32, %[[B:[^:]+]]: i32, %[[C:[^:]+]]: i32)
// CHECK-DAG: %[[BC:.+]] = arith.addi %[[B]], %[[C]] : i32
// CHECK-DAG: %[[ABC:.+]] = arith.addi %[[A]], %[[BC]] : i32
// CHECK: %[[R:.+]] = "tile.addptr"(%[[P]], %[[ABC]]) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
// CHECK-NEXT: return %[[R]] : !tile.ptr<f32>
func.func @addptr_chain_of_three(%p: !tile.ptr<f32>, %a: i32, %b: i32, %c: i32) -> !tile.ptr<f32> {
  %0 = "tile.addptr"(%p, %a) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
  %1 = "tile.addptr"(%0, %b) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
  %2 = "tile.addptr"(%1, %c) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
  return %2 : !tile.ptr<f32>
}

// -----

// Offsets of different types are not added: both addptrs stay.

// CHECK-LABEL: func.func @addptr_mixed_offset_types_stay
// CHECK-SAME: (%[[P:[^:]+]]: !tile.ptr<f16>, %[[A:[^:]+]]: i32, %[[B:[^:]+]]: i64)
// CHECK-NOT: arith.addi
// CHECK: %[[X:.+]] = "tile.addptr"(%[[P]], %[[A]]) : (!tile.ptr<f16>, i32) -> !tile.ptr<f16>
// CHECK-NOT: arith.addi
// CHECK: %[[Y:.+]] = "tile.addptr"(%[[X]], %[[B]]) : (!tile.ptr<f16>, i64) -> !tile.ptr<f16>
// CHECK: return %[[Y]]
func.func @addptr_mixed_offset_types_stay(%p: !tile.ptr<f16>, %a: i32, %b: i64) -> !tile.ptr<f16> {
  %0 = "tile.addptr"(%p, %a) : (!tile.ptr<f16>, i32) -> !tile.ptr<f16>
  %1 = "tile.addptr"(%0, %b) : (!tile.ptr<f16>, i64) -> !tile.ptr<f16>
  return %1 : !tile.ptr<f16>
}

// -----

// acc + dot(a, b, 0) -> dot(a, b, acc) (the tutorials' `acc += tl.dot(a, b)`), either order.

// CHECK-LABEL: func.func @add_of_dot_with_zero_acc
// CHECK-SAME: (%[[A:[^:]+]]: tensor<16x16xf16>, %[[B:[^:]+]]: tensor<16x16xf16>, %[[X:[^:]+]]: tensor<16x16xf32>)
// CHECK-NOT: arith.addf
// CHECK: %[[D:.+]] = "tile.dot"(%[[A]], %[[B]], %[[X]]) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32}
// CHECK-NOT: arith.addf
// CHECK: %[[E:.+]] = "tile.dot"(%[[A]], %[[B]], %[[D]])
// CHECK-NOT: arith.addf
// CHECK: return %[[E]]
func.func @add_of_dot_with_zero_acc(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = "tile.dot"(%a, %b, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = arith.addf %x, %d : tensor<16x16xf32>
  %d2 = "tile.dot"(%a, %b, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s2 = arith.addf %d2, %s : tensor<16x16xf32>
  return %s2 : tensor<16x16xf32>
}

// -----

// Integer dots too: acc + dot(a, b, 0) with i8 operands and an i32 accumulator.

// CHECK-LABEL: func.func @addi_of_int_dot
// CHECK-SAME: (%[[A:[^:]+]]: tensor<16x32xi8>, %[[B:[^:]+]]: tensor<32x16xi8>, %[[X:[^:]+]]: tensor<16x16xi32>)
// CHECK-NOT: arith.addi
// CHECK: %[[D:.+]] = "tile.dot"(%[[A]], %[[B]], %[[X]])
// CHECK: return %[[D]]
func.func @addi_of_int_dot(%a: tensor<16x32xi8>, %b: tensor<32x16xi8>, %x: tensor<16x16xi32>) -> tensor<16x16xi32> {
  %z = arith.constant dense<0> : tensor<16x16xi32>
  %d = "tile.dot"(%a, %b, %z) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x32xi8>, tensor<32x16xi8>, tensor<16x16xi32>) -> tensor<16x16xi32>
  %s = arith.addi %x, %d : tensor<16x16xi32>
  return %s : tensor<16x16xi32>
}

// -----

// No fold when the dot's accumulator is not zero, when the dot has another use, or when
// max_num_imprecise_acc is set.

// CHECK-LABEL: func.func @add_of_dot_stays
// CHECK: %[[D1:.+]] = "tile.dot"(%{{.+}}, %{{.+}}, %[[ONE:.+]])
// CHECK: arith.addf %{{.+}}, %[[D1]]
// CHECK: %[[D2:.+]] = "tile.dot"
// CHECK: arith.addf %{{.+}}, %[[D2]]
// CHECK: %[[D3:.+]] = "tile.dot"
// CHECK: arith.addf %{{.+}}, %[[D3]]
func.func @add_of_dot_stays(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %z = arith.constant dense<0.0> : tensor<16x16xf32>
  %one = arith.constant dense<1.0> : tensor<16x16xf32>
  %d1 = "tile.dot"(%a, %b, %one) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s1 = arith.addf %x, %d1 : tensor<16x16xf32>
  %d2 = "tile.dot"(%a, %b, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s2 = arith.addf %s1, %d2 : tensor<16x16xf32>
  %d3 = "tile.dot"(%a, %b, %z) {input_precision = "tf32", max_num_imprecise_acc = 8 : i32} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s3 = arith.addf %s2, %d3 : tensor<16x16xf32>
  return %s1, %s2, %s3, %d2 : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}
