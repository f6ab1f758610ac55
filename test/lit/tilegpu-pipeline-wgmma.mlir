// RUN: tilework-opt %s --split-input-file --tilegpu-pipeline --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-pipeline --target sm_90a | FileCheck %s --check-prefix=FENCE
// RUN: env TILEWORK_WGMMA_CP_ASYNC_FENCE=0 tilework-opt %s --split-input-file --tilegpu-pipeline --target sm_90a | FileCheck %s --check-prefix=NOFENCE

// CompileOptions.wgmma_cp_async_fence off: every copy the pass issues is marked (then
// tilegpu-proxy-fences fences no wait for it: attention's K and V rings), and the asynchronous
// dot, whose operands are slots only cp.async writes, is marked for its rule to emit no
// fence.proxy.async (as Triton); a dot reading another buffer (q's in @trans_b) or kept
// synchronous is not.  On (the default): none.
// FENCE-NOT: tilegpu.no_proxy_fence
// NOFENCE-LABEL: func.func @async_dot(
// NOFENCE: "tilegpu.async_copy"({{.+}}tilegpu.no_proxy_fence
// NOFENCE: "tilegpu.warpgroup_dot"({{.+}}) {{{.*}}tilegpu.no_proxy_fence{{.*}}}
// NOFENCE: "tilegpu.async_copy"({{.+}}tilegpu.no_proxy_fence
// NOFENCE-LABEL: func.func @result_used(
// NOFENCE: "tilegpu.async_copy"({{.+}}tilegpu.no_proxy_fence
// NOFENCE-NOT: "tilegpu.warpgroup_dot"({{.+}}tilegpu.no_proxy_fence
// NOFENCE-LABEL: func.func @trans_b(
// NOFENCE: "tilegpu.async_copy"({{.+}}tilegpu.no_proxy_fence
// NOFENCE-NOT: "tilegpu.warpgroup_dot"({{.+}}tilegpu.no_proxy_fence
// NOFENCE-LABEL: func.func @view_of_slot(

