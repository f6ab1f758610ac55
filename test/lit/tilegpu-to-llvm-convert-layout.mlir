// RUN: tilework-opt %s --split-input-file | FileCheck %s --check-prefix=PRINT
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD
// RUN: env TILEWORK_STMATRIX=1 tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s --check-prefix=STM

// tilegpu.convert_layout takes the path the two layouts' linear maps allow (plan_conversion):
// nothing when the maps are equal, warp shuffles (gpu.shuffle idx, no barrier) when every
// element stays in its warp, else shared memory in an xor-swizzled layout (stores, barrier,
// loads; vectors where a thread holds consecutive elements).  The encodings print and parse
// back in MLIR's generic attribute syntax.

// PRINT-LABEL: func.func @encodings(
// PRINT-SAME: tensor<32x16xf32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>>
// PRINT-SAME: tensor<64x32xf32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 16>>>
// PRINT-SAME: tensor<32x32xf16, #tilegpu.dot_operand<0 : i32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>, 2 : i32>>
// PRINT-SAME: tensor<32x32xf16, #tilegpu.dot_operand<1 : i32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>, 2 : i32>>
// PRINT-SAME: tensor<32x64xf16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>>
// PRINT-SAME: tensor<64x64xf16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>>
// PRINT-SAME: tensor<32x32xf32, #tilegpu.wmma<1 : i32, array<i32: 2, 2>>>
// PRINT-SAME: tensor<32x16xf16, #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<2 : i32, array<i32: 2, 2>>, 8 : i32>>
// (not kernels: tilegpu-to-llvm drops them)
// CHECK-NOT: @encodings
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @encodings(
      %a: tensor<32x16xf32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>>,
      %b: tensor<64x32xf32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 16>>>,
      %c: tensor<32x32xf16, #tilegpu.dot_operand<0 : i32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>, 2 : i32>>,
      %d: tensor<32x32xf16, #tilegpu.dot_operand<1 : i32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>, 2 : i32>>,
      %e: tensor<32x64xf16, #tilegpu.swizzled_shared<8 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>>,
      %f: tensor<64x64xf16, #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>>,
      %i: tensor<32x32xf32, #tilegpu.wmma<1 : i32, array<i32: 2, 2>>>,
      %j: tensor<32x16xf16, #tilegpu.dot_operand<1 : i32, #tilegpu.wmma<2 : i32, array<i32: 2, 2>>, 8 : i32>>) {
    return
  }
}

// -----

// PRINT-LABEL: func.func @amd_encodings(
// PRINT-SAME: tensor<64x64xf32, #tilegpu.mfma<array<i32: 2, 2>, array<i32: 32, 32>, true>>
// PRINT-SAME: tensor<64x32xf16, #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 2, 2>, array<i32: 16, 16>, false>, 4 : i32>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @amd_encodings(
      %g: tensor<64x64xf32, #tilegpu.mfma<array<i32: 2, 2>, array<i32: 32, 32>, true>>,
      %h: tensor<64x32xf16, #tilegpu.dot_operand<0 : i32, #tilegpu.mfma<array<i32: 2, 2>, array<i32: 16, 16>, false>, 4 : i32>>) {
    return
  }
}

// -----

// The same warps, other lanes and registers: within warps.  Each dst register takes two
// shuffles (the source register depends on the receiving lane's bit 0) and a select; no
// shared memory is allocated for it.
// CHECK-LABEL: gpu.func @within_warps(
// CHECK-SAME: tilegpu.shared = 0 : i32
// CHECK-NOT: gpu.barrier
// CHECK-NOT: !llvm.ptr<3>
// CHECK: %[[SRC:.+]] = arith.addi
// CHECK: %[[WANT:.+]] = arith.cmpi eq
// CHECK-NEXT: gpu.shuffle  idx %{{.+}}, %[[SRC]], %c32_i32 : f32
// CHECK-NEXT: gpu.shuffle  idx %{{.+}}, %[[SRC]], %c32_i32 : f32
// CHECK-NEXT: arith.select %[[WANT]]
// CHECK-COUNT-6: gpu.shuffle  idx
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
#B = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 8, 4>, array<i32: 4, 1>, array<i32: 1, 0>>
#W = #tilegpu.blocked<array<i32: 2, 2>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @within_warps(%x: f32) attributes {tile.kernel} {
    %t = "tile.splat"(%x) : (f32) -> tensor<32x16xf32, #B>
    %w = "tilegpu.convert_layout"(%t) : (tensor<32x16xf32, #B>) -> tensor<32x16xf32, #W>
    return
  }
}

// -----

