// RUN: tilework-opt %s --split-input-file --tilegpu-stream-pipeline --target gfx942 | FileCheck %s
// RUN: tilework-opt %s --split-input-file --pass-pipeline tilegpu-stream-pipeline,tilegpu-allocate-shared,tilegpu-insert-barriers --target gfx942 | FileCheck %s --check-prefix=BAR

// AMD's stream pipelining: the operand loads of iteration i + step are issued into registers
// (under one scf.if: past the end nothing is loaded) before the LDS reads and the dot of
// iteration i, and stored to the other slot of a double buffer after the dot; the prologue
// loads iteration lb into slot 0; the read and write slots swap each iteration.
// CHECK-LABEL: func.func @gemm(
// CHECK: %[[A:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 32, 16>, f16, #tilegpu.swizzled_shared<{{.*}}>, 2 : i32>
// CHECK: %[[B:.+]] = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 16, 32>, f16, #tilegpu.swizzled_shared<{{.*}}>, 2 : i32>
// CHECK: %[[V0:.+]] = arith.cmpi slt, %c0_i32, %arg2 : i32
// CHECK: %[[X0:.+]]:2 = scf.if %[[V0]]
// CHECK-NEXT: "tile.load"(%arg0)
// CHECK-NEXT: "tile.load"(%arg1)
// CHECK: } else {
// CHECK: %[[S0:.+]] = "tilegpu.memdesc_index"(%[[A]], %[[Z:.+]]) :
// CHECK-NEXT: "tilegpu.local_store"(%[[X0]]#0, %[[S0]])
// CHECK: "tilegpu.local_store"(%[[X0]]#1,
// CHECK: %[[PA:.+]] = "tile.addptr"(%arg0, %arg3)
// CHECK: %[[PB:.+]] = "tile.addptr"(%arg1, %arg4)
// CHECK: scf.for %[[I:.+]] = %c0_i32 to %arg2 step %c16_i32 iter_args(%[[ACC:.+]] = %cst, %[[AP:.+]] = %[[PA]], %[[BP:.+]] = %[[PB]], %[[RD:.+]] = %[[Z]], %[[WR:.+]] = %c1_i32)
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[I]], %c16_i32 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[NEXT]], %arg2 : i32
// CHECK-NEXT: %[[X:.+]]:2 = scf.if %[[V]]
// CHECK-NEXT: "tile.load"(%[[AP]])
// CHECK-NEXT: "tile.load"(%[[BP]])
// CHECK: %[[RA:.+]] = "tilegpu.memdesc_index"(%[[A]], %[[RD]]) {tilegpu.stream_slot = "read"}
// CHECK-NEXT: %[[LA:.+]] = "tilegpu.local_load"(%[[RA]]) {{.*}} -> tensor<32x16xf16, #tilegpu.dot_operand<0
// CHECK: %[[RB:.+]] = "tilegpu.memdesc_index"(%[[B]], %[[RD]]) {tilegpu.stream_slot = "read"}
// CHECK-NEXT: %[[LB:.+]] = "tilegpu.local_load"(%[[RB]]) {{.*}} -> tensor<16x32xf16, #tilegpu.dot_operand<1
// CHECK-NEXT: %[[D:.+]] = "tile.dot"(%[[LA]], %[[LB]], %[[ACC]])
// CHECK-NEXT: %[[WA:.+]] = "tilegpu.memdesc_index"(%[[A]], %[[WR]]) {tilegpu.stream_slot = "write"}
// CHECK-NEXT: "tilegpu.local_store"(%[[X]]#0, %[[WA]])
// CHECK-NEXT: %[[WB:.+]] = "tilegpu.memdesc_index"(%[[B]], %[[WR]]) {tilegpu.stream_slot = "write"}
// CHECK-NEXT: "tilegpu.local_store"(%[[X]]#1, %[[WB]])
// CHECK-NEXT: %[[NA:.+]] = "tile.addptr"(%[[AP]], %arg3)
// CHECK-NEXT: %[[NB:.+]] = "tile.addptr"(%[[BP]], %arg4)
// CHECK-NEXT: scf.yield %[[D]], %[[NA]], %[[NB]], %[[WR]], %[[RD]]
// CHECK: "tilegpu.local_dealloc"(%[[A]])
// CHECK-NEXT: "tilegpu.local_dealloc"(%[[B]])
// CHECK-NOT: tilegpu.convert_layout

