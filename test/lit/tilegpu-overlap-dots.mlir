// RUN: tilework-opt %s --split-input-file --tilegpu-overlap-dots --target sm_90a | FileCheck %s

// The last dot of a two-dot loop stays in flight across the back edge: waited with num = 1
// before the yield, its carried accumulator waited (num = 0) right after the first dot (whose
// own wait completes every group), and the loop's result after it.  The copy into the second
// dot's ring (and the commit) moves after the second dot (Triton's order: issued while it
// runs) with the address it alone uses; the copy into the first dot's ring stays ahead of the
// first dot.
// CHECK-LABEL: func.func @loop(
// CHECK: scf.for %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}})
// CHECK-NEXT: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK-NEXT: %[[KS:.+]] = "tilegpu.memdesc_index"
// CHECK-NEXT: %[[VS:.+]] = "tilegpu.memdesc_index"
// CHECK-NEXT: "tilegpu.async_copy"(%arg0, %[[KS]])
// CHECK-NEXT: %[[S:.+]] = "tilegpu.warpgroup_dot"(%{{.+}}, %[[KS]],
// CHECK-NEXT: %[[W0:.+]] = "tilegpu.warpgroup_wait"(%[[ACC]]) {num = 0 : i32}
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[W0]], %[[S]]
// CHECK-NEXT: %[[O:.+]] = "tilegpu.warpgroup_dot"(%{{.+}}, %[[VS]], %[[M]])
// CHECK-NEXT: %[[PV:.+]] = "tile.addptr"(%arg1,
// CHECK-NEXT: "tilegpu.async_copy"(%[[PV]], %[[VS]])
// CHECK-NEXT: "tilegpu.async_commit_group"
// CHECK-NEXT: %[[W1:.+]] = "tilegpu.warpgroup_wait"(%[[O]]) {num = 1 : i32}
// CHECK-NEXT: scf.yield %[[W1]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.+]] = "tilegpu.warpgroup_wait"(%{{.+}}) {num = 0 : i32}
// CHECK-NEXT: "tilegpu.local_dealloc"
// CHECK: "tile.store"(%{{.+}}, %[[R]])
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#T = #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @loop(%pk: tensor<64x64x!tile.ptr<f16>, #B>, %pv: tensor<64x64x!tile.ptr<f16>, #B>, %off: tensor<64x64xi32, #B>, %out: tensor<64x64x!tile.ptr<f32>, #C>, %n: i32) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x64xf16, #B>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %q = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
  %kb = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #T, 2 : i32>
  %vb = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 2 : i32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32, #C>) : i32 {
    "tilegpu.async_wait"() {num = 1 : i32} : () -> ()
    %ks = "tilegpu.memdesc_index"(%kb, %c0) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #T, 2 : i32>, i32) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #T, 1 : i32>
    %vs = "tilegpu.memdesc_index"(%vb, %c1) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 2 : i32>, i32) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
    "tilegpu.async_copy"(%pk, %ks) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<64x64x!tile.ptr<f16>, #B>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #T, 1 : i32>) -> ()
    %pv2 = "tile.addptr"(%pv, %off) : (tensor<64x64x!tile.ptr<f16>, #B>, tensor<64x64xi32, #B>) -> tensor<64x64x!tile.ptr<f16>, #B>
    "tilegpu.async_copy"(%pv2, %vs) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<64x64x!tile.ptr<f16>, #B>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
    "tilegpu.async_commit_group"() : () -> ()
    %s = "tilegpu.warpgroup_dot"(%q, %ks, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #T, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    %m = arith.mulf %acc, %s : tensor<64x64xf32, #C>
    %o = "tilegpu.warpgroup_dot"(%q, %vs, %m) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    scf.yield %o : tensor<64x64xf32, #C>
  }
  "tilegpu.local_dealloc"(%q) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
  "tile.store"(%out, %r) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
}

// -----

