// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s --check-prefix=COUNT
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=LOWERED
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s --check-prefix=ALIGN16
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=BRANCH

// tilegpu-to-llvm turns each func.func of tilegpu IR into a gpu.func kernel of a gpu.module
// that carries the target attribute; every tile becomes the scalars one thread holds, and a
// load/store of `tilegpu.vector_width` elements becomes one llvm.load/llvm.store of a vector,
// at a constant GEP from the tile's first address where the offsets differ by constants;
// when masked, one predicated inline PTX ld/st.global on NVIDIA, under scf.if on AMD.  Inputs
// are tilegpu IR as tilegpu-assign-layouts and
// tilegpu-vector-width leave it (written with layout aliases).

// Nothing of the tile/tilegpu stage is left: no func.func, tile op, pointer type or tensor.
// LOWERED-NOT: {{func\.func|"tile\.|!tile\.ptr|tensor<|tilegpu\.blocked|tilegpu\.vector_width}}

// AMD-NOT: nvvm.target
// AMD: module attributes {gpu.container_module,
// AMD-SAME: tilegpu.num_warps = 4 : i32,
// AMD-SAME: tilegpu.warp_size = 32 : i32}
// AMD-NEXT: gpu.module @kernels [#rocdl.target<chip = "gfx942">]
// AMD-LABEL: gpu.func @add_kernel(
// AMD-SAME: known_block_size = array<i32: 128, 1, 1>
// AMD: module attributes {gpu.container_module,
// AMD-SAME: tilegpu.num_warps = 4 : i32,
// AMD-SAME: tilegpu.warp_size = 64 : i32}
// AMD-NEXT: gpu.module @kernels [#rocdl.target<chip = "gfx942">]
// AMD-LABEL: gpu.func @masked_scalar_and_other(
// AMD-SAME: known_block_size = array<i32: 256, 1, 1>
// AMD-NOT: nvvm.target

// Vector add, fp32, 4 warps x 32 threads, each thread owns elements [4t, 4t+4) and
// [512+4t, 512+4t+4) of the 1024: two masked 16-byte loads per input, two masked stores.

// CHECK: module attributes {gpu.container_module,
// CHECK-SAME: tilegpu.num_warps = 4 : i32,
// CHECK-SAME: tilegpu.warp_size = 32 : i32}
// CHECK-NEXT: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// Every access of @add_kernel is a 16-byte one.
// ALIGN16-LABEL: gpu.func @add_kernel(
// ALIGN16-NOT: {{alignment = [0-9] :}}
// ALIGN16: gpu.return

