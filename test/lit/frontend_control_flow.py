# RUN: %python %s | FileCheck %s
#
# The tile IR of runtime control flow (compiled ahead of time, no GPU): `for` over range and
# tl.range -> scf.for with loop-carried tiles and scalars (tl.range hints as tile.*
# attributes), a negative constexpr step run upward and mirrored, a runtime step run over its
# trip count, `while` -> scf.while, `if`/`else` -> scf.if yielding the names both branches
# assign, and `return` inside a runtime `if` (the rest of the function in the else branch).
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

P32, PI32 = tl.pointer_type(tl.float32), tl.pointer_type(tl.int32)


@tilework.jit
def carried(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    count = 0
    for k in tl.range(0, n, BLOCK, num_stages=3):
        acc += tl.load(x_ptr + k + offs)
        count += 1
    tl.store(out_ptr + offs, acc / count)


@tilework.jit
def steps(out_ptr, n, s, STEP: tl.constexpr):
    for i in range(n, 0, STEP):
        tl.store(out_ptr + i, 1.0)
    for j in range(0, n, s):
        tl.store(out_ptr + j, 2.0)


@tilework.jit
def loop_while(out_ptr, n):
    i = 1
    while i < n:
        i = i * 2
    tl.store(out_ptr, i)


@tilework.jit
def branches(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if n > 0:
        y = x * 2.0
        s = 1.0
    else:
        y = x
        s = tl.load(x_ptr)
    tl.store(out_ptr + offs, y + s)


@tilework.jit
def _clamp(v, hi):
    if v > hi:
        return hi
    return v


@tilework.jit
def early(out_ptr, n, m):
    if tl.program_id(0) >= n:
        return
    tl.store(out_ptr, _clamp(m, n))


def show(title, fn, sig, constants=None):
    print(f"// ---- {title}")
    print(compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False).asm["tile"])


# A tile and a Python int carried by the loop (the int becomes an i32 starting at 0); the
# loop variable is i32 and the num_stages hint stays on the loop.
show("carried", carried, {"x_ptr": P32, "out_ptr": P32, "n": tl.int32}, {"BLOCK": 128})
# CHECK-LABEL: // ---- carried
# CHECK: %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : tensor<128xf32>
# CHECK: %[[LB:.+]] = arith.constant 0 : i32
# CHECK: %[[STEP:.+]] = arith.constant 128 : i32
# CHECK: %[[COUNT0:.+]] = arith.constant 0 : i32
# CHECK: %[[R:.+]]:2 = scf.for %[[K:.+]] = %[[LB]] to %arg2 step %[[STEP]] iter_args(%[[ACC:.+]] = %[[ZEROS]], %[[COUNT:.+]] = %[[COUNT0]]) -> (tensor<128xf32>, i32)  : i32 {
# CHECK: "tile.addptr"(%arg0, %[[K]]) : (!tile.ptr<f32>, i32) -> !tile.ptr<f32>
# CHECK: %[[V:.+]] = "tile.load"
# CHECK: %[[ACC2:.+]] = arith.addf %[[ACC]], %[[V]]{{.*}} : tensor<128xf32>
# CHECK: %[[COUNT2:.+]] = arith.addi %[[COUNT]], %{{.+}} : i32
# CHECK-NEXT: scf.yield %[[ACC2]], %[[COUNT2]] : tensor<128xf32>, i32
# CHECK-NEXT: } {tile.num_stages = 3 : i32}
# CHECK: "tile.splat"(%[[R]]#1) : (i32) -> tensor<128xi32>
# CHECK: arith.divf %[[R]]#0,

# range(n, 0, -2) runs upward from 0 by 2 and takes n + 0 - iv; range(0, n, s) with a
# runtime step runs k over the trip count and takes 0 + k * s.
show("steps", steps, {"out_ptr": P32, "n": tl.int32, "s": tl.int32}, {"STEP": -2})
# CHECK-LABEL: // ---- steps
# CHECK: %[[SUM:.+]] = arith.addi %arg1, %{{.+}} : i32
# CHECK: %[[TWO:.+]] = arith.constant 2 : i32
# CHECK: scf.for %[[IV:.+]] = %{{.+}} to %arg1 step %[[TWO]]  : i32 {
# CHECK-NEXT: %[[I:.+]] = arith.subi %[[SUM]], %[[IV]] : i32
# CHECK-NEXT: "tile.addptr"(%arg0, %[[I]])
# CHECK: %[[UP:.+]] = arith.cmpi sgt, %arg2, %{{.+}} : i32
# CHECK: arith.divsi
# CHECK: %[[TRIPS:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : i32
# CHECK-NEXT: scf.for %[[KK:.+]] = %{{.+}} to %[[TRIPS]] step %{{.+}}  : i32 {
# CHECK-NEXT: %[[KS:.+]] = arith.muli %[[KK]], %arg2 : i32
# CHECK-NEXT: %[[J:.+]] = arith.addi %{{.+}}, %[[KS]] : i32
# CHECK-NEXT: "tile.addptr"(%arg0, %[[J]])

show("while", loop_while, {"out_ptr": PI32, "n": tl.int32})
# CHECK-LABEL: // ---- while
# CHECK: %[[ONE:.+]] = arith.constant 1 : i32
# CHECK-NEXT: %[[W:.+]] = scf.while (%[[A:.+]] = %[[ONE]]) : (i32) -> i32 {
# CHECK-NEXT: %[[C:.+]] = arith.cmpi slt, %[[A]], %arg1 : i32
# CHECK-NEXT: scf.condition(%[[C]]) %[[A]] : i32
# CHECK-NEXT: } do {
# CHECK-NEXT: ^bb0(%[[B:.+]]: i32):
# CHECK: %[[B2:.+]] = arith.muli %[[B]], %{{.+}} : i32
# CHECK-NEXT: scf.yield %[[B2]] : i32
# CHECK: "tile.store"(%arg0, %[[W]])

# Both branches assign y (a tile) and s (a Python float in one, an fp32 load in the other).
show("branches", branches, {"x_ptr": P32, "out_ptr": P32, "n": tl.int32}, {"BLOCK": 64})
# CHECK-LABEL: // ---- branches
# CHECK: %[[X:.+]] = "tile.load"
# CHECK: %[[COND:.+]] = arith.cmpi sgt, %arg2, %{{.+}} : i32
# CHECK-NEXT: %[[IF:.+]]:2 = scf.if %[[COND]] -> (tensor<64xf32>, f32) {
# CHECK: %[[Y:.+]] = arith.mulf %[[X]], %{{.+}} : tensor<64xf32>
# CHECK-NEXT: %[[S:.+]] = arith.constant 1.000000e+00 : f32
# CHECK-NEXT: scf.yield %[[Y]], %[[S]] : tensor<64xf32>, f32
# CHECK-NEXT: } else {
# CHECK-NEXT: %[[L:.+]] = "tile.load"(%arg0) {{.*}} -> f32
# CHECK-NEXT: scf.yield %[[X]], %[[L]] : tensor<64xf32>, f32
# CHECK: "tile.splat"(%[[IF]]#1)
# CHECK: arith.addf %[[IF]]#0,

# The kernel's early exit leaves the then branch empty; the inlined helper's `return` inside
# a runtime `if` becomes an scf.if yielding the returned value.
show("early", early, {"out_ptr": PI32, "n": tl.int32, "m": tl.int32})
# CHECK-LABEL: // ---- early
# CHECK: %[[EXIT:.+]] = arith.cmpi sge, %{{.+}}, %arg1 : i32
# CHECK-NEXT: scf.if %[[EXIT]] {
# CHECK-NEXT: } else {
# CHECK-NEXT: %[[GT:.+]] = arith.cmpi sgt, %arg2, %arg1 : i32
# CHECK-NEXT: %[[CL:.+]] = scf.if %[[GT]] -> (i32) {
# CHECK-NEXT: scf.yield %arg1 : i32
# CHECK-NEXT: } else {
# CHECK-NEXT: scf.yield %arg2 : i32
# CHECK-NEXT: {{^ *}}}
# CHECK-NEXT: "tile.store"(%arg0, %[[CL]]) {{.*}} -> ()
# CHECK-NEXT: {{^ *}}}
# CHECK-NEXT: return
