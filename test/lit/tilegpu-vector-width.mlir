// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --tilegpu-vector-width --target sm_90a --num-warps 4 | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --tilegpu-vector-width --target gfx942 --num-warps 8 | FileCheck %s --check-prefix=AMD8
// RUN: tilework-opt %s --split-input-file --tilegpu-vector-width | FileCheck %s --check-prefix=NOLAYOUT

// tilegpu-vector-width puts `tilegpu.vector_width` on every tile.load/tile.store: how many
// contiguous elements one access moves.  It is the largest power of two that is at most the
// pointer's contiguity, its alignment (divisibility in bytes / element size), 16 bytes, the
// thread's run of elements in the layout, and, for a masked access, the mask's constancy.

// Without layouts (tilegpu-assign-layouts not run) nothing is recorded.
// NOLAYOUT-NOT: tilegpu.vector_width

// Vector add, fp32, with n divisible by 16 (as specialization marks it): the mask
// `offsets < n` is constant over aligned groups of 16, so every access moves 4 x f32.
// On gfx942 with 8 warps each thread owns only 2 contiguous elements: width 2.

// CHECK-LABEL: func.func @add_f32_n_div16
// CHECK: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32}
// CHECK: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32}
// CHECK: "tile.store"(%{{.+}}, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32}
// CHECK: return

