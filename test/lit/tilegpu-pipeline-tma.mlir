// RUN: tilework-opt %s --split-input-file --tilegpu-pipeline-tma --target sm_90a | FileCheck %s

// tilegpu-pipeline-tma: the descriptor loads of a loop feeding a warpgroup_dot get rings of
// num_stages (3) buffers in their swizzle's layout and a ring of mbarriers (each for 2
// arrivals: one per load); iterations 0 and 1 are issued before the loop (predicated on
// running), iteration k + 2 in it, into the slot wgmma(k - 1) read, after
// warpgroup_wait {num = 1}; the wait on slot k % 3 (phase (k / 3) & 1) comes before the dot,
// which reads the slots; after the loop, warpgroup_wait {num = 0}, the barriers' invals, the
// deallocs.

// CHECK-LABEL: func.func @ring(
// CHECK: %[[RA:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 3 : i32>
// CHECK-NEXT: %[[RB:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 3 : i32>
// CHECK-NEXT: %[[BARS:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 3 : i32>
// CHECK-NEXT: %[[J0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[B0:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[J0]])
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[B0]]) {count = 2 : i32}
// CHECK-NEXT: %[[J1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[B1:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[J1]])
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[B1]]) {count = 2 : i32}
// CHECK-NEXT: %[[J2:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[B2:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[J2]])
// CHECK-NEXT: "tilegpu.mbarrier_init"(%[[B2]]) {count = 2 : i32}
// CHECK-NEXT: %[[S0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[P0:.+]] = arith.cmpi slt, %c0_i32, %arg2 : i32
// CHECK-NEXT: %[[K0:.+]] = arith.muli %c0_i32, %c64_i32 : i32
// CHECK-NEXT: %[[BS0:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[S0]])
// CHECK-NEXT: %[[AS0:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[S0]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[AS0]], %[[BS0]], %arg3, %[[K0]], %[[P0]]) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 1>}
// CHECK-NEXT: %[[BS0B:.+]] = "tilegpu.memdesc_index"(%[[RB]], %[[S0]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg1, %[[BS0B]], %[[BS0]], %[[K0]], %arg3, %[[P0]])
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[STEP1:.+]] = arith.muli %c1_i32, %[[ONE]] : i32
// CHECK-NEXT: %[[IT1:.+]] = arith.addi %c0_i32, %[[STEP1]] : i32
// CHECK-NEXT: %[[S1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[P1:.+]] = arith.cmpi slt, %[[IT1]], %arg2 : i32
// CHECK-NEXT: %[[K1:.+]] = arith.muli %[[IT1]], %c64_i32 : i32
// CHECK-NEXT: %[[BS1:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[S1]])
// CHECK-NEXT: %[[AS1:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[S1]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[AS1]], %[[BS1]], %arg3, %[[K1]], %[[P1]])
// CHECK-NEXT: %[[BS1B:.+]] = "tilegpu.memdesc_index"(%[[RB]], %[[S1]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg1, %[[BS1B]], %[[BS1]], %[[K1]], %arg3, %[[P1]])
// CHECK-NEXT: %[[R:.+]] = scf.for %[[I:.+]] = %c0_i32 to %arg2 step %c1_i32 iter_args(%[[ACC:.+]] = %cst)
// CHECK-NEXT: %[[D:.+]] = arith.subi %[[I]], %c0_i32 : i32
// CHECK-NEXT: %[[K:.+]] = arith.divsi %[[D]], %c1_i32 : i32
// CHECK-NEXT: %[[S3:.+]] = arith.constant 3 : i32
// CHECK-NEXT: %[[SLOT:.+]] = arith.remsi %[[K]], %[[S3]] : i32
// CHECK-NEXT: %[[S3B:.+]] = arith.constant 3 : i32
// CHECK-NEXT: %[[ROUND:.+]] = arith.divsi %[[K]], %[[S3B]] : i32
// CHECK-NEXT: %[[ONEB:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[PHASE:.+]] = arith.andi %[[ROUND]], %[[ONEB]] : i32
// CHECK-NEXT: %[[BW:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[SLOT]])
// CHECK-NEXT: "tilegpu.mbarrier_wait"(%[[BW]], %[[PHASE]])
// CHECK-NEXT: %[[VA:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[SLOT]])
// CHECK-NEXT: %[[VB:.+]] = "tilegpu.memdesc_index"(%[[RB]], %[[SLOT]])
// CHECK-NEXT: %[[DOT:.+]] = "tilegpu.warpgroup_dot"(%[[VA]], %[[VB]], %[[ACC]])
// CHECK-NEXT: %[[W:.+]] = "tilegpu.warpgroup_wait"(%[[DOT]]) {num = 1 : i32}
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[AHEAD:.+]] = arith.muli %c1_i32, %[[TWO]] : i32
// CHECK-NEXT: %[[NXT:.+]] = arith.addi %[[I]], %[[AHEAD]] : i32
// CHECK-NEXT: %[[TWOB:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[KN:.+]] = arith.addi %[[K]], %[[TWOB]] : i32
// CHECK-NEXT: %[[S3C:.+]] = arith.constant 3 : i32
// CHECK-NEXT: %[[SLOTN:.+]] = arith.remsi %[[KN]], %[[S3C]] : i32
// CHECK-NEXT: %[[PN:.+]] = arith.cmpi slt, %[[NXT]], %arg2 : i32
// CHECK-NEXT: %[[KK:.+]] = arith.muli %[[NXT]], %c64_i32 : i32
// CHECK-NEXT: %[[BN:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[SLOTN]])
// CHECK-NEXT: %[[AN:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[SLOTN]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[AN]], %[[BN]], %arg3, %[[KK]], %[[PN]])
// CHECK-NEXT: %[[BNB:.+]] = "tilegpu.memdesc_index"(%[[RB]], %[[SLOTN]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg1, %[[BNB]], %[[BN]], %[[KK]], %arg3, %[[PN]])
// CHECK-NEXT: scf.yield %[[W]]
// CHECK-NEXT: } {tile.num_stages = 3 : i32}
// CHECK-NEXT: %[[DONE:.+]] = "tilegpu.warpgroup_wait"(%[[R]]) {num = 0 : i32}
// CHECK-NEXT: %[[I0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V0:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[I0]])
// CHECK-NEXT: "tilegpu.mbarrier_inval"(%[[V0]])
// CHECK-NEXT: %[[I1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V1:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[I1]])
// CHECK-NEXT: "tilegpu.mbarrier_inval"(%[[V1]])
// CHECK-NEXT: %[[I2:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[V2:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[I2]])
// CHECK-NEXT: "tilegpu.mbarrier_inval"(%[[V2]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[RA]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[RB]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BARS]])
// CHECK-NEXT: return %[[DONE]]
// CHECK-NEXT: }
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @ring(%da: !tile.ptr<i8> {tile.tma}, %db: !tile.ptr<i8> {tile.tma}, %n: i32, %m: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %k = arith.muli %i, %c64 : i32
      %a = "tile.descriptor_load"(%da, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %b = "tile.descriptor_load"(%db, %k, %m) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %sb = "tilegpu.local_alloc"(%b) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 3 : i32}
    return %r : tensor<64x64xf32, #C>
  }
}