// Equal maps under two encodings (size_per_thread 8 on a dim of 4 is clipped to 4): the
// registers are relabelled, no instruction.
// CHECK-LABEL: gpu.func @same_map(
// CHECK-SAME: tilegpu.shared = 0 : i32
// CHECK-NOT: arith.
// CHECK: gpu.return
#B = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 32, 1>, array<i32: 4, 1>, array<i32: 1, 0>>
#C = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 32, 1>, array<i32: 4, 1>, array<i32: 0, 1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @same_map(%x: f32) attributes {tile.kernel} {
    %t = "tile.splat"(%x) : (f32) -> tensor<128x4xf32, #B>
    %c = "tilegpu.convert_layout"(%t) : (tensor<128x4xf32, #B>) -> tensor<128x4xf32, #C>
    return
  }
}

// -----

// mma accumulator -> row-major blocked: the warps differ, so through shared memory.  The
// planner picks the swizzle vec 4, per_phase 1, max_phase 4 (row r's 4-element groups xor
// r % 4): the mma side stores its column pairs as 8-byte vectors, the blocked side loads
// 16-byte vectors, both free of bank conflicts.  One barrier (the buffer's first user).
// CHECK-LABEL: gpu.func @mma_to_blocked(
// CHECK-SAME: tilegpu.shared = 8192 : i32
// CHECK: %[[SMEM:.+]] = llvm.mlir.addressof @tilework_smem : !llvm.ptr<3>
// CHECK-NOT: gpu.barrier
// CHECK: arith.xori
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-COUNT-7: llvm.store %{{.+}}, %{{.+}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK: gpu.return
#B = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 2, 16>, array<i32: 4, 1>, array<i32: 1, 0>>
#M = #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @mma_to_blocked(%x: f32) attributes {tile.kernel} {
    %t = "tile.splat"(%x) : (f32) -> tensor<32x64xf32, #M>
    %b = "tilegpu.convert_layout"(%t) : (tensor<32x64xf32, #M>) -> tensor<32x64xf32, #B>
    return
  }
}

// -----

// Row-major f16 blocked -> mma operand A -> wgmma accumulator layout: two shared-memory round
// trips; the second waits for the first one's readers (a barrier before its stores).  The
// operand and the accumulator are read with ldmatrix.x4 (their fragments are 8x8 matrices of
// the swizzled buffer).  With CompileOptions.stmatrix (TILEWORK_STMATRIX=1) the operand is
// written with stmatrix.x4 (sm_90): one store of four 32-bit words where 32-bit stores took four.
// CHECK-LABEL: gpu.func @blocked_to_operand_to_wgmma(
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: llvm.load
// CHECK: gpu.barrier
// CHECK-NEXT: llvm.mlir.poison : vector<2xf16>
// CHECK: llvm.store {{.+}} !llvm.ptr<3>
// CHECK-NOT: nvvm.stmatrix
// CHECK: gpu.barrier
// CHECK: nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK: gpu.return
// STM-LABEL: gpu.func @blocked_to_operand_to_wgmma(
// STM: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// STM: gpu.barrier
// STM: nvvm.ldmatrix
// STM: gpu.barrier
// STM-NEXT: llvm.mlir.poison : vector<2xf16>
// STM-NOT: llvm.store
// STM: nvvm.stmatrix %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// STM-NOT: llvm.store
// STM: gpu.barrier
// STM: nvvm.ldmatrix
// STM: gpu.return
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 8, 4>, array<i32: 4, 1>, array<i32: 1, 0>>
#A = #tilegpu.dot_operand<0 : i32, #tilegpu.mma<2 : i32, array<i32: 2, 2>, array<i32: 16, 8>>, 2 : i32>
#G = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 16>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @blocked_to_operand_to_wgmma(%x: f16) attributes {tile.kernel} {
    %t = "tile.splat"(%x) : (f16) -> tensor<64x32xf16, #B>
    %a = "tilegpu.convert_layout"(%t) : (tensor<64x32xf16, #B>) -> tensor<64x32xf16, #A>
    %g = "tilegpu.convert_layout"(%a) : (tensor<64x32xf16, #A>) -> tensor<64x32xf16, #G>
    return
  }
}

// -----

// On gfx942, blocked -> MFMA 32x32 accumulator (transposed: each lane holds 4 consecutive
// columns): the warps differ, through shared memory (LDS).
// AMD-LABEL: gpu.func @blocked_to_mfma(
// (each side's thread offset through an empty sideeffect asm, so that LLVM computes the
// accesses' offsets beside them rather than hoisting each out of a loop into a VGPR)
// AMD: %[[ST:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "", "=v,0" %{{.+}} : (i32) -> i32
// AMD-NEXT: llvm.mlir.poison
// AMD: llvm.getelementptr %{{.+}}[%[[ST]]]
// AMD-NEXT: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// AMD: arith.addi %[[ST]], %c1024_i32
// AMD: gpu.barrier
// AMD-NEXT: %[[LD:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "", "=v,0" %{{.+}} : (i32) -> i32
// AMD-NEXT: llvm.getelementptr %{{.+}}[%[[LD]]]
// AMD-NEXT: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// AMD: arith.xori %[[LD]], %c8_i32
// AMD-NOT: gpu.barrier
// AMD: gpu.return
#B = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 16>, array<i32: 4, 1>, array<i32: 1, 0>>
#F = #tilegpu.mfma<array<i32: 2, 2>, array<i32: 32, 32>, true>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @blocked_to_mfma(%x: f32) attributes {tile.kernel} {
    %t = "tile.splat"(%x) : (f32) -> tensor<64x64xf32, #B>
    %f = "tilegpu.convert_layout"(%t) : (tensor<64x64xf32, #B>) -> tensor<64x64xf32, #F>
    return
  }
}

