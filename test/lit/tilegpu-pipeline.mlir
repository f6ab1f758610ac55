// RUN: tilework-opt %s --split-input-file --tilegpu-pipeline --target sm_80 | FileCheck %s

// tilegpu-pipeline: the loads of an scf.for that feed tile.dot (directly, through a
// convert_layout, or through a local_alloc) are issued S-1 iterations ahead as cp.async copies
// into S buffers.  Prologue: iterations 0..S-2, each masked off past the upper bound, one
// commit group each; loop: wait for all but the S-2 newest groups, issue iteration i+S-1 into
// slot (k+S-1) % S, commit, local_load slot k % S into the layout the consumer wants.  The
// carried pointer of A is carried S-1 iterations ahead (its original dies: nothing else uses
// it; its increment comes last, as in the source); the slice computing A's mask (the iv, %k)
// is cloned per iteration.

// A through a convert_layout to #B (the local_load gives #B), B straight into the dot (no mask:
// the copy's mask is the bound check alone); S = 3.
// CHECK-LABEL: func.func @gemm(
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<16x16xf32
// CHECK-NEXT: %{{.+}} = arith.constant dense<0.000000e+00> : tensor<16x16xf32
// CHECK-NEXT: %[[INC:.+]] = arith.constant dense<16> : tensor<16x16xi32
// CHECK-NEXT: %[[S0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[S1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[S2:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[BA:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 16>, f32, #tilegpu.swizzled_shared<4 : i32, 1 : i32, 1 : i32, array<i32: 1, 0>>, 3 : i32>
// CHECK-NEXT: %[[BB:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 16>, f32, #tilegpu.swizzled_shared<4 : i32, 1 : i32, 1 : i32, array<i32: 1, 0>>, 3 : i32>
// CHECK-NEXT: %[[V0:.+]] = arith.cmpi slt, %[[C0]], %arg2 : i32
// CHECK-NEXT: %[[K0:.+]] = "tile.splat"(%[[C0]])
// CHECK-NEXT: %[[KL0:.+]] = "tile.splat"(%arg3)
// CHECK-NEXT: %[[M0:.+]] = arith.cmpi slt, %[[K0]], %[[KL0]]
// CHECK-NEXT: %[[VA0:.+]] = "tile.splat"(%[[V0]]) : (i1) -> tensor<16x16xi1, #tilegpu.blocked<array<i32: 1, 4>
// CHECK-NEXT: %[[MA0:.+]] = arith.andi %[[M0]], %[[VA0]]
// CHECK-NEXT: %[[DA0:.+]] = "tilegpu.memdesc_index"(%[[BA]], %[[S0]])
// CHECK-NEXT: "tilegpu.async_copy"(%arg0, %[[DA0]], %[[MA0]]) {operandSegmentSizes = array<i32: 1, 1, 1, 0>}
// CHECK-NEXT: %[[VB0:.+]] = "tile.splat"(%[[V0]]) : (i1) -> tensor<16x16xi1, #tilegpu.blocked<array<i32: 2, 2>
// CHECK-NEXT: %[[DB0:.+]] = "tilegpu.memdesc_index"(%[[BB]], %[[S0]])
// CHECK-NEXT: "tilegpu.async_copy"(%arg1, %[[DB0]], %[[VB0]])
// CHECK-NEXT: "tilegpu.async_commit_group"()
// CHECK-NEXT: %[[P1:.+]] = "tile.addptr"(%arg0, %[[INC]])
// CHECK-NEXT: %[[IV1:.+]] = arith.addi %[[C0]], %[[S1]] : i32
// CHECK-NEXT: %[[V1:.+]] = arith.cmpi slt, %[[IV1]], %arg2 : i32
// CHECK-NEXT: %[[K1:.+]] = "tile.splat"(%[[IV1]])
// CHECK-NEXT: %[[KL1:.+]] = "tile.splat"(%arg3)
// CHECK-NEXT: %[[M1:.+]] = arith.cmpi slt, %[[K1]], %[[KL1]]
// CHECK-NEXT: %[[VA1:.+]] = "tile.splat"(%[[V1]])
// CHECK-NEXT: %[[MA1:.+]] = arith.andi %[[M1]], %[[VA1]]
// CHECK-NEXT: %[[DA1:.+]] = "tilegpu.memdesc_index"(%[[BA]], %[[S1]])
// CHECK-NEXT: "tilegpu.async_copy"(%[[P1]], %[[DA1]], %[[MA1]])
// CHECK-NEXT: %[[VB1:.+]] = "tile.splat"(%[[V1]])
// CHECK-NEXT: %[[DB1:.+]] = "tilegpu.memdesc_index"(%[[BB]], %[[S1]])
// CHECK-NEXT: "tilegpu.async_copy"(%arg1, %[[DB1]], %[[VB1]])
// CHECK-NEXT: "tilegpu.async_commit_group"()
// CHECK-NEXT: %[[P2:.+]] = "tile.addptr"(%[[P1]], %[[INC]])
// CHECK-NEXT: %[[R:.+]]:4 = scf.for %[[I:.+]] = %[[C0]] to %arg2 step %[[C1]] iter_args(%[[ACC:.+]] = %[[ZERO]], %[[PA:.+]] = %[[P2]], %[[RD:.+]] = %[[S0]], %[[WR:.+]] = %[[S2]])
// CHECK-NEXT: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK-NEXT: %[[IVN:.+]] = arith.addi %[[I]], %[[S2]] : i32
// CHECK-NEXT: %[[VN:.+]] = arith.cmpi slt, %[[IVN]], %arg2 : i32
// CHECK-NEXT: %[[KN:.+]] = "tile.splat"(%[[IVN]])
// CHECK-NEXT: %[[KLN:.+]] = "tile.splat"(%arg3)
// CHECK-NEXT: %[[MN:.+]] = arith.cmpi slt, %[[KN]], %[[KLN]]
// CHECK-NEXT: %[[VAN:.+]] = "tile.splat"(%[[VN]])
// CHECK-NEXT: %[[MAN:.+]] = arith.andi %[[MN]], %[[VAN]]
// CHECK-NEXT: %[[DAN:.+]] = "tilegpu.memdesc_index"(%[[BA]], %[[WR]])
// CHECK-NEXT: "tilegpu.async_copy"(%[[PA]], %[[DAN]], %[[MAN]])
// CHECK-NEXT: %[[VBN:.+]] = "tile.splat"(%[[VN]])
// CHECK-NEXT: %[[DBN:.+]] = "tilegpu.memdesc_index"(%[[BB]], %[[WR]])
// CHECK-NEXT: "tilegpu.async_copy"(%arg1, %[[DBN]], %[[VBN]])
// CHECK-NEXT: "tilegpu.async_commit_group"()
// CHECK-NEXT: %[[SA:.+]] = "tilegpu.memdesc_index"(%[[BA]], %[[RD]])
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_load"(%[[SA]]) : (!tilegpu.memdesc<array<i64: 16, 16>, f32, #tilegpu.swizzled_shared<4 : i32, 1 : i32, 1 : i32, array<i32: 1, 0>>, 1 : i32>) -> tensor<16x16xf32, #tilegpu.blocked<array<i32: 2, 2>, array<i32: 4, 8>, array<i32: 1, 1>, array<i32: 1, 0>>>
// CHECK-NEXT: %[[SB:.+]] = "tilegpu.memdesc_index"(%[[BB]], %[[RD]])
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_load"(%[[SB]]) : (!tilegpu.memdesc<array<i64: 16, 16>, f32, #tilegpu.swizzled_shared<4 : i32, 1 : i32, 1 : i32, array<i32: 1, 0>>, 1 : i32>) -> tensor<16x16xf32, #tilegpu.blocked<array<i32: 2, 2>, array<i32: 4, 8>, array<i32: 1, 1>, array<i32: 1, 0>>>
// CHECK-NEXT: %[[RW:.+]] = arith.cmpi eq, %[[RD]], %[[S2]] : i32
// CHECK-NEXT: %[[RI:.+]] = arith.addi %[[RD]], %[[S1]] : i32
// CHECK-NEXT: %[[RN:.+]] = arith.select %[[RW]], %[[S0]], %[[RI]] : i32
// CHECK-NEXT: %[[WW:.+]] = arith.cmpi eq, %[[WR]], %[[S2]] : i32
// CHECK-NEXT: %[[WI:.+]] = arith.addi %[[WR]], %[[S1]] : i32
// CHECK-NEXT: %[[WN:.+]] = arith.select %[[WW]], %[[S0]], %[[WI]] : i32
// CHECK-NEXT: %[[D:.+]] = "tile.dot"(%[[A]], %[[B]], %[[ACC]])
// CHECK-NEXT: %[[PN:.+]] = "tile.addptr"(%[[PA]], %[[INC]])
// CHECK-NEXT: scf.yield %[[D]], %[[PN]], %[[RN]], %[[WN]] :
// CHECK-NEXT: } {tile.num_stages = 3 : i32}
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BA]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BB]])
// CHECK-NEXT: return %[[R]]#0
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 8, 4>, array<i32: 1, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 2, 2>, array<i32: 4, 8>, array<i32: 1, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @gemm(%p: tensor<16x16x!tile.ptr<f32>, #A>, %q: tensor<16x16x!tile.ptr<f32>, #B>, %n: i32, %k: i32) -> tensor<16x16xf32, #B> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32, #B>
    %fz = arith.constant dense<0.000000e+00> : tensor<16x16xf32, #A>
    %inc = arith.constant dense<16> : tensor<16x16xi32, #A>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %ptrs = %p) -> (tensor<16x16xf32, #B>, tensor<16x16x!tile.ptr<f32>, #A>) : i32 {
      %ks = "tile.splat"(%i) : (i32) -> tensor<16x16xi32, #A>
      %lim = "tile.splat"(%k) : (i32) -> tensor<16x16xi32, #A>
      %m = arith.cmpi slt, %ks, %lim : tensor<16x16xi32, #A>
      %a = "tile.load"(%ptrs, %m, %fz) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x16x!tile.ptr<f32>, #A>, tensor<16x16xi1, #A>, tensor<16x16xf32, #A>) -> tensor<16x16xf32, #A>
      %ab = "tilegpu.convert_layout"(%a) : (tensor<16x16xf32, #A>) -> tensor<16x16xf32, #B>
      %b = "tile.load"(%q) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x16x!tile.ptr<f32>, #B>) -> tensor<16x16xf32, #B>
      %d = "tile.dot"(%ab, %b, %acc) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32, #B>, tensor<16x16xf32, #B>, tensor<16x16xf32, #B>) -> tensor<16x16xf32, #B>
      %next = "tile.addptr"(%ptrs, %inc) : (tensor<16x16x!tile.ptr<f32>, #A>, tensor<16x16xi32, #A>) -> tensor<16x16x!tile.ptr<f32>, #A>
      scf.yield %d, %next : tensor<16x16xf32, #B>, tensor<16x16x!tile.ptr<f32>, #A>
    } {tile.num_stages = 3 : i32}
    return %r#0 : tensor<16x16xf32, #B>
  }
}

