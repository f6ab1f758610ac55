// RUN: tilework-opt %s --tilegpu-warpgroup-dot --target sm_90a | FileCheck %s

// A tile.dot whose result has an mma v3 layout: a and b to nvmma_shared buffers (a K-major,
// the widest swizzle K allows; fp16 b N-major), the warpgroup_dot, then the buffers freed.
#BL = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#V3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-LABEL: func.func @fp16(
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_alloc"(%arg0) : (tensor<64x32xf16, #tilegpu.blocked<{{.+}}>>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, #tilegpu.nvmma_shared<64 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"(%arg1) : (tensor<32x64xf16, #tilegpu.blocked<{{.+}}>>) -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[D:.+]] = "tilegpu.warpgroup_dot"(%[[A]], %[[B]], %arg2) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #tilegpu.nvmma_shared<64 : i32, false, 16 : i32>, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>, tensor<64x64xf32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>>) -> tensor<64x64xf32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>>
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[A]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[B]])
// CHECK-NEXT: return %[[D]]
func.func @fp16(%a: tensor<64x32xf16, #BL>, %b: tensor<32x64xf16, #BL>, %c: tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3> attributes {tile.kernel} {
  %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16, #BL>, tensor<32x64xf16, #BL>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
  return %d : tensor<64x64xf32, #V3>
}

// tf32: each operand first rounded to tf32 (ties away from zero; NaN kept), then b K-major
// (transposed: wgmma transposes only 16-bit operands); K = 16 fp32 is 64 bytes: a 64-byte
// swizzle; N = 16 rows of b.
#T3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 16, 8>>
// CHECK-LABEL: func.func @tf32(
// CHECK-NEXT: %[[U:.+]] = arith.bitcast %arg0 : tensor<64x16xf32, {{.+}}> to tensor<64x16xi32,
// CHECK-NEXT: %[[HALF:.+]] = arith.constant dense<4096>
// CHECK-NEXT: %[[ADD:.+]] = arith.addi %[[U]], %[[HALF]]
// CHECK-NEXT: %[[MASK:.+]] = arith.constant dense<-8192>
// CHECK-NEXT: %[[R:.+]] = arith.andi %[[ADD]], %[[MASK]]
// CHECK-NEXT: %[[ABS:.+]] = arith.constant dense<2147483647>
// CHECK-NEXT: %[[MAG:.+]] = arith.andi %[[U]], %[[ABS]]
// CHECK-NEXT: %[[INF:.+]] = arith.constant dense<2139095040>
// CHECK-NEXT: %[[NAN:.+]] = arith.cmpi ugt, %[[MAG]], %[[INF]]
// CHECK-NEXT: %[[SEL:.+]] = arith.select %[[NAN]], %[[U]], %[[R]]
// CHECK-NEXT: %[[A32:.+]] = arith.bitcast %[[SEL]] : tensor<64x16xi32, {{.+}}> to tensor<64x16xf32,
// CHECK-COUNT-6: arith.
// CHECK: %[[B32:.+]] = arith.bitcast %{{.+}} : tensor<16x16xi32, {{.+}}> to tensor<16x16xf32,
// CHECK-NEXT: "tilegpu.local_alloc"(%[[A32]]) : {{.+}} -> !tilegpu.memdesc<array<i64: 64, 16>, f32, #tilegpu.nvmma_shared<64 : i32, false, 32 : i32>, 1 : i32>
// CHECK-NEXT: "tilegpu.local_alloc"(%[[B32]]) : {{.+}} -> !tilegpu.memdesc<array<i64: 16, 16>, f32, #tilegpu.nvmma_shared<64 : i32, true, 32 : i32>, 1 : i32>
// CHECK-NEXT: "tilegpu.warpgroup_dot"
func.func @tf32(%a: tensor<64x16xf32, #BL>, %b: tensor<16x16xf32, #BL>, %c: tensor<64x16xf32, #T3>) -> tensor<64x16xf32, #T3> attributes {tile.kernel} {
  %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x16xf32, #BL>, tensor<16x16xf32, #BL>, tensor<64x16xf32, #T3>) -> tensor<64x16xf32, #T3>
  return %d : tensor<64x16xf32, #T3>
}

// fp8 (bytes: 8-bit elements), with its max_num_imprecise_acc kept; K = 32 bytes: a 32-byte
// swizzle for a, b K-major with 32-byte rows too.
#F3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 32>>
// CHECK-LABEL: func.func @fp8(
// CHECK-NEXT: "tilegpu.local_alloc"(%arg0) : {{.+}} -> !tilegpu.memdesc<array<i64: 64, 32>, f8E4M3FN, #tilegpu.nvmma_shared<32 : i32, false, 8 : i32>, 1 : i32>
// CHECK-NEXT: "tilegpu.local_alloc"(%arg1) : {{.+}} -> !tilegpu.memdesc<array<i64: 32, 32>, f8E5M2, #tilegpu.nvmma_shared<32 : i32, true, 8 : i32>, 1 : i32>
// CHECK-NEXT: "tilegpu.warpgroup_dot"({{.+}}) {input_precision = "tf32", max_num_imprecise_acc = 16 : i32}
func.func @fp8(%a: tensor<64x32xf8E4M3FN, #BL>, %b: tensor<32x32xf8E5M2, #BL>, %c: tensor<64x32xf32, #F3>) -> tensor<64x32xf32, #F3> attributes {tile.kernel} {
  %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 16 : i32} : (tensor<64x32xf8E4M3FN, #BL>, tensor<32x32xf8E5M2, #BL>, tensor<64x32xf32, #F3>) -> tensor<64x32xf32, #F3>
  return %d : tensor<64x32xf32, #F3>
}

