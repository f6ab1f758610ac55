// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=AMD
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_80 | FileCheck %s --check-prefix=NOMATH
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target gfx942 | FileCheck %s --check-prefix=NOMATH
// RUN: tilework-opt %s --split-input-file --target sm_80 --pass-pipeline 'tilegpu-to-llvm,convert-scf-to-cf,gpu.module(convert-gpu-to-nvvm{index-bitwidth=32},convert-arith-to-llvm,convert-math-to-llvm),convert-cf-to-llvm,reconcile-unrealized-casts' | FileCheck %s --check-prefix=NOLIB
// RUN: tilework-opt %s --split-input-file --target gfx942 --pass-pipeline 'tilegpu-to-llvm,convert-scf-to-cf,gpu.module(convert-gpu-to-rocdl{chipset=gfx942 index-bitwidth=32},convert-arith-to-llvm,convert-math-to-llvm),convert-cf-to-llvm,reconcile-unrealized-casts' | FileCheck %s --check-prefix=NOLIB

// The math ops in tilegpu-to-llvm (lowering/rules/math.py): per element, LLVM intrinsics through
// llvm.call_intrinsic (the typed llvm.intr.* ops of exp2, sqrt, floor, ... are illegal after
// convert-gpu-to-nvvm/-rocdl, which would make them libdevice/ocml calls) or expansions in
// arith (math_approx.py).  No math op survives, and after the upstream conversions (the
// llvm stage of both backends) no function is declared at all: no __nv_*, no __ocml_*.

// NOMATH-NOT: {{math\.}}
// NOLIB-NOT: {{math\.|llvm\.func @[A-Za-z0-9_]+\([^%)]}}

#b = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // tl.exp on NVIDIA is Triton's ex2.approx.f32(x * log2 e); on AMD llvm.exp (v_exp_f32 with
  // an exact argument split).
  // CHECK-LABEL: gpu.func @exp_f32(
  // CHECK: %[[L2E:.+]] = arith.constant 1.44269502 : f32
  // CHECK: %[[P:.+]] = arith.mulf %{{.+}}, %[[L2E]] : f32
  // CHECK-NEXT: llvm.call_intrinsic "llvm.exp2"(%[[P]]) : (f32) -> f32
  // AMD-LABEL: gpu.func @exp_f32(
  // AMD: llvm.call_intrinsic "llvm.exp"(%{{.+}}) : (f32) -> f32
  func.func @exp_f32(%x: tensor<128xf32, #b>, %p: tensor<128x!tile.ptr<f32>, #b>) attributes {tile.kernel} {
    %y = math.exp %x : tensor<128xf32, #b>
    "tile.store"(%p, %y) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<128x!tile.ptr<f32>, #b>, tensor<128xf32, #b>) -> ()
    return
  }
}

// -----

#b = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // tl.sqrt (afn): sqrt.approx.f32 on NVIDIA, as Triton, v_sqrt_f32 on AMD; tl.sqrt_rn (no
  // afn): the correctly rounded llvm.sqrt.  tl.rsqrt: rsqrt.approx.f32 / v_rsq_f32.
  // CHECK-LABEL: gpu.func @sqrt_rsqrt(
  // CHECK: llvm.call_intrinsic "llvm.sqrt"(%{{.+}}) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
  // CHECK: llvm.call_intrinsic "llvm.sqrt"(%{{.+}}) : (f32) -> f32
  // CHECK: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"(%{{.+}}) : (f32) -> f32
  // AMD-LABEL: gpu.func @sqrt_rsqrt(
  // AMD: llvm.call_intrinsic "llvm.sqrt"(%{{.+}}) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
  // AMD: llvm.call_intrinsic "llvm.sqrt"(%{{.+}}) : (f32) -> f32
  // AMD: llvm.call_intrinsic "llvm.amdgcn.rsq"(%{{.+}}) : (f32) -> f32
  func.func @sqrt_rsqrt(%x: tensor<128xf32, #b>, %p: tensor<128x!tile.ptr<f32>, #b>) attributes {tile.kernel} {
    %a = math.sqrt %x fastmath<afn> : tensor<128xf32, #b>
    %c = math.sqrt %x : tensor<128xf32, #b>
    %r = math.rsqrt %x : tensor<128xf32, #b>
    %s = arith.addf %a, %c : tensor<128xf32, #b>
    %t = arith.addf %s, %r : tensor<128xf32, #b>
    "tile.store"(%p, %t) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<128x!tile.ptr<f32>, #b>, tensor<128xf32, #b>) -> ()
    return
  }
}

// -----

