// RUN: tilework-opt %s --split-input-file --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-proxy-fences --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-proxy-fences --tilegpu-to-llvm --target sm_90a | FileCheck %s --check-prefix=LLVM
// RUN: env TILEWORK_WGMMA_CP_ASYNC_FENCE=0 tilework-opt %s --split-input-file --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-proxy-fences --target sm_90a | FileCheck %s --check-prefix=OFF

// tilegpu-proxy-fences: the generic writes a wgmma reads fence themselves, once, where they
// happen: the local_alloc of a (st.shared), and the async_wait that lands b's cp.async; the
// local_alloc of e, which no wgmma reads, does not; the dot is marked and emits no fence.
// Lowered: a fence after a's stores, one right after the cp.async wait (before the barrier),
// none between the barrier and the wgmma.
// CHECK-LABEL: func.func @fences(
// CHECK: %[[A:.+]] = "tilegpu.local_alloc"(%{{.+}}) {tilegpu.proxy_fence, tilegpu.smem_offset
// CHECK: "tilegpu.async_copy"
// CHECK: "tilegpu.async_wait"() {num = 0 : i32, tilegpu.proxy_fence}
// CHECK: "tilegpu.local_alloc"(%{{.+}}) {tilegpu.smem_offset
// CHECK: "tilegpu.warpgroup_dot"(%[[A]], {{.+}}tilegpu.writers_fence
// With CompileOptions.wgmma_cp_async_fence off every cp.async copy goes unfenced (Triton's and
// CUTLASS's cp.async + wgmma loops fence no copies): b's wait is not fenced, a's st.shared
// still are, and the dot (its operands not all cp.async's: no `tilegpu.cp_async_operands`)
// still relies on its writers.
// OFF-LABEL: func.func @fences(
// OFF: "tilegpu.local_alloc"(%{{.+}}) {tilegpu.proxy_fence
// OFF: "tilegpu.async_copy"({{.+}}tilegpu.no_proxy_fence
// OFF: "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
// OFF-NOT: tilegpu.no_proxy_fence
// OFF: "tilegpu.warpgroup_dot"({{.+}}tilegpu.writers_fence
// LLVM-LABEL: gpu.func @fences(
// LLVM: llvm.store
// LLVM: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// LLVM: nvvm.cp.async.wait.group 0
// LLVM-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// LLVM: gpu.barrier
// LLVM-NOT: nvvm.fence.proxy
// LLVM: nvvm.wgmma.fence.aligned
// LLVM: nvvm.wgmma.mma_async
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#SA = #tilegpu.nvmma_shared<64 : i32, false, 16 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @fences(%out: !tile.ptr<f32>, %in: !tile.ptr<f16>) attributes {tile.kernel} {
  %pb = "tile.splat"(%in) : (!tile.ptr<f16>) -> tensor<32x64x!tile.ptr<f16>, #B>
  %x = arith.constant dense<1.0> : tensor<64x32xf16, #B>
  %c = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %a = "tilegpu.local_alloc"(%x) : (tensor<64x32xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>
  %b = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>
  "tilegpu.async_copy"(%pb, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<32x64x!tile.ptr<f16>, #B>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>) -> ()
  "tilegpu.async_commit_group"() : () -> ()
  "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
  %e = "tilegpu.local_alloc"(%x) : (tensor<64x32xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, unit, 1 : i32>
  %ex = "tilegpu.local_load"(%e) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, unit, 1 : i32>) -> tensor<64x32xf16, #B>
  %d = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  "tilegpu.local_dealloc"(%a) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%e) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, unit, 1 : i32>) -> ()
  %p = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C>
  "tile.store"(%p, %d) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  %pe = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x32x!tile.ptr<f32>, #B>
  %exf = arith.extf %ex : tensor<64x32xf16, #B> to tensor<64x32xf32, #B>
  "tile.store"(%pe, %exf) : (tensor<64x32x!tile.ptr<f32>, #B>, tensor<64x32xf32, #B>) -> ()
  return
}
}

