// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s --check-prefix=COUNT
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD

// A masked load and store of 16 accesses per thread (2048 f32, one warp, 4 contiguous
// elements per access): on NVIDIA each access is one predicated inline PTX instruction, the
// load's four words tied to `other` (2.0 as i32: 1073741824) and kept where the mask bit is
// false; no scf.if.  The addresses are one GEP by the thread part and constant GEPs from it.
// AMD branches around each access.

// CHECK-LABEL: gpu.func @big_masked(
// CHECK-SAME: %[[X:[^:]+]]: !llvm.ptr<1>, %[[N:[^:]+]]: i32)
// CHECK: %[[M0:.+]] = arith.cmpi slt, %{{.+}}, %[[N]] : i32
// CHECK: %[[G0:.+]] = llvm.getelementptr %[[X]][%{{.+}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[G1:.+]] = llvm.getelementptr %[[G0]][1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// CHECK: %[[G4:.+]] = llvm.getelementptr %[[G0]][128] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// CHECK: %[[O:.+]] = llvm.bitcast %{{.+}} : vector<4xf32> to vector<4xi32>
// CHECK: %[[W:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "@$4 ld.global.v4.b32 {$0, $1, $2, $3}, [$5];", "=r,=r,=r,=r,b,l,0,1,2,3" %[[M0]], %[[G0]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (i1, !llvm.ptr<1>, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: llvm.bitcast %{{.+}} : vector<4xi32> to vector<4xf32>
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$0 st.global.v4.b32 [$1], {$2, $3, $4, $5};", "b,l,r,r,r,r,~{memory}" %[[M0]], %[[G0]],
// CHECK-NOT: scf.if
// CHECK: gpu.return

// COUNT-LABEL: gpu.func @big_masked(
// COUNT-COUNT-16: "@$4 ld.global.v4.b32
// COUNT-NOT: ld.global
// COUNT-COUNT-16: "@$0 st.global.v4.b32
// COUNT-NOT: {{scf.if|llvm.load|llvm.store|st.global}}
// COUNT: gpu.return

// AMD-LABEL: gpu.func @big_masked(
// AMD-COUNT-16: scf.if %{{.+}} -> (vector<4xf32>) {
// AMD-NOT: llvm.inline_asm
// AMD: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 1>, array<i32: 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @big_masked(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 2048 : i32} : () -> tensor<2048xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<2048xi32, #L>
    %m = arith.cmpi slt, %r, %ns : tensor<2048xi32, #L>
    %other = arith.constant dense<2.0> : tensor<2048xf32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<2048x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<2048x!tile.ptr<f32>, #L>, tensor<2048xi32, #L>) -> tensor<2048x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xa, %m, %other) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32} : (tensor<2048x!tile.ptr<f32>, #L>, tensor<2048xi1, #L>, tensor<2048xf32, #L>) -> tensor<2048xf32, #L>
    %w = arith.addf %v, %v : tensor<2048xf32, #L>
    "tile.store"(%xa, %w, %m) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32} : (tensor<2048x!tile.ptr<f32>, #L>, tensor<2048xf32, #L>, tensor<2048xi1, #L>) -> ()
    return
  }
}

// -----

// A mask compared before a loop and used by accesses in it (softmax_prefetch's `cols <
// n_cols`): each access compares again in the loop, one `sideeffect` asm (LLVM cannot hoist
// it): the thread part plus the element's constant against the bound, so the thread part
// and the bound stay live across the loop instead of one predicate per access (done where
// the compares' operands are fewer than the bits: 2 here against 4).  The compare before the
// loop stays for the access there.  4 warps, 2048 f32: 4 accesses a thread.

// CHECK-LABEL: gpu.func @invariant_mask_in_loop(
// CHECK-SAME: %[[X:[^:]+]]: !llvm.ptr<1>, %[[N:[^:]+]]: i32, %[[R:[^:]+]]: i32)
// CHECK: %[[T:.+]] = arith.shli %{{.+}}, %c2_i32 : i32
// CHECK: %[[M0:.+]] = arith.cmpi slt, %[[T]], %[[N]] : i32
// CHECK: "@$4 ld.global.v4.b32 {$0, $1, $2, $3}, [$5];", "=r,=r,=r,=r,b,l,0,1,2,3" %[[M0]],
// CHECK: scf.for
// CHECK: %[[P0:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "{ setp.lt.s32 $0, $1, $2; }", "=b,r,r" %[[T]], %[[N]] : (i32, i32) -> i1
// CHECK: "@$4 ld.global.v4.b32 {{.*}} %[[P0]],
// CHECK: %[[P1:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .b32 %t0; add.s32 %t0, $1, 512; setp.lt.s32 $0, %t0, $2; }", "=b,r,r" %[[T]], %[[N]] : (i32, i32) -> i1
// CHECK: "@$4 ld.global.v4.b32 {{.*}} %[[P1]],
// CHECK: add.s32 %t0, $1, 1024;
// CHECK: add.s32 %t0, $1, 1536;
// CHECK: "{ setp.lt.s32 $0, $1, $2; }"
// CHECK: "@$0 st.global.v4.b32
// CHECK: scf.yield

// AMD-LABEL: gpu.func @invariant_mask_in_loop(
// AMD-NOT: llvm.inline_asm
// AMD: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @invariant_mask_in_loop(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}, %rows: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = "tile.make_range"() {start = 0 : i32, end = 2048 : i32} : () -> tensor<2048xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<2048xi32, #L>
    %m = arith.cmpi slt, %r, %ns : tensor<2048xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<2048x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<2048x!tile.ptr<f32>, #L>, tensor<2048xi32, #L>) -> tensor<2048x!tile.ptr<f32>, #L>
    %v0 = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<2048x!tile.ptr<f32>, #L>, tensor<2048xi1, #L>) -> tensor<2048xf32, #L>
    %res = scf.for %k = %c0 to %rows step %c1 iter_args(%acc = %v0) -> (tensor<2048xf32, #L>) : i32 {
      %v = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<2048x!tile.ptr<f32>, #L>, tensor<2048xi1, #L>) -> tensor<2048xf32, #L>
      %s = arith.addf %acc, %v : tensor<2048xf32, #L>
      "tile.store"(%xa, %s, %m) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32} : (tensor<2048x!tile.ptr<f32>, #L>, tensor<2048xf32, #L>, tensor<2048xi1, #L>) -> ()
      scf.yield %s : tensor<2048xf32, #L>
    }
    return
  }
}
