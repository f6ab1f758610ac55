// RUN: tilework-opt %s --split-input-file --tile-tma-guard --target sm_90a | FileCheck %s
// RUN: env TILEWORK_TMA_STORE_GUARD=0 tilework-opt %s --split-input-file --tile-tma-guard --target sm_90a | FileCheck %s --check-prefix=OFF
// RUN: env TILEWORK_TMA_STORE=unguarded tilework-opt %s --split-input-file --tile-tma-guard --target sm_90a | FileCheck %s --check-prefix=UNGUARDED

// tile-tma-guard (loads, last chunk: the same for a tile.descriptor_load holding its
// block-pointer load, ptr, mask and other, kept where its inner coordinate is a multiple of
// 16 bytes).  Stores: a tile.descriptor_store holding its block-pointer fallback (ptr, mask)
// and the row length (width) stays a TMA store, without the fallback, where the axis analysis
// proves it exact: every coordinate >= 0 (AxisAnalysis.nonneg: program ids, constants >= 0,
// sums, products, quotients, remainders of those, a loop's variable from a start >= 0 by a
// positive step), the inner coordinate and the rows multiples of 16 bytes (divisibility).
// Otherwise it becomes the masked tile.store of the fallback, and a tensor map no op uses
// leaves the parameters with its plan.  `tma_store="unguarded"` keeps every store whose inner
// coordinate is aligned.  A load of a map made in the kernel (tile.make_tensormap) also needs
// that map exact: its base and strides 16-byte multiples (the last two cases).