// Left alone: the accumulator is read before the first dot (its wait would come too late),
// and, in the second loop, the last dot's buffer is written in the body by a store (it would
// be overwritten under the dot in flight).
// CHECK-LABEL: func.func @alone(
// CHECK-NOT: tilegpu.warpgroup_wait
// CHECK: return
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @alone(%out: tensor<64x64x!tile.ptr<f32>, #C>, %n: i32) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x64xf16, #B>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %q = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
  %v = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32, #C>) : i32 {
    %m0 = arith.addf %acc, %acc : tensor<64x64xf32, #C>
    %s = "tilegpu.warpgroup_dot"(%q, %q, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    %m = arith.mulf %m0, %s : tensor<64x64xf32, #C>
    %o = "tilegpu.warpgroup_dot"(%q, %v, %m) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    scf.yield %o : tensor<64x64xf32, #C>
  }
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r) -> (tensor<64x64xf32, #C>) : i32 {
    %s = "tilegpu.warpgroup_dot"(%q, %q, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    "tilegpu.local_store"(%x, %v) : (tensor<64x64xf16, #B>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
    %m = arith.mulf %acc, %s : tensor<64x64xf32, #C>
    %o = "tilegpu.warpgroup_dot"(%q, %v, %m) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    scf.yield %o : tensor<64x64xf32, #C>
  }
  "tile.store"(%out, %r2) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
}

// -----

// The TMA pipeliner's loop (attention_tma's key loop): the copies of iteration k+2 go first,
// K's and V's arriving on slot k+2's mbarrier, then slot k's wait.  V's copy (into the ring
// the last dot reads) and the coordinate only it uses move after the last dot, past the
// mbarrier wait (it arrives on another slot's barrier); K's copy stays ahead of the first dot.
// CHECK-LABEL: func.func @tma_loop(
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %{{.+}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}})
// CHECK: %[[NB:[0-9]+]] = "tilegpu.memdesc_index"(%[[BARS:[0-9]+]], %[[NXT:[0-9]+]])
// CHECK-NEXT: %[[NK:[0-9]+]] = "tilegpu.memdesc_index"(%{{[0-9]+}}, %[[NXT]])
// CHECK-NEXT: "tilegpu.tma_load"(%arg0, %[[NK]], %[[NB]],
// CHECK-NEXT: %[[NV:[0-9]+]] = "tilegpu.memdesc_index"(%{{[0-9]+}}, %[[NXT]])
// CHECK-NEXT: %[[B:[0-9]+]] = "tilegpu.memdesc_index"(%[[BARS]], %{{[0-9]+}})
// CHECK-NEXT: "tilegpu.mbarrier_wait"(%[[B]], %{{.+}})
// CHECK: %[[S:[0-9]+]] = "tilegpu.warpgroup_dot"
// CHECK-NEXT: %[[W0:[0-9]+]] = "tilegpu.warpgroup_wait"(%[[ACC]]) {num = 0 : i32}
// CHECK-NEXT: %[[M:[0-9]+]] = arith.mulf %[[W0]], %[[S]]
// CHECK-NEXT: %[[O:[0-9]+]] = "tilegpu.warpgroup_dot"(%{{.+}}, %{{.+}}, %[[M]])
// CHECK-NEXT: %[[VX:[0-9]+]] = arith.addi %[[I]], %{{.+}}
// CHECK-NEXT: "tilegpu.tma_load"(%arg1, %[[NV]], %[[NB]], %[[VX]],
// CHECK-NEXT: %[[W1:[0-9]+]] = "tilegpu.warpgroup_wait"(%[[O]]) {num = 1 : i32}
// CHECK-NEXT: scf.yield %[[W1]]
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#T = #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>
!bars = !tilegpu.memdesc<array<i64: 1>, i64, unit, 3 : i32>
!bar = !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
!ring = !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 3 : i32>
!slot = !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @tma_loop(%dk: !tile.ptr<i8>, %dv: !tile.ptr<i8>, %out: tensor<64x64x!tile.ptr<f32>, #C>, %n: i32) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x64xf16, #B>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c64 = arith.constant 64 : i32
  %q = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #B>) -> !slot
  %kb = "tilegpu.local_alloc"() : () -> !ring
  %vb = "tilegpu.local_alloc"() : () -> !ring
  %bars = "tilegpu.local_alloc"() : () -> !bars
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32, #C>) : i32 {
    %k2 = arith.addi %i, %c2 : i32
    %nxt = arith.remsi %k2, %c3 : i32
    %cur = arith.remsi %i, %c3 : i32
    %kx = arith.muli %k2, %c64 : i32
    %p = arith.cmpi slt, %k2, %n : i32
    %nb = "tilegpu.memdesc_index"(%bars, %nxt) : (!bars, i32) -> !bar
    %nk = "tilegpu.memdesc_index"(%kb, %nxt) : (!ring, i32) -> !slot
    "tilegpu.tma_load"(%dk, %nk, %nb, %kx, %c0, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 1>} : (!tile.ptr<i8>, !slot, !bar, i32, i32, i1) -> ()
    %nv = "tilegpu.memdesc_index"(%vb, %nxt) : (!ring, i32) -> !slot
    %vx = arith.addi %i, %kx : i32
    "tilegpu.tma_load"(%dv, %nv, %nb, %vx, %c0, %p) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 1>} : (!tile.ptr<i8>, !slot, !bar, i32, i32, i1) -> ()
    %b = "tilegpu.memdesc_index"(%bars, %cur) : (!bars, i32) -> !bar
    "tilegpu.mbarrier_wait"(%b, %c0) : (!bar, i32) -> ()
    %ks = "tilegpu.memdesc_index"(%kb, %cur) : (!ring, i32) -> !slot
    %vs = "tilegpu.memdesc_index"(%vb, %cur) : (!ring, i32) -> !slot
    %s = "tilegpu.warpgroup_dot"(%q, %ks, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!slot, !slot, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    %m = arith.mulf %acc, %s : tensor<64x64xf32, #C>
    %o = "tilegpu.warpgroup_dot"(%q, %vs, %m) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!slot, !slot, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    scf.yield %o : tensor<64x64xf32, #C>
  }
  "tile.store"(%out, %r) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
}

