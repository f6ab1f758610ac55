// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target sm_90a --num-warps 4 | FileCheck %s --check-prefix=NV4
// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target sm_90a --num-warps 8 | FileCheck %s --check-prefix=NV8
// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target gfx942 --num-warps 4 | FileCheck %s --check-prefix=AMD4
// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts --target gfx942 --num-warps 8 | FileCheck %s --check-prefix=AMD8
// RUN: tilework-opt %s --split-input-file --tilegpu-assign-layouts | FileCheck %s --check-prefix=ENC

// tilegpu-assign-layouts gives every tile of one rank the same #tilegpu.blocked layout:
// each thread gets up to 16 bytes of contiguous elements (fp32: 4, fp16: 8), but no more than
// numel / (num_warps * warp_size); threads then warps spread over the fastest dimension first.
// sm_90a has 32-thread warps, gfx942 64-thread wavefronts.  The module records both numbers.
// ENC checks that no tile type is left without an encoding in any function.

// Vector add, fp32, 1024 elements: 4 per thread except on gfx942 with 8 warps (512 threads: 2).

// Every line of the function is checked: each tile (of rank 1) has the one layout L.
// NV4: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32}
// NV4-LABEL: func.func @add_f32
// NV4-NEXT: "tile.get_program_id"() {axis = 0 : i32} : () -> i32
// NV4-NEXT: arith.constant 1024 : i32
// NV4-NEXT: arith.muli %{{.+}}, %{{.+}} : i32
// NV4-NEXT: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>]]>
// NV4-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<1024xi32, [[L]]>
// NV4-NEXT: arith.addi %{{.+}}, %{{.+}} : tensor<1024xi32, [[L]]>
// NV4-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<1024xi32, [[L]]>
// NV4-NEXT: arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<1024xi32, [[L]]>
// NV4-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf32, [[L]]>
// NV4-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf32, [[L]]>
// NV4-NEXT: arith.addf %{{.+}}, %{{.+}} : tensor<1024xf32, [[L]]>
// NV4-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.store"(%{{.+}}, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xf32, [[L]]>, tensor<1024xi1, [[L]]>) -> ()
// NV4-NEXT: return

// NV8: module attributes {tilegpu.num_warps = 8 : i32, tilegpu.warp_size = 32 : i32}
// NV8-LABEL: func.func @add_f32
// NV8-NEXT: "tile.get_program_id"() {axis = 0 : i32} : () -> i32
// NV8-NEXT: arith.constant 1024 : i32
// NV8-NEXT: arith.muli %{{.+}}, %{{.+}} : i32
// NV8-NEXT: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 8>, array<i32: 0>>]]>
// NV8-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<1024xi32, [[L]]>
// NV8-NEXT: arith.addi %{{.+}}, %{{.+}} : tensor<1024xi32, [[L]]>
// NV8-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<1024xi32, [[L]]>
// NV8-NEXT: arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<1024xi32, [[L]]>
// NV8-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV8-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV8-NEXT: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf32, [[L]]>
// NV8-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV8-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV8-NEXT: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf32, [[L]]>
// NV8-NEXT: arith.addf %{{.+}}, %{{.+}} : tensor<1024xf32, [[L]]>
// NV8-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV8-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV8-NEXT: "tile.store"(%{{.+}}, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xf32, [[L]]>, tensor<1024xi1, [[L]]>) -> ()
// NV8-NEXT: return

// AMD4: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 64 : i32}
// AMD4-LABEL: func.func @add_f32
// AMD4-NEXT: "tile.get_program_id"() {axis = 0 : i32} : () -> i32
// AMD4-NEXT: arith.constant 1024 : i32
// AMD4-NEXT: arith.muli %{{.+}}, %{{.+}} : i32
// AMD4-NEXT: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 64>, array<i32: 4>, array<i32: 0>>]]>
// AMD4-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<1024xi32, [[L]]>
// AMD4-NEXT: arith.addi %{{.+}}, %{{.+}} : tensor<1024xi32, [[L]]>
// AMD4-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<1024xi32, [[L]]>
// AMD4-NEXT: arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<1024xi32, [[L]]>
// AMD4-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD4-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD4-NEXT: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf32, [[L]]>
// AMD4-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD4-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD4-NEXT: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf32, [[L]]>
// AMD4-NEXT: arith.addf %{{.+}}, %{{.+}} : tensor<1024xf32, [[L]]>
// AMD4-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD4-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD4-NEXT: "tile.store"(%{{.+}}, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xf32, [[L]]>, tensor<1024xi1, [[L]]>) -> ()
// AMD4-NEXT: return