// AMD8-LABEL: func.func @add_f32_n_div16
// AMD8: "tile.load"({{.*}}tilegpu.vector_width = 2 : i32}
// AMD8: "tile.load"({{.*}}tilegpu.vector_width = 2 : i32}
// AMD8: "tile.store"({{.*}}tilegpu.vector_width = 2 : i32}
// AMD8: return
func.func @add_f32_n_div16(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32>
  %off = arith.addi %ss, %r : tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %m = arith.cmpi slt, %off, %ns : tensor<1024xi32>
  %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xp, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %xv = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  %yp = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %ya = "tile.addptr"(%yp, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %yv = "tile.load"(%ya, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  %sum = arith.addf %xv, %yv : tensor<1024xf32>
  %op = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %oa = "tile.addptr"(%op, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  "tile.store"(%oa, %sum, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  return
}

// -----

// The same kernel with nothing known about n: the mask may change at any element, so the
// masked accesses go one element at a time.

// CHECK-LABEL: func.func @add_f32_n_unknown
// AMD8-LABEL: func.func @add_f32_n_unknown
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: "tile.store"({{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: return
func.func @add_f32_n_unknown(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32>
  %off = arith.addi %ss, %r : tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %m = arith.cmpi slt, %off, %ns : tensor<1024xi32>
  %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xp, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %xv = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  %yp = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %ya = "tile.addptr"(%yp, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %yv = "tile.load"(%ya, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  %sum = arith.addf %xv, %yv : tensor<1024xf32>
  %op = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %oa = "tile.addptr"(%op, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  "tile.store"(%oa, %sum, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  return
}

// -----

// n divisible by 2 only: the mask is constant over pairs, so the masked load moves 2 x f32.

// CHECK-LABEL: func.func @n_div2
// AMD8-LABEL: func.func @n_div2
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 2 : i32}
// CHECK: return
func.func @n_div2(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 2 : i32}) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32>
  %off = arith.addi %ss, %r : tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %m = arith.cmpi slt, %off, %ns : tensor<1024xi32>
  %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xp, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %xv = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  return
}

// -----

// fp16 with n divisible by 16: 8 x f16 (16 bytes) per access.

// CHECK-LABEL: func.func @add_f16_n_div16
// AMD8-LABEL: func.func @add_f16_n_div16
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 8 : i32}
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 8 : i32}
// CHECK: "tile.store"({{.*}}tilegpu.vector_width = 8 : i32}
// CHECK: return
func.func @add_f16_n_div16(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32>
  %off = arith.addi %ss, %r : tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %m = arith.cmpi slt, %off, %ns : tensor<1024xi32>
  %xp = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %xa = "tile.addptr"(%xp, %off) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %xv = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi1>) -> tensor<1024xf16>
  %yp = "tile.splat"(%y) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %ya = "tile.addptr"(%yp, %off) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %yv = "tile.load"(%ya, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi1>) -> tensor<1024xf16>
  %sum = arith.addf %xv, %yv : tensor<1024xf16>
  %op = "tile.splat"(%o) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %oa = "tile.addptr"(%op, %off) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  "tile.store"(%oa, %sum, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f16>>, tensor<1024xf16>, tensor<1024xi1>) -> ()
  return
}

// -----

// Masked vs unmasked through the same pointers, n unknown: only the masked accesses are
// narrowed.  A mask that is one value for the whole tile (a splat) does not narrow them.

// CHECK-LABEL: func.func @masked_vs_unmasked
// AMD8-LABEL: func.func @masked_vs_unmasked
// CHECK: %[[V0:.+]] = "tile.load"(%[[P:[^,]+]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32}
// CHECK: %[[V1:.+]] = "tile.load"(%[[P]]) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 4 : i32}
// CHECK: %[[V2:.+]] = "tile.load"(%[[P]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32}
// CHECK: "tile.store"(%[[P]], %[[V0]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 1 : i32}
// CHECK: "tile.store"(%[[P]], %[[V1]]) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32}
// CHECK: "tile.store"(%[[P]], %[[V2]], %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32}
// CHECK: return
func.func @masked_vs_unmasked(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32, %flag: i1) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32>
  %off = arith.addi %ss, %r : tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %m = arith.cmpi slt, %off, %ns : tensor<1024xi32>
  %u = "tile.splat"(%flag) : (i1) -> tensor<1024xi1>
  %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xp, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %v0 = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  %v1 = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  %v2 = "tile.load"(%xa, %u) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi1>) -> tensor<1024xf32>
  "tile.store"(%xa, %v0, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  "tile.store"(%xa, %v1) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>) -> ()
  "tile.store"(%xa, %v2, %u) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  return
}

// -----

// A pointer argument not known to be 16-byte aligned: scalar accesses.

// CHECK-LABEL: func.func @unaligned_base
// AMD8-LABEL: func.func @unaligned_base
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: return
func.func @unaligned_base(%x: !tile.ptr<f32>) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xs, %r) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %v = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  return
}

// -----

// tl.multiple_of: offsets = pid * stride + range with a runtime stride are not known to be
// aligned (width 1); the same offsets with a `tile.divisibility` hint of 16 are (width 4).

// CHECK-LABEL: func.func @multiple_of_hint
// AMD8-LABEL: func.func @multiple_of_hint
// CHECK: arith.addi {{.*}} {tile.divisibility = array<i32: 16>}
// CHECK: %[[V0:.+]] = "tile.load"({{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: %[[V1:.+]] = "tile.load"({{.*}}tilegpu.vector_width = 4 : i32}
// CHECK: "tile.store"(%{{.+}}, %[[V0]]) {{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: "tile.store"(%{{.+}}, %[[V1]]) {{.*}}tilegpu.vector_width = 4 : i32}
// CHECK: return
func.func @multiple_of_hint(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %stride: i32) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %b = arith.muli %pid, %stride : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %bs = "tile.splat"(%b) : (i32) -> tensor<1024xi32>
  %off = arith.addi %bs, %r : tensor<1024xi32>
  %off16 = arith.addi %bs, %r {tile.divisibility = array<i32: 16>} : tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xs, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %v0 = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  %xb = "tile.addptr"(%xs, %off16) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %v1 = "tile.load"(%xb) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  "tile.store"(%xa, %v0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>) -> ()
  "tile.store"(%xb, %v1) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>) -> ()
  return
}

// -----

// tl.max_contiguous + tl.multiple_of on gathered indices: loaded offsets are not known to be
// contiguous (width 1) unless `tile.contiguity`/`tile.divisibility` hints say so (width 4).

