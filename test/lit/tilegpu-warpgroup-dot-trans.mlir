// RUN: tilework-opt %s --split-input-file --tilegpu-warpgroup-dot --target sm_90a | FileCheck %s

// One buffer for a wgmma operand x and tl.trans(x) (lowering/dot_wgmma_trans.py): the rewrite's
// alloc of trans(x) holds the same bytes as the alloc of x (a 16-bit B, N-major in one dot,
// K-major in the other), so it becomes a memdesc_trans view of it; x's buffer is freed after
// the later dot, the trans goes.
// CHECK-LABEL: func.func @direct_first(
// CHECK-NEXT: %[[A1:.+]] = "tilegpu.local_alloc"(%arg0)
// CHECK-NEXT: %[[X:.+]] = "tilegpu.local_alloc"(%arg2) : (tensor<64x64xf16, {{.+}}>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[D1:.+]] = "tilegpu.warpgroup_dot"(%[[A1]], %[[X]], %arg3)
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[A1]])
// CHECK-NEXT: %[[A2:.+]] = "tilegpu.local_alloc"(%arg1)
// CHECK-NEXT: %[[V:.+]] = "tilegpu.memdesc_trans"(%[[X]]) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[D2:.+]] = "tilegpu.warpgroup_dot"(%[[A2]], %[[V]], %arg3)
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[A2]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[X]])
// CHECK-NEXT: return %[[D1]], %[[D2]]
#BL = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#BT = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
#V3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
func.func @direct_first(%p: tensor<64x64xf16, #BL>, %w: tensor<64x64xf16, #BL>, %x: tensor<64x64xf16, #BL>, %c: tensor<64x64xf32, #V3>) -> (tensor<64x64xf32, #V3>, tensor<64x64xf32, #V3>) attributes {tile.kernel} {
  %d1 = "tile.dot"(%p, %x, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BL>, tensor<64x64xf16, #BL>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
  %t = "tile.trans"(%x) {order = array<i32: 1, 0>} : (tensor<64x64xf16, #BL>) -> tensor<64x64xf16, #BT>
  %d2 = "tile.dot"(%w, %t, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BL>, tensor<64x64xf16, #BT>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
  return %d1, %d2 : tensor<64x64xf32, #V3>, tensor<64x64xf32, #V3>
}

// -----

// The transposed use first: x's alloc moves up to where the view is needed.  x [64, 128]
// (D = 128): two 128-byte columns either way.
// CHECK-LABEL: func.func @trans_first(
// CHECK-NEXT: %[[A2:.+]] = "tilegpu.local_alloc"(%arg1)
// CHECK-NEXT: %[[X:.+]] = "tilegpu.local_alloc"(%arg2) : (tensor<64x128xf16, {{.+}}>) -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[V:.+]] = "tilegpu.memdesc_trans"(%[[X]]) : ({{.+}}) -> !tilegpu.memdesc<array<i64: 128, 64>, f16, #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[D2:.+]] = "tilegpu.warpgroup_dot"(%[[A2]], %[[V]], %arg4)
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[A2]])
// CHECK-NEXT: %[[A1:.+]] = "tilegpu.local_alloc"(%arg0)
// CHECK-NEXT: %[[D1:.+]] = "tilegpu.warpgroup_dot"(%[[A1]], %[[X]], %arg3)
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[A1]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[X]])
// CHECK-NEXT: return %[[D1]], %[[D2]]
// CHECK-NOT: tile.trans
#BL = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#BT = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
#V3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 128, 16>>
#W3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
func.func @trans_first(%p: tensor<64x64xf16, #BL>, %w: tensor<64x128xf16, #BL>, %x: tensor<64x128xf16, #BL>, %c: tensor<64x128xf32, #V3>, %e: tensor<64x64xf32, #W3>) -> (tensor<64x128xf32, #V3>, tensor<64x64xf32, #W3>) attributes {tile.kernel} {
  %t = "tile.trans"(%x) {order = array<i32: 1, 0>} : (tensor<64x128xf16, #BL>) -> tensor<128x64xf16, #BT>
  %d2 = "tile.dot"(%w, %t, %e) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x128xf16, #BL>, tensor<128x64xf16, #BT>, tensor<64x64xf32, #W3>) -> tensor<64x64xf32, #W3>
  %d1 = "tile.dot"(%p, %x, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BL>, tensor<64x128xf16, #BL>, tensor<64x128xf32, #V3>) -> tensor<64x128xf32, #V3>
  return %d1, %d2 : tensor<64x128xf32, #V3>, tensor<64x64xf32, #W3>
}

// -----

// x^T read by two dots: its two buffers are one (as p's: one value, one type), a view of x's,
// which lives past the last dot.
// CHECK-LABEL: func.func @two_views(
// CHECK-NEXT: %[[P:.+]] = "tilegpu.local_alloc"(%arg0)
// CHECK-NEXT: %[[X:.+]] = "tilegpu.local_alloc"(%arg2)
// CHECK-NEXT: "tilegpu.warpgroup_dot"(%[[P]], %[[X]], %arg3)
// CHECK-NEXT: %[[W:.+]] = "tilegpu.local_alloc"(%arg1)
// CHECK-NEXT: %[[V:.+]] = "tilegpu.memdesc_trans"(%[[X]])
// CHECK-NEXT: "tilegpu.warpgroup_dot"(%[[W]], %[[V]], %arg3)
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[W]])
// CHECK-NEXT: "tilegpu.warpgroup_dot"(%[[P]], %[[V]], %arg3)
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[P]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[X]])
// CHECK-NEXT: return
#BL = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#BT = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
#V3 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
func.func @two_views(%p: tensor<64x64xf16, #BL>, %w: tensor<64x64xf16, #BL>, %x: tensor<64x64xf16, #BL>, %c: tensor<64x64xf32, #V3>) -> (tensor<64x64xf32, #V3>, tensor<64x64xf32, #V3>, tensor<64x64xf32, #V3>) attributes {tile.kernel} {
  %d1 = "tile.dot"(%p, %x, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BL>, tensor<64x64xf16, #BL>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
  %t = "tile.trans"(%x) {order = array<i32: 1, 0>} : (tensor<64x64xf16, #BL>) -> tensor<64x64xf16, #BT>
  %d2 = "tile.dot"(%w, %t, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BL>, tensor<64x64xf16, #BT>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
  %d3 = "tile.dot"(%p, %t, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #BL>, tensor<64x64xf16, #BT>, tensor<64x64xf32, #V3>) -> tensor<64x64xf32, #V3>
  return %d1, %d2, %d3 : tensor<64x64xf32, #V3>, tensor<64x64xf32, #V3>, tensor<64x64xf32, #V3>
}

// -----

// fp8: wgmma takes only K-major B, so x's buffer and x^T's are not the same bytes: two
// buffers, the trans kept.
// CHECK-LABEL: func.func @fp8_k_major(
// CHECK-NOT: tilegpu.memdesc_trans
// CHECK: "tilegpu.local_alloc"(%arg2) : {{.+}} -> !tilegpu.memdesc<array<i64: 32, 64>, f8E4M3FN, #tilegpu.nvmma_shared<32 : i32, true, 8 : i32>, 1 : i32>
// CHECK: %[[T:.+]] = "tile.trans"(%arg2)
// CHECK: "tilegpu.local_alloc"(%[[T]]) : {{.+}} -> !tilegpu.memdesc<array<i64: 64, 32>, f8E4M3FN, #tilegpu.nvmma_shared<64 : i32, true, 8 : i32>, 1 : i32>
// CHECK-NOT: tilegpu.memdesc_trans
#BL = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#BT = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
#F64 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 32>>
#F32 = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 32>>
func.func @fp8_k_major(%a: tensor<64x32xf8E4M3FN, #BL>, %w: tensor<64x64xf8E4M3FN, #BL>, %x: tensor<32x64xf8E4M3FN, #BL>, %c: tensor<64x64xf32, #F64>, %e: tensor<64x32xf32, #F32>) -> (tensor<64x64xf32, #F64>, tensor<64x32xf32, #F32>) attributes {tile.kernel} {
  %d1 = "tile.dot"(%a, %x, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf8E4M3FN, #BL>, tensor<32x64xf8E4M3FN, #BL>, tensor<64x64xf32, #F64>) -> tensor<64x64xf32, #F64>
  %t = "tile.trans"(%x) {order = array<i32: 1, 0>} : (tensor<32x64xf8E4M3FN, #BL>) -> tensor<64x32xf8E4M3FN, #BT>
  %d2 = "tile.dot"(%w, %t, %e) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf8E4M3FN, #BL>, tensor<64x32xf8E4M3FN, #BT>, tensor<64x32xf32, #F32>) -> tensor<64x32xf32, #F32>
  return %d1, %d2 : tensor<64x64xf32, #F64>, tensor<64x32xf32, #F32>
}