// AMD8: module attributes {tilegpu.num_warps = 8 : i32, tilegpu.warp_size = 64 : i32}
// AMD8-LABEL: func.func @add_f32
// AMD8-NEXT: "tile.get_program_id"() {axis = 0 : i32} : () -> i32
// AMD8-NEXT: arith.constant 1024 : i32
// AMD8-NEXT: arith.muli %{{.+}}, %{{.+}} : i32
// AMD8-NEXT: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 2>, array<i32: 64>, array<i32: 8>, array<i32: 0>>]]>
// AMD8-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<1024xi32, [[L]]>
// AMD8-NEXT: arith.addi %{{.+}}, %{{.+}} : tensor<1024xi32, [[L]]>
// AMD8-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<1024xi32, [[L]]>
// AMD8-NEXT: arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<1024xi32, [[L]]>
// AMD8-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD8-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD8-NEXT: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf32, [[L]]>
// AMD8-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD8-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD8-NEXT: "tile.load"(%{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf32, [[L]]>
// AMD8-NEXT: arith.addf %{{.+}}, %{{.+}} : tensor<1024xf32, [[L]]>
// AMD8-NEXT: "tile.splat"(%{{.+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD8-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// AMD8-NEXT: "tile.store"(%{{.+}}, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xf32, [[L]]>, tensor<1024xi1, [[L]]>) -> ()
// AMD8-NEXT: return

