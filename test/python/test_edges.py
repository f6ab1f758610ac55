"""Issue 12's edge cases: bad targets, kernel files, stage texts, restarts and output paths each
end in one `error:` line naming the file, stage or target (exit status 1 or 2, no traceback,
no LLVM abort, nothing partial written), or work."""
import os
import subprocess
import sys

import pytest

import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.errors import StageError

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
VADD = os.path.join(EXAMPLES, "vector_add.py") + ":add_kernel"
SIG = ["--signature", "*fp32:16,*fp32:16,*fp32:16,i32:16", "--constexpr", "BLOCK_SIZE=1024"]


def tw(*argv, tool="cli", stdin=None):
    r = subprocess.run([sys.executable, "-m", f"tilework.tools.{tool}", *map(str, argv)],
                       capture_output=True, text=True, input=stdin)
    return r


def one_error(r, *parts, rc=1):
    """`r` failed cleanly: status `rc`, one `error:` line holding every part."""
    assert r.returncode == rc, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "LLVM ERROR" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    for p in parts:
        assert p in lines[0], r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def stages(tmp_path_factory):
    """Every stage of vector add for sm_90a (4 and 8 warps) and gfx942, as files."""
    d = tmp_path_factory.mktemp("stages")
    for target, nw in (("sm_90a", 4), ("gfx942", 4), ("sm_90a", 8)):
        out = d / f"{target}_{nw}"
        r = tw("compile", VADD, "--target", target, "--num-warps", nw, *SIG, "-o", out)
        assert r.returncode == 0, r.stderr
    return d


# ---- targets ----------------------------------------------------------------------------------

@pytest.mark.parametrize("target, message", [
    ("gfx000", "unknown target 'gfx000'"),
    ("sm_999", "unknown target 'sm_999'"),
    ("sm_60", "unsupported target 'sm_60'"),
])
def test_bad_targets_are_refused_before_llvm(tmp_path, target, message):
    one_error(tw("compile", VADD, "--target", target, *SIG, "-o", tmp_path / "o"), message)
    assert not (tmp_path / "o").exists()


def test_ptxas_errors_are_one_line_naming_target_and_ptxas(tmp_path, monkeypatch):
    """A ptxas that lacks the target (CUDA 13 has no sm_70) fails in one line naming the
    target, the ptxas and its version, without the temporary file's path."""
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Cuda compilation tools, "
                    "release 13.0, V13.0.88'; exit 0; fi\n"
                    "echo \"ptxas fatal   : Value 'sm_70' is not defined for option "
                    "'gpu-name'\" >&2\nexit 255\n")
    fake.chmod(0o755)
    monkeypatch.setenv("TILEWORK_PTXAS", str(fake))
    line = one_error(tw("compile", VADD, "--target", "sm_70", *SIG, "-o", tmp_path / "o"),
                     "ptxas failed for target sm_70", str(fake), "CUDA 13.0",
                     "Value 'sm_70' is not defined")
    assert "k.ptx" not in line
    assert not (tmp_path / "o").exists()


# ---- scalar parameters ------------------------------------------------------------------------