// -----

// 8-bit elements move as 32-bit words by a word exchange (dialects/word_exchange.py): wgmma
// m64n32k32's fp8 accumulator (a thread's pairs of columns 8 apart) to the next wgmma's
// register A fragment (4 consecutive-k bytes a register), one shuffle a dst word (4 a thread).
// A thread's 4 bytes (columns 2t, 2t+1, 8+2t, 9+2t of a row) form a src word.  Each round the
// sender prmts 2 bytes of each of two src words into the word its one receiver needs (bytes
// 0,1 / 4,5 = 0x5410, or 2,3 / 6,7 = 0x7632, by the sender's lane bit 0 (times 0x2222, XORed
// in; added where the bits are disjoint)), the receiver's source lane 2 (t % 2) + (t / 2) (+1
// the second round) of its quad; then each dst word is a prmt of the two received words whose
// selector the receiving lane's bit 1 XORs (times 0x4444: 0x5410 <-> 0x1054).  No shared
// memory, no barrier.  AMD moves a byte at a time (no prmt).
// CHECK-LABEL: gpu.func @fp8_accumulator_to_a(
// CHECK-SAME: tilegpu.shared = 0 : i32
// CHECK-NOT: gpu.barrier
// CHECK: %[[BIT0:.+]] = arith.andi %{{.+}}, %c1_i32
// CHECK: %[[SPOS:.+]] = arith.muli %{{.+}}, %c8738_i32
// CHECK: arith.andi %{{.+}}, %c28_i32
// CHECK-NEXT: %[[SRC:.+]] = arith.addi %{{.+}}, %{{.+}} : i32
// CHECK: %[[RPOS:.+]] = arith.muli %{{.+}}, %c17476_i32
// CHECK-COUNT-2: arith.ori
// CHECK: %[[W0:.+]] = arith.ori
// CHECK-COUNT-2: arith.ori
// CHECK: %[[W1:.+]] = arith.ori
// CHECK-NEXT: %[[SEL0:.+]] = arith.addi %[[SPOS]], %c21520_i32
// CHECK-NEXT: %[[S0:.+]] = llvm.call_intrinsic "llvm.nvvm.prmt"(%[[W0]], %[[W1]], %[[SEL0]])
// CHECK-NEXT: %[[G0:.+]], %{{.+}} = gpu.shuffle  idx %[[S0]], %[[SRC]], %c32_i32 : i32
// CHECK-NEXT: %[[SEL1:.+]] = arith.xori %[[SPOS]], %c30258_i32
// CHECK-NEXT: %[[S1:.+]] = llvm.call_intrinsic "llvm.nvvm.prmt"(%[[W0]], %[[W1]], %[[SEL1]])
// CHECK-NEXT: %[[SRC1:.+]] = arith.xori %[[SRC]], %c1_i32
// CHECK-NEXT: %[[G1:.+]], %{{.+}} = gpu.shuffle  idx %[[S1]], %[[SRC1]], %c32_i32 : i32
// CHECK-COUNT-2: gpu.shuffle  idx
// CHECK-NOT: gpu.shuffle
// CHECK: %[[RSEL:.+]] = arith.xori %[[RPOS]], %c21520_i32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.prmt"(%[[G0]], %[[G1]], %[[RSEL]])
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.prmt"
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// AMD-LABEL: gpu.func @fp8_accumulator_to_a(
// AMD-NOT: prmt
// AMD: gpu.shuffle  idx %{{.+}} : i32
// AMD-NEXT: arith.trunci %{{.+}} : i32 to i8
// AMD: gpu.return
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 32, 32>>
#A = #tilegpu.dot_operand<0 : i32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 32>>, 4 : i32>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @fp8_accumulator_to_a(%x: f8E4M3FN) attributes {tile.kernel} {
    %t = "tile.splat"(%x) : (f8E4M3FN) -> tensor<64x32xf8E4M3FN, #C>
    %a = "tilegpu.convert_layout"(%t) : (tensor<64x32xf8E4M3FN, #C>) -> tensor<64x32xf8E4M3FN, #A>
    return
  }
}
