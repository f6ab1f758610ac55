// RUN: tilework-opt %s --tilegpu-to-llvm --target sm_90a | FileCheck %s

// Warp specialization's split lowered (rules/scf.py, rules/warp_spec.py, rules/tma.py): the
// kernel launches num_warps + producer_warps warps (known_block_size 256) with `.maxnreg`
// the even share (248 at 256 threads: setmaxnreg needs the count at entry); the warp group
// comes from the warp-uniform warp id; before the split the barriers are the CTA's
// (gpu.barrier), inside it each side's own: the consumers' is named barrier 1 of 128
// threads (`bar.sync 1, 128`; the producer's would be 2, of its one warp).  The producer warp
// group's four warps run its setmaxnreg, then only its first warp (warp 4: the uniform warp
// id) the rest: it waits on the empty barrier and one of its lanes (`elect.sync`) issues the
// copy; the consumers' arrival is by lane 0 of each warp where the predicate holds.  The
// module records the warps to launch (the backend's metadata num_warps, which the runtime's
// block uses).

// CHECK: module attributes {{{.*}}tilegpu.launch_warps = 8 : i32
// CHECK-LABEL: gpu.func @split(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, nvvm.maxnreg = 248 : i32
// CHECK: %[[TID:.+]] = arith.index_cast %thread_id_x : index to i32
// CHECK-NEXT: %[[WARP:.+]] = arith.divui %[[TID]], %c32_i32 : i32
// CHECK-NEXT: %[[UWARP:.+]], %{{.+}} = gpu.shuffle  idx %[[WARP]], %c0_i32, %c32_i32 : i32
// CHECK: mbarrier.init.shared::cta.b64 [$1], 1;
// CHECK-NEXT: gpu.barrier
// CHECK: mbarrier.init.shared::cta.b64 [$1], 4;
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[WG:.+]] = arith.divui %[[UWARP]], %c4_i32 : i32
// CHECK: %[[PROD:.+]] = arith.cmpi eq, %[[WG]], %{{.+}} : i32
// CHECK-NEXT: scf.if %[[PROD]] {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "setmaxnreg.dec.sync.aligned.u32 40;", "~{memory}"
// CHECK-NEXT: %[[LEAD:.+]] = arith.cmpi eq, %[[UWARP]], %c4_i32 : i32
// CHECK-NEXT: scf.if %[[LEAD]] {
// CHECK: mbarrier.try_wait.parity
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; elect.sync _|%p, 0xffffffff; @%p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], 8192; @%p cp.async.bulk.tensor.2d{{.*}}"
// CHECK-NOT: bar.sync
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "setmaxnreg.inc.sync.aligned.u32 232;", "~{memory}"
// CHECK: mbarrier.try_wait.parity
// CHECK-NEXT: %[[LANE:.+]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-NEXT: %[[WHO:.+]] = arith.select %arg2, %[[LANE]], %c1_i32 : i32
// CHECK-NEXT: %[[E:.+]] = llvm.ptrtoint
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p mbarrier.arrive.shared::cta.b64 _, [$1]; }", "r,r,~{memory}" %[[WHO]], %[[E]]
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK-NEXT: %[[F:.+]] = llvm.ptrtoint
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred %p; setp.eq.u32 %p, $0, 0; @%p mbarrier.inval.shared::cta.b64 [$1]; }", "r,r,~{memory}" %[[TID]], %[[F]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @split(%d: !tile.ptr<i8> {tile.tma}, %r: i32, %go: i1) attributes {tile.kernel, tilegpu.producer_warps = 4 : i32} {
    %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
    %full = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
    %empty = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
    "tilegpu.mbarrier_init"(%full) {count = 1 : i32} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    "tilegpu.mbarrier_init"(%empty) {count = 4 : i32} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    %wg = "tilegpu.warp_group_id"() : () -> i32
    %c1 = arith.constant 1 : i32
    %p = arith.cmpi eq, %wg, %c1 : i32
    scf.if %p {
      "tilegpu.setmaxnreg"() {count = 40 : i32, mode = "dec"} : () -> ()
      "tilegpu.mbarrier_wait"(%empty, %r) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32) -> ()
      "tilegpu.tma_load"(%d, %buf, %full, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32, i32) -> ()
    } else {
      "tilegpu.setmaxnreg"() {count = 232 : i32, mode = "inc"} : () -> ()
      "tilegpu.mbarrier_wait"(%full, %r) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32) -> ()
      "tilegpu.mbarrier_arrive"(%empty, %go) {operandSegmentSizes = array<i32: 1, 1>} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i1) -> ()
      "tilegpu.mbarrier_inval"(%full) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
    } {tilegpu.warp_specialize}
    return
  }
}
