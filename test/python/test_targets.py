"""Targets: the table of known architectures, refusing unknown ones (API, CLI, tilework-opt),
the backend registry and each backend's own tilegpu pass list, the typed pass context."""
import os
import subprocess
import sys

import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.backends import (BACKENDS, Target, get_backend, known_targets, parse_target,
                               register_backend)
from tilework.compiler.driver import ASTSource, compile
from vector_add import add_kernel

P = tl.pointer_type(tl.float32)
SIG = {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n_elements": tl.int32}
ALIGNED = {k: {"tile.divisibility": 16} for k in SIG}
KNOWN = ["sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a",
         "sm_100", "sm_100a", "sm_120", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1200",
         "gfx1201"]
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "vector_add.py")


def vector_add():
    return ASTSource(add_kernel, SIG, {"BLOCK_SIZE": 1024}, ALIGNED)


# ---- the table -----------------------------------------------------------------------------

def test_known_targets_are_the_table():
    assert known_targets() == KNOWN


@pytest.mark.parametrize("arch, backend, cap, warp, smem, matrix", [
    ("sm_75", "nvidia", 75, 32, 64 * 1024, ("mma_v2",)),
    ("sm_80", "nvidia", 80, 32, 163 * 1024, ("mma_v2",)),
    ("sm_86", "nvidia", 86, 32, 99 * 1024, ("mma_v2",)),
    ("sm_90", "nvidia", 90, 32, 227 * 1024, ("mma_v2",)),
    ("sm_90a", "nvidia", 90, 32, 227 * 1024, ("mma_v2", "wgmma")),
    ("sm_100", "nvidia", 100, 32, 227 * 1024, ("mma_v2",)),
    ("sm_100a", "nvidia", 100, 32, 227 * 1024, ("mma_v2", "tcgen05")),
    ("gfx90a", "amd", 0x90a, 64, 64 * 1024, ("mfma_32x32x8", "mfma_16x16x16")),
    ("gfx942", "amd", 0x942, 64, 64 * 1024,
     ("mfma_32x32x8", "mfma_16x16x16", "mfma_32x32x16_fp8", "mfma_16x16x32_fp8")),
    ("gfx1100", "amd", 0x1100, 32, 64 * 1024, ("wmma_v1",)),
    ("gfx1201", "amd", 0x1201, 32, 64 * 1024, ("wmma_v2",)),
])
def test_target_facts(arch, backend, cap, warp, smem, matrix):
    t = parse_target(arch)
    assert (t.backend, t.arch, t.capability, t.warp_size, t.shared_memory, t.matrix) == \
        (backend, arch, cap, warp, smem, matrix)
    assert str(t) == arch
    assert t.has(matrix[0]) and not t.has("nope")
    assert parse_target(t) is t
    with pytest.raises(Exception):
        t.arch = "sm_80"  # frozen


def test_capabilities_order_the_families():
    caps = [parse_target(a).capability for a in ("gfx90a", "gfx942", "gfx950", "gfx1100",
                                                   "gfx1201")]
    assert caps == sorted(caps)
    assert parse_target("gfx950").features == "" and parse_target("sm_90a").features == "+ptx80"
    assert parse_target("sm_120").features == "+ptx87"


KNOWN_LIST = "known targets: " + ", ".join(KNOWN)


@pytest.mark.parametrize("name, message", [
    ("gfx000", "unknown target 'gfx000'; " + KNOWN_LIST),
    ("sm_999", "unknown target 'sm_999'; " + KNOWN_LIST),
    ("foo", "unknown target 'foo'; " + KNOWN_LIST),
    ("gfx1030", "unknown target 'gfx1030'; " + KNOWN_LIST),
    ("sm_60", "unsupported target 'sm_60': NVIDIA targets from sm_70 are supported; "
              + KNOWN_LIST),
])
def test_unknown_targets_are_refused_before_llvm(name, message):
    with pytest.raises(ValueError) as e:
        parse_target(name)
    assert str(e.value) == message
    with pytest.raises(ValueError) as e:
        compile(vector_add(), name, cache=False)
    assert str(e.value) == message
    with pytest.raises(ValueError) as e:
        get_backend(name)
    assert str(e.value) == message