// ENC-LABEL: func.func @add_f32
// ENC-NOT: {{tensor<[0-9x]+(i1|i32|f16|f32|!tile.ptr<f16>|!tile.ptr<f32>)>}}
// ENC: return
func.func @add_f32(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
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

// Vector add, fp16: 8 elements (16 bytes) per thread on sm_90a with 4 warps; capped by
// 1024 / threads elsewhere.  A splat tile constant (the `other` value) is retyped too.

// NV4-LABEL: func.func @add_f16
// NV4-NEXT: "tile.get_program_id"() {axis = 0 : i32} : () -> i32
// NV4-NEXT: arith.constant 1024 : i32
// NV4-NEXT: arith.muli %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : i32
// NV4-NEXT: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 8>, array<i32: 32>, array<i32: 4>, array<i32: 0>>]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (i32) -> tensor<1024xi32, [[L]]>
// NV4-NEXT: arith.addi %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<1024xi32, [[L]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (i32) -> tensor<1024xi32, [[L]]>
// NV4-NEXT: arith.cmpi slt, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<1024xi32, [[L]]>
// NV4-NEXT: arith.constant dense<0.000000e+00> : tensor<1024xf16, [[L]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f16>, [[L]]>
// NV4-NEXT: "tile.load"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xi1, [[L]]>, tensor<1024xf16, [[L]]>) -> tensor<1024xf16, [[L]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f16>, [[L]]>
// NV4-NEXT: "tile.load"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xi1, [[L]]>) -> tensor<1024xf16, [[L]]>
// NV4-NEXT: arith.addf %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<1024xf16, [[L]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f16>, [[L]]>
// NV4-NEXT: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xf16, [[L]]>, tensor<1024xi1, [[L]]>) -> ()
// NV4-NEXT: return

// NV8-LABEL: func.func @add_f16
// NV8: "tile.make_range"() {{.*}} -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 8>, array<i32: 0>>]]>
// NV8: arith.constant dense<0.000000e+00> : tensor<1024xf16, [[L]]>
// NV8: "tile.store"{{.*}} : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xf16, [[L]]>, tensor<1024xi1, [[L]]>) -> ()
// NV8-NOT: {{tensor<1024x(i32|i1|f16|!tile.ptr<f16>)>}}
// NV8: return

// AMD4-LABEL: func.func @add_f16
// AMD4: "tile.make_range"() {{.*}} -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 64>, array<i32: 4>, array<i32: 0>>]]>
// AMD4: arith.constant dense<0.000000e+00> : tensor<1024xf16, [[L]]>
// AMD4: "tile.store"{{.*}} : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xf16, [[L]]>, tensor<1024xi1, [[L]]>) -> ()
// AMD4-NOT: {{tensor<1024x(i32|i1|f16|!tile.ptr<f16>)>}}
// AMD4: return

// AMD8-LABEL: func.func @add_f16
// AMD8: "tile.make_range"() {{.*}} -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 2>, array<i32: 64>, array<i32: 8>, array<i32: 0>>]]>
// AMD8: arith.constant dense<0.000000e+00> : tensor<1024xf16, [[L]]>
// AMD8: "tile.store"{{.*}} : (tensor<1024x!tile.ptr<f16>, [[L]]>, tensor<1024xf16, [[L]]>, tensor<1024xi1, [[L]]>) -> ()
// AMD8-NOT: {{tensor<1024x(i32|i1|f16|!tile.ptr<f16>)>}}
// AMD8: return

// ENC-LABEL: func.func @add_f16
// ENC-NOT: {{tensor<[0-9x]+(i1|i32|f16|f32|!tile.ptr<f16>|!tile.ptr<f32>)>}}
// ENC: return
func.func @add_f16(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32>
  %off = arith.addi %ss, %r : tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %m = arith.cmpi slt, %off, %ns : tensor<1024xi32>
  %zero = arith.constant dense<0.0> : tensor<1024xf16>
  %xp = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %xa = "tile.addptr"(%xp, %off) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %xv = "tile.load"(%xa, %m, %zero) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi1>, tensor<1024xf16>) -> tensor<1024xf16>
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

// A 32x64 fp32 tile, contiguous along dim 1 (the max_contiguous/multiple_of hints on the
// addptr stand for row-major offsets): 4 elements per thread along dim 1, the warp covers
// 16 (gfx942: 16) threads of a row and 2 (gfx942: 4) rows, warps stack along dim 0.

// NV4-LABEL: func.func @copy_2d
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (i32) -> tensor<32x64xi32, [[L:#tilegpu.blocked<array<i32: 1, 4>, array<i32: 2, 16>, array<i32: 4, 1>, array<i32: 1, 0>>]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f32>) -> tensor<32x64x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {tile.contiguity = array<i32: 1, 64>, tile.divisibility = array<i32: 1, 16>} : (tensor<32x64x!tile.ptr<f32>, [[L]]>, tensor<32x64xi32, [[L]]>) -> tensor<32x64x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.load"(%{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<32x64x!tile.ptr<f32>, [[L]]>) -> tensor<32x64xf32, [[L]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f32>) -> tensor<32x64x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {tile.contiguity = array<i32: 1, 64>, tile.divisibility = array<i32: 1, 16>} : (tensor<32x64x!tile.ptr<f32>, [[L]]>, tensor<32x64xi32, [[L]]>) -> tensor<32x64x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<32x64x!tile.ptr<f32>, [[L]]>, tensor<32x64xf32, [[L]]>) -> ()
// NV4-NEXT: return

// NV8-LABEL: func.func @copy_2d
// NV8: "tile.splat"(%{{.+}}) : (i32) -> tensor<32x64xi32, [[L:#tilegpu.blocked<array<i32: 1, 4>, array<i32: 2, 16>, array<i32: 8, 1>, array<i32: 1, 0>>]]>
// NV8: "tile.load"{{.*}} : (tensor<32x64x!tile.ptr<f32>, [[L]]>) -> tensor<32x64xf32, [[L]]>
// NV8: "tile.store"{{.*}} : (tensor<32x64x!tile.ptr<f32>, [[L]]>, tensor<32x64xf32, [[L]]>) -> ()
// NV8: return

// AMD4-LABEL: func.func @copy_2d
// AMD4: "tile.splat"(%{{.+}}) : (i32) -> tensor<32x64xi32, [[L:#tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 16>, array<i32: 4, 1>, array<i32: 1, 0>>]]>
// AMD4: "tile.load"{{.*}} : (tensor<32x64x!tile.ptr<f32>, [[L]]>) -> tensor<32x64xf32, [[L]]>
// AMD4: "tile.store"{{.*}} : (tensor<32x64x!tile.ptr<f32>, [[L]]>, tensor<32x64xf32, [[L]]>) -> ()
// AMD4: return

// AMD8-LABEL: func.func @copy_2d
// AMD8: "tile.splat"(%{{.+}}) : (i32) -> tensor<32x64xi32, [[L:#tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 16>, array<i32: 8, 1>, array<i32: 1, 0>>]]>
// AMD8: "tile.load"{{.*}} : (tensor<32x64x!tile.ptr<f32>, [[L]]>) -> tensor<32x64xf32, [[L]]>
// AMD8: "tile.store"{{.*}} : (tensor<32x64x!tile.ptr<f32>, [[L]]>, tensor<32x64xf32, [[L]]>) -> ()
// AMD8: return

// ENC-LABEL: func.func @copy_2d
// ENC-NOT: {{tensor<[0-9x]+(i1|i32|f16|f32|!tile.ptr<f16>|!tile.ptr<f32>)>}}
// ENC: return
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

// One default layout per rank, made for its largest tile (1024 elements); a load of a smaller
// tile, which one CTA tile of that default (512 or more) would cover several times, asks for a
// layout made for its own shape (lowering/layout_hints.py), and its address chain is built in
// it: 1 element per thread (with 8 warps, or 64-wide waves, still each in two threads).

// NV4-LABEL: func.func @two_sizes_one_rank
// NV4-NEXT: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.load"(%{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>) -> tensor<1024xf32, [[L]]>
// NV4-NEXT: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xf32, [[L]]>) -> ()
// NV4-NEXT: "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32, [[M:#tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, [[M]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<128x!tile.ptr<f32>, [[M]]>, tensor<128xi32, [[M]]>) -> tensor<128x!tile.ptr<f32>, [[M]]>
// NV4-NEXT: "tile.load"(%{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<128x!tile.ptr<f32>, [[M]]>) -> tensor<128xf32, [[M]]>
// NV4-NEXT: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<f32>, [[M]]>, tensor<128xf32, [[M]]>) -> ()
// NV4-NEXT: return

// NV8-LABEL: func.func @two_sizes_one_rank
// NV8: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 8>, array<i32: 0>>]]>
// NV8: "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32, [[M:#tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 8>, array<i32: 0>>]]>
// NV8: "tile.store"{{.*}} : (tensor<128x!tile.ptr<f32>, [[M]]>, tensor<128xf32, [[M]]>) -> ()
// NV8: return

// AMD4-LABEL: func.func @two_sizes_one_rank
// AMD4: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 64>, array<i32: 4>, array<i32: 0>>]]>
// AMD4: "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32, [[M:#tilegpu.blocked<array<i32: 1>, array<i32: 64>, array<i32: 4>, array<i32: 0>>]]>
// AMD4: "tile.store"{{.*}} : (tensor<128x!tile.ptr<f32>, [[M]]>, tensor<128xf32, [[M]]>) -> ()
// AMD4: return

// AMD8-LABEL: func.func @two_sizes_one_rank
// AMD8: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 2>, array<i32: 64>, array<i32: 8>, array<i32: 0>>]]>
// AMD8: "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32, [[M:#tilegpu.blocked<array<i32: 1>, array<i32: 64>, array<i32: 8>, array<i32: 0>>]]>
// AMD8: "tile.store"{{.*}} : (tensor<128x!tile.ptr<f32>, [[M]]>, tensor<128xf32, [[M]]>) -> ()
// AMD8: return

// ENC-LABEL: func.func @two_sizes_one_rank
// ENC-NOT: {{tensor<[0-9x]+(i1|i32|f16|f32|!tile.ptr<f16>|!tile.ptr<f32>)>}}
// ENC: return
func.func @two_sizes_one_rank(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xs, %r) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %xv = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  "tile.store"(%xa, %xv) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>) -> ()
  %q = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32>
  %ys = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>>
  %ya = "tile.addptr"(%ys, %q) : (tensor<128x!tile.ptr<f32>>, tensor<128xi32>) -> tensor<128x!tile.ptr<f32>>
  %yv = "tile.load"(%ya) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<128x!tile.ptr<f32>>) -> tensor<128xf32>
  "tile.store"(%ya, %yv) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<128x!tile.ptr<f32>>, tensor<128xf32>) -> ()
  return
}

