// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: env TILEWORK_STMATRIX=1 tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s --check-prefix=STM
// RUN: env TILEWORK_TMA_ELECT=1 tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s --check-prefix=ELECT

// The TMA ops as inline PTX (rules/tma.py): thread 0 (a predicate in the asm) initializes the
// mbarrier (and fences it for the async proxy), arms it with the copy's bytes and issues one
// cp.async.bulk.tensor per box (coordinates innermost first, the tensor map the kernel's
// generic `!llvm.ptr` parameter); every thread waits on the phase; thread 0 invalidates it.
// The init's rule ends with a barrier (before any wait); tilegpu-insert-barriers (run by
// tilegpu-to-llvm on IR without offsets) puts one between the waits and the inval.

// A 64 x 128 f16 buffer in the 128-byte swizzle is two boxes of 64 x 64: the second at byte
// 64 * 128 of the buffer and inner coordinate + 64; the barrier expects all 16384 bytes.
// CompileOptions.tma_elect: thread 0 arms the barrier, the copies go under the lane
// elect.sync picks in warp 0 (the warp id broadcast from lane 0: warp-uniform for ptxas).
// ELECT-LABEL: gpu.func @two_boxes(
// ELECT: %[[W:[a-zA-Z_0-9]+]], %{{.+}} = gpu.shuffle  idx
// ELECT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p, %e, %q; setp.eq.u32 %p, $0, 0; @%p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], 16384; setp.eq.u32 %e, $3, 0; elect.sync _|%q, 0xffffffff; and.pred %e, %e, %q; @%e cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$4], [$2, {$5, $6}], [$1]; @%e cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$7], [$2, {$8, $9}], [$1]; }", "r,r,l,r,r,r,r,r,r,r,~{memory}" %{{.+}}, %{{.+}}, %arg0, %[[W]],
// CHECK-LABEL: gpu.func @two_boxes(%arg0: !llvm.ptr, %arg1: i32, %arg2: i32)
// CHECK: %[[SMEM:.+]] = llvm.mlir.addressof @tilework_smem
// CHECK: %[[BARP:.+]] = llvm.getelementptr %[[SMEM]][16384]
// CHECK: %[[TID:.+]] = arith.index_cast
// CHECK: %[[B0:.+]] = llvm.ptrtoint %[[BARP]] : !llvm.ptr<3> to i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p mbarrier.init.shared::cta.b64 [$1], 1; } fence.mbarrier_init.release.cluster;", "r,r,~{memory}" %[[TID]], %[[B0]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[DST:.+]] = llvm.ptrtoint %[[SMEM]] : !llvm.ptr<3> to i32
// CHECK-NEXT: %[[B1:.+]] = llvm.ptrtoint %[[BARP]] : !llvm.ptr<3> to i32
// CHECK-NEXT: %[[DST2:.+]] = arith.addi %[[DST]], %c8192_i32
// CHECK-NEXT: %[[C2:.+]] = arith.addi %arg2, %c64_i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], 16384; @%p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3], [$2, {$4, $5}], [$1]; @%p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$6], [$2, {$7, $8}], [$1]; }", "r,r,l,r,r,r,r,r,r,~{memory}" %[[TID]], %[[B1]], %arg0, %[[DST]], %arg2, %arg1, %[[DST2]], %[[C2]], %arg1 : (i32, i32, !llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
// CHECK-NEXT: %[[B2:.+]] = llvm.ptrtoint %[[BARP]] : !llvm.ptr<3> to i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %done; tw_wait: mbarrier.try_wait.parity.shared::cta.b64 %done, [$0], $1; @!%done bra.uni tw_wait; }", "r,r,~{memory}" %[[B2]], %arg1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[B3:.+]] = llvm.ptrtoint %[[BARP]] : !llvm.ptr<3> to i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p mbarrier.inval.shared::cta.b64 [$1]; }", "r,r,~{memory}" %[[TID]], %[[B3]]
// CHECK-NEXT: gpu.return
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @two_boxes(%d: !tile.ptr<i8> {tile.tma}, %r: i32, %c: i32) attributes {tile.kernel} {
    %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>
    %bar = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
    "tilegpu.mbarrier_init"(%bar) {count = 1 : i32} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    "tilegpu.tma_load"(%d, %buf, %bar, %r, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32, i32) -> ()
    "tilegpu.mbarrier_wait"(%bar, %r) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32) -> ()
    "tilegpu.mbarrier_inval"(%bar) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>) -> ()
    "tilegpu.local_dealloc"(%bar) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    return
  }
}