@pytest.mark.parametrize("ty", ["fp16", "bf16", "fp64", "u32", "i8", "i16"])
def test_cli_compiles_the_scalar_types_that_crashed(tmp_path, ty):
    """The types the issue found crashing the driver (every type, on every target:
    test_scalar_params.py)."""
    src = tmp_path / "k.py"
    src.write_text("import tilework\nimport tilework.language as tl\n\n@tilework.jit\n"
                   "def scale(x, a, n, BLOCK: tl.constexpr):\n"
                   "    offs = tl.arange(0, BLOCK)\n"
                   "    tl.store(x + offs, tl.load(x + offs) * a, mask=offs < n)\n")
    r = tw("compile", f"{src}:scale", "--target", "sm_90a", "--signature", f"*fp32,{ty},i32",
           "--constexpr", "BLOCK=128", "--emit", "ptx", "-o", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert ".entry scale(" in (tmp_path / "o" / "scale.ptx").read_text()


def test_cli_compiles_an_autotuned_kernel(tmp_path):
    """`FILE.py:NAME` where NAME is an @autotune(@jit) wrapper compiles its kernel with the
    options given on the command line; a name that is no kernel is one error line."""
    src = tmp_path / "k.py"
    src.write_text("import tilework\nimport tilework.language as tl\n\n"
                   "@tilework.autotune(configs=[tilework.Config({'BLOCK': 64})], key=['n'])\n"
                   "@tilework.jit\n"
                   "def scale(x, n, BLOCK: tl.constexpr):\n"
                   "    offs = tl.arange(0, BLOCK)\n"
                   "    tl.store(x + offs, tl.load(x + offs) * 2, mask=offs < n)\n\n"
                   "NOT_A_KERNEL = 3\n")
    r = tw("compile", f"{src}:scale", "--target", "sm_90a", "--signature", "*fp32,i32",
           "--constexpr", "BLOCK=128", "--emit", "ptx", "-o", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert ".entry scale(" in (tmp_path / "o" / "scale.ptx").read_text()
    one_error(tw("compile", f"{src}:NOT_A_KERNEL", "--target", "sm_90a", "-o", tmp_path / "p"),
              "has no @tilework.jit function named 'NOT_A_KERNEL'")


def test_fp8_scalar_parameter_is_refused(tmp_path):
    one_error(tw("compile", VADD, "--target", "sm_90a", "--signature",
                 "*fp32,*fp32,*fp32,fp8e4nv", "--constexpr", "BLOCK_SIZE=64", "-o", tmp_path),
              "signature entry for `n_elements`: fp8e4nv is not a kernel parameter type")


# ---- files and stage text ---------------------------------------------------------------------

def test_syntax_error_in_the_kernel_file(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("import tilework\n\ndef f(:\n    pass\n")
    one_error(tw("compile", f"{f}:f", "--target", "sm_90a", "-o", tmp_path / "o"),
              f"error: {f}:3:7: invalid syntax (in the kernel's file)")


def test_exception_while_importing_the_kernel_file(tmp_path):
    f = tmp_path / "boom.py"
    f.write_text("raise KeyError('nope')\n")
    one_error(tw("compile", f"{f}:k", "--target", "sm_90a", "-o", tmp_path / "o"),
              f"error: importing {f} failed: KeyError: 'nope'")


def test_missing_and_binary_stage_files(tmp_path, stages):
    one_error(tw("compile", tmp_path / "nope.tilegpu", "--start", "tilegpu", "--target",
                 "sm_90a", "-o", tmp_path / "o"), "no such file:", "nope.tilegpu")
    one_error(tw("compile", stages / "sm_90a_4" / "add_kernel.cubin", "--start", "tilegpu",
                 "--target", "sm_90a", "-o", tmp_path / "o"), "add_kernel.cubin is not a text "
              "file")


def test_truncated_stage_text(tmp_path, stages):
    text = (stages / "sm_90a_4" / "add_kernel.tilegpu").read_text()
    f = tmp_path / "cut.tilegpu"
    f.write_text(text[:len(text) // 2])
    one_error(tw("compile", f, "--start", "tilegpu", "--target", "sm_90a", "-o", tmp_path / "o"),
              f"error: {f}: the input is not valid tilegpu IR (for sm_90a):")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("given, start, message", [
    ("ptx", "tilegpu", "the input is not valid tilegpu IR (for sm_90a)"),
    ("tile", "tilegpu", "the tilegpu input has no layouts: it looks like tile-stage IR"),
    ("tilegpu", "tile", "the tile input carries layouts"),
    ("tile", "llvm", "the llvm input has no gpu.module"),
    ("tile", "llir", "the input is not valid llir text (LLVM IR) for sm_90a"),
])
def test_another_stages_text(tmp_path, stages, given, start, message):
    f = stages / "sm_90a_4" / f"add_kernel.{given}"
    one_error(tw("compile", f, "--start", start, "--target", "sm_90a", "-o", tmp_path / "o"),
              f"error: {f}:", message)


def test_non_ptx_text_as_ptx_names_ptxas(tmp_path, stages):
    f = stages / "sm_90a_4" / "add_kernel.tile"
    r = tw("compile", f, "--start", "ptx", "--target", "sm_90a", "-o", tmp_path / "o")
    from tilework.backends.nvidia.compiler import find_ptxas
    if find_ptxas() is None:
        assert r.returncode == 0  # no ptxas: the driver would JIT the PTX
        return
    one_error(r, "ptxas failed for target sm_90a", "Missing .version directive")


# ---- restarting from a stage ------------------------------------------------------------------

def test_tilegpu_records_target_and_warps(stages):
    head = (stages / "sm_90a_4" / "add_kernel.tilegpu").read_text().splitlines()[0]
    assert 'tilegpu.target = "sm_90a"' in head and "tilegpu.num_warps = 4" in head
    head = (stages / "gfx942_4" / "add_kernel.tilegpu").read_text().splitlines()[0]
    assert 'tilegpu.target = "gfx942"' in head and "tilegpu.warp_size = 64" in head


@pytest.mark.parametrize("stage", ["tilegpu", "llvm"])
def test_restart_for_another_target_is_refused(tmp_path, stages, stage):
    f = stages / "gfx942_4" / f"add_kernel.{stage}"
    one_error(tw("compile", f, "--start", stage, "--target", "sm_90a", "-o", tmp_path / "o"),
              f"this {stage} IR was made for target gfx942, not sm_90a")
    f = stages / "sm_90a_4" / f"add_kernel.{stage}"
    one_error(tw("compile", f, "--start", stage, "--target", "sm_80", "-o", tmp_path / "o"),
              f"this {stage} IR was made for target sm_90a, not sm_80")


def test_restart_with_another_warp_count_is_refused(tmp_path, stages):
    f = stages / "sm_90a_4" / "add_kernel.tilegpu"
    one_error(tw("compile", f, "--start", "tilegpu", "--target", "sm_90a", "--num-warps", 8,
                 "-o", tmp_path / "o"),
              "this tilegpu IR was made for num_warps=4, not num_warps=8")


def test_restart_takes_the_recorded_warp_count(tmp_path, stages):
    """Without --num-warps an 8-warp tilegpu text compiles for 8 warps (256 threads)."""
    f = stages / "sm_90a_8" / "add_kernel.tilegpu"
    r = tw("compile", f, "--start", "tilegpu", "--target", "sm_90a", "-o", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert ".maxntid 256" in (tmp_path / "o" / "add_kernel.ptx").read_text()


def test_restart_checks_in_the_python_api(stages):
    text = (stages / "gfx942_4" / "add_kernel.tilegpu").read_text()
    with pytest.raises(StageError) as e:
        compile(text, "sm_90a", start="tilegpu", cache=False)
    assert str(e.value).startswith("this tilegpu IR was made for target gfx942, not sm_90a")
    assert (e.value.stage, e.value.target) == ("tilegpu", "sm_90a")


def test_hand_written_tilegpu_without_records_is_checked_by_warp_size():
    text = ('module attributes {tilegpu.num_warps = 4 : i32, tilegpu.warp_size = 64 : i32} {\n'
            '  func.func @k() attributes {tile.kernel} {\n    return\n  }\n}\n')
    with pytest.raises(StageError, match="made for warps of 64 threads; sm_90a's have 32"):
        compile(text, "sm_90a", start="tilegpu", cache=False)


# ---- output paths -----------------------------------------------------------------------------

def test_output_under_a_file_or_onto_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("keep")
    one_error(tw("compile", VADD, "--target", "sm_90a", *SIG, "-o", f),
              f"error: -o {f}: {f} exists and is not a directory")
    one_error(tw("compile", VADD, "--target", "sm_90a", *SIG, "-o", f / "sub"),
              f"error: -o {f / 'sub'}: Not a directory")
    assert f.read_text() == "keep"


def test_output_in_a_place_that_cannot_be_made(tmp_path):
    one_error(tw("compile", VADD, "--target", "sm_90a", *SIG, "-o", "/proc/tilework-out"),
              "error: -o /proc/tilework-out:")


def _vadd_source():
    from vector_add import add_kernel
    P = tl.pointer_type(tl.float32)
    return ASTSource(add_kernel, {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n_elements": tl.int32},
                     {"BLOCK_SIZE": 256}, {})


def test_dump_kernel_is_all_or_nothing(tmp_path, monkeypatch):
    from tilework.compiler import driver
    ck = compile(_vadd_source(), "sm_90a", cache=False)
    real, calls = os.replace, []

    def failing_replace(a, b):
        calls.append(b)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(a, b)
    monkeypatch.setattr(driver.os, "replace", failing_replace)
    with pytest.raises(OSError):
        driver.dump_kernel(ck, str(tmp_path / "out"))
    left = sorted(os.listdir(tmp_path / "out"))
    assert not any(n.endswith(".tmp") for n in left), left
    monkeypatch.setattr(driver.os, "replace", real)
    paths = driver.dump_kernel(ck, str(tmp_path / "out"))
    assert sorted(os.listdir(tmp_path / "out")) == sorted(os.path.basename(p) for p in paths)
    mode = os.stat(paths[0]).st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


# ---- tilework-opt -----------------------------------------------------------------------------

def test_opt_missing_and_binary_inputs(tmp_path, stages):
    one_error(tw(tmp_path / "missing.mlir", tool="opt"),
              f"error: cannot read {tmp_path / 'missing.mlir'}: No such file or directory", rc=2)
    one_error(tw(stages / "sm_90a_4" / "add_kernel.cubin", tool="opt"), "is not a text file",
              rc=2)


def test_opt_names_the_file_in_parse_errors(tmp_path, stages):
    text = (stages / "sm_90a_4" / "add_kernel.tilegpu").read_text()
    f = tmp_path / "cut.mlir"
    f.write_text(text[:300])
    one_error(tw(f, tool="opt"), f'loc("{f}":')


def test_opt_output_path_errors_leave_nothing(tmp_path, stages):
    f = tmp_path / "afile"
    f.write_text("keep")
    src = stages / "sm_90a_4" / "add_kernel.tilegpu"
    one_error(tw(src, "-o", f / "x", tool="opt"), f"error: cannot write {f / 'x'}: Not a "
              "directory")
    one_error(tw(src, "-o", tmp_path, tool="opt"), f"error: cannot write {tmp_path}: is a "
              "directory")
    assert sorted(os.listdir(tmp_path)) == ["afile"]
    r = tw(src, "-o", tmp_path / "out.mlir", tool="opt")
    assert r.returncode == 0 and "tilegpu.blocked" in (tmp_path / "out.mlir").read_text()


def test_opt_into_a_closed_pipe_exits_quietly(stages):
    """`tilework-opt big.mlir | head -c 10`: the reader closes the pipe; no BrokenPipeError
    traceback, status 0."""
    text = (stages / "sm_90a_4" / "add_kernel.tilegpu").read_text()
    big = "\n// -----\n".join([text] * 40)
    p = subprocess.Popen([sys.executable, "-m", "tilework.tools.opt", "--split-input-file",
                          "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(big.encode())
    p.stdin.close()
    assert p.stdout.read(10) == b"module att"
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


# ---- print() in a kernel ----------------------------------------------------------------------

def test_print_in_a_kernel_is_device_print(tmp_path, capfd):
    f = tmp_path / "pk.py"
    f.write_text("import tilework\nimport tilework.language as tl\n\n@tilework.jit\n"
                 "def pk(x, n, BLOCK: tl.constexpr):\n"
                 "    v = tl.load(x + tl.arange(0, BLOCK))\n"
                 "    print('v', v)\n"
                 "    print(n)\n")
    r = tw("compile", f"{f}:pk", "--target", "sm_90a", "--signature", "*fp32,i32",
           "--constexpr", "BLOCK=32", "--emit", "tile", "-o", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "o" / "pk.tile")  # nothing printed at compile time
    tile = (tmp_path / "o" / "pk.tile").read_text()
    assert '"tile.print"' in tile and 'prefix = " v: "' in tile and 'prefix = ": "' in tile


def test_print_with_keywords_is_refused(tmp_path):
    f = tmp_path / "pk.py"
    f.write_text("import tilework\nimport tilework.language as tl\n\n@tilework.jit\n"
                 "def pk(x, n):\n"
                 "    print('n', n, end='')\n")
    r = tw("compile", f"{f}:pk", "--target", "sm_90a", "--signature", "*fp32,i32", "-o",
           tmp_path / "o")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "print() in a kernel takes no keyword arguments (got end); it is tl.device_print" \
        in r.stderr


# ---- an unexpected internal error is still one line --------------------------------------------

def test_internal_errors_are_one_line(capsys, monkeypatch):
    from tilework.tools.cli import run_guarded

    def boom():
        raise KeyError("param_kind")
    monkeypatch.delenv("TILEWORK_TRACEBACK", raising=False)
    assert run_guarded(boom) == 1
    assert capsys.readouterr().err == ("error: internal error: KeyError: 'param_kind' "
                                       "(TILEWORK_TRACEBACK=1 shows where)\n")
    monkeypatch.setenv("TILEWORK_TRACEBACK", "1")
    with pytest.raises(KeyError):
        run_guarded(boom)

