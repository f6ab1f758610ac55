# RUN: %python %s | FileCheck %s
#
# The debug builtins in the tile IR (compiled ahead of time, no GPU): tl.static_print prints
# while compiling and tl.static_assert checks at compile time (neither leaves IR);
# tl.device_print is one "tile.print" per value, with Triton's prefix format (a leading space,
# ": " at the end), `hex`, `is_signed` and the operand number when several values are
# printed; tl.device_assert is a "tile.assert" of the condition (or'ed with `not mask`) only
# when compiling with debug=True, and nothing otherwise.
import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile


@tilework.jit
def debug(x_ptr, n, B: tl.constexpr):
    tl.static_print("static_print: B =", B)
    tl.static_assert(B >= 16, "B too small")
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x)
    tl.device_print("n and x ", n, x, hex=True)
    tl.device_print("no values")
    tl.device_assert(x > 0, "x must be positive")
    tl.device_assert(offs < n, "in range", mask=offs < 4)


def show(title, debug_option):
    print(f"// ---- {title}")
    src = ASTSource(debug, {"x_ptr": tl.pointer_type(tl.float32), "n": tl.int32}, {"B": 32}, {})
    print(compile(src, "sm_90a", CompileOptions(debug=debug_option), cache=False).asm["tile"])


show("debug", True)
# CHECK-LABEL: // ---- debug
# CHECK-NEXT: static_print: B = 32
# CHECK: func.func @debug(
# CHECK: %[[X:.+]] = "tile.load"{{.*}} -> tensor<32xf32>
# CHECK-NEXT: "tile.print"(%[[X]]) {hex = 0 : i32, is_signed = 0 : i32, operand = -1 : i32, prefix = " x: "} : (tensor<32xf32>) -> ()
# CHECK-NEXT: "tile.print"(%arg1) {hex = 1 : i32, is_signed = 1 : i32, operand = 0 : i32, prefix = " n and x: "} : (i32) -> ()
# CHECK-NEXT: "tile.print"(%[[X]]) {hex = 1 : i32, is_signed = 0 : i32, operand = 1 : i32, prefix = " n and x: "} : (tensor<32xf32>) -> ()
# CHECK-NEXT: "tile.print"() {hex = 0 : i32, is_signed = 0 : i32, operand = -1 : i32, prefix = " no values"} : () -> ()
# CHECK: %[[POS:.+]] = arith.cmpf ogt, %[[X]], %{{.+}} : tensor<32xf32>
# CHECK-NEXT: "tile.assert"(%[[POS]]) {msg = "x must be positive"} : (tensor<32xi1>) -> ()
# the mask: cond | !mask
# CHECK: %[[C:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<32xi32>
# CHECK: %[[M:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<32xi32>
# CHECK: %[[NM:.+]] = arith.cmpi eq, %[[M]], %{{.+}} : tensor<32xi1>
# CHECK-NEXT: %[[OK:.+]] = arith.ori %[[C]], %[[NM]] : tensor<32xi1>
# CHECK-NEXT: "tile.assert"(%[[OK]]) {msg = "in range"} : (tensor<32xi1>) -> ()
# CHECK-NEXT: return

show("no debug", False)
# CHECK-LABEL: // ---- no debug
# CHECK-NEXT: static_print: B = 32
# CHECK: "tile.print"
# CHECK-NOT: "tile.assert"
# CHECK: return