// -----

// Copies into a buffer no wgmma reads (live across the dot, so no wgmma buffer reuses its
// bytes): the wait is not marked (the dot's writers still
// fence); a kernel without wgmma is left alone.
// CHECK-LABEL: func.func @other_copies(
// CHECK: "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
// CHECK: "tilegpu.warpgroup_dot"({{.+}}tilegpu.writers_fence
// CHECK-LABEL: func.func @no_dot(
// CHECK-NOT: tilegpu.proxy_fence
// CHECK: return
// LLVM-LABEL: gpu.func @other_copies(
// LLVM: nvvm.cp.async.wait.group 0
// LLVM-NOT: nvvm.fence.proxy
// LLVM: gpu.barrier
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#SA = #tilegpu.nvmma_shared<64 : i32, false, 16 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @other_copies(%out: !tile.ptr<f32>, %in: !tile.ptr<f16>) attributes {tile.kernel} {
  %pb = "tile.splat"(%in) : (!tile.ptr<f16>) -> tensor<32x64x!tile.ptr<f16>, #B>
  %x = arith.constant dense<1.0> : tensor<64x32xf16, #B>
  %y = arith.constant dense<2.0> : tensor<32x64xf16, #B>
  %c = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %g = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 64>, f16, unit, 1 : i32>
  "tilegpu.async_copy"(%pb, %g) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<32x64x!tile.ptr<f16>, #B>, !tilegpu.memdesc<array<i64: 32, 64>, f16, unit, 1 : i32>) -> ()
  "tilegpu.async_commit_group"() : () -> ()
  "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
  %gx = "tilegpu.local_load"(%g) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, unit, 1 : i32>) -> tensor<32x64xf16, #B>
  %a = "tilegpu.local_alloc"(%x) : (tensor<64x32xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>
  %b = "tilegpu.local_alloc"(%gx) : (tensor<32x64xf16, #B>) -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>
  %d = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  "tilegpu.local_dealloc"(%a) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%g) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, unit, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>) -> ()
  %p = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C>
  "tile.store"(%p, %d) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
func.func @no_dot(%out: !tile.ptr<f32>) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<64x32xf16, #B>
  %e = "tilegpu.local_alloc"(%x) : (tensor<64x32xf16, #B>) -> !tilegpu.memdesc<array<i64: 64, 32>, f16, unit, 1 : i32>
  %ex = "tilegpu.local_load"(%e) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, unit, 1 : i32>) -> tensor<64x32xf16, #B>
  "tilegpu.local_dealloc"(%e) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, unit, 1 : i32>) -> ()
  %pe = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x32x!tile.ptr<f32>, #B>
  %exf = arith.extf %ex : tensor<64x32xf16, #B> to tensor<64x32xf32, #B>
  "tile.store"(%pe, %exf) : (tensor<64x32x!tile.ptr<f32>, #B>, tensor<64x32xf32, #B>) -> ()
  return
}
}

// -----

