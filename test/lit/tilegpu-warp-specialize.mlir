// RUN: tilework-opt %s --split-input-file --tilegpu-warp-specialize --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-warp-specialize --target sm_80 | FileCheck %s --check-prefix=SM80

// tilegpu-warp-specialize: a `tl.range(..., warp_specialize=True)` loop whose TMA loads feed a
// wgmma.  Before the split: the rings (num_stages = 2 here), the full barriers (one arrival
// per load) and the empty ones (one per consumer warp).  The producer (warp group num_warps /
// 4 = 1) gives registers back, recomputes the coordinates and, per iteration k, waits for
// slot k % 2 to be empty (phase ((k / 2) & 1) ^ 1: a fresh barrier passes phase 1) and
// copies into it; the consumers (the kernel, moved into the else block) wait for the slot to
// be full, run the wgmma on it and, once wgmma(k - 1) is done (warpgroup_wait {1}), release
// its slot (k > 0).  After the loop: the last wgmma waited for, the barriers invalidated.
// One consumer warp group: no setmaxnreg.inc (nothing to take).

// CHECK-LABEL: func.func @simple(
// CHECK-SAME: tilegpu.producer_warps = 4 : i32
// CHECK: %[[RA:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 2 : i32>
// CHECK-NEXT: %[[RB:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 2 : i32>
// CHECK-NEXT: %[[FULL:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 2 : i32>
// CHECK-NEXT: %[[EMPTY:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 2 : i32>
// CHECK: %[[F0:.+]] = "tilegpu.memdesc_index"(%[[FULL]],
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[F0]]) {count = 2 : i32}
// CHECK: %[[F1:.+]] = "tilegpu.memdesc_index"(%[[FULL]],
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[F1]]) {count = 2 : i32}
// CHECK: %[[E0:.+]] = "tilegpu.memdesc_index"(%[[EMPTY]],
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[E0]]) {count = 4 : i32}
// CHECK: %[[E1:.+]] = "tilegpu.memdesc_index"(%[[EMPTY]],
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[E1]]) {count = 4 : i32}
// CHECK-NEXT: %[[WG:.+]] = "tilegpu.warp_group_id"() : () -> i32
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[PROD:.+]] = arith.cmpi eq, %[[WG]], %[[ONE]] : i32
// CHECK-NEXT: scf.if %[[PROD]] {
// CHECK-NEXT: "tilegpu.setmaxnreg"() {count = 40 : i32, mode = "dec"}
// CHECK: %[[ROW:.+]] = arith.muli %arg3, %[[C64:.+]] : i32
// CHECK-NEXT: scf.for %[[PI:.+]] = %{{.+}} to %arg2 step %{{.+}}  : i32 {
// CHECK-NEXT: %[[PK:.+]] = arith.muli %[[PI]], %[[C64]] : i32
// CHECK: %[[PC:.+]] = arith.divsi
// CHECK: %[[PSLOT:.+]] = arith.remsi %[[PC]],
// CHECK: %[[PROUND:.+]] = arith.divsi %[[PC]],
// CHECK: %[[PPH:.+]] = arith.andi %[[PROUND]],
// CHECK-NEXT: %[[PE:.+]] = "tilegpu.memdesc_index"(%[[EMPTY]], %[[PSLOT]])
// CHECK: %[[PFLIP:.+]] = arith.xori %[[PPH]],
// CHECK-NEXT: "tilegpu.mbarrier_wait"(%[[PE]], %[[PFLIP]])
// CHECK-NEXT: %[[PF:.+]] = "tilegpu.memdesc_index"(%[[FULL]], %[[PSLOT]])
// CHECK-NEXT: %[[PA:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[PSLOT]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[PA]], %[[PF]], %[[ROW]], %[[PK]])
// CHECK-NEXT: %[[PB:.+]] = "tilegpu.memdesc_index"(%[[RB]], %[[PSLOT]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg1, %[[PB]], %[[PF]], %[[PK]], %[[ROW]])
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: } else {
// CHECK-NOT: setmaxnreg
// CHECK: %[[R:.+]] = scf.for %[[I:.+]] = %{{.+}} to %arg2 step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}})
// CHECK: %[[C:.+]] = arith.divsi
// CHECK: %[[SLOT:.+]] = arith.remsi %[[C]],
// CHECK: %[[ROUND:.+]] = arith.divsi %[[C]],
// CHECK: %[[PH:.+]] = arith.andi %[[ROUND]],
// CHECK-NEXT: %[[FW:.+]] = "tilegpu.memdesc_index"(%[[FULL]], %[[SLOT]])
// CHECK-NEXT: "tilegpu.mbarrier_wait"(%[[FW]], %[[PH]])
// CHECK-NEXT: %[[VA:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[SLOT]])
// CHECK-NEXT: %[[VB:.+]] = "tilegpu.memdesc_index"(%[[RB]], %[[SLOT]])
// CHECK-NOT: tma_load
// CHECK: %[[D:.+]] = "tilegpu.warpgroup_dot"(%[[VA]], %[[VB]], %[[ACC]])
// CHECK-NEXT: %[[W:.+]] = "tilegpu.warpgroup_wait"(%[[D]]) {num = 1 : i32}
// CHECK: %[[PREV:.+]] = arith.remsi
// CHECK-NEXT: %[[EP:.+]] = "tilegpu.memdesc_index"(%[[EMPTY]], %[[PREV]])
// CHECK: %[[NOTFIRST:.+]] = arith.cmpi sgt, %[[C]],
// CHECK-NEXT: "tilegpu.mbarrier_arrive"(%[[EP]], %[[NOTFIRST]])
// CHECK-NEXT: scf.yield %[[W]]
// CHECK-NEXT: } {tile.num_stages = 2 : i32, tile.warp_specialize}
// CHECK-NEXT: "tilegpu.warpgroup_wait"(%[[R]]) {num = 0 : i32}
// CHECK-COUNT-4: "tilegpu.mbarrier_inval"
// CHECK: "tilegpu.local_dealloc"(%[[RA]])
// CHECK: } {tilegpu.warp_specialize}
// CHECK-NEXT: return

// SM80-LABEL: func.func @simple(
// SM80-NOT: scf.if
// SM80: tilegpu.warp_specialize_note = "warp_specialize ignored: the target has no wgmma (sm_90a only)"
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @simple(%da: !tile.ptr<i8> {tile.tma}, %db: !tile.ptr<i8> {tile.tma}, %n: i32, %m: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %row = arith.muli %m, %c64 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %k = arith.muli %i, %c64 : i32
      %a = "tile.descriptor_load"(%da, %row, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %b = "tile.descriptor_load"(%db, %k, %row) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %sb = "tilegpu.local_alloc"(%b) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 2 : i32, tile.warp_specialize}
    return
  }
}

