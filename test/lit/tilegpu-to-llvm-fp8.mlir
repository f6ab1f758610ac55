// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_90a | FileCheck %s
// RUN: tilework-opt %s --split-input-file --tilegpu-to-llvm --target sm_80 | FileCheck %s --check-prefix=SM80

// f32 -> fp8 (lowering/rules/fp8.py) on sm_89+: a thread's registers 4i..4i+3 converted into
// one packed word by two `cvt.rn.satfinite.<kind>x2.f32` in one asm (register 4i+j in byte j:
// cvt puts its first source in the high byte), then the expansion's fix-ups on the packed word:
// e5m2's inf bytes get 1 added (satfinite gives 0x7b), and every byte is ORed with its input's
// sign (0x80808080 of three prmts: bytes 3 and 7 of registers 0,1 to bytes 0,1 (0x73), of 2,3
// to bytes 2,3 (0x7300), joined (0x7610)); the fp8 values are the word's bytes.  sm_80 keeps
// the integer expansion (no cvt).
// CHECK-LABEL: gpu.func @to_e4m3(
// CHECK: %[[W:.+]] = llvm.inline_asm asm_dialect = att "{ .reg .b16 l, h; cvt.rn.satfinite.e4m3x2.f32 l, $2, $1; cvt.rn.satfinite.e4m3x2.f32 h, $4, $3; mov.b32 $0, {l, h}; }", "=r,f,f,f,f" %arg0, %arg0, %arg0, %arg0 : (f32, f32, f32, f32) -> i32
// CHECK-NOT: arith.cmpi
// CHECK: %[[S01:.+]] = llvm.call_intrinsic "llvm.nvvm.prmt"(%{{.+}}, %{{.+}}, %c115_i32)
// CHECK: %[[S23:.+]] = llvm.call_intrinsic "llvm.nvvm.prmt"(%{{.+}}, %{{.+}}, %c29440_i32)
// CHECK: %[[S:.+]] = llvm.call_intrinsic "llvm.nvvm.prmt"(%[[S01]], %[[S23]], %c30224_i32)
// CHECK-NEXT: %[[M:.+]] = arith.andi %[[S]], %c-2139062144_i32
// CHECK-NEXT: %[[F:.+]] = arith.ori %[[W]], %[[M]]
// CHECK-NEXT: arith.trunci %[[F]] : i32 to i8
// CHECK: arith.shrui %[[F]], %c8_i32
// CHECK: arith.shrui %[[F]], %c16_i32
// CHECK: arith.shrui %[[F]], %c24_i32
// CHECK-NOT: cvt.rn.satfinite
// CHECK: gpu.return
// SM80-LABEL: gpu.func @to_e4m3(
// SM80-NOT: cvt.rn.satfinite
// SM80: gpu.return
#b = #tilegpu.blocked<array<i32: 4>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @to_e4m3(%x: f32) attributes {tile.kernel} {
    %t = "tile.splat"(%x) : (f32) -> tensor<512xf32, #b>
    %p = arith.truncf %t : tensor<512xf32, #b> to tensor<512xf8E4M3FN, #b>
    return
  }
}

// -----

// e5m2: before the signs, each input equal to inf in magnitude adds 1 to its byte (0x7b, what
// satfinite gives it, to e5m2's inf 0x7c).  Two registers a thread: one cvt x2 into a b16.
// CHECK-LABEL: gpu.func @to_e5m2(
// CHECK: %[[H:.+]] = llvm.inline_asm asm_dialect = att "cvt.rn.satfinite.e5m2x2.f32 $0, $2, $1;", "=h,f,f"
// CHECK-NEXT: %[[W:.+]] = arith.extui %[[H]] : i16 to i32
// CHECK: arith.cmpi eq, %{{.+}}, %c2139095040_i32
// CHECK: %[[A0:.+]] = arith.addi %[[W]], %c1_i32
// CHECK: arith.cmpi eq, %{{.+}}, %c2139095040_i32
// CHECK: arith.addi %{{.+}}, %c256_i32
// CHECK: llvm.call_intrinsic "llvm.nvvm.prmt"(%{{.+}}, %{{.+}}, %c115_i32)
// CHECK-NEXT: arith.andi %{{.+}}, %c32896_i32
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
#b = #tilegpu.blocked<array<i32: 2>, array<i32: 32>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 32 : i32} {
  func.func @to_e5m2(%x: f32) attributes {tile.kernel} {
    %t = "tile.splat"(%x) : (f32) -> tensor<256xf32, #b>
    %p = arith.truncf %t : tensor<256xf32, #b> to tensor<256xf8E5M2, #b>
    return
  }
}
