"""The AMD code objects, compile-only for every listed target: the example kernels compile to
hsaco with the expected instructions (MFMA for dot on CDNA, 128-bit global loads, `ds_*` for
LDS), no scratch, and a metadata note (read by `backends/amd/codeobject.py`, checked against
llvm-readelf where it is installed) that names the kernel and gives the wavefront size,
registers, LDS and a kernarg segment the size of what the HIP launcher packs."""
import re
import shutil
import subprocess

import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.backends import parse_target
from tilework.backends.amd.codeobject import (CodeObjectError, kernel_note, metadata_note,
                                              unpack_msgpack)
from tilework.compiler.driver import ASTSource, compile
from tilework.runtime.abi import param_kinds, struct_format

import struct

from test_examples import KERNELS, _aligned

TARGETS = ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"]
H, F = tl.pointer_type(tl.float16), tl.pointer_type(tl.float32)


def _vector_add():
    from vector_add import add_kernel
    sig = {"x_ptr": F, "y_ptr": F, "out_ptr": F, "n_elements": tl.int32}
    return add_kernel, sig, {"BLOCK_SIZE": 1024}, 4


def _matmul():
    from matmul import matmul_kernel
    fn = matmul_kernel
    while not hasattr(fn, "src") and hasattr(fn, "fn"):
        fn = fn.fn
    sig = {"a_ptr": H, "b_ptr": H, "c_ptr": H, **{p: tl.int32 for p in (
        "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
        "stride_cn")}}
    return fn, sig, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8,
                     "EVEN_K": True}, 4


def _compile(name, target, **opts):
    if name == "vector_add":
        fn, sig, cx, warps = _vector_add()
    elif name == "matmul":
        fn, sig, cx, warps = _matmul()
    else:
        fn, sig, cx, warps = KERNELS[name]
    attrs = _aligned(sig)
    attrs.update({k: {"tile.divisibility": 16} for k in ("n_elements", "K") if k in sig})
    return compile(ASTSource(fn, sig, cx, attrs), target,
                   CompileOptions(num_warps=warps, **opts), cache=False)


def _cdna(target):
    return parse_target(target).warp_size == 64


def _check_note(ck, target):
    t = parse_target(target)
    note = metadata_note(ck.binary)
    assert note["amdhsa.version"] == [1, 2] and note["code_object_version"] == 5
    assert note["amdhsa.target"] == f"amdgcn-amd-amdhsa--{target}"
    k = kernel_note(ck.binary, ck.name)
    assert k[".symbol"] == ck.name + ".kd"
    assert k[".wavefront_size"] == t.warp_size == ck.metadata["warp_size"]
    block = ck.metadata["num_warps"] * t.warp_size
    assert k[".max_flat_workgroup_size"] == block and k[".reqd_workgroup_size"] == [block, 1, 1]
    assert 0 < k[".vgpr_count"] <= 512 and 0 < k[".sgpr_count"] <= 112
    assert k[".vgpr_spill_count"] == 0 and k[".sgpr_spill_count"] == 0
    assert k[".private_segment_fixed_size"] == 0  # no scratch
    # shared memory is dynamic: the launch passes metadata["shared"], within the target's LDS
    assert k[".group_segment_fixed_size"] == 0
    assert ck.metadata.get("shared", 0) <= t.shared_memory
    # the kernarg segment is exactly what runtime/hip.py packs (no hidden arguments)
    kinds = param_kinds(ck.metadata)
    assert k[".kernarg_segment_size"] == struct.calcsize(struct_format(kinds))
    assert [a[".value_kind"] for a in k[".args"]] == [
        "global_buffer" if c == "p" else "by_value" for c in kinds]
    return k


def _no_scratch_no_calls(asm):
    assert not re.search(r"^\s*(scratch|buffer)_(load|store)", asm, re.M)  # no spills
    assert not re.search(r"\bs_swappc_b64\b|\bs_setpc_b64\b", asm)  # no calls


@pytest.mark.parametrize("target", TARGETS)
def test_vector_add(target):
    ck = _compile("vector_add", target)
    asm = ck.asm["amdgcn"]
    assert ("global_load_dwordx4" if _cdna(target) else "global_load_b128") in asm
    _no_scratch_no_calls(asm)
    _check_note(ck, target)