// -----

// The persistent form (tutorial 09): the marked loop runs over tiles, the K loop inside.
// The ring counter runs on across tiles: c = t * n + k (t the tile's iteration, n the K
// loop's trip count, max(0, ceil((ub - lb) / step))), in the producer's copy of both loops and
// in the consumers' loop; after the K loop the consumers release the tile's last slot
// (when n > 0) and run the epilogue while the producer fills the next tile's slots.

// CHECK-LABEL: func.func @persistent(
// CHECK: scf.if
// CHECK-NEXT: "tilegpu.setmaxnreg"() {count = 40 : i32, mode = "dec"}
// CHECK: %[[PID:.+]] = "tile.get_program_id"()
// CHECK: %[[N:.+]] = arith.maxsi
// CHECK-NEXT: scf.for %[[T:.+]] = %[[PID]] to %arg3 step %[[C132:.+]]  : i32 {
// CHECK-NEXT: %[[ROW:.+]] = arith.muli %[[T]],
// CHECK-NEXT: scf.for %[[I:.+]] = %{{.+}} to %arg4 step %{{.+}}  : i32 {
// CHECK-NEXT: %[[K:.+]] = arith.muli %[[I]],
// CHECK: %[[KI:.+]] = arith.divsi
// CHECK-NEXT: %[[TD:.+]] = arith.subi %[[T]], %[[PID]] : i32
// CHECK-NEXT: %[[TI:.+]] = arith.divsi %[[TD]], %[[C132]] : i32
// CHECK-NEXT: %[[BASE:.+]] = arith.muli %[[TI]], %[[N]] : i32
// CHECK-NEXT: %[[CNT:.+]] = arith.addi %[[BASE]], %[[KI]] : i32
// CHECK: "tilegpu.mbarrier_wait"
// CHECK: "tilegpu.tma_load"(%arg0, %{{.+}}, %{{.+}}, %[[ROW]], %[[K]])
// CHECK: "tilegpu.tma_load"(%arg1,
// CHECK: } else {
// CHECK: scf.for
// CHECK: %[[CN:.+]] = arith.maxsi
// CHECK: %[[CBASE:.+]] = arith.muli %{{.+}}, %[[CN]] : i32
// CHECK: %[[R:.+]] = scf.for
// CHECK: %[[CK:.+]] = arith.divsi
// CHECK-NEXT: %[[CC:.+]] = arith.addi %[[CBASE]], %[[CK]] : i32
// CHECK: "tilegpu.mbarrier_wait"
// CHECK: "tilegpu.warpgroup_dot"
// CHECK: "tilegpu.mbarrier_arrive"
// CHECK: scf.yield
// CHECK: %[[DONE:.+]] = "tilegpu.warpgroup_wait"(%[[R]]) {num = 0 : i32}
// CHECK: %[[NL:.+]] = arith.addi %[[CN]],
// CHECK-NEXT: %[[LAST:.+]] = arith.addi %[[CBASE]], %[[NL]] : i32
// CHECK: %[[LSLOT:.+]] = arith.remsi %[[LAST]],
// CHECK-NEXT: %[[LE:.+]] = "tilegpu.memdesc_index"(%{{.+}}, %[[LSLOT]])
// CHECK: %[[ANY:.+]] = arith.cmpi sgt, %[[CN]],
// CHECK-NEXT: "tilegpu.mbarrier_arrive"(%[[LE]], %[[ANY]])
// CHECK: "tile.store"(%{{.+}}, %[[DONE]])
// CHECK: } {tile.flatten, tile.num_stages = 3 : i32, tile.warp_specialize}
// CHECK-COUNT-6: "tilegpu.mbarrier_inval"
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @persistent(%da: !tile.ptr<i8> {tile.tma}, %db: !tile.ptr<i8> {tile.tma}, %c: !tile.ptr<f32>, %tiles: i32, %ktiles: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %c132 = arith.constant 132 : i32
    %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    scf.for %t = %pid to %tiles step %c132 : i32 {
      %row = arith.muli %t, %c64 : i32
      %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
      %r = scf.for %i = %c0 to %ktiles step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
        %k = arith.muli %i, %c64 : i32
        %a = "tile.descriptor_load"(%da, %row, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
        %b = "tile.descriptor_load"(%db, %k, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
        %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
        %sb = "tilegpu.local_alloc"(%b) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
        %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
        "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
        "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
        scf.yield %d : tensor<64x64xf32, #C>
      }
      %p = "tile.splat"(%c) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C>
      "tile.store"(%p, %r) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
    } {tile.num_stages = 3 : i32, tile.warp_specialize, tile.flatten}
    return
  }
}