// -----

// Strided accesses (offsets = 2 * range) are not contiguous: one element per thread.

// NV4-LABEL: func.func @strided
// NV4-NEXT: "tile.make_range"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>]]>
// NV4-NEXT: arith.constant dense<2> : tensor<1024xi32, [[L]]>
// NV4-NEXT: arith.muli %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<1024xi32, [[L]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xi32, [[L]]>) -> tensor<1024x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.load"(%{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>) -> tensor<1024xf32, [[L]]>
// NV4-NEXT: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>, [[L]]>, tensor<1024xf32, [[L]]>) -> ()
// NV4-NEXT: return

// AMD8-LABEL: func.func @strided
// AMD8: "tile.make_range"() {{.*}} -> tensor<1024xi32, [[L:#tilegpu.blocked<array<i32: 1>, array<i32: 64>, array<i32: 8>, array<i32: 0>>]]>
// AMD8: "tile.load"{{.*}} -> tensor<1024xf32, [[L]]>
// AMD8: return

// NV8-LABEL: func.func @strided
// AMD4-LABEL: func.func @strided
// ENC-LABEL: func.func @strided
// ENC-NOT: {{tensor<[0-9x]+(i1|i32|f16|f32|!tile.ptr<f16>|!tile.ptr<f32>)>}}
// ENC: return
func.func @strided(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %two = arith.constant dense<2> : tensor<1024xi32>
  %off = arith.muli %r, %two : tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %xa = "tile.addptr"(%xs, %off) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  %xv = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f32>>) -> tensor<1024xf32>
  "tile.store"(%xa, %xv) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>) -> ()
  return
}