// tilegpu-insert-barriers: one barrier per iteration, before the reads (the read and write
// slots are different buffers within an iteration; the previous iteration's stores and
// reads are both ordered by it)
// BAR-LABEL: func.func @gemm(
// BAR: scf.for
// BAR-NOT: "tilegpu.barrier"
// BAR: "tilegpu.memdesc_index"({{.*}}) {tilegpu.stream_slot = "read"}
// BAR-NEXT: "tilegpu.barrier"() : () -> ()
// BAR-NEXT: "tilegpu.local_load"
// BAR-NOT: "tilegpu.barrier"
// BAR: scf.yield
#BA = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 32, 2>, array<i32: 1, 1>, array<i32: 1, 0>>
#BB = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 16, 4>, array<i32: 1, 1>, array<i32: 1, 0>>
#M = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#DA = #tilegpu.dot_operand<0 : i32, #M, 4 : i32>
#DB = #tilegpu.dot_operand<1 : i32, #M, 4 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @gemm(%pa: tensor<32x16x!tile.ptr<f16>, #BA>, %pb: tensor<16x32x!tile.ptr<f16>, #BB>, %n: i32, %da: tensor<32x16xi32, #BA>, %db: tensor<16x32xi32, #BB>) -> tensor<32x32xf32, #M> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    %acc0 = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #M>
    %r:3 = scf.for %i = %c0 to %n step %c16 iter_args(%acc = %acc0, %a_ptrs = %pa, %b_ptrs = %pb) -> (tensor<32x32xf32, #M>, tensor<32x16x!tile.ptr<f16>, #BA>, tensor<16x32x!tile.ptr<f16>, #BB>) : i32 {
      %a = "tile.load"(%a_ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x16x!tile.ptr<f16>, #BA>) -> tensor<32x16xf16, #BA>
      %b = "tile.load"(%b_ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x32x!tile.ptr<f16>, #BB>) -> tensor<16x32xf16, #BB>
      %ca = "tilegpu.convert_layout"(%a) : (tensor<32x16xf16, #BA>) -> tensor<32x16xf16, #DA>
      %cb = "tilegpu.convert_layout"(%b) : (tensor<16x32xf16, #BB>) -> tensor<16x32xf16, #DB>
      %d = "tile.dot"(%ca, %cb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16, #DA>, tensor<16x32xf16, #DB>, tensor<32x32xf32, #M>) -> tensor<32x32xf32, #M>
      %na = "tile.addptr"(%a_ptrs, %da) : (tensor<32x16x!tile.ptr<f16>, #BA>, tensor<32x16xi32, #BA>) -> tensor<32x16x!tile.ptr<f16>, #BA>
      %nb = "tile.addptr"(%b_ptrs, %db) : (tensor<16x32x!tile.ptr<f16>, #BB>, tensor<16x32xi32, #BB>) -> tensor<16x32x!tile.ptr<f16>, #BB>
      scf.yield %d, %na, %nb : tensor<32x32xf32, #M>, tensor<32x16x!tile.ptr<f16>, #BA>, tensor<16x32x!tile.ptr<f16>, #BB>
    }
    return %r#0 : tensor<32x32xf32, #M>
  }
}

// -----

// tile.num_stages = 1 on the loop: left alone.
// CHECK-LABEL: func.func @one_stage(
// CHECK-NOT: tilegpu.local_alloc
// CHECK: "tilegpu.convert_layout"
// BAR-LABEL: func.func @one_stage(
#BA = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 32, 2>, array<i32: 1, 1>, array<i32: 1, 0>>
#BB = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 16, 4>, array<i32: 1, 1>, array<i32: 1, 0>>
#M = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#DA = #tilegpu.dot_operand<0 : i32, #M, 4 : i32>
#DB = #tilegpu.dot_operand<1 : i32, #M, 4 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @one_stage(%pa: tensor<32x16x!tile.ptr<f16>, #BA>, %pb: tensor<16x32x!tile.ptr<f16>, #BB>, %n: i32, %da: tensor<32x16xi32, #BA>, %db: tensor<16x32xi32, #BB>) -> tensor<32x32xf32, #M> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    %acc0 = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #M>
    %r:3 = scf.for %i = %c0 to %n step %c16 iter_args(%acc = %acc0, %a_ptrs = %pa, %b_ptrs = %pb) -> (tensor<32x32xf32, #M>, tensor<32x16x!tile.ptr<f16>, #BA>, tensor<16x32x!tile.ptr<f16>, #BB>) : i32 {
      %a = "tile.load"(%a_ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x16x!tile.ptr<f16>, #BA>) -> tensor<32x16xf16, #BA>
      %b = "tile.load"(%b_ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x32x!tile.ptr<f16>, #BB>) -> tensor<16x32xf16, #BB>
      %ca = "tilegpu.convert_layout"(%a) : (tensor<32x16xf16, #BA>) -> tensor<32x16xf16, #DA>
      %cb = "tilegpu.convert_layout"(%b) : (tensor<16x32xf16, #BB>) -> tensor<16x32xf16, #DB>
      %d = "tile.dot"(%ca, %cb, %acc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16, #DA>, tensor<16x32xf16, #DB>, tensor<32x32xf32, #M>) -> tensor<32x32xf32, #M>
      %na = "tile.addptr"(%a_ptrs, %da) : (tensor<32x16x!tile.ptr<f16>, #BA>, tensor<32x16xi32, #BA>) -> tensor<32x16x!tile.ptr<f16>, #BA>
      %nb = "tile.addptr"(%b_ptrs, %db) : (tensor<16x32x!tile.ptr<f16>, #BB>, tensor<16x32xi32, #BB>) -> tensor<16x32x!tile.ptr<f16>, #BB>
      scf.yield %d, %na, %nb : tensor<32x32xf32, #M>, tensor<32x16x!tile.ptr<f16>, #BA>, tensor<16x32x!tile.ptr<f16>, #BB>
    } {tile.num_stages = 1 : i32}
    return %r#0 : tensor<32x32xf32, #M>
  }
}

// -----

// The LDS read of a prefetched operand sits where its conversion was, next to its dot, not at
// the loop's top: ops before the dot (here the accumulator's scaling; attention's scores and
// softmax) do not hold the operand's registers.  The barrier moves with the read.
// CHECK-LABEL: func.func @late_read(
// CHECK: scf.for
// CHECK: "tile.load"
// CHECK: %[[SC:.+]] = arith.mulf
// CHECK-NEXT: %[[R:.+]] = "tilegpu.memdesc_index"({{.*}}) {tilegpu.stream_slot = "read"}
// CHECK-NEXT: %[[L:.+]] = "tilegpu.local_load"(%[[R]])
// CHECK-NEXT: "tile.dot"(%arg0, %[[L]], %[[SC]])
// BAR-LABEL: func.func @late_read(
// BAR: scf.for
// BAR-NOT: "tilegpu.barrier"
// BAR: arith.mulf
// BAR-NEXT: "tilegpu.memdesc_index"({{.*}}) {tilegpu.stream_slot = "read"}
// BAR-NEXT: "tilegpu.barrier"() : () -> ()
// BAR-NEXT: "tilegpu.local_load"
// BAR-NOT: "tilegpu.barrier"
// BAR: scf.yield
#BB = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 16, 4>, array<i32: 1, 1>, array<i32: 1, 0>>
#M = #tilegpu.mfma<array<i32: 1, 1>, array<i32: 32, 32>, false>
#DA = #tilegpu.dot_operand<0 : i32, #M, 4 : i32>
#DB = #tilegpu.dot_operand<1 : i32, #M, 4 : i32>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @late_read(%ca: tensor<32x16xf16, #DA>, %pb: tensor<16x32x!tile.ptr<f16>, #BB>, %n: i32, %db: tensor<16x32xi32, #BB>) -> tensor<32x32xf32, #M> attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    %acc0 = arith.constant dense<1.000000e+00> : tensor<32x32xf32, #M>
    %r:2 = scf.for %i = %c0 to %n step %c16 iter_args(%acc = %acc0, %b_ptrs = %pb) -> (tensor<32x32xf32, #M>, tensor<16x32x!tile.ptr<f16>, #BB>) : i32 {
      %b = "tile.load"(%b_ptrs) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x32x!tile.ptr<f16>, #BB>) -> tensor<16x32xf16, #BB>
      %sc = arith.mulf %acc, %acc : tensor<32x32xf32, #M>
      %cb = "tilegpu.convert_layout"(%b) : (tensor<16x32xf16, #BB>) -> tensor<16x32xf16, #DB>
      %d = "tile.dot"(%ca, %cb, %sc) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<32x16xf16, #DA>, tensor<16x32xf16, #DB>, tensor<32x32xf32, #M>) -> tensor<32x32xf32, #M>
      %nb = "tile.addptr"(%b_ptrs, %db) : (tensor<16x32x!tile.ptr<f16>, #BB>, tensor<16x32xi32, #BB>) -> tensor<16x32x!tile.ptr<f16>, #BB>
      scf.yield %d, %nb : tensor<32x32xf32, #M>, tensor<16x32x!tile.ptr<f16>, #BB>
    }
    return %r#0 : tensor<32x32xf32, #M>
  }
}