// -----

// num_stages 1: the loop is left alone (tilegpu-tma-loads copies each load on its own).
// CHECK-LABEL: func.func @one_stage(
// CHECK-NOT: tilegpu.tma_load
// CHECK: "tile.descriptor_load"
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @one_stage(%da: !tile.ptr<i8> {tile.tma}, %n: i32, %m: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %a = "tile.descriptor_load"(%da, %m, %i) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sa, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 1 : i32}
    return %r : tensor<64x64xf32, #C>
  }
}

// -----

// A coordinate carried by the loop and advanced by a loop-invariant step (Triton's attention
// tutorial: `offset += BLOCK_N`) is init + k * step at iteration k: the copies before the
// loop and in it compute it so (iterations 0, 1 ahead; k + 2 in the loop).
// CHECK-LABEL: func.func @carried_coordinate(
// CHECK: %[[X0:.+]] = arith.muli %{{.+}}, %c64_i32 : i32
// CHECK-NEXT: %[[K0:.+]] = arith.addi %c0_i32, %[[X0]] : i32
// CHECK: "tilegpu.tma_load"(%arg0, %{{.+}}, %{{.+}}, %arg2, %[[K0]], %{{.+}})
// CHECK: %[[X1:.+]] = arith.muli %{{.+}}, %c64_i32 : i32
// CHECK-NEXT: %[[K1:.+]] = arith.addi %c0_i32, %[[X1]] : i32
// CHECK: "tilegpu.tma_load"(%arg0, %{{.+}}, %{{.+}}, %arg2, %[[K1]], %{{.+}})
// CHECK: scf.for %[[I:.+]] = %c0_i32 to %arg1 step %c1_i32 iter_args(%{{.+}} = %{{.+}}, %[[KC:.+]] = %c0_i32)
// CHECK-NEXT: %[[D:.+]] = arith.subi %[[I]], %c0_i32 : i32
// CHECK-NEXT: %[[K:.+]] = arith.divsi %[[D]], %c1_i32 : i32
// CHECK: "tilegpu.mbarrier_wait"
// CHECK: "tilegpu.warpgroup_dot"
// CHECK: %[[KN:.+]] = arith.addi %[[K]], %{{.+}} : i32
// CHECK: %[[XN:.+]] = arith.muli %[[KN]], %c64_i32 : i32
// CHECK-NEXT: %[[OFF:.+]] = arith.addi %c0_i32, %[[XN]] : i32
// CHECK-NEXT: %{{.+}} = "tilegpu.memdesc_index"
// CHECK-NEXT: %{{.+}} = "tilegpu.memdesc_index"
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %{{.+}}, %{{.+}}, %arg2, %[[OFF]], %{{.+}})
// CHECK: arith.addi %[[KC]], %c64_i32 : i32
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @carried_coordinate(%da: !tile.ptr<i8> {tile.tma}, %n: i32, %m: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
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
    } {tile.num_stages = 3 : i32}
    return %r#0 : tensor<64x64xf32, #C>
  }
}