// CHECK-LABEL: func.func @max_contiguous_hint
// AMD8-LABEL: func.func @max_contiguous_hint
// CHECK: %[[I0:.+]] = "tile.load"({{.*}}tilegpu.vector_width = 4 : i32}
// CHECK: %[[I1:.+]] = "tile.load"({{.*}}tile.contiguity = array<i32: 1024>, tile.divisibility = array<i32: 16>, tilegpu.vector_width = 4 : i32}
// CHECK: %[[A0:.+]] = "tile.addptr"(%{{.+}}, %[[I0]])
// CHECK: "tile.load"(%[[A0]]) {{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: %[[A1:.+]] = "tile.addptr"(%{{.+}}, %[[I1]])
// CHECK: "tile.load"(%[[A1]]) {{.*}}tilegpu.vector_width = 4 : i32}
// CHECK: return
func.func @max_contiguous_hint(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %ip: !tile.ptr<i32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %is = "tile.splat"(%ip) : (!tile.ptr<i32>) -> tensor<1024x!tile.ptr<i32>>
  %ia = "tile.addptr"(%is, %r) : (tensor<1024x!tile.ptr<i32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<i32>>
  %idx = "tile.load"(%ia) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<i32>>) -> tensor<1024xi32>
  %idxh = "tile.load"(%ia) {operandSegmentSizes = array<i32: 1, 0, 0>, tile.contiguity = array<i32: 1024>, tile.divisibility = array<i32: 16>} : (tensor<1024x!tile.ptr<i32>>) -> tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xs, %idx) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %v0 = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  %xb = "tile.addptr"(%xs, %idxh) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %v1 = "tile.load"(%xb) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  return
}

// -----

// A 2-D tile: widths run along the fastest dimension (1), contiguous by a hint.

// CHECK-LABEL: func.func @copy_2d
// AMD8-LABEL: func.func @copy_2d
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 4 : i32} : (tensor<32x64x!tile.ptr<f32>
// CHECK: "tile.store"({{.*}}tilegpu.vector_width = 4 : i32} : (tensor<32x64x!tile.ptr<f32>
// CHECK: return
func.func @copy_2d(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %q: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: i32) attributes {tile.kernel} {
  %off = "tile.splat"(%o) : (i32) -> tensor<32x64xi32>
  %ps = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<32x64x!tile.ptr<f32>>
  %pa = "tile.addptr"(%ps, %off) {tile.contiguity = array<i32: 1, 64>, tile.divisibility = array<i32: 1, 16>} : (tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>) -> tensor<32x64x!tile.ptr<f32>>
  %v = "tile.load"(%pa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x64x!tile.ptr<f32>>) -> tensor<32x64xf32>
  %qs = "tile.splat"(%q) : (!tile.ptr<f32>) -> tensor<32x64x!tile.ptr<f32>>
  %qa = "tile.addptr"(%qs, %off) {tile.contiguity = array<i32: 1, 64>, tile.divisibility = array<i32: 1, 16>} : (tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>) -> tensor<32x64x!tile.ptr<f32>>
  "tile.store"(%qa, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x64x!tile.ptr<f32>>, tensor<32x64xf32>) -> ()
  return
}

// -----

// Wrap-around offsets, as Triton's matmuls write them: `(pid * 1024 + arange(1024)) % n`.  With
// n divisible by 16 the offsets wrap only at multiples of 16, so runs of 16 stay contiguous and
// the fp16 load moves 8 elements (16 bytes); with n divisible by 2 only, 2 elements; `% 3`
// (an odd modulus): one at a time.

// CHECK-LABEL: func.func @wrap_around
// CHECK: "tile.load"(%{{.+}}) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 8 : i32}
// CHECK: "tile.load"(%{{.+}}) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 2 : i32}
// CHECK: "tile.load"(%{{.+}}) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 1 : i32}
func.func @wrap_around(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n16: i32 {tile.divisibility = 16 : i32}, %n2: i32 {tile.divisibility = 2 : i32}) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32>
  %off = arith.addi %ss, %r : tensor<1024xi32>
  %xp = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %m16 = "tile.splat"(%n16) : (i32) -> tensor<1024xi32>
  %w16 = arith.remsi %off, %m16 : tensor<1024xi32>
  %a16 = "tile.addptr"(%xp, %w16) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %v16 = "tile.load"(%a16) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f16>>) -> tensor<1024xf16>
  %m2 = "tile.splat"(%n2) : (i32) -> tensor<1024xi32>
  %w2 = arith.remsi %off, %m2 : tensor<1024xi32>
  %a2 = "tile.addptr"(%xp, %w2) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %v2 = "tile.load"(%a2) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f16>>) -> tensor<1024xf16>
  %c3 = arith.constant dense<3> : tensor<1024xi32>
  %w3 = arith.remsi %off, %c3 : tensor<1024xi32>
  %a3 = "tile.addptr"(%xp, %w3) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %v3 = "tile.load"(%a3) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f16>>) -> tensor<1024xf16>
  %s1 = arith.addf %v16, %v2 : tensor<1024xf16>
  %s2 = arith.addf %s1, %v3 : tensor<1024xf16>
  %op = "tile.splat"(%o) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %oa = "tile.addptr"(%op, %off) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  "tile.store"(%oa, %s2) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f16>>, tensor<1024xf16>) -> ()
  return
}