// -----

// A warp-specialized consumer's loop releases its slot (mbarrier_arrive on the slot's empty
// barrier) after the last dot; with that dot in flight the release of iteration k moves to
// iteration k + 1, after the first dot's wait (dot(k) done; not at the first iteration).
// Nothing waits for the last iteration's slot: no release after the loop.
// CHECK-LABEL: func.func @consumer(
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %[[LB:[a-z0-9_]+]] to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}})
// CHECK: "tilegpu.mbarrier_wait"
// CHECK: "tilegpu.warpgroup_dot"
// CHECK-NEXT: %[[W0:[0-9]+]] = "tilegpu.warpgroup_wait"(%[[ACC]]) {num = 0 : i32}
// CHECK-NEXT: %[[P:[0-9]+]] = arith.subi %[[I]], %{{.+}}
// CHECK-NEXT: %[[NOT0:[0-9]+]] = arith.cmpi ne, %[[I]], %[[LB]]
// CHECK-NEXT: %[[S:[0-9]+]] = arith.remsi %[[P]], %{{.+}}
// CHECK-NEXT: %[[E:[0-9]+]] = "tilegpu.memdesc_index"(%{{[0-9]+}}, %[[S]])
// CHECK-NEXT: "tilegpu.mbarrier_arrive"(%[[E]], %[[NOT0]])
// CHECK: %[[O:[0-9]+]] = "tilegpu.warpgroup_dot"
// CHECK-NEXT: %[[W1:[0-9]+]] = "tilegpu.warpgroup_wait"(%[[O]]) {num = 1 : i32}
// CHECK-NEXT: scf.yield %[[W1]]
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.warpgroup_wait"(%{{.+}}) {num = 0 : i32}
// CHECK-NEXT: "tile.store"
// Nested in another loop (a persistent producer goes on to the next tile's iterations), the
// last iteration's slot is released after the inner loop's wait, if the loop ran.
// CHECK-LABEL: func.func @persistent(
// CHECK: scf.for
// CHECK: scf.for %{{.+}} = %[[LB2:[a-z0-9_]+]] to %[[UB2:[a-z0-9_]+]] step
// CHECK: "tilegpu.mbarrier_arrive"(%{{.+}}, %{{.+}})
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.warpgroup_wait"(%{{.+}}) {num = 0 : i32}
// CHECK: %[[ANY:[0-9]+]] = arith.cmpi slt, %[[LB2]], %[[UB2]]
// CHECK-NEXT: %[[SL:[0-9]+]] = arith.remsi
// CHECK-NEXT: %[[EL:[0-9]+]] = "tilegpu.memdesc_index"(%{{.+}}, %[[SL]])
// CHECK-NEXT: "tilegpu.mbarrier_arrive"(%[[EL]], %[[ANY]])
// CHECK-NEXT: "tile.store"
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
!bars = !tilegpu.memdesc<array<i64: 1>, i64, unit, 3 : i32>
!bar = !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
!ring = !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 3 : i32>
!slot = !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @consumer(%out: tensor<64x64x!tile.ptr<f32>, #C>, %n: i32) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x64xf16, #B>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %q = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #B>) -> !slot
  %kb = "tilegpu.local_alloc"() : () -> !ring
  %vb = "tilegpu.local_alloc"() : () -> !ring
  %full = "tilegpu.local_alloc"() : () -> !bars
  %empty = "tilegpu.local_alloc"() : () -> !bars
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32, #C>) : i32 {
    %cur = arith.remsi %i, %c3 : i32
    %b = "tilegpu.memdesc_index"(%full, %cur) : (!bars, i32) -> !bar
    "tilegpu.mbarrier_wait"(%b, %c0) : (!bar, i32) -> ()
    %ks = "tilegpu.memdesc_index"(%kb, %cur) : (!ring, i32) -> !slot
    %vs = "tilegpu.memdesc_index"(%vb, %cur) : (!ring, i32) -> !slot
    %s = "tilegpu.warpgroup_dot"(%q, %ks, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!slot, !slot, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    %m = arith.mulf %acc, %s : tensor<64x64xf32, #C>
    %o = "tilegpu.warpgroup_dot"(%q, %vs, %m) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!slot, !slot, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    %e = "tilegpu.memdesc_index"(%empty, %cur) : (!bars, i32) -> !bar
    "tilegpu.mbarrier_arrive"(%e) {operandSegmentSizes = array<i32: 1, 0>} : (!bar) -> ()
    scf.yield %o : tensor<64x64xf32, #C>
  }
  "tile.store"(%out, %r) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
func.func @persistent(%out: tensor<64x64x!tile.ptr<f32>, #C>, %n: i32, %t: i32) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x64xf16, #B>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %q = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #B>) -> !slot
  %kb = "tilegpu.local_alloc"() : () -> !ring
  %vb = "tilegpu.local_alloc"() : () -> !ring
  %full = "tilegpu.local_alloc"() : () -> !bars
  %empty = "tilegpu.local_alloc"() : () -> !bars
  scf.for %j = %c0 to %t step %c1 : i32 {
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32, #C>) : i32 {
      %cur = arith.remsi %i, %c3 : i32
      %b = "tilegpu.memdesc_index"(%full, %cur) : (!bars, i32) -> !bar
      "tilegpu.mbarrier_wait"(%b, %c0) : (!bar, i32) -> ()
      %ks = "tilegpu.memdesc_index"(%kb, %cur) : (!ring, i32) -> !slot
      %vs = "tilegpu.memdesc_index"(%vb, %cur) : (!ring, i32) -> !slot
      %s = "tilegpu.warpgroup_dot"(%q, %ks, %z) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!slot, !slot, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      %m = arith.mulf %acc, %s : tensor<64x64xf32, #C>
      %o = "tilegpu.warpgroup_dot"(%q, %vs, %m) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!slot, !slot, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      %e = "tilegpu.memdesc_index"(%empty, %cur) : (!bars, i32) -> !bar
      "tilegpu.mbarrier_arrive"(%e) {operandSegmentSizes = array<i32: 1, 0>} : (!bar) -> ()
      scf.yield %o : tensor<64x64xf32, #C>
    }
    "tile.store"(%out, %r) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  }
  return
}
}
