// RUN: not tilework-opt %s --split-input-file --verify-only 2>&1 | FileCheck %s

// Malformed warp-specialization ops (tilegpu.setmaxnreg, tilegpu.mbarrier_arrive), one error
// per chunk.

// setmaxnreg takes a multiple of 8 registers in 24..256.
// CHECK: error: {{.*}}'tilegpu.setmaxnreg' op setmaxnreg count must be a multiple of 8 in 24..256, got 20
func.func @few_regs() {
  "tilegpu.setmaxnreg"() {count = 20 : i32, mode = "dec"} : () -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.setmaxnreg' op setmaxnreg count must be a multiple of 8 in 24..256, got 100
func.func @odd_regs() {
  "tilegpu.setmaxnreg"() {count = 100 : i32, mode = "inc"} : () -> ()
  return
}

// -----

// CHECK-NEXT: error: {{.*}}'tilegpu.setmaxnreg' op setmaxnreg mode must be one of inc, dec; got 'set'
func.func @bad_mode() {
  "tilegpu.setmaxnreg"() {count = 128 : i32, mode = "set"} : () -> ()
  return
}

// -----

// An arrival is on one barrier: a slot of the ring, not the ring.
// CHECK-NEXT: error: {{.*}}'tilegpu.mbarrier_arrive' op mbarrier_arrive barrier must be one [1] x i64 buffer, got !tilegpu.memdesc<array<i64: 1>, i64, unit, 3 : i32>
func.func @ring_arrive() {
  %bars = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<array<i64: 1>, i64, unit, 3 : i32>
  "tilegpu.mbarrier_arrive"(%bars) {operandSegmentSizes = array<i32: 1, 0>} : (!tilegpu.memdesc<array<i64: 1>, i64, unit, 3 : i32>) -> ()
  return
}