// -----

// A tma_store marked tilegpu.wait_later (tilegpu-tma-store-wait-later) commits without the read
// wait; tma_store_wait is the issuing thread's wait, then a CTA barrier.
// CHECK-LABEL: gpu.func @store_wait_later(
// CHECK: %[[TID:.+]] = arith.index_cast
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p cp.async.bulk.wait_group.read 0; }", "r,~{memory}" %[[TID]] : (i32) -> ()
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.store
// CHECK: "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {$3, $4}], [$2]; @%p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {$6, $7}], [$5]; @%p cp.async.bulk.commit_group; }"
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p cp.async.bulk.wait_group.read 0; }", "r,~{memory}" %[[TID]] : (i32) -> ()
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: gpu.return
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#A = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 128, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @store_wait_later(%d: !tile.ptr<i8> {tile.tma}, %r: i32, %c: i32) attributes {tile.kernel} {
    %v = arith.constant dense<1.0> : tensor<64x128xf16, #A>
    %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>
    "tilegpu.tma_store_wait"() : () -> ()
    "tilegpu.local_store"(%v, %buf) : (tensor<64x128xf16, #A>, !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>) -> ()
    "tilegpu.tma_store"(%d, %buf, %r, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, tilegpu.wait_later} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>, i32, i32) -> ()
    "tilegpu.tma_store_wait"() : () -> ()
    "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>) -> ()
    return
  }
}

// -----

// A row-major 3-D buffer is one box: cp.async.bulk.tensor.3d, coordinates reversed.
// CHECK-LABEL: gpu.func @one_box_3d(
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], 256; @%p cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$3], [$2, {$4, $5, $6}], [$1]; }", "r,r,l,r,r,r,r,~{memory}" %{{.+}}, %{{.+}}, %arg0, %{{.+}}, %arg3, %arg2, %arg1 :
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @one_box_3d(%d: !tile.ptr<i8> {tile.tma}, %x: i32, %y: i32, %z: i32) attributes {tile.kernel} {
    %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>
    %bar = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
    "tilegpu.mbarrier_init"(%bar) {count = 1 : i32} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    "tilegpu.tma_load"(%d, %buf, %bar, %x, %y, %z) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>, !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32, i32, i32) -> ()
    "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>) -> ()
    return
  }
}

// -----

