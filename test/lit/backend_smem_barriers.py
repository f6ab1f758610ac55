# RUN: %python %s | FileCheck %s
#
# Every user of the shared scratch buffer (cross-warp reductions here) writes, synchronizes
# and reads.  A barrier before the writes is needed only while an earlier user's readers may
# remain: not for the kernel's first user, yes for the second one, and always at the top of a
# loop body (the previous iteration's readers).
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile


@tilework.jit
def two_sums(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    m = tl.max(x, axis=0)
    s = tl.sum(x - m, axis=0)
    tl.store(out_ptr, s)


@tilework.jit
def sum_in_loop(x_ptr, out_ptr, n, N: tl.constexpr):
    acc = 0.0
    for i in range(n):
        acc += tl.sum(tl.load(x_ptr + i * N + tl.arange(0, N)), axis=0)
    tl.store(out_ptr, acc)


P = tl.pointer_type(tl.float32)
for fn, sig in ((two_sums, dict(x_ptr=P, out_ptr=P)),
                (sum_in_loop, dict(x_ptr=P, out_ptr=P, n=tl.int32))):
    ck = compile(ASTSource(fn, sig, dict(N=1024), {}), "sm_90a", cache=False)
    print(ck.asm["llvm"])

# CHECK-LABEL: llvm.func @two_sums
# CHECK-NOT: nvvm.barrier0
# CHECK: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr<3>
# CHECK-NEXT: nvvm.barrier0
# CHECK: llvm.load %{{.+}} : !llvm.ptr<3> -> f32
# CHECK: nvvm.barrier0
# CHECK-NEXT: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr<3>
# CHECK-NEXT: nvvm.barrier0
# CHECK: llvm.load %{{.+}} : !llvm.ptr<3> -> f32
# CHECK-NOT: nvvm.barrier0
# CHECK: llvm.return

# CHECK-LABEL: llvm.func @sum_in_loop
# CHECK-NOT: nvvm.barrier0
# CHECK: llvm.cond_br
# CHECK: nvvm.barrier0
# CHECK-NEXT: llvm.getelementptr
# CHECK-NEXT: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr<3>
# CHECK-NEXT: nvvm.barrier0
# CHECK: llvm.load %{{.+}} : !llvm.ptr<3> -> f32
# CHECK: llvm.br