// -----

// num_warps and warp_size already on the module win over --num-warps and --target.

// NV4: module attributes {tilegpu.num_warps = 2 : i32, tilegpu.warp_size = 16 : i32}
// NV4-LABEL: func.func @module_config
// NV4-NEXT: "tile.make_range"() {end = 256 : i32, start = 0 : i32} : () -> tensor<256xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 16>, array<i32: 2>, array<i32: 0>>]]>
// NV4-NEXT: "tile.splat"(%{{[a-z0-9_]+}}) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.addptr"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<256x!tile.ptr<f32>, [[L]]>, tensor<256xi32, [[L]]>) -> tensor<256x!tile.ptr<f32>, [[L]]>
// NV4-NEXT: "tile.load"(%{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<256x!tile.ptr<f32>, [[L]]>) -> tensor<256xf32, [[L]]>
// NV4-NEXT: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>, [[L]]>, tensor<256xf32, [[L]]>) -> ()
// NV4-NEXT: return

// AMD8: module attributes {tilegpu.num_warps = 2 : i32, tilegpu.warp_size = 16 : i32}
// AMD8-LABEL: func.func @module_config
// AMD8: "tile.make_range"() {{.*}} -> tensor<256xi32, [[L:#tilegpu.blocked<array<i32: 4>, array<i32: 16>, array<i32: 2>, array<i32: 0>>]]>
// AMD8: return
module attributes {tilegpu.num_warps = 2 : i32, tilegpu.warp_size = 16 : i32} {
// NV8-LABEL: func.func @module_config
// AMD4-LABEL: func.func @module_config
// ENC-LABEL: func.func @module_config
// ENC-NOT: {{tensor<[0-9x]+(i1|i32|f16|f32|!tile.ptr<f16>|!tile.ptr<f32>)>}}
// ENC: return
  func.func @module_config(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 256 : i32} : () -> tensor<256xi32>
    %xs = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<256x!tile.ptr<f32>>
    %xa = "tile.addptr"(%xs, %r) : (tensor<256x!tile.ptr<f32>>, tensor<256xi32>) -> tensor<256x!tile.ptr<f32>>
    %xv = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<256x!tile.ptr<f32>>) -> tensor<256xf32>
    "tile.store"(%xa, %xv) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<256x!tile.ptr<f32>>, tensor<256xf32>) -> ()
    return
  }
}

// -----