// -----

// A coordinate carried by the loop and advanced by a loop-invariant step (Triton's attention
// tutorial: `offset += BLOCK_N`): the producer computes its own copy, init + k * step, from
// its iteration k; the consumers keep theirs (now unused by any load).
// CHECK-LABEL: func.func @carried_coordinate(
// CHECK-SAME: tilegpu.producer_warps = 4 : i32
// CHECK: scf.if
// CHECK-NEXT: "tilegpu.setmaxnreg"() {count = 40 : i32, mode = "dec"}
// CHECK: %[[C64:.+]] = arith.constant 64 : i32
// CHECK-NEXT: scf.for %[[PI:.+]] = %[[LB:.+]] to %arg1 step %[[ST:.+]]  : i32 {
// CHECK-NEXT: %[[D:.+]] = arith.subi %[[PI]], %[[LB]] : i32
// CHECK-NEXT: %[[K:.+]] = arith.divsi %[[D]], %[[ST]] : i32
// CHECK-NEXT: %[[X:.+]] = arith.muli %[[K]], %[[C64]] : i32
// CHECK-NEXT: %[[OFF:.+]] = arith.addi %[[LB]], %[[X]] : i32
// CHECK: "tilegpu.mbarrier_wait"
// CHECK: "tilegpu.tma_load"(%arg0, %{{.+}}, %{{.+}}, %arg2, %[[OFF]])
// CHECK: } else {
// CHECK: scf.for
// CHECK-NOT: tma_load
// CHECK: "tilegpu.warpgroup_dot"
// CHECK-NOT: warp_specialize_note
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @carried_coordinate(%da: !tile.ptr<i8> {tile.tma}, %n: i32, %m: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (tensor<64x64xf32, #C>, i32) : i32 {
      %a = "tile.descriptor_load"(%da, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sa, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      %k2 = arith.addi %k, %c64 : i32
      scf.yield %d, %k2 : tensor<64x64xf32, #C>, i32
    } {tile.num_stages = 3 : i32, tile.warp_specialize}
    return
  }
}

// -----