// CHECK-LABEL: gpu.func @add_kernel(
// CHECK-SAME: %[[X:[^:]+]]: !llvm.ptr<1>, %[[Y:[^:]+]]: !llvm.ptr<1>, %[[O:[^:]+]]: !llvm.ptr<1>, %[[N:[^:]+]]: i32) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-SAME: tilegpu.num_warps = 4 : i32
// CHECK: %[[TIDX:.+]] = gpu.thread_id x
// CHECK-NEXT: %[[TID:.+]] = arith.index_cast %[[TIDX]] : index to i32
// Thread t's first element is 4t: the lane and warp bits of the thread id form one run.
// CHECK-NEXT: %[[BASE:.+]] = arith.shli %[[TID]], %c2_i32 : i32
// CHECK: %[[BIDX:.+]] = gpu.block_id x
// CHECK-NEXT: %[[PID:.+]] = arith.index_cast %[[BIDX]] : index to i32
// CHECK: %[[START:.+]] = arith.muli %[[PID]], %c1024_i32 : i32
// pid * 1024 + arange: (start + thread part) + each element's constant (the make_range's own
// values, now unused, are left to canonicalize)
// CHECK: %[[OFF0:.+]] = arith.addi %[[START]], %[[BASE]] : i32
// CHECK-NEXT: arith.addi %[[OFF0]], %c1_i32 : i32
// CHECK: %[[OFF4:.+]] = arith.addi %[[OFF0]], %c512_i32 : i32
// CHECK: %[[M0:.+]] = arith.cmpi slt, %[[OFF0]], %[[N]] : i32
// CHECK: %[[M4:.+]] = arith.cmpi slt, %[[OFF4]], %[[N]] : i32
// CHECK: %[[XG0:.+]] = llvm.getelementptr %[[X]][%[[OFF0]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: %[[XG4:.+]] = llvm.getelementptr %[[XG0]][512] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// A masked access is one predicated PTX instruction (no branch); a load's words are tied
// to `other` (zeros here), which they keep where the mask bit is false.
// CHECK: %[[XA0:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "@$4 ld.global.v4.b32 {$0, $1, $2, $3}, [$5];", "=r,=r,=r,=r,b,l,0,1,2,3" %[[M0]], %[[XG0]], %c0_i32, %c0_i32, %c0_i32, %c0_i32 : (i1, !llvm.ptr<1>, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: %[[XW:.+]] = llvm.insertelement %{{.+}}, %{{.+}}[%c3_i32 : i32] : vector<4xi32>
// CHECK-NEXT: %[[XV0:.+]] = llvm.bitcast %[[XW]] : vector<4xi32> to vector<4xf32>
// CHECK-NEXT: %[[X0:.+]] = llvm.extractelement %[[XV0]][%c0_i32 : i32] : vector<4xf32>
// CHECK-NEXT: %[[X1:.+]] = llvm.extractelement %[[XV0]][%c1_i32 : i32] : vector<4xf32>
// CHECK: llvm.inline_asm has_side_effects {{.*}}"@$4 ld.global.v4.b32 {{.*}} %[[M4]], %[[XG4]],
// CHECK: %[[YG0:.+]] = llvm.getelementptr %[[Y]][%[[OFF0]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: %[[YG4:.+]] = llvm.getelementptr %[[YG0]][512] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// CHECK: llvm.inline_asm has_side_effects {{.*}}"@$4 ld.global.v4.b32 {{.*}} %[[M0]], %[[YG0]],
// CHECK: %[[YV0:.+]] = llvm.bitcast %{{.+}} : vector<4xi32> to vector<4xf32>
// CHECK-NEXT: %[[Y0:.+]] = llvm.extractelement %[[YV0]][%c0_i32 : i32] : vector<4xf32>
// CHECK-NEXT: %[[Y1:.+]] = llvm.extractelement %[[YV0]][%c1_i32 : i32] : vector<4xf32>
// CHECK: llvm.inline_asm has_side_effects {{.*}}"@$4 ld.global.v4.b32 {{.*}} %[[M4]], %[[YG4]],
// CHECK: %[[S0:.+]] = arith.addf %[[X0]], %[[Y0]] : f32
// CHECK-NEXT: %[[S1:.+]] = arith.addf %[[X1]], %[[Y1]] : f32
// CHECK: %[[OG0:.+]] = llvm.getelementptr %[[O]][%[[OFF0]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: %[[OG4:.+]] = llvm.getelementptr %[[OG0]][512] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// CHECK: %[[P:.+]] = llvm.mlir.poison : vector<4xf32>
// CHECK-NEXT: %[[V0:.+]] = llvm.insertelement %[[S0]], %[[P]][%c0_i32 : i32] : vector<4xf32>
// CHECK-NEXT: %[[V1:.+]] = llvm.insertelement %[[S1]], %[[V0]][%c1_i32 : i32] : vector<4xf32>
// CHECK-NEXT: %[[V2:.+]] = llvm.insertelement %{{.+}}, %[[V1]][%c2_i32 : i32] : vector<4xf32>
// CHECK-NEXT: %[[V3:.+]] = llvm.insertelement %{{.+}}, %[[V2]][%c3_i32 : i32] : vector<4xf32>
// CHECK-NEXT: %[[VW:.+]] = llvm.bitcast %[[V3]] : vector<4xf32> to vector<4xi32>
// CHECK-COUNT-4: llvm.extractelement %[[VW]]
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "@$0 st.global.v4.b32 [$1], {$2, $3, $4, $5};", "b,l,r,r,r,r,~{memory}" %[[M0]], %[[OG0]],
// CHECK: llvm.inline_asm has_side_effects {{.*}}"@$0 st.global.v4.b32 {{.*}} %[[M4]], %[[OG4]],
// CHECK-NOT: scf.if
// CHECK-NEXT: gpu.return

// Exactly four vector loads and two vector stores, nothing narrower.
// COUNT-LABEL: gpu.func @add_kernel(
// COUNT-COUNT-4: "@$4 ld.global.v4.b32
// COUNT-NOT: ld.global
// COUNT-COUNT-2: "@$0 st.global.v4.b32
// COUNT-NOT: {{llvm.load|llvm.store|ld.global|st.global}}
// COUNT: gpu.return

