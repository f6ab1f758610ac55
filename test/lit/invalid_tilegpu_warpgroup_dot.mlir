// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed tilegpu.warpgroup_dot, one error per chunk.

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot a is a memdesc of 2 buffers: select one with memdesc_index
func.func @buffers(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 2 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 2 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot b must be in #tilegpu.nvmma_shared, got unit
func.func @not_nvmma(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, unit, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, unit, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#N = #tilegpu.nvmma_shared<0 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot a needs a swizzled nvmma_shared layout (32, 64 or 128 bytes)
func.func @unswizzled(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #N, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot a: nvmma_shared: the contiguous dim (32) is narrower than the 128-byte swizzle
func.func @narrow(%a: !tilegpu.memdesc<array<i64: 64, 32>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 32, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 32>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 32, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot a of i16: wgmma takes f16, bf16, f32 (tf32), f8E4M3FN, f8E5M2 or i8
func.func @elem(%a: !tilegpu.memdesc<array<i64: 64, 64>, i16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, i16, #S, 1 : i32>, %c: tensor<64x64xi32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, i16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, i16, #S, 1 : i32>, tensor<64x64xi32, #C>) -> tensor<64x64xi32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot shapes do not agree: [64, 64] x [128, 64] -> [64, 64]
func.func @shapes(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 128, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 128, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot operands must have one element type, got f16 and bf16
func.func @mixed(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, bf16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, bf16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot of bf16 accumulates in f32, not f16
func.func @acc(%a: !tilegpu.memdesc<array<i64: 64, 64>, bf16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, bf16, #S, 1 : i32>, %c: tensor<64x64xf16, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, bf16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, bf16, #S, 1 : i32>, tensor<64x64xf16, #C>) -> tensor<64x64xf16, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot accumulator must have a #tilegpu.mma<3, ...> layout
func.func @acc_layout(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #B>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #B>) -> tensor<64x64xf32, #B>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 128, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot tile [64, 64] is not a whole number of the layout's [64, 128] warp tiles
func.func @tile(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 32>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot instruction K 32 must be 32 bytes of f16 and divide K 64
func.func @instr_k(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#T = #tilegpu.nvmma_shared<128 : i32, true, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot a must be K-major (nvmma_shared not transposed)
func.func @a_major(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #T, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #T, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 8 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 128, 32>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot b of i8 must be K-major (nvmma_shared transposed): wgmma transposes only 16-bit operands
func.func @b_major(%a: !tilegpu.memdesc<array<i64: 64, 128>, i8, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 128, 128>, i8, #S, 1 : i32>, %c: tensor<64x128xi32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 128>, i8, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 128, 128>, i8, #S, 1 : i32>, tensor<64x128xi32, #C>) -> tensor<64x128xi32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot max_num_imprecise_acc must be >= 0
func.func @imprecise(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = -1 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot input_precision must be one of tf32, tf32x3, ieee, bf16x3, bf16x6; got 'tf64'
func.func @precision(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf64", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

// tilegpu.warpgroup_wait and the asynchronous warpgroup_dot it makes.
#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_wait' op warpgroup_wait num must be >= 0
func.func @wait_num(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  %w = "tilegpu.warpgroup_wait"(%r) {num = -1 : i32} : (tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_wait' op warpgroup_wait operand must be a warpgroup_dot's result, the result of a loop that carries one or its carried value
func.func @wait_what(%c: tensor<64x64xf32, #C>) {
  %w = "tilegpu.warpgroup_wait"(%c) {num = 0 : i32} : (tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_wait' op warpgroup_wait must be the only user of the warpgroup_dot it waits for
func.func @wait_shared(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C> {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  %w = "tilegpu.warpgroup_wait"(%r) {num = 0 : i32} : (tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return %r : tensor<64x64xf32, #C>
}

// -----

#B = #tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_wait' op warpgroup_wait operand must have a #tilegpu.mma<3, ...> layout
func.func @wait_layout(%c: tensor<64x64xf32, #B>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %c) -> (tensor<64x64xf32, #B>) {
    scf.yield %x : tensor<64x64xf32, #B>
  }
  %w = "tilegpu.warpgroup_wait"(%r) {num = 0 : i32} : (tensor<64x64xf32, #B>) -> tensor<64x64xf32, #B>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op an asynchronous warpgroup_dot (waited by warpgroup_wait) must accumulate in f32 or i32, not f16 (converted after the wait)
func.func @async_f16(%a: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf16, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (!tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf16, #C>) -> tensor<64x64xf16, #C>
  %w = "tilegpu.warpgroup_wait"(%r) {num = 0 : i32} : (tensor<64x64xf16, #C>) -> tensor<64x64xf16, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 8 : i32>
#T = #tilegpu.nvmma_shared<128 : i32, true, 8 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 32>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op an asynchronous warpgroup_dot cannot split fp8 accumulation (max_num_imprecise_acc < K adds partial sums after the wait)
func.func @async_split(%a: !tilegpu.memdesc<array<i64: 64, 128>, f8E4M3FN, #S, 1 : i32>, %b: !tilegpu.memdesc<array<i64: 128, 64>, f8E4M3FN, #T, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 32 : i32} : (!tilegpu.memdesc<array<i64: 64, 128>, f8E4M3FN, #S, 1 : i32>, !tilegpu.memdesc<array<i64: 128, 64>, f8E4M3FN, #T, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  %w = "tilegpu.warpgroup_wait"(%r) {num = 0 : i32} : (tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 8>>
#A = #tilegpu.dot_operand<0 : i32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 8>>, 2 : i32>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot a in registers must be f16, bf16, f8E4M3FN or f8E5M2, not f32
func.func @register_a_f32(%a: tensor<64x32xf32, #A>, %b: !tilegpu.memdesc<array<i64: 32, 64>, f32, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x32xf32, #A>, !tilegpu.memdesc<array<i64: 32, 64>, f32, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}

// -----

#S = #tilegpu.nvmma_shared<128 : i32, false, 16 : i32>
#C = #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
// CHECK-NEXT: error: {{.*}}'tilegpu.warpgroup_dot' op warpgroup_dot a in registers must be in #tilegpu.dot_operand<0 : i32, #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>, 2 : i32>, got #tilegpu.mma<3 : i32, array<i32: 4, 1>, array<i32: 64, 64, 16>>
func.func @register_a_layout(%a: tensor<64x64xf16, #C>, %b: !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, %c: tensor<64x64xf32, #C>) {
  %r = "tilegpu.warpgroup_dot"(%a, %b, %c) {input_precision = "tf32", max_num_imprecise_acc = 0 : i32} : (tensor<64x64xf16, #C>, !tilegpu.memdesc<array<i64: 64, 64>, f16, #S, 1 : i32>, tensor<64x64xf32, #C>) -> tensor<64x64xf32, #C>
  return
}
