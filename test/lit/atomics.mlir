// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_80 | FileCheck %s --check-prefix=SM80
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD

// tile.atomic_rmw / tile.atomic_cas in tilegpu-to-llvm: one atomic per element under scf.if on
// its mask bit.  NVIDIA read-modify-writes are inline PTX `atom.global.<scope>.<sem>.<op>.<type>`
// (`red.` when the old value is unused and the semantic allows) and compare-and-swap inline
// `atom.global.<sem>.<scope>.cas` (Triton's modifier orders); AMD ones llvm.atomicrmw and
// llvm.cmpxchg with the ordering and syncscope.  Masked-off lanes give 0.

// CHECK-LABEL: gpu.func @tile_fadd(
// CHECK: %[[M0:.+]] = arith.cmpi slt,
// CHECK: %[[P0:.+]] = llvm.getelementptr %arg0[
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[OLD0:.+]] = scf.if %[[M0]] -> (f32) {
// CHECK-NEXT: %[[A:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "atom.global.gpu.acq_rel.add.f32 $0, [$1], $2;", "=f,l,f,~{memory}" %[[P0]], %[[ONE]] : (!llvm.ptr<1>, f32) -> f32
// CHECK-NEXT: scf.yield %[[A]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[Z]] : f32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "atom.global.gpu.acq_rel.add.f32
// The unused result of a relaxed add: a reduction, no result register.
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "red.global.cta.relaxed.add.f32 [$0], $1;", "l,f,~{memory}"
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// AMD-LABEL: gpu.func @tile_fadd(
// AMD: scf.if %{{.+}} -> (f32) {
// AMD-NEXT: llvm.atomicrmw fadd %{{.+}}, %{{.+}} syncscope("agent") acq_rel {alignment = 4 : i64} : !llvm.ptr<1>, f32
// AMD: llvm.atomicrmw fadd %{{.+}}, %{{.+}} syncscope("workgroup") monotonic {alignment = 4 : i64} : !llvm.ptr<1>, f32
// AMD-NOT: llvm.inline_asm
// AMD: gpu.return

#L = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @tile_fadd(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<256xi32, #L>
    %m = arith.cmpi slt, %r, %ns : tensor<256xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xi32, #L>) -> tensor<256x!tile.ptr<f32>, #L>
    %one = arith.constant dense<1.0> : tensor<256xf32, #L>
    %old = "tile.atomic_rmw"(%xa, %one, %m) {kind = "fadd", sem = "acq_rel", scope = "gpu", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xf32, #L>, tensor<256xi1, #L>) -> tensor<256xf32, #L>
    %unused = "tile.atomic_rmw"(%xa, %old) {kind = "fadd", sem = "relaxed", scope = "cta", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>, #L>, tensor<256xf32, #L>) -> tensor<256xf32, #L>
    return
  }
}

// -----

// A scalar atomic is issued by thread 0 and its old value broadcast through shared memory
// (thread 0 stores, barrier, everyone loads; a barrier first only when an earlier user of the
// buffer may still be reading it: not for the kernel's first user, yes for the next one);
// compare-and-swap orders its failure as acquire under acq_rel; system scope has no
// syncscope.  bf16 add: native on sm_90, the LLVM atomicrmw (expanded to a cmpxchg loop) on
// sm_80.

// CHECK-LABEL: gpu.func @scalar_and_cas(
// CHECK-SAME: tilegpu.shared = 4 : i32
// CHECK: %[[TID:.+]] = arith.index_cast %thread_id_x : index to i32
// CHECK: %[[SMEM:.+]] = llvm.mlir.addressof @tilework_smem : !llvm.ptr<3>
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %c0_i32 : i32
// CHECK-NEXT: %[[OLD:.+]] = scf.if %[[FIRST]] -> (i32) {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "atom.global.cta.relaxed.add.u32 $0, [$1], $2;", "=r,l,r,~{memory}"
// CHECK: %[[SLOT:.+]] = llvm.getelementptr %[[SMEM]][%c0_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: llvm.store %[[OLD]], %[[SLOT]] : i32, !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[ALL:.+]] = llvm.load %[[SLOT]] : !llvm.ptr<3> -> i32
// CHECK: scf.if %{{.+}} -> (i32) {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "atom.global.acq_rel.sys.cas.b32 $0, [$1], $2, $3;", "=r,l,r,r,~{memory}" %arg0, %{{.+}}, %[[ALL]] : (!llvm.ptr<1>, i32, i32) -> i32
// CHECK: %[[SLOT2:.+]] = llvm.getelementptr %[[SMEM]][%c0_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if
// CHECK-NEXT: llvm.store %{{.+}}, %[[SLOT2]] : i32, !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: "atom.global.gpu.release.add.noftz.bf16 $0, [$1], $2;", "=h,l,h,~{memory}"

// SM80-LABEL: gpu.func @scalar_and_cas(
// SM80: "atom.global.acq_rel.sys.cas.b32 $0, [$1], $2, $3;"
// SM80: llvm.atomicrmw fadd %arg1, %arg2 syncscope("device") release {alignment = 2 : i64} : !llvm.ptr<1>, bf16
// SM80-NOT: bf16 $0

// AMD-LABEL: gpu.func @scalar_and_cas(
// AMD: llvm.atomicrmw add %arg0, %{{.+}} syncscope("workgroup") monotonic {alignment = 4 : i64} : !llvm.ptr<1>, i32
// AMD-NOT: gpu.barrier
// AMD: llvm.store %{{.+}}, %{{.+}} : i32, !llvm.ptr<3>
// AMD-NEXT: }
// AMD-NEXT: gpu.barrier
// AMD: llvm.cmpxchg %arg0, %{{.+}}, %{{.+}} acq_rel acquire {alignment = 4 : i64} : !llvm.ptr<1>, i32
// AMD: llvm.atomicrmw fadd %arg1, %arg2 syncscope("agent") release {alignment = 2 : i64} : !llvm.ptr<1>, bf16

module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @scalar_and_cas(%c: !tile.ptr<i32>, %h: !tile.ptr<bf16>, %v: bf16) attributes {tile.kernel} {
    %one = arith.constant 1 : i32
    %zero = arith.constant 0 : i32
    %old = "tile.atomic_rmw"(%c, %one) {kind = "add", sem = "relaxed", scope = "cta", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> i32
    %prev = "tile.atomic_cas"(%c, %zero, %old) {sem = "acq_rel", scope = "sys"} : (!tile.ptr<i32>, i32, i32) -> i32
    "tile.store"(%c, %prev) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
    %b = "tile.atomic_rmw"(%h, %v) {kind = "fadd", sem = "release", scope = "gpu", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<bf16>, bf16) -> bf16
    "tile.store"(%h, %b) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<bf16>, bf16) -> ()
    return
  }
}