// AMD keeps a branch around each masked access (the same four loads and two stores).
// BRANCH-LABEL: gpu.func @add_kernel(
// BRANCH-COUNT-4: scf.if %{{.+}} -> (vector<4xf32>) {
// BRANCH-NOT: llvm.inline_asm
// BRANCH-COUNT-2: scf.if
// BRANCH: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @add_kernel(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
    %c = arith.constant 1024 : i32
    %s = arith.muli %pid, %c : i32
    %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32, #L>
    %ss = "tile.splat"(%s) : (i32) -> tensor<1024xi32, #L>
    %off = arith.addi %ss, %r : tensor<1024xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32, #L>
    %m = arith.cmpi slt, %off, %ns : tensor<1024xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %off) : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xi32, #L>) -> tensor<1024x!tile.ptr<f32>, #L>
    %xv = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xi1, #L>) -> tensor<1024xf32, #L>
    %yp = "tile.splat"(%y) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #L>
    %ya = "tile.addptr"(%yp, %off) : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xi32, #L>) -> tensor<1024x!tile.ptr<f32>, #L>
    %yv = "tile.load"(%ya, %m) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xi1, #L>) -> tensor<1024xf32, #L>
    %sum = arith.addf %xv, %yv : tensor<1024xf32, #L>
    %op = "tile.splat"(%o) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #L>
    %oa = "tile.addptr"(%op, %off) : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xi32, #L>) -> tensor<1024x!tile.ptr<f32>, #L>
    "tile.store"(%oa, %sum, %m) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 4 : i32} : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xf32, #L>, tensor<1024xi1, #L>) -> ()
    return
  }
}

// -----

// On a 64-wide layout (known_block_size 256), n unknown: the masked load of width 1 is four
// predicated scalar loads, each keeping `other` (-1.0) when masked off; the unmasked
// load of width 4 is one vector load outside any scf.if.  The masked store of width 1 is four
// guarded scalar stores, the unmasked one a plain vector store.

// CHECK: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// ALIGN16-LABEL: gpu.func @masked_scalar_and_other(
// CHECK-LABEL: gpu.func @masked_scalar_and_other(
// CHECK-SAME: %[[X:[^:]+]]: !llvm.ptr<1>, %[[N:[^:]+]]: i32) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[TIDX:.+]] = gpu.thread_id x
// CHECK-NEXT: %[[TID:.+]] = arith.index_cast %[[TIDX]] : index to i32
// CHECK-NEXT: arith.shli %[[TID]], %c2_i32 : i32
// CHECK: %[[M0:.+]] = arith.cmpi slt, %[[I0:[^,]+]], %[[N]] : i32
// CHECK-NEXT: %[[M1:.+]] = arith.cmpi slt, %[[I1:[^,]+]], %[[N]] : i32
// CHECK-NEXT: %[[M2:.+]] = arith.cmpi slt, %[[I2:[^,]+]], %[[N]] : i32
// CHECK-NEXT: %[[M3:.+]] = arith.cmpi slt, %[[I3:[^,]+]], %[[N]] : i32
// CHECK: %[[OTHER:.+]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[G0:.+]] = llvm.getelementptr %[[X]][%[[I0]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[G1:.+]] = llvm.getelementptr %[[G0]][1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[G2:.+]] = llvm.getelementptr %[[G0]][2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[G3:.+]] = llvm.getelementptr %[[G0]][3] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[O0:.+]] = llvm.bitcast %[[OTHER]] : f32 to i32
// CHECK-NEXT: %[[W0:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "@$1 ld.global.b32 $0, [$2];", "=r,b,l,0" %[[M0]], %[[G0]], %[[O0]] : (i1, !llvm.ptr<1>, i32) -> i32
// CHECK-NEXT: %[[V0:.+]] = llvm.bitcast %[[W0]] : i32 to f32
// CHECK-NEXT: %[[O1:.+]] = llvm.bitcast %[[OTHER]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm {{.*}} %[[M1]], %[[G1]], %[[O1]] : (i1, !llvm.ptr<1>, i32) -> i32
// CHECK-NEXT: %[[V1:.+]] = llvm.bitcast
// CHECK-NEXT: %[[O2:.+]] = llvm.bitcast %[[OTHER]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm {{.*}} %[[M2]], %[[G2]], %[[O2]] : (i1, !llvm.ptr<1>, i32) -> i32
// CHECK-NEXT: %[[V2:.+]] = llvm.bitcast
// CHECK-NEXT: %[[O3:.+]] = llvm.bitcast %[[OTHER]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm {{.*}} %[[M3]], %[[G3]], %[[O3]] : (i1, !llvm.ptr<1>, i32) -> i32
// CHECK-NEXT: %[[V3:.+]] = llvm.bitcast
// CHECK-NEXT: %[[U:.+]] = llvm.load %[[G0]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: %[[S0:.+]] = llvm.bitcast %[[V0]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "@$0 st.global.b32 [$1], $2;", "b,l,r,~{memory}" %[[M0]], %[[G0]], %[[S0]] : (i1, !llvm.ptr<1>, i32) -> ()
// CHECK-NEXT: %[[S1:.+]] = llvm.bitcast %[[V1]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm {{.*}} %[[M1]], %[[G1]], %[[S1]] : (i1, !llvm.ptr<1>, i32) -> ()
// CHECK-NEXT: %[[S2:.+]] = llvm.bitcast %[[V2]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm {{.*}} %[[M2]], %[[G2]], %[[S2]] : (i1, !llvm.ptr<1>, i32) -> ()
// CHECK-NEXT: %[[S3:.+]] = llvm.bitcast %[[V3]] : f32 to i32
// CHECK-NEXT: llvm.inline_asm {{.*}} %[[M3]], %[[G3]], %[[S3]] : (i1, !llvm.ptr<1>, i32) -> ()
// CHECK-NEXT: %[[P:.+]] = llvm.mlir.poison : vector<4xf32>
// CHECK-NOT: scf.if
// CHECK: llvm.store %{{.+}}, %[[G0]] {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NEXT: gpu.return