// A dot in any other layout is left alone.
// CHECK-LABEL: func.func @blocked(
// CHECK-NOT: tilegpu.local_alloc
// CHECK: "tile.dot"
func.func @blocked(%a: tensor<64x32xf16, #BL>, %b: tensor<32x64xf16, #BL>, %c: tensor<64x64xf32, #BL>) -> tensor<64x64xf32, #BL> attributes {tile.kernel} {
  %d = "tile.dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf16, #BL>, tensor<32x64xf16, #BL>, tensor<64x64xf32, #BL>) -> tensor<64x64xf32, #BL>
  return %d : tensor<64x64xf32, #BL>
}

// A computed f16 a in the accumulator layout of a dot whose N is this K (warps along M only):
// it stays in registers (wgmma's A fragment), through a convert_layout that moves nothing;
// only b goes to shared memory.
#P3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#O3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 16>>
// CHECK-LABEL: func.func @register_a(
// CHECK-NEXT: %[[P:.+]] = arith.truncf %arg0
// CHECK-NEXT: %[[PA:.+]] = "tilegpu.convert_layout"(%[[P]]) : (tensor<64x64xf16, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>>) -> tensor<64x64xf16, #tilegpu.dot_operand<0 : i32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 16>>, 2 : i32>>
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"(%arg1)
// CHECK-NEXT: %[[D:.+]] = "tilegpu.warpgroup_dot"(%[[PA]], %[[B]], %arg2) {{.+}} : (tensor<64x64xf16, #tilegpu.dot_operand<{{.+}}>>, !tilegpu.memdesc<array<i64: 64, 32>, f16, {{.+}}>, tensor<64x32xf32, {{.+}}>) -> tensor<64x32xf32,
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[B]])
// CHECK-NEXT: return %[[D]]
func.func @register_a(%s: tensor<64x64xf32, #P3>, %b: tensor<64x32xf16, #BL>, %c: tensor<64x32xf32, #O3>) -> tensor<64x32xf32, #O3> attributes {tile.kernel} {
  %p = arith.truncf %s : tensor<64x64xf32, #P3> to tensor<64x64xf16, #P3>
  %d = "tile.dot"(%p, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #P3>, tensor<64x32xf16, #BL>, tensor<64x32xf32, #O3>) -> tensor<64x32xf32, #O3>
  return %d : tensor<64x32xf32, #O3>
}

// fp8: P (e4m3) in the k32 accumulator layout is not the k32 A fragment (4 consecutive-k bytes
// a register) for free, but the conversion stays within quads (32-bit word shuffles): A in
// registers (`dot_operand<0, acc, 4>`); B, K-major, to shared memory.
#P8 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 32>>
#O8 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 32>>
// CHECK-LABEL: func.func @register_a_fp8(
// CHECK-NEXT: %[[P:.+]] = arith.truncf %arg0
// CHECK-NEXT: %[[PA:.+]] = "tilegpu.convert_layout"(%[[P]]) : (tensor<64x64xf8E4M3FN, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 32>>>) -> tensor<64x64xf8E4M3FN, #tilegpu.dot_operand<0 : i32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 32>>, 4 : i32>>
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"(%arg1) : {{.+}} -> !tilegpu.memdesc<array<i64: 64, 32>, f8E4M3FN, #tilegpu.nvmma_shared<64 : i32, true, 8 : i32>, 1 : i32>
// CHECK-NEXT: "tilegpu.warpgroup_dot"(%[[PA]], %[[B]], %arg2)
func.func @register_a_fp8(%s: tensor<64x64xf32, #P8>, %b: tensor<64x32xf8E4M3FN, #BL>, %c: tensor<64x32xf32, #O8>) -> tensor<64x32xf32, #O8> attributes {tile.kernel} {
  %p = arith.truncf %s : tensor<64x64xf32, #P8> to tensor<64x64xf8E4M3FN, #P8>
  %d = "tile.dot"(%p, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf8E4M3FN, #P8>, tensor<64x32xf8E4M3FN, #BL>, tensor<64x32xf32, #O8>) -> tensor<64x32xf32, #O8>
  return %d : tensor<64x32xf32, #O8>
}

// A computed a whose layout is not the A fragment's for free (a blocked tile: the conversion
// would go through shared memory) keeps the shared-memory A.
// CHECK-LABEL: func.func @computed_blocked_a(
// CHECK: %[[A:.+]] = "tilegpu.local_alloc"(%{{.+}}) : (tensor<64x64xf16, #tilegpu.blocked<{{.+}}>>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16,
// CHECK: "tilegpu.warpgroup_dot"(%[[A]],
func.func @computed_blocked_a(%s: tensor<64x64xf32, #BL>, %b: tensor<64x32xf16, #BL>, %c: tensor<64x32xf32, #O3>) -> tensor<64x32xf32, #O3> attributes {tile.kernel} {
  %p = arith.truncf %s : tensor<64x64xf32, #BL> to tensor<64x64xf16, #BL>
  %d = "tile.dot"(%p, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BL>, tensor<64x32xf16, #BL>, tensor<64x32xf32, #O3>) -> tensor<64x32xf32, #O3>
  return %d : tensor<64x32xf32, #O3>
}