@pytest.mark.parametrize("argv", [
    ["-m", "tilework.tools.cli", "compile", EXAMPLE + ":add_kernel", "--target", "gfx000",
     "--signature", "*fp32,*fp32,*fp32,i32", "--constexpr", "BLOCK_SIZE=1024", "-o", "OUT"],
    ["-m", "tilework.tools.cli", "compile", EXAMPLE + ":add_kernel", "--target", "sm_999",
     "--signature", "*fp32,*fp32,*fp32,i32", "--constexpr", "BLOCK_SIZE=1024", "-o", "OUT"],
    ["-m", "tilework.tools.cli", "stages", "--target", "gfx000"],
    ["-m", "tilework.tools.opt", "-", "--tile-combine", "--target", "gfx000"],
])
def test_command_lines_refuse_unknown_targets(tmp_path, argv):
    argv = [str(tmp_path) if a == "OUT" else a for a in argv]
    target = argv[argv.index("--target") + 1]
    r = subprocess.run([sys.executable] + argv, capture_output=True, text=True, input="")
    assert 0 < r.returncode < 128, (r.returncode, r.stderr)
    assert f"error: unknown target '{target}'; {KNOWN_LIST}" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "LLVM ERROR" not in r.stderr
    assert not os.listdir(tmp_path)