// A carried coordinate advanced otherwise (here it doubles): the producer could not
// recompute it, so the hint is ignored (as Triton ignores it where it does not apply) and the
// note says why; tilegpu-pipeline-tma and tilegpu-tma-loads then handle the loop as any other.
// CHECK-LABEL: func.func @carried_coordinate_doubling(
// CHECK-NOT: tilegpu.producer_warps
// CHECK-NOT: scf.if
// CHECK: "tile.descriptor_load"
// CHECK: tilegpu.warp_specialize_note = "warp_specialize ignored: a load's coordinates or the loop bounds depend on a loop-carried value other than one advanced by a loop-invariant step"
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @carried_coordinate_doubling(%da: !tile.ptr<i8> {tile.tma}, %n: i32, %m: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c1) -> (tensor<64x64xf32, #C>, i32) : i32 {
      %a = "tile.descriptor_load"(%da, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sa, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      %k2 = arith.addi %k, %k : i32
      scf.yield %d, %k2 : tensor<64x64xf32, #C>, i32
    } {tile.num_stages = 3 : i32, tile.warp_specialize}
    return
  }
}

// -----

// The epilogue's TMA store buffer lives beside the rings.  A store under tile-tma-guard's
// run-time branch ({tilegpu.tma_store_guard}) excludes that branch's fallback, whose scratch
// (here the conversion's, 16384 bytes) the reserve holds: the same bytes serve either,
// max(16384, the store's 131072 + 1024), and num_stages 8 shrinks to 5.
// CHECK-LABEL: func.func @guarded_store(
// CHECK: tilegpu.pipeline_note = "num_stages 8 -> 5: the TMA buffers of 8 stages (and 132096 bytes of scratch) exceed the 232448 bytes of shared memory"
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @guarded_store(%da: !tile.ptr<i8> {tile.tma}, %db: !tile.ptr<i8> {tile.tma}, %dc: !tile.ptr<i8> {tile.tma}, %c: !tile.ptr<f32>, %big: tensor<128x256xf32, #B>, %tiles: i32, %ktiles: i32, %ok: i1) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %c132 = arith.constant 132 : i32
    %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    scf.for %t = %pid to %tiles step %c132 : i32 {
      %row = arith.muli %t, %c64 : i32
      %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
      %r = scf.for %i = %c0 to %ktiles step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
        %k = arith.muli %i, %c64 : i32
        %a = "tile.descriptor_load"(%da, %row, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
        %b = "tile.descriptor_load"(%db, %k, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
        %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
        %sb = "tilegpu.local_alloc"(%b) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
        %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
        "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
        "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
        scf.yield %d : tensor<64x64xf32, #C>
      }
      %rb = "tilegpu.convert_layout"(%r) : (tensor<64x64xf32, #C>) -> tensor<64x64xf32, #B>
      %p = "tile.splat"(%c) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #B>
      "tile.store"(%p, %rb) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #B>, tensor<64x64xf32, #B>) -> ()
      scf.if %ok {
        "tile.descriptor_store"(%dc, %big, %row, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, tensor<128x256xf32, #B>, i32, i32) -> ()
      } {tilegpu.tma_store_guard}
    } {tile.num_stages = 8 : i32, tile.warp_specialize}
    return
  }
}

// -----

// The same epilogue, its store under the kernel's own `if` (no mark): the store's buffer and
// the conversion's scratch both count.
// CHECK-LABEL: func.func @user_if_store(
// CHECK: tilegpu.pipeline_note = "num_stages 8 -> 4: the TMA buffers of 8 stages (and 148480 bytes of scratch) exceed the 232448 bytes of shared memory"
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @user_if_store(%da: !tile.ptr<i8> {tile.tma}, %db: !tile.ptr<i8> {tile.tma}, %dc: !tile.ptr<i8> {tile.tma}, %c: !tile.ptr<f32>, %big: tensor<128x256xf32, #B>, %tiles: i32, %ktiles: i32, %ok: i1) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %c132 = arith.constant 132 : i32
    %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    scf.for %t = %pid to %tiles step %c132 : i32 {
      %row = arith.muli %t, %c64 : i32
      %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
      %r = scf.for %i = %c0 to %ktiles step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
        %k = arith.muli %i, %c64 : i32
        %a = "tile.descriptor_load"(%da, %row, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
        %b = "tile.descriptor_load"(%db, %k, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
        %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
        %sb = "tilegpu.local_alloc"(%b) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
        %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
        "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
        "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
        scf.yield %d : tensor<64x64xf32, #C>
      }
      %rb = "tilegpu.convert_layout"(%r) : (tensor<64x64xf32, #C>) -> tensor<64x64xf32, #B>
      %p = "tile.splat"(%c) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #B>
      "tile.store"(%p, %rb) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #B>, tensor<64x64xf32, #B>) -> ()
      scf.if %ok {
        "tile.descriptor_store"(%dc, %big, %row, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, tensor<128x256xf32, #B>, i32, i32) -> ()
      }
    } {tile.num_stages = 8 : i32, tile.warp_specialize}
    return
  }
}