// COUNT-LABEL: gpu.func @masked_scalar_and_other(
// COUNT-COUNT-4: "@$1 ld.global.b32 $0, [$2];"
// COUNT: llvm.load {{%[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// COUNT-NOT: {{llvm.load|ld.global}}
// COUNT-COUNT-4: "@$0 st.global.b32 [$1], $2;"
// COUNT-NOT: {{llvm.store .*: f32,}}
// COUNT: llvm.store {{%[0-9]+}}, {{%[0-9]+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// COUNT-NOT: {{llvm.load|llvm.store}}
// COUNT: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 64>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @masked_scalar_and_other(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32, #L>
    %ns = "tile.splat"(%n) : (i32) -> tensor<1024xi32, #L>
    %m = arith.cmpi slt, %r, %ns : tensor<1024xi32, #L>
    %other = arith.constant dense<-1.0> : tensor<1024xf32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<1024x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xi32, #L>) -> tensor<1024x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xa, %m, %other) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 1 : i32} : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xi1, #L>, tensor<1024xf32, #L>) -> tensor<1024xf32, #L>
    %u = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 4 : i32} : (tensor<1024x!tile.ptr<f32>, #L>) -> tensor<1024xf32, #L>
    "tile.store"(%xa, %v, %m) {operandSegmentSizes = array<i32: 1, 1, 1>, tilegpu.vector_width = 1 : i32} : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xf32, #L>, tensor<1024xi1, #L>) -> ()
    "tile.store"(%xa, %u) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<1024x!tile.ptr<f32>, #L>, tensor<1024xf32, #L>) -> ()
    return
  }
}

// -----

// fp16 with width 8: one 16-byte load (v4.b32, bitcast to vector<8xf16>) per 8 elements, masked by a mask that was
// itself loaded: i1 lives in memory as i8 and is compared with 0.  A scalar store (a pointer,
// not a tile) is done by thread 0 only.

// CHECK: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// ALIGN16-LABEL: gpu.func @f16_bool_scalar(
// CHECK-LABEL: gpu.func @f16_bool_scalar(
// CHECK-SAME: %[[X:[^:]+]]: !llvm.ptr<1>, %[[B:[^:]+]]: !llvm.ptr<1>, %[[S:[^:]+]]: !llvm.ptr<1>) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: %[[TIDX:.+]] = gpu.thread_id x
// CHECK-NEXT: %[[TID:.+]] = arith.index_cast %[[TIDX]] : index to i32
// CHECK: %[[XG:.+]] = llvm.getelementptr %[[X]][%[[I0:[0-9a-z_]+]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
// CHECK: %[[BG:.+]] = llvm.getelementptr %[[B]][%[[I0]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
// CHECK: %[[BYTE:.+]] = llvm.load %[[BG]] {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// CHECK-NEXT: %[[M:.+]] = arith.cmpi ne, %[[BYTE]], %c0_i8 : i8
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "@$4 ld.global.v4.b32 {$0, $1, $2, $3}, [$5];", "=r,=r,=r,=r,b,l,0,1,2,3" %[[M]], %[[XG]], %c0_i32, %c0_i32, %c0_i32, %c0_i32
// CHECK: %[[V:.+]] = llvm.bitcast %{{.+}} : vector<4xi32> to vector<8xf16>
// CHECK: llvm.extractelement %[[V]][%c7_i32 : i32] : vector<8xf16>
// CHECK: llvm.store %{{.+}}, %[[XG]] {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
// CHECK: %[[C:.+]] = arith.constant 1.000000e+00 : f16
// CHECK-NEXT: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %c0_i32 : i32
// CHECK-NEXT: %[[CW:.+]] = llvm.bitcast %[[C]] : f16 to i16
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "@$0 st.global.b16 [$1], $2;", "b,l,h,~{memory}" %[[FIRST]], %[[S]], %[[CW]] : (i1, !llvm.ptr<1>, i16) -> ()
// CHECK-NEXT: gpu.return