// -----

// 32 elements on 128 threads: four threads hold each element.  Only the owner (the warp bits
// of the thread id, which the layout's linear map makes copies, are zero: thread id < 32)
// issues the atomic; the copies read the owner's old value back through shared memory
// (32 x 8 bytes).

// CHECK-LABEL: gpu.func @replicated(
// CHECK-SAME: tilegpu.shared = 256 : i32
// CHECK: %[[TID:.+]] = arith.index_cast
// CHECK-NEXT: %[[IDX:.+]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK: %[[OWNER:.+]] = arith.cmpi ult, %[[TID]], %c32_i32 : i32
// CHECK-NEXT: %[[OLD:.+]] = scf.if %[[OWNER]] -> (i64) {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "atom.global.gpu.acquire.max.u64 $0, [$1], $2;", "=l,l,l,~{memory}"
// CHECK-NOT: gpu.barrier
// CHECK: scf.if %[[OWNER]] {
// CHECK-NEXT: llvm.store %[[OLD]], %{{.+}} : i64, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-NEXT: %[[SHARED:.+]] = llvm.load %{{.+}} : !llvm.ptr<3> -> i64
// CHECK: llvm.store %[[SHARED]], %{{.+}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return

// AMD-LABEL: gpu.func @replicated(
// AMD: arith.cmpi ult
// AMD: llvm.atomicrmw umax %{{.+}}, %{{.+}} syncscope("agent") acquire {alignment = 8 : i64} : !llvm.ptr<1>, i64

#R = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @replicated(%x: !tile.ptr<i64>, %o: !tile.ptr<i64>) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 32 : i32} : () -> tensor<32xi32, #R>
    %xp = "tile.splat"(%x) : (!tile.ptr<i64>) -> tensor<32x!tile.ptr<i64>, #R>
    %xa = "tile.addptr"(%xp, %r) : (tensor<32x!tile.ptr<i64>, #R>, tensor<32xi32, #R>) -> tensor<32x!tile.ptr<i64>, #R>
    %v = arith.constant dense<5> : tensor<32xi64, #R>
    %old = "tile.atomic_rmw"(%xa, %v) {kind = "umax", sem = "acquire", scope = "gpu", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<i64>, #R>, tensor<32xi64, #R>) -> tensor<32xi64, #R>
    %op = "tile.splat"(%o) : (!tile.ptr<i64>) -> tensor<32x!tile.ptr<i64>, #R>
    %oa = "tile.addptr"(%op, %r) : (tensor<32x!tile.ptr<i64>, #R>, tensor<32xi32, #R>) -> tensor<32x!tile.ptr<i64>, #R>
    "tile.store"(%oa, %old) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x!tile.ptr<i64>, #R>, tensor<32xi64, #R>) -> ()
    return
  }
}