@pytest.mark.parametrize("target", TARGETS)
def test_softmax_default_config(target):
    ck = _compile("softmax", target)
    asm = ck.asm["amdgcn"]
    assert ("global_load_dwordx4" if _cdna(target) else "global_load_b128") in asm
    assert re.search(r"\bds_(write|store)", asm) and re.search(r"\bds_(read|load)", asm)
    _no_scratch_no_calls(asm)
    _check_note(ck, target)


@pytest.mark.parametrize("target", TARGETS)
def test_gemm_default_config(target):
    ck = _compile("matmul", target)
    asm = ck.asm["amdgcn"]
    if _cdna(target):
        assert re.search(r"\bv_mfma_f32_(32x32x(8|16)_?f16)\b", asm), "no MFMA"
    _no_scratch_no_calls(asm)
    _check_note(ck, target)


@pytest.mark.parametrize("name", [n for n in KERNELS if n != "softmax"])
@pytest.mark.parametrize("target", ["gfx90a", "gfx1201"])
def test_examples_compile(name, target):
    ck = _compile(name, target)
    _no_scratch_no_calls(ck.asm["amdgcn"])
    _check_note(ck, target)


def test_waves_per_eu_reaches_the_kernel():
    ck = _compile("vector_add", "gfx942", waves_per_eu=2)
    assert '"amdgpu-waves-per-eu"="2"' in ck.asm["llir"]
    assert '"amdgpu-flat-work-group-size"="256,256"' in ck.asm["llir"]
    plain = _compile("vector_add", "gfx942")
    assert "amdgpu-waves-per-eu" not in plain.asm["llir"]


@pytest.mark.skipif(shutil.which("llvm-readelf") is None, reason="no llvm-readelf")
def test_note_matches_llvm_readelf(tmp_path):
    ck = _compile("vector_add", "gfx942")
    p = tmp_path / "k.hsaco"
    p.write_bytes(ck.binary)
    out = subprocess.run(["llvm-readelf", "--notes", str(p)], capture_output=True,
                         text=True).stdout
    k = kernel_note(ck.binary, ck.name)
    for key in (".kernarg_segment_size", ".vgpr_count", ".sgpr_count", ".wavefront_size",
                ".private_segment_fixed_size", ".group_segment_fixed_size"):
        assert re.search(rf"{re.escape(key)}:\s+{k[key]}\b", out), key
    assert re.search(rf"\.name:\s+{ck.name}\b", out)


def test_msgpack_reader():
    # {"a": [1, -1, 300, "x"], "b": true, "c": 1.5} written by hand
    blob = bytes([0x83, 0xA1, 0x61, 0x94, 0x01, 0xFF, 0xCD, 0x01, 0x2C, 0xA1, 0x78,
                  0xA1, 0x62, 0xC3, 0xA1, 0x63, 0xCB]) + struct.pack(">d", 1.5)
    assert unpack_msgpack(blob) == {"a": [1, -1, 300, "x"], "b": True, "c": 1.5}
    with pytest.raises(CodeObjectError, match="1 bytes after"):
        unpack_msgpack(blob + b"\x00")
    with pytest.raises(CodeObjectError, match="not a 64-bit ELF"):
        metadata_note(b"not an elf at all")


def test_unknown_kernel_in_note():
    ck = _compile("vector_add", "gfx90a")
    with pytest.raises(CodeObjectError, match="kernel 'nope' is not in the code object"):
        kernel_note(ck.binary, "nope")


def test_module_pipeline_runs_before_codegen():
    # LLVM's module pipeline at opt_level: fewer VGPRs than the unoptimised module (gfx942's
    # 64x64 GEMM without the stream pipeliner's prefetch registers: 95 against 136)
    opt = kernel_note(_compile("matmul", "gfx942", num_stages=1).binary, "matmul_kernel")
    plain = kernel_note(_compile("matmul", "gfx942", num_stages=1, opt_level=0).binary,
                        "matmul_kernel")
    assert opt[".vgpr_count"] <= 112 < plain[".vgpr_count"]


def test_scratch_bytes_reads_every_kernel():
    from tilework.backends.amd.compiler import scratch_bytes
    asm = ("\t.amdhsa_kernel a\n\t\t.amdhsa_private_segment_fixed_size 0\n"
           "\t.amdhsa_kernel b\n\t\t.amdhsa_private_segment_fixed_size 76\n")
    assert scratch_bytes(asm) == 76 and scratch_bytes("") == 0
    ck = _compile("vector_add", "gfx942")
    assert scratch_bytes(ck.asm["amdgcn"]) == 0
    assert ".amdhsa_private_segment_fixed_size 0" in ck.asm["amdgcn"]
