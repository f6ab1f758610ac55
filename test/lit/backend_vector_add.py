# RUN: %python %s | FileCheck %s
#
# Vector add compiled ahead of time down to the target assembly (no GPU needed): with n
# divisible by 16 the PTX for sm_90a moves 16 bytes per access (ld/st.global.v4.b32) and the
# AMDGCN for gfx942 does too (global_load/store_dwordx4); with n unknown the accesses are
# scalar.
import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile


@tilework.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


PTRS = ("x_ptr", "y_ptr", "out_ptr")


def build(target, dtype=tl.float32, n_divisible=True):
    sig = {p: tl.pointer_type(dtype) for p in PTRS}
    sig["n_elements"] = tl.int32
    attrs = {p: {"tile.divisibility": 16} for p in PTRS + (("n_elements",) if n_divisible else ())}
    return compile(ASTSource(add_kernel, sig, {"BLOCK_SIZE": 1024}, attrs), target, cache=False)


# sm_90a, 4 warps: each thread owns 2 runs of 4 fp32 -> per input 2 masked 16-byte loads.
print("// ---- ptx sm_90a f32 n%16")
print(build("sm_90a").asm["ptx"])
# CHECK-LABEL: // ---- ptx sm_90a f32 n%16
# CHECK: .target sm_90a
# CHECK: .visible .entry add_kernel(
# CHECK: .maxntid 128, 1, 1
# CHECK-NOT: {{ld\.global\.[^v]}}
# CHECK-COUNT-4: ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}{{(\+2048)?}}];
# CHECK-NOT: ld.global
# CHECK-COUNT-2: st.global.v4.b32 [%rd{{[0-9]+}}{{(\+2048)?}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
# CHECK-NOT: {{(ld|st)\.global}}
# CHECK: ret;

# fp16: 8 halves = 16 bytes per access, so the same v4.b32 accesses, one per input.
print("// ---- ptx sm_90a f16 n%16")
print(build("sm_90a", tl.float16).asm["ptx"])
# CHECK-LABEL: // ---- ptx sm_90a f16 n%16
# CHECK: .visible .entry add_kernel(
# CHECK-NOT: {{ld\.global\.[^v]}}
# CHECK-COUNT-2: ld.global.v4.b32
# CHECK-NOT: ld.global
# CHECK: st.global.v4.b32
# CHECK-NOT: {{(ld|st)\.global}}
# CHECK: ret;

# n unknown: the mask may change at any element, so every element is its own 4-byte access:
# 8 per thread and input.
print("// ---- ptx sm_90a f32 n unknown")
print(build("sm_90a", n_divisible=False).asm["ptx"])
# CHECK-LABEL: // ---- ptx sm_90a f32 n unknown
# CHECK: .visible .entry add_kernel(
# CHECK-NOT: {{ld\.global\.v|st\.global}}
# CHECK-COUNT-16: ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}{{(\+[0-9]+)?}}];
# CHECK-NOT: ld.global
# CHECK-COUNT-8: st.global.b32 [%rd{{[0-9]+}}{{(\+[0-9]+)?}}], %r{{[0-9]+}};
# CHECK-NOT: {{(ld|st)\.global}}
# CHECK: ret;

# gfx942, 4 wavefronts of 64: 256 threads x 4 fp32 cover the 1024 elements once.
print("// ---- amdgcn gfx942 f32 n%16")
print(build("gfx942").asm["amdgcn"])
# CHECK-LABEL: // ---- amdgcn gfx942 f32 n%16
# CHECK: .amdgcn_target "amdgcn-amd-amdhsa--gfx942"
# CHECK: add_kernel:
# CHECK-NOT: {{global_load_([^d]|dword[ x][^4])}}
# CHECK-COUNT-2: global_load_dwordx4 v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], off
# CHECK-NOT: global_load
# CHECK: global_store_dwordx4 v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], off
# CHECK-NOT: {{global_(load|store)}}
# CHECK: s_endpgm
# CHECK: .amdhsa_kernel add_kernel
# CHECK: .end_amdhsa_kernel
# CHECK: .name: add_kernel
# CHECK: .reqd_workgroup_size:
# CHECK-NEXT: - 256
# CHECK-NEXT: - 1
# CHECK-NEXT: - 1
# CHECK: .wavefront_size: 64