// A load whose tile (64x32 fp16) the rank's default (made for the 64x64 store: 8 per thread,
// 4x8 threads, 16x64 per CTA tile) would hold twice asks for a layout made for its own shape,
// and its whole address chain takes it, the pointer carried by the loop included: the loop
// converts nothing, and nothing is loaded twice.  The accumulator started from a constant
// adopts the loaded value's layout (one conversion before the loop, of a constant).

// NV4-LABEL: func.func @loop_carried_pointer
// NV4-NEXT: "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32, #tilegpu.slice<1 : i32, [[O:#tilegpu.blocked<array<i32: 1, 8>, array<i32: 8, 4>, array<i32: 4, 1>, array<i32: 1, 0>>]]>>
// NV4-NEXT: "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32, #tilegpu.slice<0 : i32, [[O]]>>
// NV4-NEXT: "tile.expand_dims"
// NV4-SAME: -> tensor<64x1xi32, [[O]]>
// NV4-NEXT: "tile.splat"
// NV4-NEXT: arith.muli %{{.+}}, %{{.+}} : tensor<64x1xi32, [[O]]>
// NV4-NEXT: "tile.splat"
// NV4-NEXT: "tile.addptr"
// NV4-NEXT: "tile.expand_dims"
// NV4-SAME: -> tensor<1x32xi32, [[O]]>
// NV4-NEXT: "tile.broadcast"
// NV4-SAME: -> tensor<64x32x!tile.ptr<f16>, [[O]]>
// NV4-NEXT: "tile.broadcast"
// NV4-SAME: -> tensor<64x32xi32, [[O]]>
// NV4-NEXT: "tile.addptr"
// NV4-SAME: -> tensor<64x32x!tile.ptr<f16>, [[O]]>
// NV4-NEXT: arith.constant dense<0.000000e+00> : tensor<64x32xf16, [[D:#tilegpu.blocked<array<i32: 1, 8>, array<i32: 4, 8>, array<i32: 4, 1>, array<i32: 1, 0>>]]>
// NV4-NEXT: arith.constant 0 : i32
// NV4-NEXT: arith.constant 32 : i32
// NV4-NEXT: "tilegpu.convert_layout"(%{{.+}}) : (tensor<64x32xf16, [[D]]>) -> tensor<64x32xf16, [[O]]>
// NV4-NEXT: scf.for
// NV4-SAME: -> (tensor<64x32xf16, [[O]]>, tensor<64x32x!tile.ptr<f16>, [[O]]>)
// NV4-NEXT: "tile.load"(%{{.+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x32x!tile.ptr<f16>, [[O]]>) -> tensor<64x32xf16, [[O]]>
// NV4-NEXT: arith.addf %{{.+}}, %{{.+}} : tensor<64x32xf16, [[O]]>
// NV4-NEXT: "tile.splat"(%{{.+}}) : (i32) -> tensor<64x32xi32, [[O]]>
// NV4-NEXT: "tile.addptr"(%{{.+}}, %{{.+}}) : (tensor<64x32x!tile.ptr<f16>, [[O]]>, tensor<64x32xi32, [[O]]>) -> tensor<64x32x!tile.ptr<f16>, [[O]]>
// NV4-NEXT: scf.yield %{{.+}}, %{{.+}} : tensor<64x32xf16, [[O]]>, tensor<64x32x!tile.ptr<f16>, [[O]]>
// NV4-NEXT: }
// NV4-NEXT: "tile.store"
// NV4-SAME: (tensor<64x32x!tile.ptr<f16>, [[O]]>, tensor<64x32xf16, [[O]]>) -> ()
// NV4-NEXT: "tile.splat"
// NV4-SAME: -> tensor<64x64x!tile.ptr<f32>, [[D]]>
func.func @loop_carried_pointer(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %c: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %K: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r64 = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
  %r32 = "tile.make_range"() {start = 0 : i32, end = 32 : i32} : () -> tensor<32xi32>
  %rows = "tile.expand_dims"(%r64) {axis = 1 : i32} : (tensor<64xi32>) -> tensor<64x1xi32>
  %ks = "tile.splat"(%K) : (i32) -> tensor<64x1xi32>
  %roff = arith.muli %rows, %ks : tensor<64x1xi32>
  %as = "tile.splat"(%a) : (!tile.ptr<f16>) -> tensor<64x1x!tile.ptr<f16>>
  %ar = "tile.addptr"(%as, %roff) : (tensor<64x1x!tile.ptr<f16>>, tensor<64x1xi32>) -> tensor<64x1x!tile.ptr<f16>>
  %cols = "tile.expand_dims"(%r32) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
  %arb = "tile.broadcast"(%ar) : (tensor<64x1x!tile.ptr<f16>>) -> tensor<64x32x!tile.ptr<f16>>
  %colb = "tile.broadcast"(%cols) : (tensor<1x32xi32>) -> tensor<64x32xi32>
  %p0 = "tile.addptr"(%arb, %colb) : (tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>) -> tensor<64x32x!tile.ptr<f16>>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x32xf16>
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %res:2 = scf.for %k = %c0 to %K step %c32 iter_args(%acc = %zero, %p = %p0) -> (tensor<64x32xf16>, tensor<64x32x!tile.ptr<f16>>) : i32 {
    %x = "tile.load"(%p) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x32x!tile.ptr<f16>>) -> tensor<64x32xf16>
    %sum = arith.addf %acc, %x : tensor<64x32xf16>
    %step = "tile.splat"(%c32) : (i32) -> tensor<64x32xi32>
    %pn = "tile.addptr"(%p, %step) : (tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>) -> tensor<64x32x!tile.ptr<f16>>
    scf.yield %sum, %pn : tensor<64x32xf16>, tensor<64x32x!tile.ptr<f16>>
  }
  "tile.store"(%p0, %res#0) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x32x!tile.ptr<f16>>, tensor<64x32xf16>) -> ()
  %cs = "tile.splat"(%c) : (!tile.ptr<f32>) -> tensor<64x64x!tile.ptr<f32>>
  %r64b = "tile.broadcast"(%rows) : (tensor<64x1xi32>) -> tensor<64x64xi32>
  %cp = "tile.addptr"(%cs, %r64b) : (tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>) -> tensor<64x64x!tile.ptr<f32>>
  %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  "tile.store"(%cp, %z) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>) -> ()
  return
}

