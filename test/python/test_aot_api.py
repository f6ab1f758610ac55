"""The public ahead-of-time API: `tilework.compile(kernel, target=, signature=, constexprs=,
**options)` and `kernel.warmup(*args, grid=, target=)`, with no GPU; the README's example."""
import os
import re
import subprocess
import sys

import pytest

import tilework
import tilework.language as tl
from tilework.compiler import driver

from vector_add import add_kernel

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SIG = "*fp32:16,*fp32:16,*fp32:16,i32:16"


def no_gpu_env():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", HIP_VISIBLE_DEVICES="")
    env.pop("TILEWORK_TARGET", None)
    return env


def test_readme_example_runs_without_a_gpu(tmp_path):
    """The README's "Without a GPU" block, run where torch and the GPU runtimes cannot be
    imported."""
    text = open(os.path.join(ROOT, "README.md")).read()
    m = re.search(r"<!-- this block runs in test/python/test_aot_api.py[^>]*-->\n```python\n"
                  r"(.*?)```", text, re.S)
    assert m, "the README lost its tested block"
    guard = ("import sys\nfor m in ('torch', 'cuda', 'cuda.bindings', 'hip'):\n"
             "    sys.modules[m] = None  # importing them fails\n")
    f = tmp_path / "readme_block.py"
    f.write_text(guard + m.group(1))
    r = subprocess.run([sys.executable, str(f)], capture_output=True, text=True,
                       env=no_gpu_env(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert ".entry add_kernel(" in r.stdout and "ld.global.v4.b32" in r.stdout
    assert "{'x_ptr': '*fp32', 'y_ptr': '*fp32', 'out_ptr': '*fp32', 'n_elements': 'int32'} " \
           "4 0" in r.stdout
    n = int(re.search(r"(\d+) vector loads on gfx942", r.stdout).group(1))
    assert n > 0


def test_import_tilework_loads_no_mlir():
    r = subprocess.run([sys.executable, "-c", "import sys, tilework\n"
                        "assert callable(tilework.compile)\n"
                        "bad = [m for m in sys.modules if m.split('.')[0] in "
                        "('mlir', 'llvmlite', 'torch')]\nprint(bad)"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


@pytest.mark.parametrize("signature", [
    SIG,
    ["*fp32:16", "*fp32:16", "*fp32:16", "i32:16"],
    {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n_elements": "i32:16"},
])
def test_compile_signature_forms(signature):
    k = tilework.compile(add_kernel, target="sm_90a", signature=signature,
                         constexprs={"BLOCK_SIZE": 1024})
    assert k.name == "add_kernel" and "ld.global.v4.b32" in k.asm["ptx"]
    assert list(k.asm)[:5] == ["tile", "tilegpu", "llvm", "llir", "ptx"]
    assert k.metadata["signature"]["n_elements"] == "int32"
    assert k.metadata["target"] == "sm_90a" and k.metadata["num_warps"] == 4


def test_compile_with_tl_dtypes_and_unaligned_pointers():
    P = tl.pointer_type(tl.float32)
    k = tilework.compile(add_kernel, target="sm_90a", signature=[P, P, P, tl.int32],
                         constexprs={"BLOCK_SIZE": 1024})
    assert "ld.global.v4.b32" not in k.asm["ptx"]  # nothing known aligned: scalar accesses


def test_compile_options_and_targets():
    k = tilework.compile(add_kernel, target="gfx942", signature=SIG,
                         constexprs={"BLOCK_SIZE": 1024}, num_warps=8)
    assert "hsaco" in k.asm and k.metadata["num_warps"] == 8 and k.metadata["warp_size"] == 64
    k = tilework.compile(add_kernel, "sm_90a", SIG, {"BLOCK_SIZE": 1024}, num_warps=8)
    assert ".maxntid 256" in k.asm["ptx"] or ".reqntid 256" in k.asm["ptx"]


def test_compile_uses_the_disk_cache(monkeypatch):
    a = tilework.compile(add_kernel, target="sm_90a", signature=SIG,
                         constexprs={"BLOCK_SIZE": 1024})
    calls = []
    real = driver.build_kernel
    monkeypatch.setattr(driver, "build_kernel", lambda *x, **y: calls.append(1) or real(*x, **y))
    b = tilework.compile(add_kernel, target="sm_90a", signature=SIG,
                         constexprs={"BLOCK_SIZE": 1024})
    assert not calls and b.asm == a.asm and b.key == a.key
    tilework.compile(add_kernel, target="sm_90a", signature=SIG,
                     constexprs={"BLOCK_SIZE": 1024}, cache=False)
    assert calls == [1]


@pytest.mark.parametrize("kwargs, exc, message", [
    ({"signature": SIG, "constexprs": {"BLOCK_SIZE": 64}}, ValueError,
     "tilework.compile needs target= (e.g. 'sm_90a' or 'gfx942')"),
    ({"target": "sm_90a", "signature": SIG}, ValueError,
     "add_kernel: missing constexpr value for BLOCK_SIZE"),
    ({"target": "sm_90a", "signature": SIG, "constexprs": {"BLOCK_SIZE": 64, "NOPE": 1}},
     ValueError, "add_kernel has no parameter NOPE"),
    ({"target": "sm_90a", "signature": "*fp32", "constexprs": {"BLOCK_SIZE": 64}}, ValueError,
     "add_kernel has 4 runtime parameters (x_ptr, y_ptr, out_ptr, n_elements) but the "
     "signature has 1 entries"),
    ({"target": "sm_90a", "signature": {"x_ptr": "*fp32", "z": "i32"},
      "constexprs": {"BLOCK_SIZE": 64}}, ValueError, "add_kernel has no runtime parameter z"),
    ({"target": "sm_90a", "signature": {"x_ptr": "*fp32"}, "constexprs": {"BLOCK_SIZE": 64}},
     ValueError, "the signature of add_kernel lacks y_ptr, out_ptr, n_elements"),
    ({"target": "sm_90a", "signature": [1, 2, 3, 4], "constexprs": {"BLOCK_SIZE": 64}},
     ValueError, "signature entry for `x_ptr`: expected a type string"),
    ({"target": "sm_90a", "signature": SIG, "constexprs": {"BLOCK_SIZE": 64}, "num_wraps": 4},
     TypeError, "unknown compile option(s): num_wraps"),
    ({"target": "gfx000", "signature": SIG, "constexprs": {"BLOCK_SIZE": 64}}, ValueError,
     "unknown target 'gfx000'"),
])
def test_compile_errors(kwargs, exc, message):
    with pytest.raises(exc) as e:
        tilework.compile(add_kernel, **kwargs)
    assert message in str(e.value)


def test_compile_takes_only_jit_kernels():
    with pytest.raises(TypeError, match="tilework.compile takes a @tilework.jit kernel"):
        tilework.compile(len, target="sm_90a")


def test_warmup_with_a_target_compiles_without_a_gpu():
    a = add_kernel.warmup("*fp32:16", "*fp32:16", "*fp32:16", "i32:16", BLOCK_SIZE=1024,
                          grid=(1,), target="sm_90a")
    b = tilework.compile(add_kernel, target="sm_90a", signature=SIG,
                         constexprs={"BLOCK_SIZE": 1024})
    assert isinstance(a, driver.CompiledKernel) and a.asm == b.asm
    # tl dtypes stand for aligned tensors (Triton's warmup); ints are specialized as at launch
    P = tl.pointer_type(tl.float32)
    c = add_kernel.warmup(P, P, P, 4096, BLOCK_SIZE=1024, grid=(4,), target="sm_90a",
                          num_warps=8)
    assert c.metadata["num_warps"] == 8 and "ld.global.v4.b32" in c.asm["ptx"]


def test_warmup_with_torch_dtypes():
    torch = pytest.importorskip("torch")
    k = add_kernel.warmup(torch.float16, torch.float16, torch.float16, 100, BLOCK_SIZE=256,
                          grid=(1,), target="gfx942")
    assert k.metadata["signature"]["x_ptr"] == "*fp16"


def test_warmup_placeholder_errors():
    with pytest.raises(ValueError, match=r"argument `n_elements` of add_kernel: unknown type "
                                         r"'q8'"):
        add_kernel.warmup("*fp32", "*fp32", "*fp32", "q8", BLOCK_SIZE=64, target="sm_90a")
    with pytest.raises(ValueError, match="only the hint ':16' is known, got '\\*fp32:8'"):
        add_kernel.warmup("*fp32:8", "*fp32", "*fp32", "i32", BLOCK_SIZE=64, target="sm_90a")
    with pytest.raises(TypeError, match=r"add_kernel.warmup\(...\): add_kernel\(\) missing 1 "
                                        r"required"):
        add_kernel.warmup("*fp32", "*fp32", "*fp32", BLOCK_SIZE=64, target="sm_90a")
