// RUN: tilework-opt %s --split-input-file --tilegpu-allocate-shared --tilegpu-insert-barriers --target sm_90a | FileCheck %s

// tilegpu-insert-barriers puts a `tilegpu.barrier` before an op whose shared bytes overlap
// bytes written (RAW, WAW) or read (WAR) by an earlier op since the last barrier.  An op with
// scratch writes it, synchronizes itself and reads it, so only its reads remain after it.

// %a at 0 and %b at 2048 (both live): the load of %a follows the alloc's writes (RAW); the
// store to %b touches nothing used since that barrier; the load of %b follows it (RAW); the
// store to %a comes after a barrier that followed the only read of %a (none); the first
// conversion (scratch at 0) overwrites %a's fresh bytes (WAW) and the second its reads (WAR).
// CHECK-LABEL: func.func @straight(
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_alloc"(%arg0) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"() {tilegpu.smem_offset = 2048 : i32}
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[Y:.+]] = "tilegpu.local_load"(%[[A]])
// CHECK-NEXT: "tilegpu.local_store"(%[[Y]], %[[B]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[Z:.+]] = "tilegpu.local_load"(%[[B]])
// CHECK-NEXT: "tilegpu.local_store"(%[[Z]], %[[A]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[C:.+]] = "tilegpu.convert_layout"(%[[Z]]) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[D:.+]] = "tilegpu.convert_layout"(%[[C]]) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: return %[[D]]
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 4, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @straight(%x: tensor<16x32xf32, #A>) -> tensor<16x32xf32, #A> attributes {tile.kernel} {
    %a = "tilegpu.local_alloc"(%x) : (tensor<16x32xf32, #A>) -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
    %b = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
    %y = "tilegpu.local_load"(%a) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> tensor<16x32xf32, #B>
    "tilegpu.local_store"(%y, %b) : (tensor<16x32xf32, #B>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> ()
    %z = "tilegpu.local_load"(%b) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> tensor<16x32xf32, #A>
    "tilegpu.local_store"(%z, %a) : (tensor<16x32xf32, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> ()
    %c = "tilegpu.convert_layout"(%z) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #B>
    %d = "tilegpu.convert_layout"(%c) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
    return %d : tensor<16x32xf32, #A>
  }
}

// -----

// Control flow.  The kernel's first shared access needs no barrier, in a branch too; the
// second conversion of the branch does.  A loop body's first conversion conflicts with the
// previous iteration's reads (and the branch's), so it gets one; a loop without shared
// accesses passes the state through, and the conversion after it gets one.
// CHECK-LABEL: func.func @control(
// CHECK-NEXT: %[[E:.+]] = scf.if %arg2
// CHECK-NEXT: %[[F:.+]] = "tilegpu.convert_layout"(%arg0)
// CHECK-NEXT: %[[F2:.+]] = arith.addf %[[F]], %[[F]]
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[F3:.+]] = "tilegpu.convert_layout"(%[[F2]])
// CHECK-NEXT: scf.yield %[[F3]]
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %arg0
// CHECK-NEXT: }
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[R:.+]] = scf.for
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[C:.+]] = "tilegpu.convert_layout"
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[D:.+]] = "tilegpu.convert_layout"(%[[C]])
// CHECK-NEXT: scf.yield %[[D]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[Q:.+]] = scf.for
// CHECK-NEXT: arith.addf
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[H:.+]] = "tilegpu.convert_layout"(%[[Q]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[H2:.+]] = "tilegpu.convert_layout"(%[[H]])
// CHECK-NEXT: return %[[H2]]
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 4, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @control(%x: tensor<16x32xf32, #A>, %n: i32, %p: i1) -> tensor<16x32xf32, #A> attributes {tile.kernel} {
    %e = scf.if %p -> (tensor<16x32xf32, #A>) {
      %f = "tilegpu.convert_layout"(%x) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #B>
      %f2 = arith.addf %f, %f : tensor<16x32xf32, #B>
      %f3 = "tilegpu.convert_layout"(%f2) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
      scf.yield %f3 : tensor<16x32xf32, #A>
    } else {
      scf.yield %x : tensor<16x32xf32, #A>
    }
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %e) -> (tensor<16x32xf32, #A>) : i32 {
      %c = "tilegpu.convert_layout"(%acc) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #B>
      %d = "tilegpu.convert_layout"(%c) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
      scf.yield %d : tensor<16x32xf32, #A>
    }
    %q = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r) -> (tensor<16x32xf32, #A>) : i32 {
      %s = arith.addf %acc, %acc : tensor<16x32xf32, #A>
      scf.yield %s : tensor<16x32xf32, #A>
    }
    %h = "tilegpu.convert_layout"(%q) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #B>
    %h2 = "tilegpu.convert_layout"(%h) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
    return %h2 : tensor<16x32xf32, #A>
  }
}