// tma_store: the accumulator (wgmma's mma v3 layout) written into the 128-byte-swizzled buffer
// as column pairs (4-byte vector stores; with CompileOptions.stmatrix by eight stmatrix.x4, 64
// fp16 a thread in its 8x8 fragments), every thread's proxy fence, the rule's barrier, then
// thread 0 copies the two 64-column boxes (the second from byte 8192, inner coordinate + 64),
// commits and waits for the reads.  The second store reuses the buffer's bytes (offset 0):
// tilegpu-insert-barriers puts a barrier between the first copy's wait and the second writes.
// CHECK-LABEL: gpu.func @store_two_boxes(%arg0: !llvm.ptr, %arg1: i32, %arg2: i32)
// CHECK: %[[SMEM:.+]] = llvm.mlir.addressof @tilework_smem
// CHECK: %[[TID:.+]] = arith.index_cast
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
// CHECK-NOT: llvm.store %{{.+}} : f16
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[S0:.+]] = llvm.ptrtoint %[[SMEM]] : !llvm.ptr<3> to i32
// CHECK-NEXT: %[[S1:.+]] = arith.addi %[[S0]], %c8192_i32
// CHECK-NEXT: %[[C1:.+]] = arith.addi %arg2, %c64_i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {$3, $4}], [$2]; @%p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {$6, $7}], [$5]; @%p cp.async.bulk.commit_group; @%p cp.async.bulk.wait_group.read 0; }", "r,l,r,r,r,r,r,r,~{memory}" %[[TID]], %arg0, %[[S0]], %arg2, %arg1, %[[S1]], %[[C1]], %arg1 : (i32, !llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK-NEXT: gpu.return
// STM-LABEL: gpu.func @store_two_boxes(
// STM-COUNT-8: nvvm.stmatrix %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// STM-NOT: llvm.store
// STM: nvvm.fence.proxy
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#A = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 128, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @store_two_boxes(%d: !tile.ptr<i8> {tile.tma}, %r: i32, %c: i32) attributes {tile.kernel} {
    %v = arith.constant dense<1.0> : tensor<64x128xf16, #A>
    %buf = "tilegpu.local_alloc"(%v) : (tensor<64x128xf16, #A>) -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>
    "tilegpu.tma_store"(%d, %buf, %r, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>, i32, i32) -> ()
    "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>) -> ()
    %buf2 = "tilegpu.local_alloc"(%v) : (tensor<64x128xf16, #A>) -> !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>
    "tilegpu.tma_store"(%d, %buf2, %c, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>, i32, i32) -> ()
    "tilegpu.local_dealloc"(%buf2) : (!tilegpu.memdesc<array<i64: 64, 128>, f16, #S, 1 : i32>) -> ()
    return
  }
}

// -----

// A row-major 3-D buffer is one box: cp.async.bulk.tensor.3d from the buffer itself.
// CHECK-LABEL: gpu.func @store_3d(
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[S:.+]] = llvm.ptrtoint
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [$1, {$3, $4, $5}], [$2]; @%p cp.async.bulk.commit_group; @%p cp.async.bulk.wait_group.read 0; }", "r,l,r,r,r,r,~{memory}" %{{.+}}, %arg0, %[[S]], %arg3, %arg2, %arg1 :
#C = #tilegpu.blocked<array<i32: 1, 1, 4>, array<i32: 2, 4, 4>, array<i32: 1, 1, 4>, array<i32: 2, 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @store_3d(%d: !tile.ptr<i8> {tile.tma}, %a: i32, %b: i32, %c: i32) attributes {tile.kernel} {
    %v = arith.constant dense<2.0> : tensor<2x4x8xf32, #C>
    %buf = "tilegpu.local_alloc"(%v) : (tensor<2x4x8xf32, #C>) -> !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>
    "tilegpu.tma_store"(%d, %buf, %a, %b, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>, i32, i32, i32) -> ()
    "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 2, 4, 8>, f32, unit, 1 : i32>) -> ()
    return
  }
}

// -----

