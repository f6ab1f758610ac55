// BUG (miscompile): the axis analysis rule for arith.cmpi ignores the predicate.  For a
// contiguous x whose aligned runs start at multiples of 16, compared with n divisible by 16,
// only `x < n` and `x >= n` (slt/ult/sge/uge) switch at n itself and so are uniform over
// aligned groups of 16.  `x <= n`, `x > n` switch at n + 1 and `x == n`, `x != n` single
// out one element, so those masks are not constant over a group: the vector width must stay 1.
// Today every predicate gets constancy 16 and width 4, and tilegpu-to-llvm then guards all 4
// elements of a group by the first element's mask bit: e.g. a store masked by `offsets <= n`
// writes offsets n+1..n+3 too (out of bounds), and one masked by `offsets == n` writes 4.

// RUN: tilework-opt %s --tilegpu-assign-layouts --tilegpu-vector-width --target sm_90a --num-warps 4 | FileCheck %s

// CHECK-LABEL: func.func @mask_predicates
// CHECK: %[[M_SLT:.+]] = arith.cmpi slt, 
// CHECK: %[[M_SGE:.+]] = arith.cmpi sge, 
// CHECK: %[[M_ULT:.+]] = arith.cmpi ult, 
// CHECK: %[[M_SLE:.+]] = arith.cmpi sle, 
// CHECK: %[[M_SGT:.+]] = arith.cmpi sgt, 
// CHECK: %[[M_EQ:.+]] = arith.cmpi eq, 
// CHECK: %[[M_NE:.+]] = arith.cmpi ne, 
// CHECK: "tile.store"(%{{.+}}, %{{.+}}, %[[M_SLT]]) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32}
// CHECK: "tile.store"(%{{.+}}, %{{.+}}, %[[M_SGE]]) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32}
// CHECK: "tile.store"(%{{.+}}, %{{.+}}, %[[M_ULT]]) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32}
// CHECK: "tile.store"(%{{.+}}, %{{.+}}, %[[M_SLE]]) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 1 : i32}
// CHECK: "tile.store"(%{{.+}}, %{{.+}}, %[[M_SGT]]) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 1 : i32}
// CHECK: "tile.store"(%{{.+}}, %{{.+}}, %[[M_EQ]]) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 1 : i32}
// CHECK: "tile.store"(%{{.+}}, %{{.+}}, %[[M_NE]]) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 1 : i32}
func.func @mask_predicates(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32>
  %off = arith.addi %ss, %r : tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xp, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %v = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  %m_slt = arith.cmpi slt, %off, %ns : tensor<1024xi32>
  %m_sge = arith.cmpi sge, %off, %ns : tensor<1024xi32>
  %m_ult = arith.cmpi ult, %off, %ns : tensor<1024xi32>
  %m_sle = arith.cmpi sle, %off, %ns : tensor<1024xi32>
  %m_sgt = arith.cmpi sgt, %off, %ns : tensor<1024xi32>
  %m_eq = arith.cmpi eq, %off, %ns : tensor<1024xi32>
  %m_ne = arith.cmpi ne, %off, %ns : tensor<1024xi32>
  "tile.store"(%xa, %v, %m_slt) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  "tile.store"(%xa, %v, %m_sge) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  "tile.store"(%xa, %v, %m_ult) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  "tile.store"(%xa, %v, %m_sle) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  "tile.store"(%xa, %v, %m_sgt) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  "tile.store"(%xa, %v, %m_eq) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  "tile.store"(%xa, %v, %m_ne) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  return
}
