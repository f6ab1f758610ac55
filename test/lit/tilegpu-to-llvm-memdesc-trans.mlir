// RUN: tilework-opt %s --tilegpu-vector-width --tilegpu-allocate-shared --tilegpu-insert-barriers --tilegpu-to-llvm --target sm_90a | FileCheck %s

// tilegpu.memdesc_trans lowers to its buffer's address: the reads through the [64, 8] view
// (nvmma_shared transposed) address buffer 1 of the double buffer (the kernel's shared memory
// + 1 KiB) as the stores of the [8, 64] tile did, after the barrier the pass placed between
// them (a read through the view is a read of the buffer).
// CHECK-LABEL: gpu.func @view(
// CHECK: %[[SMEM:.+]] = llvm.mlir.addressof @tilework_smem : !llvm.ptr<3>
// CHECK: %[[BYTES:.+]] = arith.muli %{{.+}}, %c1024_i32 : i32
// CHECK-NEXT: %[[B1:.+]] = llvm.getelementptr %[[SMEM]][%[[BYTES]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-COUNT-2: llvm.store %{{.+}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: llvm.mlir.addressof
// CHECK-COUNT-16: llvm.getelementptr %[[B1]][%{{.+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK-NOT: llvm.getelementptr {{.+}} !llvm.ptr<3>
// CHECK: gpu.return
#A = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 1, 1>, array<i32: 1, 0>>
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#ST = #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @view(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 8 : i32} : () -> tensor<8xi32, #tilegpu.slice<1 : i32, #A>>
    %c = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32, #tilegpu.slice<0 : i32, #A>>
    %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<8xi32, #tilegpu.slice<1 : i32, #A>>) -> tensor<8x1xi32, #A>
    %c2 = "tile.expand_dims"(%c) {axis = 0 : i32} : (tensor<64xi32, #tilegpu.slice<0 : i32, #A>>) -> tensor<1x64xi32, #A>
    %rb = "tile.broadcast"(%r2) : (tensor<8x1xi32, #A>) -> tensor<8x64xi32, #A>
    %cb = "tile.broadcast"(%c2) : (tensor<1x64xi32, #A>) -> tensor<8x64xi32, #A>
    %k64 = arith.constant dense<64> : tensor<8x64xi32, #A>
    %rm = arith.muli %rb, %k64 : tensor<8x64xi32, #A>
    %idx = arith.addi %rm, %cb : tensor<8x64xi32, #A>
    %xs = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<8x64x!tile.ptr<f16>, #A>
    %xp = "tile.addptr"(%xs, %idx) : (tensor<8x64x!tile.ptr<f16>, #A>, tensor<8x64xi32, #A>) -> tensor<8x64x!tile.ptr<f16>, #A>
    %v = "tile.load"(%xp) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8x64x!tile.ptr<f16>, #A>) -> tensor<8x64xf16, #A>
    %buf = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 8, 64>, f16, #S, 2 : i32>
    %i = arith.constant 1 : i32
    %b = "tilegpu.memdesc_index"(%buf, %i) : (!tilegpu.memdesc<array<i64: 8, 64>, f16, #S, 2 : i32>, i32) -> !tilegpu.memdesc<array<i64: 8, 64>, f16, #S, 1 : i32>
    "tilegpu.local_store"(%v, %b) : (tensor<8x64xf16, #A>, !tilegpu.memdesc<array<i64: 8, 64>, f16, #S, 1 : i32>) -> ()
    %t = "tilegpu.memdesc_trans"(%b) : (!tilegpu.memdesc<array<i64: 8, 64>, f16, #S, 1 : i32>) -> !tilegpu.memdesc<array<i64: 64, 8>, f16, #ST, 1 : i32>
    %y = "tilegpu.local_load"(%t) : (!tilegpu.memdesc<array<i64: 64, 8>, f16, #ST, 1 : i32>) -> tensor<64x8xf16, #tilegpu.blocked<array<i32: 1, 8>, array<i32: 32, 1>, array<i32: 1, 1>, array<i32: 1, 0>>>
    "tilegpu.local_dealloc"(%buf) : (!tilegpu.memdesc<array<i64: 8, 64>, f16, #S, 2 : i32>) -> ()
    return
  }
}