// COUNT-LABEL: gpu.func @f16_bool_scalar(
// COUNT-COUNT-8: llvm.load {{%[0-9]+}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// COUNT-NOT: {{llvm.load .*-> [^v]}}
// COUNT: "@$4 ld.global.v4.b32
// COUNT-NOT: {{llvm.load|ld.global}}
// COUNT: gpu.return

#L = #tilegpu.blocked<array<i32: 8>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @f16_bool_scalar(%x: !tile.ptr<f16>, %b: !tile.ptr<i1>, %s: !tile.ptr<f16>) attributes {tile.kernel} {
    %r = "tile.make_range"() {start = 0 : i32, end = 1024 : i32} : () -> tensor<1024xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f16>) -> tensor<1024x!tile.ptr<f16>, #L>
    %xa = "tile.addptr"(%xp, %r) : (tensor<1024x!tile.ptr<f16>, #L>, tensor<1024xi32, #L>) -> tensor<1024x!tile.ptr<f16>, #L>
    %bp = "tile.splat"(%b) : (!tile.ptr<i1>) -> tensor<1024x!tile.ptr<i1>, #L>
    %ba = "tile.addptr"(%bp, %r) : (tensor<1024x!tile.ptr<i1>, #L>, tensor<1024xi32, #L>) -> tensor<1024x!tile.ptr<i1>, #L>
    %m = "tile.load"(%ba) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 1 : i32} : (tensor<1024x!tile.ptr<i1>, #L>) -> tensor<1024xi1, #L>
    %v = "tile.load"(%xa, %m) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 8 : i32} : (tensor<1024x!tile.ptr<f16>, #L>, tensor<1024xi1, #L>) -> tensor<1024xf16, #L>
    "tile.store"(%xa, %v) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 8 : i32} : (tensor<1024x!tile.ptr<f16>, #L>, tensor<1024xf16, #L>) -> ()
    %c = arith.constant 1.0 : f16
    "tile.store"(%s, %c) {operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f16>, f16) -> ()
    return
  }
}

// -----

// A 32x64 fp32 tile with layout [1,4] x [2,16] x [4,1]: one CTA pass covers 8x64, so each
// thread owns 4 rows of 4 contiguous elements: four unmasked 16-byte loads and stores.

// Every access of @copy_2d is a 16-byte one.
// ALIGN16-LABEL: gpu.func @copy_2d(
// ALIGN16-NOT: {{alignment = [0-9] :}}
// ALIGN16: gpu.return

// CHECK: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK-LABEL: gpu.func @copy_2d(
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-NOT: scf.if
// CHECK: llvm.load {{.*}} -> vector<4xf32>
// CHECK-NOT: scf.if
// CHECK: llvm.store {{.*}} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NOT: scf.if
// CHECK: gpu.return

// COUNT-LABEL: gpu.func @copy_2d(
// COUNT-COUNT-4: llvm.load {{%[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// COUNT-NOT: llvm.load
// COUNT-COUNT-4: llvm.store {{%[0-9]+}}, {{%[0-9]+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// COUNT-NOT: {{llvm.load|llvm.store}}
// COUNT: gpu.return

