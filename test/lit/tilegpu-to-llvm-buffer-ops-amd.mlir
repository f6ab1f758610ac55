// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefixes=CHECK,CDNA
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx1100 | FileCheck %s --check-prefixes=CHECK,RDNA3
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx1201 | FileCheck %s --check-prefix=GFX12

// With `tilegpu.buffer_ops` (CompileOptions.buffer_ops), a masked load of a scalar
// pointer plus i32 offsets is a buffer load: the element offset times 4 bytes, or 0x80000000
// (past num_records = 2^31 - 2: reads 0) where the mask bit is false, then `other` (2.0)
// selected; no scf.if.  The masked store the same way (out of range: no write).  The resource's word 3: a data format (159744) on CDNA, plus bit 24
// and out-of-bounds select 3 on RDNA3; gfx12 keeps the branch.

// CHECK-LABEL: gpu.func @masked_other(
// CHECK-SAME: %[[X:[^:]+]]: !llvm.ptr<1>, %[[N:[^:]+]]: i32)
// CHECK-DAG: %[[OOB:.+]] = arith.constant -2147483648 : i32
// CHECK-DAG: %[[NR:.+]] = arith.constant 2147483646 : i64
// CDNA-DAG: %[[W3:.+]] = arith.constant 159744 : i32
// RDNA3-DAG: %[[W3:.+]] = arith.constant 822243328 : i32
// CHECK: %[[M0:.+]] = arith.cmpi slt, %{{.+}}, %[[N]] : i32
// CHECK: %[[RS:.+]] = rocdl.make.buffer.rsrc %[[X]], %{{.+}}, %[[NR]], %[[W3]] : <1> to <8>
// CHECK: %[[B:.+]] = arith.muli %{{.+}}, %c4_i32 : i32
// CHECK: %[[O:.+]] = arith.select %[[M0]], %[[B]], %[[OOB]] : i32
// CHECK: %[[L:.+]] = rocdl.raw.ptr.buffer.load %[[RS]], %[[O]], %c0_i32, %c0_i32 : vector<4xi32>
// CHECK: %[[F:.+]] = llvm.bitcast %[[L]] : vector<4xi32> to vector<4xf32>
// CHECK: arith.select %[[M0]], %[[F]], %{{.+}} : vector<4xf32>
// CHECK-COUNT-3: rocdl.raw.ptr.buffer.load
// CHECK-NOT: scf.if
// CHECK-NOT: llvm.load
// CHECK: %[[RS2:.+]] = rocdl.make.buffer.rsrc %[[X]], %{{.+}}, %[[NR]], %[[W3]] : <1> to <8>
// CHECK: %[[S:.+]] = arith.select %[[M0]], %{{.+}}, %[[OOB]] : i32
// CHECK: rocdl.raw.ptr.buffer.store %{{.+}}, %[[RS2]], %[[S]], %c0_i32, %c0_i32 : vector<4xi32>
// CHECK-COUNT-3: rocdl.raw.ptr.buffer.store
// CHECK-NOT: {{scf.if|llvm.store}}
// CHECK: gpu.return

// GFX12-LABEL: gpu.func @masked_other(
// GFX12-COUNT-4: scf.if %{{.+}} -> (vector<4xf32>) {
// GFX12-COUNT-4: scf.if %{{.+}} {
// GFX12-NOT: rocdl.raw.ptr.buffer
// GFX12: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 1>, array<i32: 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32, tilegpu.buffer_ops} {
  func.func @masked_other(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 512 : i32} : () -> tensor<512xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<512xi32, #L>
    %m = arith.cmpi slt, %r, %ns : tensor<512xi32, #L>
    %other = arith.constant dense<2.0> : tensor<512xf32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xi32, #L>) -> tensor<512x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xa, %m, %other) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xi1, #L>, tensor<512xf32, #L>) -> tensor<512xf32, #L>
    %w = arith.addf %v, %v : tensor<512xf32, #L>
    "tile.store"(%xa, %w, %m) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xf32, #L>, tensor<512xi1, #L>) -> ()
    return
  }
}

// -----

// `other` 0 (and no `other`): what the out-of-range read gives, no select.  Two addptrs
// (the offsets' GEPs summed back).

// CHECK-LABEL: gpu.func @masked_zero(
// CHECK: %[[L:.+]] = rocdl.raw.ptr.buffer.load
// CHECK-NEXT: %[[F:.+]] = llvm.bitcast %[[L]] : vector<4xi32> to vector<4xf32>
// CHECK-NOT: arith.select %{{.+}} : vector<4xf32>
// CHECK: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 1>, array<i32: 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32, tilegpu.buffer_ops} {
  func.func @masked_zero(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<128xi32, #L>
    %m = arith.cmpi slt, %r, %ns : tensor<128xi32, #L>
    %other = arith.constant dense<0.0> : tensor<128xf32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %ns) : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xi32, #L>) -> tensor<128x!tile.ptr<f32>, #L>
    %xb = "tile.addptr"(%xa, %r) : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xi32, #L>) -> tensor<128x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xb, %m, %other) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32} : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xi1, #L>, tensor<128xf32, #L>) -> tensor<128xf32, #L>
    "tile.store"(%xb, %v) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xf32, #L>) -> ()
    return
  }
}

// -----

// Without the attribute: the branch around each access.

// CHECK-LABEL: gpu.func @no_attribute(
// CHECK: scf.if %{{.+}} -> (vector<4xf32>) {
// CHECK-NOT: rocdl.raw.ptr.buffer.load
// CHECK: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 1>, array<i32: 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @no_attribute(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<128xi32, #L>
    %m = arith.cmpi slt, %r, %ns : tensor<128xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xi32, #L>) -> tensor<128x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xi1, #L>) -> tensor<128xf32, #L>
    "tile.store"(%xa, %v) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xf32, #L>) -> ()
    return
  }
}