// -----

// A carried coordinate advanced by anything but a loop-invariant step (here it doubles)
// cannot be issued ahead: the load is left alone.
// CHECK-LABEL: func.func @carried_coordinate_doubling(
// CHECK-NOT: tilegpu.tma_load
// CHECK: "tile.descriptor_load"
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @carried_coordinate_doubling(%da: !tile.ptr<i8> {tile.tma}, %n: i32, %m: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
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
    } {tile.num_stages = 3 : i32}
    return %r#0 : tensor<64x64xf32, #C>
  }
}

// -----

// A descriptor made in the kernel: its tensor map (tile.make_tensormap, before the loop) is
// what the copies before the loop and in it read, as a parameter's would be.  A map made in
// the body (a descriptor remade each iteration) cannot be issued before the loop: that load
// is left to tilegpu-tma-loads.
// CHECK-LABEL: func.func @device_map(
// CHECK: %[[MAP:.+]] = "tile.make_tensormap"(%arg0, %arg1, %arg2, %arg2, %{{.+}})
// CHECK: "tilegpu.mbarrier_init"
// CHECK: "tilegpu.tma_load"(%[[MAP]],
// CHECK: scf.for
// CHECK: "tilegpu.warpgroup_dot"
// CHECK: "tilegpu.tma_load"(%[[MAP]],
// CHECK-LABEL: func.func @map_in_body(
// CHECK-NOT: tilegpu.tma_load
// CHECK: scf.for
// CHECK: %[[M:.+]] = "tile.make_tensormap"
// CHECK-NEXT: "tile.descriptor_load"(%[[M]],
// CHECK-NOT: tilegpu.tma_load
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @device_map(%scratch: !tile.ptr<i8> {tile.global_scratch}, %base: !tile.ptr<f16>, %n: i32, %m: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel, tile.global_scratch = 128 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %s = arith.constant 64 : i64
    %map = "tile.make_tensormap"(%scratch, %base, %n, %n, %s) {box = array<i32: 64, 64>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 128 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %k = arith.muli %i, %c64 : i32
      %a = "tile.descriptor_load"(%map, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sa, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 3 : i32}
    return %r : tensor<64x64xf32, #C>
  }
  func.func @map_in_body(%scratch: !tile.ptr<i8> {tile.global_scratch}, %base: !tile.ptr<f16>, %n: i32, %m: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel, tile.global_scratch = 128 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %s = arith.constant 64 : i64
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %k = arith.muli %i, %c64 : i32
      %map = "tile.make_tensormap"(%scratch, %base, %n, %n, %s) {box = array<i32: 64, 64>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 128 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
      %a = "tile.descriptor_load"(%map, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sa, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 3 : i32}
    return %r : tensor<64x64xf32, #C>
  }
}

// -----

// tl.dot(a, b.T) on a [N, K] block (fp8: wgmma needs a K-major B): the transpose's operand
// buffer, of the slot's bytes transposed, becomes a memdesc_trans of the slot (no copy through
// registers), and the wgmma stays asynchronous.
// CHECK-LABEL: func.func @trans_b(
// CHECK: %[[RA:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 128>, f8E4M3FN, #tilegpu.nvmma_shared<128 : i32, false, 8 : i32>, 3 : i32>
// CHECK-NEXT: %[[RB:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 128>, f8E4M3FN, #tilegpu.nvmma_shared<128 : i32, false, 8 : i32>, 3 : i32>
// CHECK: scf.for
// CHECK: "tilegpu.mbarrier_wait"
// CHECK-NEXT: %[[VA:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[SLOT:[0-9a-z_]+]])
// CHECK-NEXT: %[[VB:.+]] = "tilegpu.memdesc_index"(%[[RB]], %[[SLOT]])
// CHECK-NEXT: %[[T:.+]] = "tilegpu.memdesc_trans"(%[[VB]]) : (!tilegpu.memdesc<array<i64: 64, 128>, f8E4M3FN, #tilegpu.nvmma_shared<128 : i32, false, 8 : i32>, 1 : i32>) -> !tilegpu.memdesc<array<i64: 128, 64>, f8E4M3FN, #tilegpu.nvmma_shared<128 : i32, true, 8 : i32>, 1 : i32>
// CHECK-NEXT: %[[DOT:.+]] = "tilegpu.warpgroup_dot"(%[[VA]], %[[T]], %{{.+}})
// CHECK-NEXT: "tilegpu.warpgroup_wait"(%[[DOT]]) {num = 1 : i32}
// CHECK-NOT: tile.trans
// CHECK-NOT: tilegpu.local_load
// CHECK: return
#B = #tilegpu.blocked<array<i32: 1, 16>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#BT = #tilegpu.blocked<array<i32: 16, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
#SA = #tilegpu.nvmma_shared<128 : i32, false, 8 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, true, 8 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 32>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @trans_b(%da: !tile.ptr<i8> {tile.tma}, %db: !tile.ptr<i8> {tile.tma}, %n: i32, %m: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c128 = arith.constant 128 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %k = arith.muli %i, %c128 : i32
      %a = "tile.descriptor_load"(%da, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x128xf8E4M3FN, #B>
      %b = "tile.descriptor_load"(%db, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x128xf8E4M3FN, #B>
      %bt = "tile.trans"(%b) {order = array<i32: 1, 0>} : (tensor<64x128xf8E4M3FN, #B>) -> tensor<128x64xf8E4M3FN, #BT>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x128xf8E4M3FN, #B>) -> !tilegpu.memdesc<array<i64: 64, 128>, f8E4M3FN, #SA, 1 : i32>
      %sb = "tilegpu.local_alloc"(%bt) : (tensor<128x64xf8E4M3FN, #BT>) -> !tilegpu.memdesc<array<i64: 128, 64>, f8E4M3FN, #SB, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 128>, f8E4M3FN, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 128, 64>, f8E4M3FN, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 128>, f8E4M3FN, #SA, 1 : i32>) -> ()
      "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 128, 64>, f8E4M3FN, #SB, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 3 : i32}
    return %r : tensor<64x64xf32, #C>
  }
}

// -----

// A persistent loop (`tile.flatten`) around the pipelined K loop (pipeline_tiles.py): the
// rings, barriers and their inits before the tiles' loop; global iterations 0 and 1 issued
// there, each (tile, k) = divmod(g, max(n, 1)), predicated on n > 0 and the tile in range
// (a tile past the end computed as the first); in the tiles' loop the tile index t and the
// next two tiles' coordinates (a tile past the end taking the current one's); in the K loop
// slot and phase of the global iteration t * n + k, the copies of k + 2 into tile t + j for
// the largest j with k >= j * n - 2 (thresholds made before the tiles' loop; none: this
// tile), a select chain; after the K loop only warpgroup_wait {num = 0}; the invals and
// deallocs after the tiles' loop.

// CHECK-LABEL: func.func @tiles(
// CHECK: %[[RA:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 3 : i32>
// CHECK-NEXT: %[[RB:.+]] = "tilegpu.local_alloc"()
// CHECK-NEXT: %[[BARS:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 3 : i32>
// CHECK-COUNT-3: "tilegpu.mbarrier_init"
// CHECK: %[[N:.+]] = arith.maxsi %{{.+}}, %{{.+}} : i32
// CHECK-NEXT: %{{.+}} = arith.constant 1 : i32
// CHECK-NEXT: %[[N1X:.+]] = arith.muli %[[N]], %{{.+}} : i32
// CHECK-NEXT: %{{.+}} = arith.constant 2 : i32
// CHECK-NEXT: %[[THR1:.+]] = arith.subi %[[N1X]], %{{.+}} : i32
// CHECK-NEXT: %{{.+}} = arith.constant 2 : i32
// CHECK-NEXT: %[[ADD1:.+]] = arith.subi %{{.+}}, %[[N1X]] : i32
// CHECK-NEXT: %{{.+}} = arith.constant 2 : i32
// CHECK-NEXT: %[[N2X:.+]] = arith.muli %[[N]], %{{.+}} : i32
// CHECK-NEXT: %{{.+}} = arith.constant 2 : i32
// CHECK-NEXT: %[[THR2:.+]] = arith.subi %[[N2X]], %{{.+}} : i32
// CHECK-NEXT: %{{.+}} = arith.constant 2 : i32
// CHECK-NEXT: %[[ADD2:.+]] = arith.subi %{{.+}}, %[[N2X]] : i32
// CHECK: %[[N1:.+]] = arith.maxsi %[[N]], %{{.+}} : i32
// CHECK-NEXT: %[[G0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[T0:.+]] = arith.divsi %[[G0]], %[[N1]] : i32
// CHECK-NEXT: %[[G0B:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[K0:.+]] = arith.remsi %[[G0B]], %[[N1]] : i32
// CHECK-NEXT: %[[TS0:.+]] = arith.muli %[[T0]], %c4_i32 : i32
// CHECK-NEXT: %[[O0:.+]] = arith.addi %arg3, %[[TS0]] : i32
// CHECK-NEXT: %{{.+}} = arith.constant 0 : i32
// CHECK-NEXT: %[[NONEMPTY:.+]] = arith.cmpi sgt, %[[N]], %{{.+}} : i32
// CHECK-NEXT: %[[IN0:.+]] = arith.cmpi slt, %[[O0]], %arg4 : i32
// CHECK-NEXT: %[[P0:.+]] = arith.andi %[[NONEMPTY]], %[[IN0]] : i1
// CHECK-NEXT: %[[OS0:.+]] = arith.select %[[P0]], %[[O0]], %arg3 : i32
// CHECK-NEXT: %[[M0:.+]] = arith.muli %[[OS0]], %c64_i32 : i32
// CHECK: "tilegpu.tma_load"(%arg0, %{{.+}}, %{{.+}}, %[[M0]], %{{.+}}, %[[P0]])
// CHECK: "tilegpu.tma_load"(%arg1,
// CHECK: "tilegpu.tma_load"(%arg0,
// CHECK: "tilegpu.tma_load"(%arg1,
// CHECK-NEXT: scf.for %[[TILE:.+]] = %arg3 to %arg4 step %c4_i32  : i32 {
// CHECK-NEXT: %[[M:.+]] = arith.muli %[[TILE]], %c64_i32 : i32
// CHECK-NEXT: %[[TD:.+]] = arith.subi %[[TILE]], %arg3 : i32
// CHECK-NEXT: %[[T:.+]] = arith.divsi %[[TD]], %c4_i32 : i32
// CHECK-NEXT: %[[D1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[T1:.+]] = arith.addi %[[T]], %[[D1]] : i32
// CHECK-NEXT: %[[TS1:.+]] = arith.muli %[[T1]], %c4_i32 : i32
// CHECK-NEXT: %[[O1:.+]] = arith.addi %arg3, %[[TS1]] : i32
// CHECK-NEXT: %[[P1:.+]] = arith.cmpi slt, %[[O1]], %arg4 : i32
// CHECK-NEXT: %[[OS1:.+]] = arith.select %[[P1]], %[[O1]], %[[TILE]] : i32
// CHECK-NEXT: %[[M1:.+]] = arith.muli %[[OS1]], %c64_i32 : i32
// CHECK: %[[M2:.+]] = arith.muli %{{.+}}, %c64_i32 : i32
// CHECK-NEXT: %[[BASE:.+]] = arith.muli %[[T]], %[[N]] : i32
// CHECK-NEXT: %{{.+}} = scf.for %[[I:.+]] = %c0_i32 to %arg2 step %c1_i32
// CHECK-NEXT: %[[ID:.+]] = arith.subi %[[I]], %c0_i32 : i32
// CHECK-NEXT: %[[K:.+]] = arith.divsi %[[ID]], %c1_i32 : i32
// CHECK-NEXT: %[[G:.+]] = arith.addi %[[BASE]], %[[K]] : i32
// CHECK-NEXT: %{{.+}} = arith.constant 3 : i32
// CHECK-NEXT: %[[SLOT:.+]] = arith.remsi %[[G]], %{{.+}} : i32
// CHECK: "tilegpu.mbarrier_wait"
// CHECK: "tilegpu.warpgroup_wait"(%{{.+}}) {num = 1 : i32}
// CHECK-NEXT: %{{.+}} = arith.constant 2 : i32
// CHECK-NEXT: %[[GN:.+]] = arith.addi %[[G]], %{{.+}} : i32
// CHECK-NEXT: %{{.+}} = arith.constant 3 : i32
// CHECK-NEXT: %[[SLOTN:.+]] = arith.remsi %[[GN]], %{{.+}} : i32
// CHECK-NEXT: %{{.+}} = arith.constant 2 : i32
// CHECK-NEXT: %[[KA:.+]] = arith.addi %[[K]], %{{.+}} : i32
// CHECK-NEXT: %[[TRUE:.+]] = arith.constant true
// CHECK-NEXT: %[[PAST1:.+]] = arith.cmpi sge, %[[K]], %[[THR1]] : i32
// CHECK-NEXT: %[[KW1:.+]] = arith.addi %[[K]], %[[ADD1]] : i32
// CHECK-NEXT: %[[KB:.+]] = arith.select %[[PAST1]], %[[KW1]], %[[KA]] : i32
// CHECK-NEXT: %[[MS1:.+]] = arith.select %[[PAST1]], %[[M1]], %[[M]] : i32
// CHECK-NEXT: %[[PS1:.+]] = arith.select %[[PAST1]], %[[P1]], %[[TRUE]] : i1
// CHECK-NEXT: %[[PAST2:.+]] = arith.cmpi sge, %[[K]], %[[THR2]] : i32
// CHECK-NEXT: %[[KW2:.+]] = arith.addi %[[K]], %[[ADD2]] : i32
// CHECK-NEXT: %[[KC:.+]] = arith.select %[[PAST2]], %[[KW2]], %[[KB]] : i32
// CHECK-NEXT: %[[MS:.+]] = arith.select %[[PAST2]], %[[M2]], %[[MS1]] : i32
// CHECK-NEXT: %[[PS:.+]] = arith.select %[[PAST2]], %{{.+}}, %[[PS1]] : i1
// CHECK-NEXT: %[[KM:.+]] = arith.muli %c1_i32, %[[KC]] : i32
// CHECK-NEXT: %[[IT:.+]] = arith.addi %c0_i32, %[[KM]] : i32
// CHECK-NEXT: %[[KX:.+]] = arith.muli %[[IT]], %c64_i32 : i32
// CHECK-NEXT: %[[BN:.+]] = "tilegpu.memdesc_index"(%[[BARS]], %[[SLOTN]])
// CHECK-NEXT: %[[AN:.+]] = "tilegpu.memdesc_index"(%[[RA]], %[[SLOTN]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[AN]], %[[BN]], %[[MS]], %[[KX]], %[[PS]])
// CHECK-NEXT: %[[BNB:.+]] = "tilegpu.memdesc_index"(%[[RB]], %[[SLOTN]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg1, %[[BNB]], %[[BN]], %[[KX]], %[[MS]], %[[PS]])
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } {tile.num_stages = 3 : i32}
// CHECK-NEXT: %[[DONE:.+]] = "tilegpu.warpgroup_wait"(%{{.+}}) {num = 0 : i32}
// CHECK-NEXT: "tile.print"(%[[DONE]])
// CHECK-NEXT: } {tile.flatten, tilegpu.ring_across_tiles}
// CHECK-COUNT-3: "tilegpu.mbarrier_inval"
// CHECK: "tilegpu.local_dealloc"(%[[RA]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[RB]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[BARS]])
// CHECK-NEXT: return
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @tiles(%da: !tile.ptr<i8> {tile.tma}, %db: !tile.ptr<i8> {tile.tma}, %n: i32, %p: i32, %nt: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    scf.for %t = %p to %nt step %c4 : i32 {
      %m = arith.muli %t, %c64 : i32
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
        %k = arith.muli %i, %c64 : i32
        %a = "tile.descriptor_load"(%da, %m, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
        %b = "tile.descriptor_load"(%db, %k, %m) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 128 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x64xf16, #B>
        %sa = "tilegpu.local_alloc"(%a) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
        %sb = "tilegpu.local_alloc"(%b) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
        %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
        "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
        "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
        scf.yield %d : tensor<64x64xf32, #C>
      } {tile.num_stages = 3 : i32}
      "tile.print"(%r) {hex = 0 : i32, is_signed = 1 : i32, operand = -1 : i32, prefix = " r: "} : (tensor<64x64xf32, #C>) -> ()
    } {tile.flatten}
    return
  }
}
