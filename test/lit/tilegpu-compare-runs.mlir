// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --tilegpu-compare-runs --target sm_90a --num-warps 4 | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --tilegpu-compare-runs --tilegpu-to-llvm --target sm_90a --num-warps 4 | FileCheck %s --check-prefix=LOWERED
// RUN: tilework-opt %s --split-input-file --tilegpu-compare-runs | FileCheck %s --check-prefix=NOLAYOUT

// tilegpu-compare-runs puts `tilegpu.runs = [dim, run]` on a tile comparison whose results
// come in aligned runs of `run` equal values along the dimension in which each thread holds
// contiguous elements (from the axis analysis' constancy, capped by the thread's run).
// tilegpu-to-llvm then compares once per run and reuses the result for the rest of it.

// NOLAYOUT-NOT: tilegpu.runs

// 1024 elements on 4 warps of 32 lanes: 8 contiguous elements a thread.  `offs < n` with n
// divisible by 16: runs of 8, one compare.  `offs < 1004` (divisible by 4 only): runs of 4,
// two compares.  `offs <= n` switches inside a group, and `offs < 7 * offs` compares two
// unrelated values: no runs, eight compares each.

// CHECK-LABEL: func.func @masks
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} {tilegpu.runs = array<i32: 0, 8>}
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} {tilegpu.runs = array<i32: 0, 4>}
// CHECK: arith.cmpi sle, %{{.+}}, %{{.+}} : tensor
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : tensor
// CHECK: return

// LOWERED-LABEL: gpu.func @masks
// LOWERED: arith.cmpi slt, %{{.+}}, %arg1 : i32
// LOWERED-NOT: arith.cmpi slt, %{{.+}}, %arg1 : i32
// LOWERED-COUNT-2: arith.cmpi slt, %{{.+}}, %c1004_i32 : i32
// LOWERED-NOT: arith.cmpi slt, %{{.+}}, %c1004_i32 : i32
// LOWERED-COUNT-8: arith.cmpi sle, %{{.+}}, %arg1 : i32
// LOWERED-NOT: arith.cmpi sle
func.func @masks(%o: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %lt = arith.cmpi slt, %r, %ns : tensor<1024xi32>
  %c1004 = arith.constant dense<1004> : tensor<1024xi32>
  %lt4 = arith.cmpi slt, %r, %c1004 : tensor<1024xi32>
  %le = arith.cmpi sle, %r, %ns : tensor<1024xi32>
  %c7 = arith.constant dense<7> : tensor<1024xi32>
  %r2 = arith.muli %r, %c7 : tensor<1024xi32>
  %xx = arith.cmpi slt, %r, %r2 : tensor<1024xi32>
  %a0 = arith.andi %lt, %lt4 : tensor<1024xi1>
  %a = arith.andi %a0, %le : tensor<1024xi1>
  %b = arith.andi %a, %xx : tensor<1024xi1>
  %v = arith.extui %b : tensor<1024xi1> to tensor<1024xi8>
  %op = "tile.splat"(%o) : (!tile.ptr<i8>) -> tensor<1024x!tile.ptr<i8>>
  %oa = "tile.addptr"(%op, %r) : (tensor<1024x!tile.ptr<i8>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<i8>>
  "tile.store"(%oa, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<i8>>, tensor<1024xi8>) -> ()
  return
}