#L = #tilegpu.blocked<array<i32: 1, 4>, array<i32: 2, 16>, array<i32: 4, 1>, array<i32: 1, 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @copy_2d(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %q: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: i32) attributes {tile.kernel} {
    %off = "tile.splat"(%o) : (i32) -> tensor<32x64xi32, #L>
    %ps = "tile.splat"(%p) : (!tile.ptr<f32>) -> tensor<32x64x!tile.ptr<f32>, #L>
    %pa = "tile.addptr"(%ps, %off) : (tensor<32x64x!tile.ptr<f32>, #L>, tensor<32x64xi32, #L>) -> tensor<32x64x!tile.ptr<f32>, #L>
    %v = "tile.load"(%pa) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 4 : i32} : (tensor<32x64x!tile.ptr<f32>, #L>) -> tensor<32x64xf32, #L>
    %qs = "tile.splat"(%q) : (!tile.ptr<f32>) -> tensor<32x64x!tile.ptr<f32>, #L>
    %qa = "tile.addptr"(%qs, %off) : (tensor<32x64x!tile.ptr<f32>, #L>, tensor<32x64xi32, #L>) -> tensor<32x64x!tile.ptr<f32>, #L>
    "tile.store"(%qa, %v) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<32x64x!tile.ptr<f32>, #L>, tensor<32x64xf32, #L>) -> ()
    return
  }
}

// -----

// A 128-element tile on a layout whose CTA tile is 512: the warp bits of the layout's
// linear map are zero (threads 32..127 repeat the accesses of threads 0..31).  get_program_id(axis=1) is block_id y and
// get_num_programs(axis=0) grid_dim x.

// Every access of @replicated_small_tile is a 16-byte one.
// ALIGN16-LABEL: gpu.func @replicated_small_tile(
// ALIGN16-NOT: {{alignment = [0-9] :}}
// ALIGN16: gpu.return

// CHECK: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK-LABEL: gpu.func @replicated_small_tile(
// CHECK-SAME: %[[X:[^:]+]]: !llvm.ptr<1>) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// Only the lane bits of the thread id move along the 128 elements (warps hold copies).
// CHECK: %[[TID:.+]] = arith.index_cast
// CHECK-NEXT: %[[LANE:.+]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-NEXT: %[[BASE:.+]] = arith.shli %[[LANE]], %c2_i32 : i32
// CHECK: %[[BY:.+]] = gpu.block_id y
// CHECK-NEXT: %[[PID:.+]] = arith.index_cast %[[BY]] : index to i32
// CHECK-NEXT: %[[GX:.+]] = gpu.grid_dim x
// CHECK-NEXT: %[[NP:.+]] = arith.index_cast %[[GX]] : index to i32
// CHECK-NEXT: %[[START:.+]] = arith.muli %[[PID]], %[[NP]] : i32
// CHECK-NEXT: arith.addi %[[BASE]], %c1_i32 : i32
// CHECK: %[[OFF0:.+]] = arith.addi %[[START]], %[[BASE]] : i32
// CHECK: %[[G0:.+]] = llvm.getelementptr %[[X]][%[[OFF0]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: llvm.load %[[G0]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.store %{{.+}}, %[[G0]] {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NEXT: gpu.return

// COUNT-LABEL: gpu.func @replicated_small_tile(
// COUNT: llvm.load {{%[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// COUNT-NOT: llvm.load
// COUNT: llvm.store {{%[0-9]+}}, {{%[0-9]+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// COUNT-NOT: {{llvm.load|llvm.store}}
// COUNT: gpu.return

#L = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @replicated_small_tile(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %pid = "tile.get_program_id"() {axis = 1 : i32} : () -> i32
    %np = "tile.get_num_programs"() {axis = 0 : i32} : () -> i32
    %s = arith.muli %pid, %np : i32
    %r = "tile.make_range"() {start = 0 : i32, end = 128 : i32} : () -> tensor<128xi32, #L>
    %ss = "tile.splat"(%s) : (i32) -> tensor<128xi32, #L>
    %off = arith.addi %ss, %r : tensor<128xi32, #L>
    %xp = "tile.splat"(%x) : (!tile.ptr<f32>) -> tensor<128x!tile.ptr<f32>, #L>
    %xa = "tile.addptr"(%xp, %off) : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xi32, #L>) -> tensor<128x!tile.ptr<f32>, #L>
    %v = "tile.load"(%xa) {operandSegmentSizes = array<i32: 1, 0, 0>, tilegpu.vector_width = 4 : i32} : (tensor<128x!tile.ptr<f32>, #L>) -> tensor<128xf32, #L>
    "tile.store"(%xa, %v) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 4 : i32} : (tensor<128x!tile.ptr<f32>, #L>, tensor<128xf32, #L>) -> ()
    return
  }
}