def test_cli_stages_lists_each_backends_chain():
    for target, want in (("sm_120", "tile -> tilegpu -> llvm -> llir -> ptx -> cubin"),
                         ("gfx1100", "tile -> tilegpu -> llvm -> llir -> amdgcn -> hsaco")):
        r = subprocess.run([sys.executable, "-m", "tilework.tools.cli", "stages", "--target",
                            target], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.strip() == want, r.stderr


@pytest.mark.parametrize("arch", KNOWN)
def test_every_known_target_compiles_to_assembly(arch):
    """Through the stage chain up to the assembly, and the hsaco on AMD (a cubin needs a
    ptxas that knows the chip: CUDA 13's has no sm_70/sm_72)."""
    from tilework.dialects import new_context
    import mlir.ir as ir
    backend = get_backend(arch)
    opts = CompileOptions()
    stages = backend.stages(opts)
    asm_stage = "ptx" if arch.startswith("sm_") else "amdgcn"
    ck = compile(vector_add(), arch, cache=False) if arch in ("sm_90a", "gfx942") else None
    md = {}
    with new_context() as ctx, ir.Location.unknown(ctx):
        from tilework.frontend.codegen import build_kernel
        cur = build_kernel(add_kernel, SIG, {"BLOCK_SIZE": 1024}, ALIGNED, ctx, options=opts)
        for s in ("tilegpu", "llvm", "llir", asm_stage):
            cur = stages[s](cur, md)
    if asm_stage == "ptx":
        assert f".target {arch}" in cur
        # 16-byte loads (sm_100a packs f32 pairs: add.f32x2 on v2.b64)
        assert "ld.global.v4.b32" in cur or "ld.global.v2.b64" in cur
    else:
        assert f'.amdgcn_target "amdgcn-amd-amdhsa--{arch}' in cur
        assert "global_load_dwordx4" in cur or "global_load_b128" in cur  # CDNA / RDNA syntax
        assert stages["hsaco"](cur, md)[:4] == b"\x7fELF"
    if ck is not None:
        assert ck.asm[asm_stage] == cur


def test_register_backend_rejects_duplicates():
    t = Target("nvidia", "sm_80", 80, 32, 1024)
    with pytest.raises(ValueError, match="^backend 'nvidia' is already registered$"):
        register_backend("nvidia", {}, lambda: None)
    with pytest.raises(ValueError, match="^architecture 'sm_80' of backend 'other' is already "
                                         "registered by backend 'nvidia'$"):
        register_backend("other", {"sm_80": Target("other", "sm_80", 80, 32, 1024)},
                         lambda: None)
    with pytest.raises(ValueError, match="^target table of 'other': entry 'sm_81' describes "
                                         "nvidia/sm_80$"):
        register_backend("other", {"sm_81": t}, lambda: None)
    assert "other" not in BACKENDS


def test_a_registered_backend_compiles_its_targets(monkeypatch):
    """A new backend: its table and its Backend class (here NVIDIA's code under a new name)."""
    from tilework import backends
    from tilework.backends.nvidia.compiler import NVIDIABackend
    monkeypatch.setattr(backends, "BACKENDS", dict(backends.BACKENDS))
    t = Target("toy", "toy_1", 1, 32, 48 * 1024, (), "+ptx80")

    class Toy(NVIDIABackend):
        def __init__(self, target):
            super().__init__(Target("nvidia", "sm_80", 80, 32, 1024, (), "+ptx80"))
            self.toy = target
    register_backend("toy", {"toy_1": t}, lambda: Toy)
    assert parse_target("toy_1") is t
    assert "toy_1" in known_targets()
    assert isinstance(get_backend("toy_1"), Toy)


# ---- each backend's own tilegpu pass list ----------------------------------------------------

TODAY = ("tile-combine", "canonicalize", "cse", "tile-cse", "tilegpu-assign-layouts",
         "tile-cse", "tilegpu-remove-converts", "tilegpu-hoist-loop-converts",
         "tilegpu-remove-converts", "cse", "tile-cse", "tile-combine",
         "tilegpu-sink", "tilegpu-vector-width", "tilegpu-compare-runs", "tilegpu-allocate-shared",
         "tilegpu-insert-barriers")
# NVIDIA: targets with wgmma rewrite mma v3 dots after the layout passes; sm_80+ (cp.async)
# then runs the software pipeliner and a cleanup; AMD its stream pipeliner and the cleanup
def expected_passes(arch):
    t = parse_target(arch)
    extra = ()
    if t.has("wgmma"):
        extra += ("tilegpu-warpgroup-dot",)
    if t.backend == "nvidia" and t.capability >= 80:
        extra += ("tilegpu-pipeline", "canonicalize", "cse", "tile-cse")
    if t.backend == "nvidia":  # warp_specialize loops (sm_90a; noted as ignored elsewhere)
        extra += ("tilegpu-warp-specialize",)
    if t.backend == "nvidia" and t.capability >= 90:  # host descriptors' blocks by TMA
        extra += ("tilegpu-pipeline-tma", "tilegpu-tma-loads", "tilegpu-tma-stores",
                  "tilegpu-tma-store-wait-later")
    if t.backend == "amd":  # no cp.async: stream pipelining through registers
        extra += ("tilegpu-stream-pipeline", "canonicalize", "cse", "tile-cse")
    tail = ("tilegpu-proxy-fences",) if t.has("wgmma") else ()  # after the barriers
    # sm_90+: TMA copies kept where exact, decided on the frontend's IR before any cleanup
    head = ("tile-tma-guard",) if t.backend == "nvidia" and t.capability >= 90 else ()
    return head + TODAY[:12] + extra + TODAY[12:] + tail


@pytest.mark.parametrize("arch", KNOWN)
def test_tilegpu_passes_per_backend(arch):
    b = get_backend(arch)
    assert type(b).__name__ == ("NVIDIABackend" if arch.startswith("sm_") else "AMDBackend")
    assert tuple(b.tilegpu_passes(CompileOptions())) == expected_passes(arch)


def test_backends_build_their_own_lists():
    """The lists are built per call and per backend: changing one changes no other."""
    a, b = get_backend("sm_90a"), get_backend("gfx942")
    la = a.tilegpu_passes(CompileOptions())
    la.append("x")
    assert tuple(a.tilegpu_passes(CompileOptions())) == expected_passes("sm_90a")
    assert tuple(b.tilegpu_passes(CompileOptions())) == expected_passes("gfx942")


# ---- the pass context ------------------------------------------------------------------------

def test_passes_see_the_target_and_the_options():
    import mlir.ir as ir
    from tilework.dialects import new_context
    from tilework.lowering import PASSES, Pass, PassContext, run_pipeline
    from tilework.lowering.pass_base import register
    seen = []
    register(Pass("test-record-context", "records what a pass sees",
                  run=lambda op, pctx: seen.append(pctx)))
    try:
        opts = CompileOptions(num_warps=8, num_stages=5)
        pctx = get_backend("gfx942").pass_context(opts)
        with new_context():
            run_pipeline(ir.Module.parse("module {}"), ["test-record-context"], pctx)
    finally:
        del PASSES["test-record-context"]
    p, = seen
    assert isinstance(p, PassContext)
    assert p.num_stages == 5 and p.num_warps == 8 and p.options is opts
    assert p.target is parse_target("gfx942")
    assert (p.backend, p.arch, p.warp_size) == ("amd", "gfx942", 64)
    assert p.extra["gpu_target_attr"] == '#rocdl.target<O = 3, chip = "gfx942">'


def test_nvidia_target_attribute_carries_the_ptx_version():
    b = get_backend("sm_100a")
    assert b.pass_context(CompileOptions(opt_level=2)).extra["gpu_target_attr"] == \
        '#nvvm.target<O = 2, chip = "sm_100a", features = "+ptx86">'