// -----

// The wgmma path: the load feeds a local_alloc (nvmma_shared); the slot of the 2-buffer
// memdesc, in that layout, replaces the buffer and its dealloc goes.  Dynamic bounds and step:
// the prologue iteration is %lo (valid if %lo < %hi), the loop issues %i + %step.
// CHECK-LABEL: func.func @alloc_path(
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant dense<0.000000e+00>
// CHECK-NEXT: %[[S0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[S1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 64>, f32, #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>, 2 : i32>
// CHECK-NEXT: %[[V0:.+]] = arith.cmpi slt, %arg2, %arg3 : i32
// CHECK-NEXT: %[[O0:.+]] = "tile.splat"(%arg2)
// CHECK-NEXT: %[[P0:.+]] = "tile.addptr"(%arg0, %[[O0]])
// CHECK-NEXT: %[[M0:.+]] = "tile.splat"(%[[V0]])
// CHECK-NEXT: %[[D0:.+]] = "tilegpu.memdesc_index"(%[[BUF]], %[[S0]])
// CHECK-NEXT: "tilegpu.async_copy"(%[[P0]], %[[D0]], %[[M0]])
// CHECK-NEXT: "tilegpu.async_commit_group"()
// CHECK-NEXT: %[[R:.+]]:3 = scf.for %[[I:.+]] = %arg2 to %arg3 step %arg4 iter_args(%[[ACC:.+]] = %[[ZERO]], %[[RD:.+]] = %[[S0]], %[[WR:.+]] = %[[S1]])
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// CHECK-NEXT: %[[IVN:.+]] = arith.addi %[[I]], %arg4 : i32
// CHECK-NEXT: %[[VN:.+]] = arith.cmpi slt, %[[IVN]], %arg3 : i32
// CHECK-NEXT: %[[ON:.+]] = "tile.splat"(%[[IVN]])
// CHECK-NEXT: %[[PN:.+]] = "tile.addptr"(%arg0, %[[ON]])
// CHECK-NEXT: %[[MN:.+]] = "tile.splat"(%[[VN]])
// CHECK-NEXT: %[[DN:.+]] = "tilegpu.memdesc_index"(%[[BUF]], %[[WR]])
// CHECK-NEXT: "tilegpu.async_copy"(%[[PN]], %[[DN]], %[[MN]])
// CHECK-NEXT: "tilegpu.async_commit_group"()
// CHECK-NEXT: %[[SLOT:.+]] = "tilegpu.memdesc_index"(%[[BUF]], %[[RD]])
// CHECK-NEXT: arith.cmpi eq, %[[RD]], %[[S1]]
// CHECK-NEXT: arith.addi %[[RD]], %[[S1]]
// CHECK-NEXT: %[[RN:.+]] = arith.select
// CHECK-NEXT: arith.cmpi eq, %[[WR]], %[[S1]]
// CHECK-NEXT: arith.addi %[[WR]], %[[S1]]
// CHECK-NEXT: %[[WN:.+]] = arith.select
// CHECK-NEXT: %[[X:.+]] = "tilegpu.local_load"(%[[SLOT]]) : (!tilegpu.memdesc<array<i64: 16, 64>, f32, #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>, 1 : i32>)
// CHECK-NEXT: %[[D:.+]] = "tile.dot"(%[[X]], %arg1, %[[ACC]])
// CHECK-NEXT: scf.yield %[[D]], %[[RN]], %[[WN]] :
// CHECK-NEXT: } {tile.num_stages = 2 : i32}
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-NEXT: return %[[R]]#0
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 8, 4>, array<i32: 1, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @alloc_path(%p: tensor<16x64x!tile.ptr<f32>, #A>, %b: tensor<64x16xf32, #A>, %lo: i32, %hi: i32, %step: i32) -> tensor<16x16xf32, #A> attributes {tile.kernel} {
    %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32, #A>
    %r = scf.for %i = %lo to %hi step %step iter_args(%acc = %zero) -> (tensor<16x16xf32, #A>) : i32 {
      %off = "tile.splat"(%i) : (i32) -> tensor<16x64xi32, #A>
      %ptrs = "tile.addptr"(%p, %off) : (tensor<16x64x!tile.ptr<f32>, #A>, tensor<16x64xi32, #A>) -> tensor<16x64x!tile.ptr<f32>, #A>
      %a = "tile.load"(%ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x64x!tile.ptr<f32>, #A>) -> tensor<16x64xf32, #A>
      %buf = "tilegpu.local_alloc"(%a) : (tensor<16x64xf32, #A>) -> !tilegpu.memdesc<array<i64: 16, 64>, f32, #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>, 1 : i32>
      %x = "tilegpu.local_load"(%buf) : (!tilegpu.memdesc<array<i64: 16, 64>, f32, #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>, 1 : i32>) -> tensor<16x64xf32, #A>
      "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 16, 64>, f32, #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>, 1 : i32>) -> ()
      %d = "tile.dot"(%x, %b, %acc) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x64xf32, #A>, tensor<64x16xf32, #A>, tensor<16x16xf32, #A>) -> tensor<16x16xf32, #A>
      scf.yield %d : tensor<16x16xf32, #A>
    } {tile.num_stages = 2 : i32}
    return %r : tensor<16x16xf32, #A>
  }
}

// -----

// Left alone: depth 1 (tile.num_stages = 1); a non-zero `other` (cp.async only zero-fills); a
// pointer computed from a load of the same iteration (and that index load feeds no dot); a
// load feeding a reduction, not a dot.  Nothing is rewritten.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: tilegpu.local_alloc
// CHECK-NOT: tilegpu.async_copy
// CHECK: return
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 8, 4>, array<i32: 1, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @left_alone(%p: tensor<16x16x!tile.ptr<f32>, #A>, %ip: tensor<16x16x!tile.ptr<i32>, #A>, %n: i32) -> tensor<16x16xf32, #A> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32, #A>
    %one = arith.constant dense<1.000000e+00> : tensor<16x16xf32, #A>
    %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<16x16xf32, #A>) : i32 {
      %a = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x16x!tile.ptr<f32>, #A>) -> tensor<16x16xf32, #A>
      %d = "tile.dot"(%a, %a, %acc) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32, #A>, tensor<16x16xf32, #A>, tensor<16x16xf32, #A>) -> tensor<16x16xf32, #A>
      scf.yield %d : tensor<16x16xf32, #A>
    } {tile.num_stages = 1 : i32}
    %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r1) -> (tensor<16x16xf32, #A>) : i32 {
      %is = "tile.splat"(%i) : (i32) -> tensor<16x16xi32, #A>
      %ns = "tile.splat"(%n) : (i32) -> tensor<16x16xi32, #A>
      %m = arith.cmpi slt, %is, %ns : tensor<16x16xi32, #A>
      %a = "tile.load"(%p, %m, %one) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x16x!tile.ptr<f32>, #A>, tensor<16x16xi1, #A>, tensor<16x16xf32, #A>) -> tensor<16x16xf32, #A>
      %idx = "tile.load"(%ip) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x16x!tile.ptr<i32>, #A>) -> tensor<16x16xi32, #A>
      %g = "tile.addptr"(%p, %idx) : (tensor<16x16x!tile.ptr<f32>, #A>, tensor<16x16xi32, #A>) -> tensor<16x16x!tile.ptr<f32>, #A>
      %b = "tile.load"(%g) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x16x!tile.ptr<f32>, #A>) -> tensor<16x16xf32, #A>
      %d = "tile.dot"(%a, %b, %acc) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<16x16xf32, #A>, tensor<16x16xf32, #A>, tensor<16x16xf32, #A>) -> tensor<16x16xf32, #A>
      %c = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x16x!tile.ptr<f32>, #A>) -> tensor<16x16xf32, #A>
      %s = "tile.reduce"(%c) {axis = 1 : i32, combine = @add, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<16x16xf32, #A>) -> tensor<16xf32, #tilegpu.slice<1 : i32, #A>>
      scf.yield %d : tensor<16x16xf32, #A>
    }
    return %r2 : tensor<16x16xf32, #A>
  }
  func.func private @add(%x: f32, %y: f32) -> f32 {
    %z = arith.addf %x, %y : f32
    return %z : f32
  }
}

// -----

// A loop without dots that `tl.range(..., num_stages=3)` marked (the fused-softmax row loop):
// its load is pipelined whatever it feeds, with num_stages - 1 = 2 buffers; its fill (-inf)
// comes back by a select on the mask, which is the same in every iteration.  The same loop
// without the mark, and one whose mask changes per iteration (with a fill), are left alone.
// CHECK-LABEL: func.func @rows(
// CHECK: %[[BUF:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 128>, f32, {{.*}}, 2 : i32>
// CHECK: "tilegpu.async_copy"
// CHECK: "tilegpu.async_commit_group"()
// CHECK: scf.for
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// CHECK: "tilegpu.async_copy"
// CHECK: %[[V:.+]] = "tilegpu.local_load"
// CHECK-NOT: "tile.load"
// CHECK: %[[F:.+]] = arith.select %[[M:.+]], %[[V]], %[[NINF:.+]] : tensor<128xi1, {{.*}}>, tensor<128xf32
// CHECK: "tile.reduce"(%[[F]])
// CHECK: } {tile.num_stages = 3 : i32}
// CHECK: "tilegpu.local_dealloc"(%[[BUF]])
// CHECK-LABEL: func.func @rows_unmarked(
// CHECK-NOT: tilegpu.async_copy
// CHECK: "tile.load"
// CHECK-LABEL: func.func @rows_varying_mask(
// CHECK-NOT: tilegpu.async_copy
// CHECK: "tile.load"
// CHECK: return
#R = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 1>, array<i32: 0>>
#S = #tilegpu.slice<0, #tilegpu.blocked<array<i32: 1, 4>, array<i32: 1, 32>, array<i32: 1, 1>, array<i32: 1, 0>>>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func private @max(%a: f32, %b: f32) -> f32 {
    %m = arith.maximumf %a, %b : f32
    return %m : f32
  }
  func.func @rows(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32, %cols: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c128 = arith.constant 128 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #R>
      %lim = "tile.splat"(%cols) : (i32) -> tensor<128xi32, #R>
      %m = arith.cmpi slt, %r, %lim : tensor<128xi32, #R>
      %ninf = arith.constant dense<0xFF800000> : tensor<128xf32, #R>
      %row = arith.muli %i, %c128 : i32
      %o = "tile.splat"(%row) : (i32) -> tensor<128xi32, #R>
      %off = arith.addi %o, %r : tensor<128xi32, #R>
      %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #R>
      %p = "tile.addptr"(%xs, %off) : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi32, #R>) -> tensor<128x!tile.ptr<f32>, #R>
      %v = "tile.load"(%p, %m, %ninf) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi1, #R>, tensor<128xf32, #R>) -> tensor<128xf32, #R>
      %mx = "tile.reduce"(%v) {axis = 0 : i32, combine = @max, operandSegmentSizes = array<i32: 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<128xf32, #R>) -> f32
      %mxs = "tile.splat"(%mx) : (f32) -> tensor<128xf32, #R>
      %d = arith.subf %v, %mxs : tensor<128xf32, #R>
      %ys = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #R>
      %q = "tile.addptr"(%ys, %off) : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi32, #R>) -> tensor<128x!tile.ptr<f32>, #R>
      "tile.store"(%q, %d, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xf32, #R>, tensor<128xi1, #R>) -> ()
    } {tile.num_stages = 3 : i32}
    return
  }
  func.func @rows_unmarked(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c128 = arith.constant 128 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #R>
      %row = arith.muli %i, %c128 : i32
      %o = "tile.splat"(%row) : (i32) -> tensor<128xi32, #R>
      %off = arith.addi %o, %r : tensor<128xi32, #R>
      %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #R>
      %p = "tile.addptr"(%xs, %off) : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi32, #R>) -> tensor<128x!tile.ptr<f32>, #R>
      %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<128x!tile.ptr<f32>, #R>) -> tensor<128xf32, #R>
      %ys = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #R>
      %q = "tile.addptr"(%ys, %off) : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi32, #R>) -> tensor<128x!tile.ptr<f32>, #R>
      "tile.store"(%q, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xf32, #R>) -> ()
    }
    return
  }
  func.func @rows_varying_mask(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c128 = arith.constant 128 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #R>
      %row = arith.muli %i, %c128 : i32
      %o = "tile.splat"(%row) : (i32) -> tensor<128xi32, #R>
      %off = arith.addi %o, %r : tensor<128xi32, #R>
      %lim = "tile.splat"(%i) : (i32) -> tensor<128xi32, #R>
      %m = arith.cmpi slt, %r, %lim : tensor<128xi32, #R>
      %one = arith.constant dense<1.0> : tensor<128xf32, #R>
      %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #R>
      %p = "tile.addptr"(%xs, %off) : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi32, #R>) -> tensor<128x!tile.ptr<f32>, #R>
      %v = "tile.load"(%p, %m, %one) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi1, #R>, tensor<128xf32, #R>) -> tensor<128xf32, #R>
      %ys = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #R>
      %q = "tile.addptr"(%ys, %off) : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xi32, #R>) -> tensor<128x!tile.ptr<f32>, #R>
      "tile.store"(%q, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<f32>, #R>, tensor<128xf32, #R>) -> ()
    } {tile.num_stages = 3 : i32}
    return
  }
}

// -----

// The depth against shared memory counts only the scratch of ops in the loop: 8 x 16 KiB of
// buffers fit sm_80's 163 KiB beside the 64 KiB conversion after the loop (its scratch takes
// the buffers' bytes, free by then: a GEMM's epilogue), not beside the same one in the loop.
// CHECK-LABEL: func.func @scratch_after_loop(
// CHECK: "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 128>, f32, {{.+}}, 8 : i32>
// CHECK: scf.for
// CHECK: "tilegpu.async_copy"
// CHECK: } {tile.num_stages = 8 : i32}
// CHECK: "tilegpu.convert_layout"
// CHECK-LABEL: func.func @scratch_in_loop(
// CHECK: "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 128>, f32, {{.+}}, 6 : i32>
// CHECK: } {tile.num_stages = 8 : i32, tilegpu.pipeline_note = "num_stages 8 -> 6: 8 x 16384 bytes of buffers (and 65536 of scratch) exceed the 166912 bytes of shared memory"}
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 8, 4>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 4, 1>, array<i32: 4, 8>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @scratch_after_loop(%p: tensor<32x128x!tile.ptr<f32>, #A>, %b: tensor<128x16xf32, #A>, %x: tensor<128x128xf32, #A>, %n: i32) -> (tensor<32x16xf32, #A>, tensor<128x128xf32, #B>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<32x16xf32, #A>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<32x16xf32, #A>) : i32 {
      %off = "tile.splat"(%i) : (i32) -> tensor<32x128xi32, #A>
      %ptrs = "tile.addptr"(%p, %off) : (tensor<32x128x!tile.ptr<f32>, #A>, tensor<32x128xi32, #A>) -> tensor<32x128x!tile.ptr<f32>, #A>
      %a = "tile.load"(%ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x128x!tile.ptr<f32>, #A>) -> tensor<32x128xf32, #A>
      %d = "tile.dot"(%a, %b, %acc) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<32x128xf32, #A>, tensor<128x16xf32, #A>, tensor<32x16xf32, #A>) -> tensor<32x16xf32, #A>
      scf.yield %d : tensor<32x16xf32, #A>
    } {tile.num_stages = 8 : i32}
    %y = "tilegpu.convert_layout"(%x) : (tensor<128x128xf32, #A>) -> tensor<128x128xf32, #B>
    return %r, %y : tensor<32x16xf32, #A>, tensor<128x128xf32, #B>
  }
  func.func @scratch_in_loop(%p: tensor<32x128x!tile.ptr<f32>, #A>, %b: tensor<128x16xf32, #A>, %x: tensor<128x128xf32, #A>, %n: i32) -> (tensor<32x16xf32, #A>, tensor<128x128xf32, #B>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<32x16xf32, #A>
    %y0 = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #B>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %yy = %y0) -> (tensor<32x16xf32, #A>, tensor<128x128xf32, #B>) : i32 {
      %off = "tile.splat"(%i) : (i32) -> tensor<32x128xi32, #A>
      %ptrs = "tile.addptr"(%p, %off) : (tensor<32x128x!tile.ptr<f32>, #A>, tensor<32x128xi32, #A>) -> tensor<32x128x!tile.ptr<f32>, #A>
      %a = "tile.load"(%ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x128x!tile.ptr<f32>, #A>) -> tensor<32x128xf32, #A>
      %d = "tile.dot"(%a, %b, %acc) {input_precision = "ieee", max_num_imprecise_acc = 0 : i32} : (tensor<32x128xf32, #A>, tensor<128x16xf32, #A>, tensor<32x16xf32, #A>) -> tensor<32x16xf32, #A>
      %y = "tilegpu.convert_layout"(%x) : (tensor<128x128xf32, #A>) -> tensor<128x128xf32, #B>
      scf.yield %d, %y : tensor<32x16xf32, #A>, tensor<128x128xf32, #B>
    } {tile.num_stages = 8 : i32}
    return %r#0, %r#1 : tensor<32x16xf32, #A>, tensor<128x128xf32, #B>
  }
}

// -----

// A 16-bit load feeding two dots, one directly and one through tile.trans (the attention
// backward's qT and do on mma.sync): the slot is read once per dot, where each conversion was,
// straight into its dot-operand layout (ldmatrix), the transposed one through a memdesc_trans
// view; the swizzle suits the copies' 16-byte writes and both reads.  No register copy of the
// tile, no tile.trans and no conversion through scratch remain.
// CHECK-LABEL: func.func @views(
// CHECK: %[[BUF:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 32>, f16, #tilegpu.swizzled_shared<8 : i32, 2 : i32, 4 : i32, array<i32: 1, 0>>, 2 : i32>
// CHECK: scf.for %{{.+}} iter_args(%[[A:[^ ]+]] = %{{[^,]+}}, %[[B:[^ ]+]] = %{{[^,]+}}, %[[RD:[^ ]+]] = %{{[^,]+}}, %{{[^ ]+}} = %{{[^)]+}})
// CHECK: "tilegpu.async_copy"
// CHECK: %[[SLOT:.+]] = "tilegpu.memdesc_index"(%[[BUF]], %[[RD]])
// CHECK-NOT: tile.trans
// CHECK-NOT: convert_layout
// CHECK: %[[X:.+]] = "tilegpu.local_load"(%[[SLOT]]) : (!tilegpu.memdesc<array<i64: 32, 32>, f16, #tilegpu.swizzled_shared<8 : i32, 2 : i32, 4 : i32, array<i32: 1, 0>>, 1 : i32>) -> tensor<32x32xf16, #tilegpu.dot_operand<1
// CHECK-NEXT: "tile.dot"(%arg1, %[[X]], %[[A]])
// CHECK-NEXT: %[[V:.+]] = "tilegpu.memdesc_trans"(%[[SLOT]]) : ({{.+}}) -> !tilegpu.memdesc<array<i64: 32, 32>, f16, #tilegpu.swizzled_shared<8 : i32, 2 : i32, 4 : i32, array<i32: 0, 1>>, 1 : i32>
// CHECK-NEXT: %[[XT:.+]] = "tilegpu.local_load"(%[[V]]) : ({{.+}}) -> tensor<32x32xf16, #tilegpu.dot_operand<1
// CHECK-NEXT: "tile.dot"(%arg1, %[[XT]], %[[B]])
// CHECK-NEXT: scf.yield
#L = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 8, 4>, array<i32: 1, 1>, array<i32: 1, 0>>
#LT = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 4, 8>, array<i32: 1, 1>, array<i32: 0, 1>>
#S0 = #tilegpu.slice<0 : i32, #L>
#S1 = #tilegpu.slice<1 : i32, #L>
#M = #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>
#A = #tilegpu.dot_operand<0 : i32, #M, 2 : i32>
#B = #tilegpu.dot_operand<1 : i32, #M, 2 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @views(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %w: tensor<32x32xf16, #A>, %n: i32) -> (tensor<32x32xf32, #M>, tensor<32x32xf32, #M>) attributes {tile.kernel} {
    %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #M>
    %c32 = arith.constant dense<32> : tensor<32x1xi32, #L>
    %c1024 = arith.constant 1024 : i32
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %r0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #S1>
    %r1 = "tile.expand_dims"(%r0) {axis = 1 : i32} : (tensor<32xi32, #S1>) -> tensor<32x1xi32, #L>
    %rows = arith.muli %r1, %c32 : tensor<32x1xi32, #L>
    %q0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #S0>
    %q1 = "tile.expand_dims"(%q0) {axis = 0 : i32} : (tensor<32xi32, #S0>) -> tensor<1x32xi32, #L>
    %cols = "tile.broadcast"(%q1) : (tensor<1x32xi32, #L>) -> tensor<32x32xi32, #L>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %b = %zero) -> (tensor<32x32xf32, #M>, tensor<32x32xf32, #M>) : i32 {
      %o = arith.muli %i, %c1024 : i32
      %base = "tile.addptr"(%x, %o) : (!tile.ptr<f16>, i32) -> !tile.ptr<f16>
      %s = "tile.splat"(%base) : (!tile.ptr<f16>) -> tensor<32x1x!tile.ptr<f16>, #L>
      %pr = "tile.addptr"(%s, %rows) : (tensor<32x1x!tile.ptr<f16>, #L>, tensor<32x1xi32, #L>) -> tensor<32x1x!tile.ptr<f16>, #L>
      %pb = "tile.broadcast"(%pr) : (tensor<32x1x!tile.ptr<f16>, #L>) -> tensor<32x32x!tile.ptr<f16>, #L>
      %p = "tile.addptr"(%pb, %cols) : (tensor<32x32x!tile.ptr<f16>, #L>, tensor<32x32xi32, #L>) -> tensor<32x32x!tile.ptr<f16>, #L>
      %t = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x32x!tile.ptr<f16>, #L>) -> tensor<32x32xf16, #L>
      %tb = "tilegpu.convert_layout"(%t) : (tensor<32x32xf16, #L>) -> tensor<32x32xf16, #B>
      %d1 = "tile.dot"(%w, %tb, %a) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x32xf16, #A>, tensor<32x32xf16, #B>, tensor<32x32xf32, #M>) -> tensor<32x32xf32, #M>
      %tt = "tile.trans"(%t) {order = array<i32: 1, 0>} : (tensor<32x32xf16, #L>) -> tensor<32x32xf16, #LT>
      %ttb = "tilegpu.convert_layout"(%tt) : (tensor<32x32xf16, #LT>) -> tensor<32x32xf16, #B>
      %d2 = "tile.dot"(%w, %ttb, %b) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x32xf16, #A>, tensor<32x32xf16, #B>, tensor<32x32xf32, #M>) -> tensor<32x32xf32, #M>
      scf.yield %d1, %d2 : tensor<32x32xf32, #M>, tensor<32x32xf32, #M>
    } {tile.num_stages = 2 : i32}
    return %r#0, %r#1 : tensor<32x32xf32, #M>, tensor<32x32xf32, #M>
  }
}

// -----

// The same with fp32 (no ldmatrix): one read of the slot in the load's layout, the conversions
// (and the transpose) kept.
// CHECK-LABEL: func.func @views_f32(
// CHECK: scf.for
// CHECK: %[[X:.+]] = "tilegpu.local_load"(%{{.+}}) : ({{.+}}) -> tensor<32x32xf32, #tilegpu.blocked<
// CHECK: "tilegpu.convert_layout"(%[[X]])
// CHECK: "tile.trans"(%[[X]])
// CHECK-NOT: memdesc_trans
// CHECK: scf.yield
#L = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 8, 4>, array<i32: 1, 1>, array<i32: 1, 0>>
#LT = #tilegpu.blocked<array<i32: 8, 1>, array<i32: 4, 8>, array<i32: 1, 1>, array<i32: 0, 1>>
#S0 = #tilegpu.slice<0 : i32, #L>
#S1 = #tilegpu.slice<1 : i32, #L>
#M = #tilegpu.mma<2 : i32, array<i32: 1, 1>, array<i32: 16, 8>>
#A = #tilegpu.dot_operand<0 : i32, #M, 1 : i32>
#B = #tilegpu.dot_operand<1 : i32, #M, 1 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @views_f32(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %w: tensor<32x32xf32, #A>, %n: i32) -> (tensor<32x32xf32, #M>, tensor<32x32xf32, #M>) attributes {tile.kernel} {
    %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #M>
    %c32 = arith.constant dense<32> : tensor<32x1xi32, #L>
    %c1024 = arith.constant 1024 : i32
    %c1 = arith.constant 1 : i32
    %c0 = arith.constant 0 : i32
    %r0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #S1>
    %r1 = "tile.expand_dims"(%r0) {axis = 1 : i32} : (tensor<32xi32, #S1>) -> tensor<32x1xi32, #L>
    %rows = arith.muli %r1, %c32 : tensor<32x1xi32, #L>
    %q0 = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #S0>
    %q1 = "tile.expand_dims"(%q0) {axis = 0 : i32} : (tensor<32xi32, #S0>) -> tensor<1x32xi32, #L>
    %cols = "tile.broadcast"(%q1) : (tensor<1x32xi32, #L>) -> tensor<32x32xi32, #L>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %b = %zero) -> (tensor<32x32xf32, #M>, tensor<32x32xf32, #M>) : i32 {
      %o = arith.muli %i, %c1024 : i32
      %base = "tile.addptr"(%x, %o) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      %s = "tile.splat"(%base) : (!tile.ptr<f32>) -> tensor<32x1x!tile.ptr<f32>, #L>
      %pr = "tile.addptr"(%s, %rows) : (tensor<32x1x!tile.ptr<f32>, #L>, tensor<32x1xi32, #L>) -> tensor<32x1x!tile.ptr<f32>, #L>
      %pb = "tile.broadcast"(%pr) : (tensor<32x1x!tile.ptr<f32>, #L>) -> tensor<32x32x!tile.ptr<f32>, #L>
      %p = "tile.addptr"(%pb, %cols) : (tensor<32x32x!tile.ptr<f32>, #L>, tensor<32x32xi32, #L>) -> tensor<32x32x!tile.ptr<f32>, #L>
      %t = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x32x!tile.ptr<f32>, #L>) -> tensor<32x32xf32, #L>
      %tb = "tilegpu.convert_layout"(%t) : (tensor<32x32xf32, #L>) -> tensor<32x32xf32, #B>
      %d1 = "tile.dot"(%w, %tb, %a) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x32xf32, #A>, tensor<32x32xf32, #B>, tensor<32x32xf32, #M>) -> tensor<32x32xf32, #M>
      %tt = "tile.trans"(%t) {order = array<i32: 1, 0>} : (tensor<32x32xf32, #L>) -> tensor<32x32xf32, #LT>
      %ttb = "tilegpu.convert_layout"(%tt) : (tensor<32x32xf32, #LT>) -> tensor<32x32xf32, #B>
      %d2 = "tile.dot"(%w, %ttb, %b) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x32xf32, #A>, tensor<32x32xf32, #B>, tensor<32x32xf32, #M>) -> tensor<32x32xf32, #M>
      scf.yield %d1, %d2 : tensor<32x32xf32, #M>, tensor<32x32xf32, #M>
    } {tile.num_stages = 2 : i32}
    return %r#0, %r#1 : tensor<32x32xf32, #M>, tensor<32x32xf32, #M>
  }
}