// Asynchronous wgmma: the loop's one warpgroup_dot reads two pipelined slots and carries its
// accumulator alone, so it stays in flight: warpgroup_wait {num = 1} after it, then the copies
// of iteration i + 2 into the slot the previous dot read; warpgroup_wait {num = 0} after the
// loop, before the copies' wait and the deallocs.
// CHECK-LABEL: func.func @async_dot(
// CHECK: %[[A:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 32>, f32, #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>, 3 : i32>
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 64>, f32, #tilegpu.nvmma_shared<128 : i32, true, 32 : i32>, 3 : i32>
// CHECK: "tilegpu.async_commit_group"()
// CHECK: "tilegpu.async_commit_group"()
// CHECK-NEXT: %[[R:.+]]:3 = scf.for %[[I:.+]] = %{{.+}} to %arg2 step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %[[RD:.+]] = %{{.+}}, %[[WR:.+]] = %{{.+}})
// CHECK-NEXT: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK-NEXT: %[[IVN:.+]] = arith.addi %[[I]], %{{.+}} : i32
// CHECK-NEXT: %[[SA:.+]] = "tilegpu.memdesc_index"(%[[A]], %[[RD]])
// CHECK-NEXT: %[[SB:.+]] = "tilegpu.memdesc_index"(%[[B]], %[[RD]])
// CHECK-NEXT: arith.cmpi eq, %[[RD]]
// CHECK-NEXT: arith.addi %[[RD]]
// CHECK-NEXT: %[[RN:.+]] = arith.select
// CHECK-NEXT: arith.cmpi eq, %[[WR]]
// CHECK-NEXT: arith.addi %[[WR]]
// CHECK-NEXT: %[[WN:.+]] = arith.select
// CHECK-NEXT: %[[D:.+]] = "tilegpu.warpgroup_dot"(%[[SA]], %[[SB]], %[[ACC]])
// CHECK-NEXT: %[[W:.+]] = "tilegpu.warpgroup_wait"(%[[D]]) {num = 1 : i32}
// CHECK-NEXT: %[[VN:.+]] = arith.cmpi slt, %[[IVN]], %arg2 : i32
// CHECK-NEXT: %[[OA:.+]] = "tile.splat"(%[[IVN]])
// CHECK-NEXT: %[[PA:.+]] = "tile.addptr"(%arg0, %[[OA]])
// CHECK-NEXT: %[[OB:.+]] = "tile.splat"(%[[IVN]])
// CHECK-NEXT: %[[PB:.+]] = "tile.addptr"(%arg1, %[[OB]])
// CHECK-NEXT: %[[MA:.+]] = "tile.splat"(%[[VN]])
// CHECK-NEXT: %[[DA:.+]] = "tilegpu.memdesc_index"(%[[A]], %[[WR]])
// CHECK-NEXT: "tilegpu.async_copy"(%[[PA]], %[[DA]], %[[MA]])
// CHECK-NEXT: %[[MB:.+]] = "tile.splat"(%[[VN]])
// CHECK-NEXT: %[[DB:.+]] = "tilegpu.memdesc_index"(%[[B]], %[[WR]])
// CHECK-NEXT: "tilegpu.async_copy"(%[[PB]], %[[DB]], %[[MB]])
// CHECK-NEXT: "tilegpu.async_commit_group"()
// CHECK-NEXT: scf.yield %[[W]], %[[RN]], %[[WN]] :
// CHECK-NEXT: } {tile.num_stages = 3 : i32}
// CHECK-NEXT: %[[DONE:.+]] = "tilegpu.warpgroup_wait"(%[[R]]#0) {num = 0 : i32}
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[A]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[B]])
// CHECK-NEXT: return %[[DONE]]
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#SA = #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, true, 32 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 8>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @async_dot(%p: tensor<64x32x!tile.ptr<f32>, #A>, %q: tensor<32x64x!tile.ptr<f32>, #A>, %n: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %oa = "tile.splat"(%i) : (i32) -> tensor<64x32xi32, #A>
      %pa = "tile.addptr"(%p, %oa) : (tensor<64x32x!tile.ptr<f32>, #A>, tensor<64x32xi32, #A>) -> tensor<64x32x!tile.ptr<f32>, #A>
      %ob = "tile.splat"(%i) : (i32) -> tensor<32x64xi32, #A>
      %pb = "tile.addptr"(%q, %ob) : (tensor<32x64x!tile.ptr<f32>, #A>, tensor<32x64xi32, #A>) -> tensor<32x64x!tile.ptr<f32>, #A>
      %a = "tile.load"(%pa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x32x!tile.ptr<f32>, #A>) -> tensor<64x32xf32, #A>
      %b = "tile.load"(%pb) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x64x!tile.ptr<f32>, #A>) -> tensor<32x64xf32, #A>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x32xf32, #A>) -> !tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>
      %sb = "tilegpu.local_alloc"(%b) : (tensor<32x64xf32, #A>) -> !tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>) -> ()
      "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 3 : i32}
    return %r : tensor<64x64xf32, #C>
  }
}

// -----

// Synchronous: the dot's result has another use in the body (it would read the pending
// accumulator), so the copies stay at the top and no warpgroup_wait appears.
// CHECK-LABEL: func.func @result_used(
// CHECK: scf.for
// CHECK-NEXT: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.cmpi slt
// CHECK-NOT: tilegpu.warpgroup_wait
// CHECK: "tilegpu.warpgroup_dot"
// CHECK-NEXT: "tile.store"
// CHECK-NOT: tilegpu.warpgroup_wait
// CHECK: return
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#SA = #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, true, 32 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 8>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @result_used(%p: tensor<64x32x!tile.ptr<f32>, #A>, %q: tensor<32x64x!tile.ptr<f32>, #A>, %n: i32, %out: tensor<64x64x!tile.ptr<f32>, #C>) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %oa = "tile.splat"(%i) : (i32) -> tensor<64x32xi32, #A>
      %pa = "tile.addptr"(%p, %oa) : (tensor<64x32x!tile.ptr<f32>, #A>, tensor<64x32xi32, #A>) -> tensor<64x32x!tile.ptr<f32>, #A>
      %ob = "tile.splat"(%i) : (i32) -> tensor<32x64xi32, #A>
      %pb = "tile.addptr"(%q, %ob) : (tensor<32x64x!tile.ptr<f32>, #A>, tensor<32x64xi32, #A>) -> tensor<32x64x!tile.ptr<f32>, #A>
      %a = "tile.load"(%pa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x32x!tile.ptr<f32>, #A>) -> tensor<64x32xf32, #A>
      %b = "tile.load"(%pb) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x64x!tile.ptr<f32>, #A>) -> tensor<32x64xf32, #A>
      %sa = "tilegpu.local_alloc"(%a) : (tensor<64x32xf32, #A>) -> !tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>
      %sb = "tilegpu.local_alloc"(%b) : (tensor<32x64xf32, #A>) -> !tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>) -> ()
      "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>) -> ()
      "tile.store"(%out, %d) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 3 : i32}
    return %r : tensor<64x64xf32, #C>
  }
}

// -----

// K through tile.trans (attention's `tl.dot(q, tl.trans(k))`): the slot buffer is the
// transposed alloc's ([K, N], K-major), and each copy takes the load's pointers and mask
// transposed the same way (a relabelling of registers), so the rows of k land as the K-major
// columns of B; the trans and the alloc go.  q's buffer, written before the loop, is not a
// slot: the dot stays synchronous.
// CHECK-LABEL: func.func @trans_b(
// CHECK: %[[KB:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 64>, f32, #tilegpu.nvmma_shared<128 : i32, true, 32 : i32>, 3 : i32>
// CHECK: %[[PT0:.+]] = "tile.trans"(%{{.+}}) {order = array<i32: 1, 0>} : (tensor<64x32x!tile.ptr<f32>, {{.+}}>) -> tensor<32x64x!tile.ptr<f32>, #tilegpu.blocked<array<i32: 4, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>>
// CHECK-NEXT: %[[MT0:.+]] = "tile.trans"(%{{.+}}) {order = array<i32: 1, 0>} : (tensor<64x32xi1, {{.+}}>) -> tensor<32x64xi1,
// CHECK-NEXT: "tilegpu.async_copy"(%[[PT0]], %{{.+}}, %[[MT0]]) {{.+}} : (tensor<32x64x!tile.ptr<f32>, {{.+}}>, !tilegpu.memdesc<array<i64: 32, 64>, f32, #tilegpu.nvmma_shared<128 : i32, true, 32 : i32>, 1 : i32>,
// CHECK: scf.for
// CHECK: "tilegpu.async_commit_group"
// CHECK-NEXT: %[[S:.+]] = "tilegpu.memdesc_index"(%[[KB]], %{{.+}})
// CHECK-NOT: tilegpu.local_alloc
// CHECK: "tilegpu.warpgroup_dot"(%{{.+}}, %[[S]], %{{.+}})
// CHECK-NOT: tile.load
// CHECK: scf.yield
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#AT = #tilegpu.blocked<array<i32: 4, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
#SA = #tilegpu.nvmma_shared<128 : i32, false, 32 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, true, 32 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 8>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @trans_b(%x: tensor<64x32xf32, #A>, %p: tensor<64x32x!tile.ptr<f32>, #A>, %n: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %sa = "tilegpu.local_alloc"(%x) : (tensor<64x32xf32, #A>) -> !tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %ok = "tile.splat"(%i) : (i32) -> tensor<64x32xi32, #A>
      %pk = "tile.addptr"(%p, %ok) : (tensor<64x32x!tile.ptr<f32>, #A>, tensor<64x32xi32, #A>) -> tensor<64x32x!tile.ptr<f32>, #A>
      %k = "tile.load"(%pk) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x32x!tile.ptr<f32>, #A>) -> tensor<64x32xf32, #A>
      %kt = "tile.trans"(%k) {order = array<i32: 1, 0>} : (tensor<64x32xf32, #A>) -> tensor<32x64xf32, #AT>
      %sb = "tilegpu.local_alloc"(%kt) : (tensor<32x64xf32, #AT>) -> !tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%sa, %sb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%sb) : (!tilegpu.memdesc<array<i64: 32, 64>, f32, #SB, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 3 : i32}
    "tilegpu.local_dealloc"(%sa) : (!tilegpu.memdesc<array<i64: 64, 32>, f32, #SA, 1 : i32>) -> ()
    return %r : tensor<64x64xf32, #C>
  }
}

// -----

// x and its transpose (tilegpu-warpgroup-dot's memdesc_trans view of x's buffer, `x @ x^T`):
// the slot replaces the buffer and the view reads the slot.  The dot reads only the slot
// (directly and through the view), so it stays in flight.
// CHECK-LABEL: func.func @view_of_slot(
// CHECK: %[[X:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 3 : i32>
// CHECK: scf.for
// CHECK-NEXT: "tilegpu.async_wait"() {num = 1 : i32}
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[S:.+]] = "tilegpu.memdesc_index"(%[[X]], %{{.+}})
// CHECK-NOT: tile.load
// CHECK: %[[V:.+]] = "tilegpu.memdesc_trans"(%[[S]]) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>, 1 : i32>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>, 1 : i32>
// CHECK-NEXT: %[[D:.+]] = "tilegpu.warpgroup_dot"(%[[S]], %[[V]], %{{.+}})
// CHECK-NEXT: "tilegpu.warpgroup_wait"(%[[D]]) {num = 1 : i32}
// CHECK-NOT: tilegpu.local_dealloc
// CHECK: "tilegpu.async_copy"
// CHECK-NEXT: "tilegpu.async_commit_group"()
// CHECK-NEXT: scf.yield
// CHECK: "tilegpu.warpgroup_wait"({{.+}}) {num = 0 : i32}
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32}
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[X]])
#A = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#ST = #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @view_of_slot(%p: tensor<64x64x!tile.ptr<f16>, #A>, %n: i32) -> tensor<64x64xf32, #C> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #C>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #C>) : i32 {
      %o = "tile.splat"(%i) : (i32) -> tensor<64x64xi32, #A>
      %px = "tile.addptr"(%p, %o) {tile.contiguity = array<i32: 1, 64>, tile.divisibility = array<i32: 16, 16>} : (tensor<64x64x!tile.ptr<f16>, #A>, tensor<64x64xi32, #A>) -> tensor<64x64x!tile.ptr<f16>, #A>
      %x = "tile.load"(%px) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x64x!tile.ptr<f16>, #A>) -> tensor<64x64xf16, #A>
      %s = "tilegpu.local_alloc"(%x) : (tensor<64x64xf16, #A>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
      %t = "tilegpu.memdesc_trans"(%s) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #ST, 1 : i32>
      %d = "tilegpu.warpgroup_dot"(%s, %t, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #ST, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
      "tilegpu.local_dealloc"(%s) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
      scf.yield %d : tensor<64x64xf32, #C>
    } {tile.num_stages = 3 : i32}
    return %r : tensor<64x64xf32, #C>
  }
}