// -----

// A load whose pointers run contiguously along dim 0 (a transposed operand: rows + cols *
// stride) asks for a layout with dim 0 fastest, 8 f16 (16 bytes) a thread along it, instead of
// the rank's default (dim 1 fastest: one element per access); its address chain is built in it.

// NV4-LABEL: func.func @transposed
// NV4: "tile.load"(%{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x32x!tile.ptr<f16>, [[T:#tilegpu.blocked<array<i32: 8, 1>, array<i32: 8, 4>, array<i32: 1, 4>, array<i32: 0, 1>>]]>) -> tensor<64x32xf16, [[T]]>
// NV4-NEXT: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x32x!tile.ptr<f16>, [[T]]>, tensor<64x32xf16, [[T]]>) -> ()
// NV4-NOT: tilegpu.convert_layout
// NV4: return
// NV8-LABEL: func.func @transposed
// AMD4-LABEL: func.func @transposed
// AMD8-LABEL: func.func @transposed
// ENC-LABEL: func.func @transposed
func.func @transposed(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %s: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
  %c = "tile.make_range"() {start = 0 : i32, end = 32 : i32} : () -> tensor<32xi32>
  %r2 = "tile.expand_dims"(%r) {axis = 1 : i32} : (tensor<64xi32>) -> tensor<64x1xi32>
  %c2 = "tile.expand_dims"(%c) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
  %ss = "tile.splat"(%s) : (i32) -> tensor<1x32xi32>
  %cs = arith.muli %c2, %ss : tensor<1x32xi32>
  %rb = "tile.broadcast"(%r2) : (tensor<64x1xi32>) -> tensor<64x32xi32>
  %cb = "tile.broadcast"(%cs) : (tensor<1x32xi32>) -> tensor<64x32xi32>
  %off = arith.addi %rb, %cb : tensor<64x32xi32>
  %p = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<64x32x!tile.ptr<f16>>
  %a = "tile.addptr"(%p, %off) : (tensor<64x32x!tile.ptr<f16>>, tensor<64x32xi32>) -> tensor<64x32x!tile.ptr<f16>>
  %v = "tile.load"(%a) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x32x!tile.ptr<f16>>) -> tensor<64x32xf16>
  "tile.store"(%a, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x32x!tile.ptr<f16>>, tensor<64x32xf16>) -> ()
  return
}