// -----

// Asynchronous copies land at the wait that completes their group: `async_wait {num = 1}`
// completes the first group only, so the load of buffer 0 needs a barrier after it, and the
// load of buffer 1 one after the second wait.  A barrier between does not complete copies in
// flight.  The last copy overwrites buffer 1, read since the last barrier (WAR).
// CHECK-LABEL: func.func @groups(
// CHECK-NEXT: %[[BUF:.+]] = "tilegpu.local_alloc"() {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[B0:.+]] = "tilegpu.memdesc_index"(%[[BUF]],
// CHECK-NEXT: %[[B1:.+]] = "tilegpu.memdesc_index"(%[[BUF]],
// CHECK-NEXT: "tilegpu.async_copy"(%arg0, %[[B0]])
// CHECK-NEXT: "tilegpu.async_commit_group"() : () -> ()
// CHECK-NEXT: "tilegpu.async_copy"(%arg1, %[[B1]])
// CHECK-NEXT: "tilegpu.async_commit_group"() : () -> ()
// CHECK-NEXT: "tilegpu.async_wait"() {num = 1 : i32} : () -> ()
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[X:.+]] = "tilegpu.local_load"(%[[B0]])
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[Y:.+]] = "tilegpu.local_load"(%[[B1]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: "tilegpu.async_copy"(%arg1, %[[B1]])
// CHECK-NEXT: "tilegpu.async_commit_group"() : () -> ()
// CHECK-NEXT: "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: return %[[S]]
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 4, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @groups(%p: tensor<16x32x!tile.ptr<f32>, #A>, %q: tensor<16x32x!tile.ptr<f32>, #A>) -> tensor<16x32xf32, #B> attributes {tile.kernel} {
    %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %b0 = "tilegpu.memdesc_index"(%buf, %c0) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>, i32) -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
    %b1 = "tilegpu.memdesc_index"(%buf, %c1) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 2 : i32>, i32) -> !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>
    "tilegpu.async_copy"(%p, %b0) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<16x32x!tile.ptr<f32>, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> ()
    "tilegpu.async_commit_group"() : () -> ()
    "tilegpu.async_copy"(%q, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<16x32x!tile.ptr<f32>, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> ()
    "tilegpu.async_commit_group"() : () -> ()
    "tilegpu.async_wait"() {num = 1 : i32} : () -> ()
    %x = "tilegpu.local_load"(%b0) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> tensor<16x32xf32, #B>
    "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
    %y = "tilegpu.local_load"(%b1) : (!tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> tensor<16x32xf32, #B>
    "tilegpu.async_copy"(%q, %b1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<16x32x!tile.ptr<f32>, #A>, !tilegpu.memdesc<array<i64: 16, 32>, f32, unit, 1 : i32>) -> ()
    "tilegpu.async_commit_group"() : () -> ()
    "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
    %s = arith.addf %x, %y : tensor<16x32xf32, #B>
    return %s : tensor<16x32xf32, #B>
  }
}

// -----

// scf.while: the body (`do` region) runs after the condition region and loops back to it;
// the state after the loop is the one leaving the condition region, which includes what
// the body left (the barrier after the loop).
// CHECK-LABEL: func.func @while_loop(
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[W:.+]]:2 = scf.while
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: scf.condition
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[C:.+]] = "tilegpu.convert_layout"
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[D:.+]] = "tilegpu.convert_layout"(%[[C]])
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[E:.+]] = "tilegpu.convert_layout"(%[[W]]#1)
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[F:.+]] = "tilegpu.convert_layout"(%[[E]])
// CHECK-NEXT: return %[[F]]
// CHECK-NEXT: }
#A = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#B = #tilegpu.blocked<array<i32: 4, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @while_loop(%x: tensor<16x32xf32, #A>, %n: i32) -> tensor<16x32xf32, #A> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r:2 = scf.while (%i = %c0, %acc = %x) : (i32, tensor<16x32xf32, #A>) -> (i32, tensor<16x32xf32, #A>) {
      %go = arith.cmpi slt, %i, %n : i32
      scf.condition(%go) %i, %acc : i32, tensor<16x32xf32, #A>
    } do {
    ^bb0(%j: i32, %a: tensor<16x32xf32, #A>):
      %c = "tilegpu.convert_layout"(%a) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #B>
      %d = "tilegpu.convert_layout"(%c) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
      %k = arith.addi %j, %c1 : i32
      scf.yield %k, %d : i32, tensor<16x32xf32, #A>
    }
    %e = "tilegpu.convert_layout"(%r#1) : (tensor<16x32xf32, #A>) -> tensor<16x32xf32, #B>
    %f = "tilegpu.convert_layout"(%e) : (tensor<16x32xf32, #B>) -> tensor<16x32xf32, #A>
    return %f : tensor<16x32xf32, #A>
  }
}

// -----

// An asynchronous warpgroup_dot reads its operands until the warpgroup_wait that completes its
// group: the barrier the load of %x needs (RAW after the store into %x) does not end those reads, so the store into
// %a after the wait gets a barrier of its own; a synchronous dot's reads end at the dot (the
// store into %a2 after the barrier before the load of %x2 needs none).
// CHECK-LABEL: func.func @async_reads(
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_alloc"(%arg0) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"(%arg0) {tilegpu.smem_offset = 8192 : i32}
// CHECK-NEXT: %[[X:.+]] = "tilegpu.local_alloc"(%arg1) {tilegpu.smem_offset = 16384 : i32}
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[D:.+]] = "tilegpu.warpgroup_dot"(%[[A]], %[[B]], %arg2)
// CHECK-NEXT: "tilegpu.local_store"(%arg1, %[[X]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[Y:.+]] = "tilegpu.local_load"(%[[X]])
// CHECK-NEXT: %[[W:.+]] = "tilegpu.warpgroup_wait"(%[[D]]) {num = 0 : i32}
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: "tilegpu.local_store"(%arg0, %[[A]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[D2:.+]] = "tilegpu.warpgroup_dot"(%[[A]], %[[B]], %arg2)
// CHECK-NEXT: "tilegpu.local_store"(%[[Y]], %[[X]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[Y2:.+]] = "tilegpu.local_load"(%[[X]])
// CHECK-NEXT: "tilegpu.local_store"(%arg0, %[[A]])
// CHECK-NEXT: return %[[W]], %[[D2]]
// CHECK-NEXT: }
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#L = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @async_reads(%v: tensor<64x64xf16, #L>, %xv: tensor<64x64xf16, #L>, %c: tensor<64x64xf32, #C>) -> (tensor<64x64xf32, #C>, tensor<64x64xf32, #C>) attributes {tile.kernel} {
    %a = "tilegpu.local_alloc"(%v) : (tensor<64x64xf16, #L>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
    %b = "tilegpu.local_alloc"(%v) : (tensor<64x64xf16, #L>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
    %x = "tilegpu.local_alloc"(%xv) : (tensor<64x64xf16, #L>) -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
    %d = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    "tilegpu.local_store"(%xv, %x) : (tensor<64x64xf16, #L>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
    %y = "tilegpu.local_load"(%x) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> tensor<64x64xf16, #L>
    %w = "tilegpu.warpgroup_wait"(%d) {num = 0 : i32} : (tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    "tilegpu.local_store"(%v, %a) : (tensor<64x64xf16, #L>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
    %d2 = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
    "tilegpu.local_store"(%y, %x) : (tensor<64x64xf16, #L>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
    %y2 = "tilegpu.local_load"(%x) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> tensor<64x64xf16, #L>
    "tilegpu.local_store"(%v, %a) : (tensor<64x64xf16, #L>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
    return %w, %d2 : tensor<64x64xf32, #C>, tensor<64x64xf32, #C>
  }
}

// -----

// tma_store: its rule fences and synchronizes before the copy, so no barrier goes before it
// even though the local_alloc just wrote its buffer; its (one thread's) read of the buffer is
// finished within the op, and the next writer of those bytes (the second store's buffer, at
// the same offset) waits at a barrier.  A buffer TMA reads starts 128-byte aligned: after the
// live 48-byte %k it takes offset 128, not 48.
// CHECK-LABEL: func.func @tma_stores(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[K:.+]] = "tilegpu.local_alloc"(%arg2) {tilegpu.smem_offset = 0 : i32}
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_alloc"(%arg1) {tilegpu.smem_offset = 128 : i32}
// CHECK-NEXT: "tilegpu.tma_store"(%arg0, %[[A]]
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[A]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[B:.+]] = "tilegpu.local_alloc"(%arg1) {tilegpu.smem_offset = 128 : i32}
// CHECK-NEXT: "tilegpu.tma_store"(%arg0, %[[B]]
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[B]])
// CHECK-NEXT: %{{.+}} = "tilegpu.local_load"(%[[K]])
#C = #tilegpu.blocked<array<i32: 1, 1, 4>, array<i32: 2, 4, 4>, array<i32: 1, 1, 4>, array<i32: 2, 1, 0>>
#K = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @tma_stores(%d: !tile.ptr<i8> {tile.tma}, %v: tensor<2x4x8xf32, #C>, %w: tensor<12xf32, #K>) -> tensor<12xf32, #K> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %k = "tilegpu.local_alloc"(%w) : (tensor<12xf32, #K>) -> !tilegpu.memdesc<array<i64: 12>, f32, unit, 1 : i32>
    %a = "tilegpu.local_alloc"(%v) : (tensor<2x4x8xf32, #C>) -> !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>
    "tilegpu.tma_store"(%d, %a, %c0, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>, i32, i32, i32) -> ()
    "tilegpu.local_dealloc"(%a) : (!tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>) -> ()
    %b = "tilegpu.local_alloc"(%v) : (tensor<2x4x8xf32, #C>) -> !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>
    "tilegpu.tma_store"(%d, %b, %c0, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>, i32, i32, i32) -> ()
    "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>) -> ()
    %r = "tilegpu.local_load"(%k) : (!tilegpu.memdesc<array<i64: 12>, f32, unit, 1 : i32>) -> tensor<12xf32, #K>
    return %r : tensor<12xf32, #K>
  }
}

// -----

// A read through a memdesc_trans view is a read of its buffer: a barrier after the alloc's
// writes (RAW), and one before the store that overwrites what the view read (WAR).
// CHECK-LABEL: func.func @view(
// CHECK-NEXT: %[[A:.+]] = "tilegpu.local_alloc"(%arg0)
// CHECK-NEXT: %[[T:.+]] = "tilegpu.memdesc_trans"(%[[A]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: %[[Y:.+]] = "tilegpu.local_load"(%[[T]])
// CHECK-NEXT: "tilegpu.barrier"() : () -> ()
// CHECK-NEXT: "tilegpu.local_store"(%arg0, %[[A]])
// CHECK-NEXT: return %[[Y]]
#A = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#ST = #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @view(%x: tensor<32x64xf16, #A>) -> tensor<64x32xf16, #A> attributes {tile.kernel} {
    %a = "tilegpu.local_alloc"(%x) : (tensor<32x64xf16, #A>) -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #S, 1 : i32>
    %t = "tilegpu.memdesc_trans"(%a) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, #S, 1 : i32>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, #ST, 1 : i32>
    %y = "tilegpu.local_load"(%t) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #ST, 1 : i32>) -> tensor<64x32xf16, #A>
    "tilegpu.local_store"(%x, %a) : (tensor<32x64xf16, #A>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #S, 1 : i32>) -> ()
    return %y : tensor<64x32xf16, #A>
  }
}