// A dot whose operands tilegpu-pipeline found to be ring slots only cp.async writes
// (`tilegpu.cp_async_operands`): this pass decides their fence from
// CompileOptions.wgmma_cp_async_fence.  On (the default): the copies' wait fences, as any
// copy a wgmma reads.  Off: the dot is marked `tilegpu.no_proxy_fence` (its rule emits no
// fence; Triton's code) and the wait is not fenced.  (A stale mark is recomputed.)
// CHECK-LABEL: func.func @cp_async_only(
// CHECK: "tilegpu.async_wait"() {num = 0 : i32, tilegpu.proxy_fence}
// CHECK-NOT: tilegpu.no_proxy_fence
// CHECK: "tilegpu.warpgroup_dot"({{.+}}tilegpu.writers_fence
// CHECK-NOT: tilegpu.no_proxy_fence
// OFF-LABEL: func.func @cp_async_only(
// OFF: "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
// OFF: "tilegpu.warpgroup_dot"({{.+}}tilegpu.cp_async_operands, tilegpu.no_proxy_fence{{.*}}tilegpu.writers_fence
// LLVM-LABEL: gpu.func @cp_async_only(
// LLVM: nvvm.cp.async.wait.group 0
// LLVM-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// LLVM: gpu.barrier
// LLVM-NOT: nvvm.fence.proxy
// LLVM: nvvm.wgmma.mma_async
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#SA = #tilegpu.nvmma_shared<64 : i32, false, 16 : i32>
#SB = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @cp_async_only(%out: !tile.ptr<f32>, %in: !tile.ptr<f16>, %in2: !tile.ptr<f16>) attributes {tile.kernel} {
  %pa = "tile.splat"(%in2) : (!tile.ptr<f16>) -> tensor<64x32x!tile.ptr<f16>, #B>
  %pb = "tile.splat"(%in) : (!tile.ptr<f16>) -> tensor<32x64x!tile.ptr<f16>, #B>
  %c = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %a = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>
  %b = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>
  "tilegpu.async_copy"(%pa, %a) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<64x32x!tile.ptr<f16>, #B>, !tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>) -> ()
  "tilegpu.async_copy"(%pb, %b) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<32x64x!tile.ptr<f16>, #B>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>) -> ()
  "tilegpu.async_commit_group"() : () -> ()
  "tilegpu.async_wait"() {num = 0 : i32} : () -> ()
  %d = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32, tilegpu.cp_async_operands, tilegpu.no_proxy_fence} : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  "tilegpu.local_dealloc"(%a) : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #SA, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%b) : (!tilegpu.memdesc<array<i64: 32, 64>, f16, #SB, 1 : i32>) -> ()
  %p = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C>
  "tile.store"(%p, %d) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
}

// -----

// A warp-specialized consumer's dot on a TMA slot (the async proxy wrote it: nothing to
// fence), which it releases with an mbarrier arrive: the pass knows the barrier ops, so the
// dot is marked and its rule emits no fence (before, the unknown arrive left the kernel alone
// and every wgmma fenced).
// CHECK-LABEL: func.func @tma_slot_released(
// CHECK-NOT: tilegpu.proxy_fence
// CHECK: "tilegpu.warpgroup_dot"({{.+}}tilegpu.writers_fence
// CHECK: "tilegpu.mbarrier_arrive"
// LLVM-LABEL: gpu.func @tma_slot_released(
// LLVM-NOT: nvvm.fence.proxy
// LLVM: wgmma.mma_async
// LLVM: gpu.return
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
func.func @tma_slot_released(%d: !tile.ptr<i8> {tile.tma}, %out: !tile.ptr<f32>, %r: i32) attributes {tile.kernel} {
  %c = arith.constant dense<0.0> : tensor<64x64xf32, #C>
  %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>
  %full = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
  %empty = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>
  "tilegpu.mbarrier_init"(%full) {count = 1 : i32} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
  "tilegpu.mbarrier_init"(%empty) {count = 4 : i32} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
  "tilegpu.tma_load"(%d, %buf, %full, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0>} : (!tile.ptr<i8>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32, i32) -> ()
  "tilegpu.mbarrier_wait"(%full, %r) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>, i32) -> ()
  %dd = "tilegpu.warpgroup_dot"(%buf, %buf, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  "tilegpu.mbarrier_arrive"(%empty) {operandSegmentSizes = array<i32: 1, 0>} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
  "tilegpu.mbarrier_inval"(%full) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
  "tilegpu.mbarrier_inval"(%empty) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%full) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
  "tilegpu.local_dealloc"(%empty) : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 1 : i32>) -> ()
  %p = "tile.splat"(%out) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>, #C>
  "tile.store"(%p, %dd) : (tensor<64x64x!tile.ptr<f32>, #C>, tensor<64x64xf32, #C>) -> ()
  return
}
}
