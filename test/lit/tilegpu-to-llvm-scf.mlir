// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-vector-width --target sm_90a | FileCheck %s --check-prefix=VW

// scf.for, scf.if and scf.while are rebuilt per thread: every tile they carry (iter args,
// results, block arguments, yielded values) becomes the scalars one thread holds, in order,
// and pointers become !llvm.ptr<1>.  With 512 fp32 over 128 threads in chunks of 4, a tile
// is 4 f32 per thread.
//
// Vector widths: the axis analysis sees through the loop: the induction variable is a multiple of
// gcd(lower bound, step), and a carried pointer advanced by 512 elements each iteration stays
// 16-byte aligned (fixed point over the yielded values), so the loads in the loop keep their
// 16-byte width; advanced by 1 element, it does not (width 1).

// CHECK-LABEL: gpu.func @carried_pointer(
// CHECK-SAME: %[[X:[^:]+]]: !llvm.ptr<1>, %[[O:[^:]+]]: !llvm.ptr<1>, %[[N:[^:]+]]: i32)
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[R:.+]]:6 = scf.for %[[K:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[A0:.+]] = %[[Z]], %[[A1:.+]] = %[[Z]], %[[A2:.+]] = %[[Z]], %[[A3:.+]] = %[[Z]], %[[C:.+]] = %{{.+}}, %[[P:.+]] = %[[X]]) -> (f32, f32, f32, f32, i32, !llvm.ptr<1>)  : i32 {
// CHECK: %[[G:.+]] = llvm.getelementptr %[[P]][%{{.+}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: %[[V:.+]] = llvm.load %[[G]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: %[[E0:.+]] = llvm.extractelement %[[V]]
// CHECK: %[[S0:.+]] = arith.addf %[[A0]], %[[E0]] : f32
// CHECK: %[[S3:.+]] = arith.addf %[[A3]], %{{.+}} : f32
// CHECK: %[[C2:.+]] = arith.addi %[[C]], %{{.+}} : i32
// CHECK: %[[P2:.+]] = llvm.getelementptr %[[P]][%{{.+}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK-NEXT: scf.yield %[[S0]], %{{.+}}, %{{.+}}, %[[S3]], %[[C2]], %[[P2]] : f32, f32, f32, f32, i32, !llvm.ptr<1>
// CHECK: llvm.insertelement %[[R]]#0,
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>

// VW-LABEL: func.func @carried_pointer(
// VW: scf.for
// VW: "tile.load"({{.*}}tilegpu.vector_width = 4 : i32
// VW: scf.yield

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @carried_pointer(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c512 = arith.constant 512 : i32
    %zero = arith.constant dense<0.0> : tensor<512xf32, #L>
    %r = "tile.make_range"() {start = 0 : i32, end = 512 : i32} : () -> tensor<512xi32, #L>
    %res:3 = scf.for %k = %c0 to %n step %c512 iter_args(%acc = %zero, %cnt = %c0, %p = %x) -> (tensor<512xf32, #L>, i32, !tile.ptr<f32>) : i32 {
      %ps = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #L>
      %pa = "tile.addptr"(%ps, %r) : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xi32, #L>) -> tensor<512x!tile.ptr<f32>, #L>
      %v = "tile.load"(%pa) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<f32>, #L>) -> tensor<512xf32, #L>
      %acc2 = arith.addf %acc, %v : tensor<512xf32, #L>
      %c1 = arith.constant 1 : i32
      %cnt2 = arith.addi %cnt, %c1 : i32
      %p2 = "tile.addptr"(%p, %c512) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      scf.yield %acc2, %cnt2, %p2 : tensor<512xf32, #L>, i32, !tile.ptr<f32>
    }
    %os = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #L>
    %oa = "tile.addptr"(%os, %r) : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xi32, #L>) -> tensor<512x!tile.ptr<f32>, #L>
    "tile.store"(%oa, %res#0) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xf32, #L>) -> ()
    return
  }
}

// -----

// VW-LABEL: func.func @misaligned_walk(
// VW: scf.for
// VW: "tile.load"({{.*}}tilegpu.vector_width = 1 : i32
// VW: scf.yield

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @misaligned_walk(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = "tile.make_range"() {start = 0 : i32, end = 512 : i32} : () -> tensor<512xi32, #L>
    %res = scf.for %k = %c0 to %n step %c1 iter_args(%p = %x) -> (!tile.ptr<f32>) : i32 {
      %ps = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #L>
      %pa = "tile.addptr"(%ps, %r) : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xi32, #L>) -> tensor<512x!tile.ptr<f32>, #L>
      %v = "tile.load"(%pa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<512x!tile.ptr<f32>, #L>) -> tensor<512xf32, #L>
      "tile.store"(%pa, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xf32, #L>) -> ()
      %p2 = "tile.addptr"(%p, %c1) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
      scf.yield %p2 : !tile.ptr<f32>
    }
    return
  }
}

// -----

// scf.if yielding a tile and a scalar: 4 f32 and one i32 per thread.
// CHECK-LABEL: gpu.func @branch(
// CHECK: %[[IF:.+]]:5 = scf.if %{{.+}} -> (f32, f32, f32, f32, i32) {
// CHECK: %[[T0:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: scf.yield %[[T0]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : f32, f32, f32, f32, i32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : f32, f32, f32, f32, i32
// CHECK-NEXT: }
// CHECK: llvm.insertelement %[[IF]]#0,
// CHECK: llvm.inline_asm has_side_effects {{.*}}"@$0 st.global.b32 [$1], $2;"{{.*}}, %[[IF]]#4 : (i1, !llvm.ptr<1>, i32) -> ()

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @branch(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %r = "tile.make_range"() {start = 0 : i32, end = 512 : i32} : () -> tensor<512xi32, #L>
    %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xs, %r) : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xi32, #L>) -> tensor<512x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<f32>, #L>) -> tensor<512xf32, #L>
    %c = arith.cmpi sgt, %n, %c0 : i32
    %y:2 = scf.if %c -> (tensor<512xf32, #L>, i32) {
      %t = arith.mulf %v, %v : tensor<512xf32, #L>
      scf.yield %t, %n : tensor<512xf32, #L>, i32
    } else {
      scf.yield %v, %c0 : tensor<512xf32, #L>, i32
    }
    "tile.store"(%xa, %y#0) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xf32, #L>) -> ()
    "tile.store"(%o, %y#1) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// scf.while carrying a tile and a counter: the before block takes and forwards 5 scalars,
// the after block yields 5 back.
// CHECK-LABEL: gpu.func @halve(
// CHECK: %[[W:.+]]:5 = scf.while (%[[B0:.+]] = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %[[BI:.+]] = %{{.+}}) : (f32, f32, f32, f32, i32) -> (f32, f32, f32, f32, i32) {
// CHECK-NEXT: %[[C:.+]] = arith.cmpi slt, %[[BI]], %{{.+}} : i32
// CHECK-NEXT: scf.condition(%[[C]]) %[[B0]], %{{.+}}, %{{.+}}, %{{.+}}, %[[BI]] : f32, f32, f32, f32, i32
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[D0:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %[[DI:.+]]: i32):
// CHECK: %[[H0:.+]] = arith.mulf %[[D0]], %{{.+}} : f32
// CHECK: %[[DI2:.+]] = arith.addi %[[DI]], %{{.+}} : i32
// CHECK-NEXT: scf.yield %[[H0]], %{{.+}}, %{{.+}}, %{{.+}}, %[[DI2]] : f32, f32, f32, f32, i32
// CHECK: llvm.insertelement %[[W]]#0,

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @halve(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %half = arith.constant dense<0.5> : tensor<512xf32, #L>
    %r = "tile.make_range"() {start = 0 : i32, end = 512 : i32} : () -> tensor<512xi32, #L>
    %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<512x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xs, %r) : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xi32, #L>) -> tensor<512x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<f32>, #L>) -> tensor<512xf32, #L>
    %w:2 = scf.while (%a = %v, %i = %c0) : (tensor<512xf32, #L>, i32) -> (tensor<512xf32, #L>, i32) {
      %c = arith.cmpi slt, %i, %n : i32
      scf.condition(%c) %a, %i : tensor<512xf32, #L>, i32
    } do {
    ^bb0(%b: tensor<512xf32, #L>, %j: i32):
      %h = arith.mulf %b, %half : tensor<512xf32, #L>
      %j2 = arith.addi %j, %c1 : i32
      scf.yield %h, %j2 : tensor<512xf32, #L>, i32
    }
    "tile.store"(%xa, %w#0) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<512x!tile.ptr<f32>, #L>, tensor<512xf32, #L>) -> ()
    return
  }
}