#b = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // f64 exp is the arith expansion on both targets: Cody-Waite reduction by ln 2 (round to
  // even), a polynomial by FMAs, two exact power-of-two scalings.
  // CHECK-LABEL: gpu.func @exp_f64(
  // CHECK: llvm.call_intrinsic "llvm.roundeven"(%{{.+}}) : (f64) -> f64
  // CHECK-COUNT-12: llvm.call_intrinsic "llvm.fma"
  // CHECK: arith.fptosi %{{.+}} : f64 to i64
  // AMD-LABEL: gpu.func @exp_f64(
  // AMD: llvm.call_intrinsic "llvm.roundeven"(%{{.+}}) : (f64) -> f64
  // floor is an intrinsic on every float type, also on NVIDIA (no __nv_floor).
  // CHECK: llvm.call_intrinsic "llvm.floor"(%{{.+}}) : (f64) -> f64
  // AMD: llvm.call_intrinsic "llvm.floor"(%{{.+}}) : (f64) -> f64
  func.func @exp_f64(%x: tensor<128xf64, #b>, %p: tensor<128x!tile.ptr<f64>, #b>) attributes {tile.kernel} {
    %y = math.exp %x : tensor<128xf64, #b>
    %f = math.floor %y : tensor<128xf64, #b>
    "tile.store"(%p, %f) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<128x!tile.ptr<f64>, #b>, tensor<128xf64, #b>) -> ()
    return
  }
}

// -----

#b = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // tile.umulhi: mul.hi.u32 through llvm.nvvm.mulhi.ui on NVIDIA (as Triton), the high
  // result of arith.mului_extended on AMD.
  // CHECK-LABEL: gpu.func @umulhi(
  // CHECK: llvm.call_intrinsic "llvm.nvvm.mulhi.ui"(%{{.+}}, %{{.+}}) : (i32, i32) -> i32
  // AMD-LABEL: gpu.func @umulhi(
  // AMD: %{{.+}}, %[[HI:.+]] = arith.mului_extended %{{.+}}, %{{.+}} : i32
  func.func @umulhi(%x: tensor<128xi32, #b>, %p: tensor<128x!tile.ptr<i32>, #b>) attributes {tile.kernel} {
    %y = "tile.umulhi"(%x, %x) : (tensor<128xi32, #b>, tensor<128xi32, #b>) -> tensor<128xi32, #b>
    "tile.store"(%p, %y) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<128x!tile.ptr<i32>, #b>, tensor<128xi32, #b>) -> ()
    return
  }
}

// -----

#b = #tilegpu.blocked<array<i32: 1>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  // libdevice's bit intrinsics: math.ctpop/ctlz/cttz and tile.bitreverse are LLVM's ctpop,
  // ctlz/cttz (zero defined: i1 false) and bitreverse on both targets; tile.byte_perm is prmt
  // with the selector's nibbles cut to 3 bits (0x7777 = 30583) on NVIDIA, shifts and masks of
  // the 64-bit (y:x) on AMD.
  // CHECK-LABEL: gpu.func @bits(
  // CHECK: llvm.call_intrinsic "llvm.ctpop"(%{{.+}}) : (i32) -> i32
  // CHECK: %[[F:.+]] = arith.constant false
  // CHECK: llvm.call_intrinsic "llvm.ctlz"(%{{.+}}, %[[F]]) : (i64, i1) -> i64
  // CHECK: llvm.call_intrinsic "llvm.cttz"(%{{.+}}, %{{.+}}) : (i32, i1) -> i32
  // CHECK: llvm.call_intrinsic "llvm.bitreverse"(%{{.+}}) : (i64) -> i64
  // CHECK: %[[M:.+]] = arith.constant 30583 : i32
  // CHECK: %[[S:.+]] = arith.andi %{{.+}}, %[[M]] : i32
  // CHECK: llvm.call_intrinsic "llvm.nvvm.prmt"(%{{.+}}, %{{.+}}, %[[S]]) : (i32, i32, i32) -> i32
  // AMD-LABEL: gpu.func @bits(
  // AMD: llvm.call_intrinsic "llvm.ctpop"
  // AMD: llvm.call_intrinsic "llvm.bitreverse"
  // AMD-NOT: prmt
  // AMD: arith.shrui %{{.+}}, %{{.+}} : i64
  // AMD: arith.andi %{{.+}}, %{{.+}} : i32
  func.func @bits(%x: tensor<128xi32, #b>, %w: tensor<128xi64, #b>, %p: tensor<128x!tile.ptr<i32>, #b>, %q: tensor<128x!tile.ptr<i64>, #b>) attributes {tile.kernel} {
    %a = math.ctpop %x : tensor<128xi32, #b>
    %b = math.ctlz %w : tensor<128xi64, #b>
    %c = math.cttz %x : tensor<128xi32, #b>
    %d = "tile.bitreverse"(%w) : (tensor<128xi64, #b>) -> tensor<128xi64, #b>
    %e = "tile.byte_perm"(%x, %a, %c) : (tensor<128xi32, #b>, tensor<128xi32, #b>, tensor<128xi32, #b>) -> tensor<128xi32, #b>
    "tile.store"(%p, %e) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<128x!tile.ptr<i32>, #b>, tensor<128xi32, #b>) -> ()
    %f = arith.addi %b, %d : tensor<128xi64, #b>
    "tile.store"(%q, %f) {operandSegmentSizes = array<i32: 1, 1, 0>, tilegpu.vector_width = 1 : i32} : (tensor<128x!tile.ptr<i64>, #b>, tensor<128xi64, #b>) -> ()
    return
  }
}