// CHECK-LABEL: func.func @exact(
// CHECK-SAME: %arg4: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]}
// CHECK: "tile.descriptor_store"(%arg4, %arg0, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32) -> ()
// CHECK-NOT: "tile.store"
func.func @exact(%v: tensor<64x32xbf16>, %p: tensor<64x32x!tile.ptr<bf16>>, %m: tensor<64x32xi1>, %w: i32 {tile.divisibility = 8 : i32}, %d: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c64 = arith.constant 64 : i32
  %c32 = arith.constant 32 : i32
  %c3 = arith.constant 3 : i32
  %a = arith.muli %pid, %c64 : i32
  %b = arith.muli %c3, %c64 : i32
  %r = arith.addi %a, %b : i32
  %c = arith.muli %pid, %c32 : i32
  "tile.descriptor_store"(%d, %v, %r, %c, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  return
}

// -----

// Rows of unknown length (no divisibility on the width): the fallback; the tensor map goes.
// CHECK-LABEL: func.func @row_tail(
// CHECK-SAME: %arg3: i32) attributes {tile.kernel} {
// CHECK: "tile.store"(%arg1, %arg0, %arg2) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xbf16>, tensor<64x32xi1>) -> ()
// CHECK-NOT: descriptor_store
// UNGUARDED-LABEL: func.func @row_tail(
// UNGUARDED: "tile.descriptor_store"(%arg4, %arg0, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
func.func @row_tail(%v: tensor<64x32xbf16>, %p: tensor<64x32x!tile.ptr<bf16>>, %m: tensor<64x32xi1>, %w: i32, %d: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c64 = arith.constant 64 : i32
  %r = arith.muli %pid, %c64 : i32
  %c0 = arith.constant 0 : i32
  "tile.descriptor_store"(%d, %v, %r, %c0, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  return
}

// -----

// Coordinates of unknown sign: an int argument plus a program id's multiple, a difference,
// a negative constant.  Each store is decided alone; the map stays while one TMA store uses
// it.  With the run-time guard (tma_store_guard, the default) a store whose unproven
// coordinates are the only obstacle is `scf.if (those >= 0) { TMA } else { fallback }`,
// marked {tilegpu.tma_store_guard} (tilegpu-warp-specialize counts its branches as one store);
// a constant < 0 is the fallback.  OFF (TILEWORK_TMA_STORE_GUARD=0): the fallback for all three.
// CHECK-LABEL: func.func @signs(
// CHECK-SAME: %arg5: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]}
// CHECK: %[[R:.+]] = arith.addi %arg4, %{{.+}} : i32
// CHECK-NEXT: %[[S:.+]] = arith.subi
// CHECK-NEXT: %[[Z1:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[C1:.+]] = arith.cmpi sge, %[[R]], %[[Z1]] : i32
// CHECK-NEXT: scf.if %[[C1]] {
// CHECK-NEXT: "tile.descriptor_store"(%arg5, %arg0, %[[R]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
// CHECK-NEXT: {{^ *}}} else {
// CHECK-NEXT: "tile.store"(%arg1, %arg0, %arg2)
// CHECK-NEXT: {{^ *}}} {tilegpu.tma_store_guard}
// CHECK-NEXT: %[[Z2:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[C2:.+]] = arith.cmpi sge, %[[S]], %[[Z2]] : i32
// CHECK-NEXT: scf.if %[[C2]] {
// CHECK-NEXT: "tile.descriptor_store"(%arg5, %arg0, %[[S]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
// CHECK-NEXT: {{^ *}}} else {
// CHECK-NEXT: "tile.store"(%arg1, %arg0, %arg2)
// CHECK-NEXT: {{^ *}}} {tilegpu.tma_store_guard}
// CHECK-NEXT: "tile.store"(%arg1, %arg0, %arg2)
// CHECK-NEXT: "tile.descriptor_store"(%arg5, %arg0, {{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
// CHECK-NEXT: return
// OFF-LABEL: func.func @signs(
// OFF-SAME: %arg5: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]}
// OFF: "tile.store"(%arg1, %arg0, %arg2)
// OFF-NEXT: "tile.store"(%arg1, %arg0, %arg2)
// OFF-NEXT: "tile.store"(%arg1, %arg0, %arg2)
// OFF-NEXT: "tile.descriptor_store"(%arg5, %arg0, {{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
// OFF-NEXT: return
// OFF-NOT: scf.if
// UNGUARDED-LABEL: func.func @signs(
// UNGUARDED-COUNT-4: "tile.descriptor_store"
// UNGUARDED-NOT: "tile.store"
func.func @signs(%v: tensor<64x32xbf16>, %p: tensor<64x32x!tile.ptr<bf16>>, %m: tensor<64x32xi1>, %w: i32 {tile.divisibility = 8 : i32}, %r0: i32, %d: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c64 = arith.constant 64 : i32
  %c0 = arith.constant 0 : i32
  %cm16 = arith.constant -16 : i32
  %a = arith.muli %pid, %c64 : i32
  %r = arith.addi %r0, %a : i32
  %s = arith.subi %a, %c64 : i32
  "tile.descriptor_store"(%d, %v, %r, %c0, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  "tile.descriptor_store"(%d, %v, %s, %c0, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  "tile.descriptor_store"(%d, %v, %a, %cm16, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  "tile.descriptor_store"(%d, %v, %a, %c0, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  return
}

// -----

// An inner coordinate of 4 bf16 elements (8 bytes, not 16): the fallback, also unguarded.
// CHECK-LABEL: func.func @inner_offset(
// CHECK: "tile.store"(%arg1, %arg0, %arg2)
// UNGUARDED-LABEL: func.func @inner_offset(
// UNGUARDED: "tile.store"(%arg1, %arg0, %arg2)
func.func @inner_offset(%v: tensor<64x32xbf16>, %p: tensor<64x32x!tile.ptr<bf16>>, %m: tensor<64x32xi1>, %w: i32 {tile.divisibility = 8 : i32}, %d: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]} {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  "tile.descriptor_store"(%d, %v, %c0, %c4, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  return
}

// -----

// Loops: a variable from 0 by 1 (a range loop), and a grid-stride loop's tile index
// pid + k * num_programs (quotient and remainder of it): all >= 0.  A loop from an int
// argument, or by a runtime step, proves nothing.
// CHECK-LABEL: func.func @loops(
// CHECK: scf.for
// CHECK: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
// CHECK: scf.for
// CHECK: "tile.descriptor_store"({{.*}}array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
// CHECK: scf.for
// CHECK: "tile.store"
// CHECK: scf.for
// CHECK: "tile.store"
func.func @loops(%v: tensor<64x32xbf16>, %p: tensor<64x32x!tile.ptr<bf16>>, %m: tensor<64x32xi1>, %w: i32 {tile.divisibility = 8 : i32}, %n: i32, %d: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %c64 = arith.constant 64 : i32
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %np = "tile.get_num_programs"() {axis = 0 : i32} : () -> i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %r = arith.muli %i, %c64 : i32
    "tile.descriptor_store"(%d, %v, %r, %c0, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  }
  scf.for %k = %c0 to %n step %c1 : i32 {
    %s = arith.muli %k, %np : i32
    %t = arith.addi %pid, %s : i32
    %q = arith.divsi %t, %c4 : i32
    %rr = arith.remsi %t, %n : i32
    %r = arith.muli %q, %c64 : i32
    %c = arith.muli %rr, %c64 : i32
    "tile.descriptor_store"(%d, %v, %r, %c, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  }
  scf.for %j = %n to %c64 step %c1 : i32 {
    %r = arith.muli %j, %c64 : i32
    "tile.descriptor_store"(%d, %v, %r, %c0, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  }
  scf.for %j = %c0 to %c64 step %n : i32 {
    %r = arith.muli %j, %c64 : i32
    "tile.descriptor_store"(%d, %v, %r, %c0, %p, %m, %w) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, i32) -> ()
  }
  return
}

// -----

// A descriptor_store without a fallback (the IR asked for the TMA store) is left alone.
// CHECK-LABEL: func.func @no_fallback(
// CHECK-NEXT: "tile.descriptor_store"(%arg1, %arg0, %arg2, %arg2) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
func.func @no_fallback(%v: tensor<64x32xbf16>, %d: !tile.ptr<i8> {tile.tma}, %r: i32) attributes {tile.kernel, tile.tma = ["arg=o;box=64,32;swizzle=64"]} {
  "tile.descriptor_store"(%d, %v, %r, %r) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 64 : i32} : (!tile.ptr<i8>, tensor<64x32xbf16>, i32, i32) -> ()
  return
}

// -----

// Loads: an inner coordinate of 32 bf16 elements per program, or a loop's variable by 64
// (64 bytes: gcd of the start and the step), stays a TMA load without its fallback; one of 4
// elements (8 bytes) becomes the masked tile.load, its uses taking the loaded value.  (The
// row coordinate's sign does not matter: a load clips.)
// CHECK-LABEL: func.func @loads(
// CHECK-SAME: %arg4: !tile.ptr<i8> {tile.tma}) -> tensor<64x32xbf16> attributes {tile.kernel, tile.tma = ["arg=a;box=64,32;swizzle=64"]}
// CHECK: %[[T:.+]] = "tile.descriptor_load"(%arg4, %arg3, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32) -> tensor<64x32xbf16>
// CHECK: %[[L:.+]] = "tile.load"(%arg0, %arg1, %arg2) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK: %[[S:.+]] = arith.addf %[[T]], %[[L]]
// CHECK: scf.for
// CHECK: "tile.descriptor_load"(%arg4, %arg3, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>
func.func @loads(%p: tensor<64x32x!tile.ptr<bf16>>, %m: tensor<64x32xi1>, %o: tensor<64x32xbf16>, %r: i32, %d: !tile.ptr<i8> {tile.tma}) -> tensor<64x32xbf16> attributes {tile.kernel, tile.tma = ["arg=a;box=64,32;swizzle=64"]} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %c = arith.muli %pid, %c32 : i32
  %t = "tile.descriptor_load"(%d, %r, %c, %p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %l = "tile.descriptor_load"(%d, %r, %c4, %p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %s = arith.addf %t, %l : tensor<64x32xbf16>
  %u = scf.for %k = %c0 to %r step %c64 iter_args(%acc = %s) -> (tensor<64x32xbf16>) : i32 {
    %x = "tile.descriptor_load"(%d, %r, %k, %p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
    %y = arith.addf %acc, %x : tensor<64x32xbf16>
    scf.yield %y : tensor<64x32xbf16>
  }
  return %u : tensor<64x32xbf16>
}

// -----

// A load that falls back was its tensor map's only user: the map leaves the parameters.
// CHECK-LABEL: func.func @load_map_dropped(
// CHECK-SAME: %arg2: tensor<64x32xbf16>) -> tensor<64x32xbf16> attributes {tile.kernel} {
// CHECK-NEXT: arith.constant 4 : i32
// CHECK-NEXT: "tile.load"(%arg0, %arg1, %arg2)
func.func @load_map_dropped(%p: tensor<64x32x!tile.ptr<bf16>>, %m: tensor<64x32xi1>, %o: tensor<64x32xbf16>, %d: !tile.ptr<i8> {tile.tma}) -> tensor<64x32xbf16> attributes {tile.kernel, tile.tma = ["arg=a;box=64,32;swizzle=64"]} {
  %c4 = arith.constant 4 : i32
  %l = "tile.descriptor_load"(%d, %c4, %c4, %p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<bf16>>, tensor<64x32xi1>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
  return %l : tensor<64x32xbf16>
}

// -----

// Maps made in the kernel (tile.make_tensormap): a load reading one is kept only where the map
// is exact too, its base 16-byte aligned and its strides 16-byte multiples (the axis
// analysis: %a's specialization, %sa's divisibility 16 x 2 bytes; %b has none, %sb is
// unknown).  B's load falls back, its map goes, and A's takes slot 0 of 128 bytes a program.
// CHECK-LABEL: func.func @device_maps(
// CHECK-SAME: %arg6: !tile.ptr<i8> {tile.global_scratch}) -> tensor<64x32xf16> attributes {tile.global_scratch = 128 : i32, tile.kernel}
// CHECK: %[[MA:.+]] = "tile.make_tensormap"(%arg6, %arg0, %{{.+}}, %{{.+}}, %{{.+}}) {box = array<i32: 64, 32>, offset = 0 : i32, {{.*}}program_bytes = 128 : i32, swizzle = 64 : i32}
// CHECK-NOT: tile.make_tensormap
// CHECK: %[[TA:.+]] = "tile.descriptor_load"(%[[MA]], %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0>
// CHECK: %[[TB:.+]] = "tile.load"(%arg3, %arg4, %arg5)
// CHECK: arith.addf %[[TA]], %[[TB]]
func.func @device_maps(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16>, %sa: i32 {tile.divisibility = 16 : i32}, %p: tensor<64x32x!tile.ptr<f16>>, %m: tensor<64x32xi1>, %o: tensor<64x32xf16>, %s: !tile.ptr<i8> {tile.global_scratch}) -> tensor<64x32xf16> attributes {tile.global_scratch = 256 : i32, tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %c = arith.muli %pid, %c32 : i32
  %sa64 = arith.extsi %sa : i32 to i64
  %sb64 = arith.extsi %pid : i32 to i64
  %ma = "tile.make_tensormap"(%s, %a, %c64, %c64, %sa64) {box = array<i32: 64, 32>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 256 : i32, swizzle = 64 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
  %mb = "tile.make_tensormap"(%s, %b, %c64, %c64, %sb64) {box = array<i32: 64, 32>, offset = 128 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 256 : i32, swizzle = 64 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
  %ta = "tile.descriptor_load"(%ma, %c, %c, %p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
  %tb = "tile.descriptor_load"(%mb, %c, %c, %p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
  %r = arith.addf %ta, %tb : tensor<64x32xf16>
  return %r : tensor<64x32xf16>
}

// -----

// A map made in the kernel from a base of unknown alignment (an aligned argument advanced by
// 4 fp16 elements, 8 bytes): its only load falls back, and with no map left the scratch
// parameter and the kernel's scratch size go.
// CHECK-LABEL: func.func @device_map_dropped(
// CHECK-SAME: %arg3: tensor<64x32xf16>) -> tensor<64x32xf16> attributes {tile.kernel} {
// CHECK-NOT: tile.make_tensormap
// CHECK-NOT: descriptor_load
// CHECK: "tile.load"(%arg1, %arg2, %arg3)
func.func @device_map_dropped(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %p: tensor<64x32x!tile.ptr<f16>>, %m: tensor<64x32xi1>, %o: tensor<64x32xf16>, %s: !tile.ptr<i8> {tile.global_scratch}) -> tensor<64x32xf16> attributes {tile.global_scratch = 128 : i32, tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %c64 = arith.constant 64 : i32
  %c64l = arith.constant 64 : i64
  %a4 = "tile.addptr"(%a, %c4) : (!tile.ptr<f16>, i32) -> !tile.ptr<f16>
  %ma = "tile.make_tensormap"(%s, %a4, %c64, %c64, %c64l) {box = array<i32: 64, 32>, offset = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, program_bytes = 128 : i32, swizzle = 64 : i32} : (!tile.ptr<i8>, !tile.ptr<f16>, i32, i32, i64) -> !tile.ptr<i8>
  %t = "tile.descriptor_load"(%ma, %c0, %c0, %p, %m, %o) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1>, swizzle = 64 : i32} : (!tile.ptr<i8>, i32, i32, tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi1>, tensor<64x32xf16>) -> tensor<64x32xf16>
  return %t : tensor<64x32xf16>
}