// -----

// A 2-D store whose mask is an `arith.select` on a scalar i1 (canonicalize folds an `if` on a
// reduction into one): the scalar condition is constant over the tile, so the width comes from
// the two masks (constant over runs of 64 and splat): 4.  (The axis analysis used to index the
// scalar's missing second dimension here: found by the fuzzer, seed 1271.)

// CHECK-LABEL: func.func @select_scalar_condition_2d
// CHECK: "tile.store"({{.*}}tilegpu.vector_width = 4 : i32} : (tensor<32x64x!tile.ptr<f32>
// CHECK: return
func.func @select_scalar_condition_2d(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: i32, %c: i1, %a: i1, %b: i1) attributes {tile.kernel} {
  %off = "tile.splat"(%o) : (i32) -> tensor<32x64xi32>
  %ps = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<32x64x!tile.ptr<f32>>
  %pa = "tile.addptr"(%ps, %off) {tile.contiguity = array<i32: 1, 64>, tile.divisibility = array<i32: 1, 16>} : (tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>) -> tensor<32x64x!tile.ptr<f32>>
  %ma = "tile.splat"(%a) : (i1) -> tensor<32x64xi1>
  %mb = "tile.splat"(%b) : (i1) -> tensor<32x64xi1>
  %m = arith.select %c, %ma, %mb : tensor<32x64xi1>
  %v = "tile.load"(%pa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x64x!tile.ptr<f32>>) -> tensor<32x64xf32>
  "tile.store"(%pa, %v, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<32x64x!tile.ptr<f32>>, tensor<32x64xf32>, tensor<32x64xi1>) -> ()
  return
}

// -----

// tl.multiple_of of a loop-carried pointer tile (Triton's `tl.multiple_of(a_ptrs, ...)` in a K
// loop): the hint sits on the loop as `tile.divisibility.region0.arg<n>` (a block argument has
// no op to hold it) and holds for that argument in every iteration: width 4; the same loop
// without it: width 1.

// CHECK-LABEL: func.func @multiple_of_loop_carried
// CHECK: scf.for
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 1 : i32}
// CHECK: scf.for
// CHECK: "tile.load"({{.*}}tilegpu.vector_width = 4 : i32}
// CHECK: tile.divisibility.region0.arg1 = array<i32: 16>
func.func @multiple_of_loop_carried(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %stride: i32, %n: i32) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %b = arith.muli %pid, %stride : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %bs = "tile.splat"(%b) : (i32) -> tensor<1024xi32>
  %off = arith.addi %bs, %r : tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xs, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %ys = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %ya = "tile.addptr"(%ys, %r) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %step = arith.constant dense<1024> : tensor<1024xi32>
  %e0 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %xa) -> (tensor<1024x!tile.ptr<f32>>) : i32 {
    %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
    "tile.store"(%ya, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>) -> ()
    %q = "tile.addptr"(%p, %step) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
    scf.yield %q : tensor<1024x!tile.ptr<f32>>
  }
  %e1 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %xa) -> (tensor<1024x!tile.ptr<f32>>) : i32 {
    %v = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
    "tile.store"(%ya, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>) -> ()
    %q = "tile.addptr"(%p, %step) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
    scf.yield %q : tensor<1024x!tile.ptr<f32>>
  } {tile.divisibility.region0.arg1 = array<i32: 16>}
  return
}
