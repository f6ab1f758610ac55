// RUN: tilework-opt %s --tilegpu-to-llvm --target gfx942 | FileCheck %s

// device_print on AMD (no printf without ROCm's device libraries): each printing thread loads
// the buffer's address from the global the runtime fills in (null: print nothing), reserves
// its records with one atomic add on the byte counter at offset 0, reads the capacity at
// offset 8 and writes each record that fits at 16 + its offset: descriptor id, program ids,
// thread id, the element's row-major index, the value widened to 8 bytes
// (tilework.runtime.printbuf).  The descriptors go on the gpu.module, for the metadata.

// CHECK: gpu.module @kernels {{.*}}attributes {tilework.prints = "[{\22prefix\22: \22 r: \22, \22operand\22: -1, \22kind\22: \22i\22, \22bits\22: 32, \22shape\22: [128]}, {\22prefix\22: \22 n: \22, \22operand\22: -1, \22kind\22: \22x\22, \22bits\22: 32, \22shape\22: []}, {\22prefix\22: \22hi\22, \22operand\22: -1, \22kind\22: null, \22bits\22: 0, \22shape\22: []}]"}
// CHECK: llvm.mlir.global external protected @tilework_print_buf() {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.ptr<1>
// CHECK: llvm.mlir.zero : !llvm.ptr<1>
// CHECK-LABEL: gpu.func @k(
// 128 elements on 256 threads: the owners of the first copies (thread id bit 7, a copy bit
// of the layout's linear map, clear: thread id < 128) print
// CHECK: %[[OWN:.+]] = arith.cmpi ult, %{{.+}}, %c128_i32 : i32
// CHECK: scf.if %[[OWN]] {
// CHECK: %[[G:.+]] = llvm.mlir.addressof @tilework_print_buf : !llvm.ptr<1>
// CHECK: %[[B:.+]] = llvm.load %[[G]] : !llvm.ptr<1> -> !llvm.ptr<1>
// CHECK: %[[BI:.+]] = llvm.ptrtoint %[[B]] : !llvm.ptr<1> to i64
// CHECK: %[[SET:.+]] = arith.cmpi ult, %c0_i64, %[[BI]] : i64
// CHECK: scf.if %[[SET]] {
// CHECK: %[[OFF:.+]] = llvm.atomicrmw add %[[B]], %c32_i64 syncscope("agent") monotonic {alignment = 8 : i64} : !llvm.ptr<1>, i64
// CHECK: %[[CP:.+]] = llvm.getelementptr %[[B]][8] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
// CHECK: %[[CAP:.+]] = llvm.load %[[CP]] : !llvm.ptr<1> -> i64
// CHECK: %[[END:.+]] = arith.addi %[[OFF]], %c32_i64 : i64
// CHECK: %[[FITS:.+]] = arith.cmpi ule, %[[END]], %[[CAP]] : i64
// CHECK: scf.if %[[FITS]] {
// CHECK: %[[AT:.+]] = arith.addi %[[OFF]], %c16_i64 : i64
// CHECK: %[[R:.+]] = llvm.getelementptr %[[B]][%[[AT]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// CHECK: %[[V:.+]] = arith.extsi %{{.+}} : i32 to i64
// CHECK: llvm.getelementptr %[[R]][0]
// CHECK-NEXT: llvm.store %c0_i32,
// CHECK: llvm.getelementptr %[[R]][4]
// CHECK: llvm.getelementptr %[[R]][8]
// CHECK: llvm.getelementptr %[[R]][12]
// CHECK: llvm.getelementptr %[[R]][16]
// CHECK: llvm.getelementptr %[[R]][20]
// CHECK: %[[VP:.+]] = llvm.getelementptr %[[R]][24]
// CHECK-NEXT: llvm.store %[[V]], %[[VP]] : i64, !llvm.ptr<1>
// the scalar, by thread 0: hex, so zero-extended; descriptor 1
// CHECK: arith.extui %arg1 : i32 to i64
// CHECK: llvm.store %c1_i32,
// the prefix alone: descriptor 2, no value
// CHECK: llvm.store %c2_i32,
// CHECK-NOT: getelementptr %{{.+}}[24]
// CHECK: gpu.return

#L = #tilegpu.blocked<array<i32: 1>, array<i32: 64>, array<i32: 4>, array<i32: 0>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 64 : i32} {
  func.func @k(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
    %r = "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32, #L>
    "tile.print"(%r) {hex = 0 : i32, is_signed = 1 : i32, operand = -1 : i32, prefix = " r: "} : (tensor<128xi32, #L>) -> ()
    "tile.print"(%n) {hex = 1 : i32, is_signed = 1 : i32, operand = -1 : i32, prefix = " n: "} : (i32) -> ()
    "tile.print"() {hex = 0 : i32, is_signed = 0 : i32, operand = -1 : i32, prefix = "hi"} : () -> ()
    return
  }
}