// -----

// A rank whose widest access is an f16 load (8 a thread) but which also stores f32 in 16-byte
// vectors (LayerNorm backward's fp16 rows and fp32 partial sums) takes 4 a thread: 8 f32 a
// thread would split into two vectors, each warp store spanning 1 KiB for its 512 bytes.  The
// f16 load is then 8 bytes a thread (whole sectors).  A store that cannot be 16 bytes wide
// (@widen_unaligned: %n not known divisible) leaves the default at 8.

// NV4-LABEL: func.func @widen
// NV4: "tile.load"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f16>, [[W:#tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>]]>, tensor<1024xi1, [[W]]>) -> tensor<1024xf16, [[W]]>
// NV4: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>, [[W]]>, tensor<1024xf32, [[W]]>, tensor<1024xi1, [[W]]>) -> ()
// NV4-NOT: tilegpu.convert_layout
// NV4: return
// NV8-LABEL: func.func @widen
// AMD4-LABEL: func.func @widen
// AMD8-LABEL: func.func @widen
// ENC-LABEL: func.func @widen
func.func @widen(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %xp = "tile.addptr"(%xs, %r) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %v = "tile.load"(%xp, %m) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi1>) -> tensor<1024xf16>
  %w = arith.extf %v : tensor<1024xf16> to tensor<1024xf32>
  %os = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %op = "tile.addptr"(%os, %r) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  "tile.store"(%op, %w, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  return
}

// -----

// NV4-LABEL: func.func @widen_unaligned
// NV4: "tile.store"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>, [[U:#tilegpu.blocked<array<i32: 8>, array<i32: 32>, array<i32: 4>, array<i32: 0>>]]>, tensor<1024xf32, [[U]]>, tensor<1024xi1, [[U]]>) -> ()
// NV4: return
// NV8-LABEL: func.func @widen_unaligned
// AMD4-LABEL: func.func @widen_unaligned
// AMD8-LABEL: func.func @widen_unaligned
// ENC-LABEL: func.func @widen_unaligned
func.func @widen_unaligned(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %xp = "tile.addptr"(%xs, %r) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %v = "tile.load"(%xp) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f16>>) -> tensor<1024xf16>
  %w = arith.extf %v : tensor<1024xf16> to tensor<1024xf32>
  %os = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>>
  %op = "tile.addptr"(%os, %r) : (tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f32>>
  "tile.store"(%op, %w, %m) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>, tensor<1024xi1>) -> ()
  return
}

// -----

// A 16-byte f32 store of a tile no longer than one vector (4 rows' statistics beside 1024-wide
// f16 rows) is never split: the default stays 8 a thread.

// NV4-LABEL: func.func @widen_short_store
// NV4: "tile.load"(%{{[a-z0-9_]+}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f16>, #tilegpu.blocked<array<i32: 8>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>) -> tensor<1024xf16, #tilegpu.blocked<array<i32: 8>, array<i32: 32>, array<i32: 4>, array<i32: 0>>>
// NV4: return
// NV8-LABEL: func.func @widen_short_store
// AMD4-LABEL: func.func @widen_short_store
// AMD8-LABEL: func.func @widen_short_store
// ENC-LABEL: func.func @widen_short_store
func.func @widen_short_store(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
  %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32>
  %xs = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>>
  %xp = "tile.addptr"(%xs, %r) : (tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>) -> tensor<1024x!tile.ptr<f16>>
  %v = "tile.load"(%xp) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1024x!tile.ptr<f16>>) -> tensor<1024xf16>
  %r4 = "tile.make_range"() {start = 0 : i32, end = 4 : i32} : () -> tensor<4xi32>
  %f = arith.sitofp %r4 : tensor<4xi32> to tensor<4xf32>
  %os = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<4x!tile.ptr<f32>>
  %op = "tile.addptr"(%os, %r4) : (tensor<4x!tile.ptr<f32>>, tensor<4xi32>) -> tensor<4x!tile.ptr<f32>>
  "tile.store"(%op, %f) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x!tile.ptr<f32>>, tensor<4xf32>) -> ()
  return
}
