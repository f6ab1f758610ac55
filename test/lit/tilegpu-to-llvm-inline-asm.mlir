// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD

// tile.inline_asm (lowering/rules/asm.py): one llvm.inline_asm per group of `pack` elements a
// thread holds, the same on both targets.  pack=1: one statement per element, pure (no
// has_side_effects).  pack=4 of i8: the four elements inserted into a vector<4xi8>, bitcast
// to one i32 operand, the i32 result bitcast back and its elements extracted.  Several results:
// a struct of every output register, outputs of each result in turn.  No arguments: one asm,
// scalar results.

#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // CHECK-LABEL: gpu.func @pack1(
  // CHECK-COUNT-4: llvm.inline_asm asm_dialect = att "shl.b32 $0, $1, 3;", "=r,r" %{{.+}} : (i32) -> i32
  // CHECK-NOT: llvm.inline_asm
  // AMD-LABEL: gpu.func @pack1(
  // AMD-COUNT-4: llvm.inline_asm asm_dialect = att "shl.b32 $0, $1, 3;", "=r,r" %{{.+}} : (i32) -> i32
  func.func @pack1(%p0: !tile.ptr<i32>) attributes {tile.kernel} {
    %x = "tile.make_range"() {end = 512 : i32, start = 0 : i32} : () -> tensor<512xi32, #b>
    %ps = "tile.splat"(%p0) : (!tile.ptr<i32>) -> tensor<512x!tile.ptr<i32>, #b>
    %p = "tile.addptr"(%ps, %x) : (tensor<512x!tile.ptr<i32>, #b>, tensor<512xi32, #b>) -> tensor<512x!tile.ptr<i32>, #b>
    %y = "tile.inline_asm"(%x) {asm = "shl.b32 $0, $1, 3;", constraints = "=r,r", pack = 1 : i32, pure = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<512xi32, #b>) -> tensor<512xi32, #b>
    "tile.store"(%p, %y) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<512x!tile.ptr<i32>, #b>, tensor<512xi32, #b>) -> ()
    return
  }
}

// -----

#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // CHECK-LABEL: gpu.func @pack4(
  // CHECK: %[[U:.+]] = llvm.mlir.undef : vector<4xi8>
  // CHECK-NEXT: %[[V0:.+]] = llvm.insertelement %{{.+}}, %[[U]][%{{.+}} : i32] : vector<4xi8>
  // CHECK-NEXT: %[[V1:.+]] = llvm.insertelement %{{.+}}, %[[V0]][%{{.+}} : i32] : vector<4xi8>
  // CHECK-NEXT: %[[V2:.+]] = llvm.insertelement %{{.+}}, %[[V1]][%{{.+}} : i32] : vector<4xi8>
  // CHECK-NEXT: %[[V3:.+]] = llvm.insertelement %{{.+}}, %[[V2]][%{{.+}} : i32] : vector<4xi8>
  // CHECK-NEXT: %[[W:.+]] = llvm.bitcast %[[V3]] : vector<4xi8> to i32
  // CHECK: %[[R:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "shl.b32 $0, $1, 3;", "=r,r" %[[W]] : (i32) -> i32
  // CHECK: %[[RV:.+]] = llvm.bitcast %[[R]] : i32 to vector<4xi8>
  // CHECK-COUNT-4: llvm.extractelement %[[RV]][%{{.+}} : i32] : vector<4xi8>
  // CHECK-NOT: llvm.inline_asm
  // AMD-LABEL: gpu.func @pack4(
  // AMD: llvm.inline_asm has_side_effects asm_dialect = att "shl.b32 $0, $1, 3;", "=r,r" %{{.+}} : (i32) -> i32
  func.func @pack4(%p0: !tile.ptr<i8>) attributes {tile.kernel} {
    %r = "tile.make_range"() {end = 512 : i32, start = 0 : i32} : () -> tensor<512xi32, #b>
    %ps = "tile.splat"(%p0) : (!tile.ptr<i8>) -> tensor<512x!tile.ptr<i8>, #b>
    %p = "tile.addptr"(%ps, %r) : (tensor<512x!tile.ptr<i8>, #b>, tensor<512xi32, #b>) -> tensor<512x!tile.ptr<i8>, #b>
    %x = arith.trunci %r : tensor<512xi32, #b> to tensor<512xi8, #b>
    %y = "tile.inline_asm"(%x) {asm = "shl.b32 $0, $1, 3;", constraints = "=r,r", pack = 4 : i32, pure = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<512xi8, #b>) -> tensor<512xi8, #b>
    "tile.store"(%p, %y) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<512x!tile.ptr<i8>, #b>, tensor<512xi8, #b>) -> ()
    return
  }
}

// -----

#b = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // Two results: i32 and f32 outputs $0 and $1 (a struct), inputs $2 (i32) and $3 (f32).
  // CHECK-LABEL: gpu.func @two_results(
  // CHECK: %[[S:.+]] = llvm.inline_asm asm_dialect = att "add.s32 $0, $2, $2; mov.b32 $1, $3;", "=r,=f,r,f" %{{.+}}, %{{.+}} : (i32, f32) -> !llvm.struct<(i32, f32)>
  // CHECK-DAG: llvm.extractvalue %[[S]][0] : !llvm.struct<(i32, f32)>
  // CHECK-DAG: llvm.extractvalue %[[S]][1] : !llvm.struct<(i32, f32)>
  func.func @two_results(%p0: !tile.ptr<i32>, %q0: !tile.ptr<f32>) attributes {tile.kernel} {
    %x = "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32, #b>
    %ps = "tile.splat"(%p0) : (!tile.ptr<i32>) -> tensor<128x!tile.ptr<i32>, #b>
    %p = "tile.addptr"(%ps, %x) : (tensor<128x!tile.ptr<i32>, #b>, tensor<128xi32, #b>) -> tensor<128x!tile.ptr<i32>, #b>
    %qs = "tile.splat"(%q0) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #b>
    %q = "tile.addptr"(%qs, %x) : (tensor<128x!tile.ptr<f32>, #b>, tensor<128xi32, #b>) -> tensor<128x!tile.ptr<f32>, #b>
    %f = arith.sitofp %x : tensor<128xi32, #b> to tensor<128xf32, #b>
    %y:2 = "tile.inline_asm"(%x, %f) {asm = "add.s32 $0, $2, $2; mov.b32 $1, $3;", constraints = "=r,=f,r,f", pack = 1 : i32, pure = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<128xi32, #b>, tensor<128xf32, #b>) -> (tensor<128xi32, #b>, tensor<128xf32, #b>)
    "tile.store"(%p, %y#0) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<128x!tile.ptr<i32>, #b>, tensor<128xi32, #b>) -> ()
    "tile.store"(%q, %y#1) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<128x!tile.ptr<f32>, #b>, tensor<128xf32, #b>) -> ()
    return
  }
}

// -----

// No arguments (tl.inline_asm_elementwise with `[]`, `%globaltimer`): one asm, not pure,
// whose results are scalars.
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // CHECK-LABEL: gpu.func @noargs(
  // CHECK: %[[T:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %globaltimer;", "=l"  : () -> i64
  // CHECK-NOT: globaltimer
  // CHECK: st.global.b64 {{.*}} %[[T]]
  // AMD-LABEL: gpu.func @noargs(
  // AMD: %[[T:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %globaltimer;", "=l"  : () -> i64
  // AMD-NOT: globaltimer
  // AMD: llvm.store %[[T]]
  func.func @noargs(%p: !tile.ptr<i64>) attributes {tile.kernel} {
    %t = "tile.inline_asm"() {asm = "mov.u64 $0, %globaltimer;", constraints = "=l", pack = 1 : i32, pure = 0 : i32, operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : () -> i64
    "tile.store"(%p, %t) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i64>, i64) -> ()
    return
  }
}