// A descriptor made in the kernel (tile.make_tensormap): its map is at the global scratch
// argument + the linear program id (x + nx * (y + ny * z)) * the program's 256 bytes + its
// offset 128.  Thread 0 zeroes the 128 bytes, fills the fields with tensormap.replace (the
// base; rank - 1; box, dims and the row stride in bytes innermost first; element strides 1;
// f16 = 6; no interleave; swizzle 128 = 3; zero fill), releases the writes to the tensor-map
// proxy and acquires them for its own copies; the copy takes the map's address generic.
// CHECK-LABEL: gpu.func @device_map(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: i32, %arg3: i32, %arg4: i64, %arg5: i32, %arg6: i32) kernel attributes {{{.*}}tile.global_scratch = 256 : i32
// CHECK: %[[TID:.+]] = arith.index_cast %thread_id_x
// CHECK: %[[SB:.+]] = arith.muli %arg4, %c2_i64 : i64
// CHECK: %[[X:.+]] = arith.index_cast %block_id_x : index to i64
// CHECK: %[[Y:.+]] = arith.index_cast %block_id_y : index to i64
// CHECK: %[[Z:.+]] = arith.index_cast %block_id_z : index to i64
// CHECK: %[[NX:.+]] = arith.index_cast %grid_dim_x : index to i64
// CHECK: %[[NY:.+]] = arith.index_cast %grid_dim_y : index to i64
// CHECK-NEXT: %[[NYZ:.+]] = arith.muli %[[NY]], %[[Z]] : i64
// CHECK-NEXT: %[[YZ:.+]] = arith.addi %[[Y]], %[[NYZ]] : i64
// CHECK-NEXT: %[[NXYZ:.+]] = arith.muli %[[NX]], %[[YZ]] : i64
// CHECK-NEXT: %[[LIN:.+]] = arith.addi %[[X]], %[[NXYZ]] : i64
// CHECK-NEXT: %[[PB:.+]] = arith.muli %[[LIN]], %c256_i64 : i64
// CHECK-NEXT: %[[AT:.+]] = arith.addi %[[PB]], %c128_i64 : i64
// CHECK-NEXT: %[[MAP:.+]] = llvm.getelementptr %arg0[%[[AT]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; .reg .b32 %z; setp.eq.u32 %p, $0, 0; mov.b32 %z, 0; @%p st.global.v4.b32 [$1+0], {%z, %z, %z, %z}; {{.*}} @%p st.global.v4.b32 [$1+112], {%z, %z, %z, %z}; @%p tensormap.replace.tile.global_address.global.b1024.b64 [$1], $2; @%p tensormap.replace.tile.rank.global.b1024.b32 [$1], 1; @%p tensormap.replace.tile.box_dim.global.b1024.b32 [$1], 0, 64; @%p tensormap.replace.tile.global_dim.global.b1024.b32 [$1], 0, $3; @%p tensormap.replace.tile.element_stride.global.b1024.b32 [$1], 0, 1; @%p tensormap.replace.tile.box_dim.global.b1024.b32 [$1], 1, 64; @%p tensormap.replace.tile.global_dim.global.b1024.b32 [$1], 1, $4; @%p tensormap.replace.tile.element_stride.global.b1024.b32 [$1], 1, 1; @%p tensormap.replace.tile.global_stride.global.b1024.b64 [$1], 0, $5; @%p tensormap.replace.tile.elemtype.global.b1024.b32 [$1], 6; @%p tensormap.replace.tile.interleave_layout.global.b1024.b32 [$1], 0; @%p tensormap.replace.tile.swizzle_mode.global.b1024.b32 [$1], 3; @%p tensormap.replace.tile.fill_mode.global.b1024.b32 [$1], 0; @%p fence.proxy.tensormap::generic.release.gpu; @%p fence.proxy.tensormap::generic.acquire.gpu [$1], 128; }", "r,l,l,r,r,l,~{memory}" %[[TID]], %[[MAP]], %arg1, %arg3, %arg2, %[[SB]] : (i32, !llvm.ptr<1>, !llvm.ptr<1>, i32, i32, i64) -> ()
// CHECK: mbarrier.init
// CHECK: %[[GEN:.+]] = llvm.addrspacecast %[[MAP]] : !llvm.ptr<1> to !llvm.ptr
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3], [$2, {$4, $5}], [$1]; }", "r,r,l,r,r,r,~{memory}" %[[TID]], %{{.+}}, %[[GEN]], %{{.+}}, %arg6, %arg5
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @device_map(%scratch: !tile.ptr<i8> {tile.global_scratch}, %base: !tile.ptr<f16>, %rows: i32, %cols: i32, %stride: i64, %r: i32, %c: i32) attributes {tile.kernel, tile.global_scratch = 256 : i32} {
    %map = "tile.make_tensormap"(%scratch, %base, %rows, %cols, %stride) {box = array<i32: 64, 64>, offset = 128 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 256 : i32, swizzle = 128 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
    %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
    %bar = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
    "tilegpu.mbarrier_init"(%bar) {count = 1 : i32} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    "tilegpu.tma_load"(%map, %buf, %bar, %r, %c) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32, i32) -> ()
    "tilegpu.mbarrier_wait"(%bar, %r) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32) -> ()
    "tilegpu.mbarrier_inval"(%bar) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
    "tilegpu.local_dealloc"(%bar) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    return
  }
}
