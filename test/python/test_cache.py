"""The disk cache: checksummed entries that heal when damaged, a key holding the globals a
kernel reads, Triton's rule on non-constexpr globals, and concurrent writers."""
import importlib.util
import json
import os
import threading

import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler import driver
from tilework.compiler.cache import FileCache


def load_module(tmp_path, name, text):
    f = tmp_path / f"{name}.py"
    f.write_text(text)
    spec = importlib.util.spec_from_file_location(name, f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SCALE_SRC = """
import tilework
import tilework.language as tl

SCALE = tl.constexpr(2.0)
DT = tl.float32
PLAIN = 3.0


@tilework.jit
def helper(v):
    return v * SCALE


@tilework.jit
def scaled(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n).to(DT)
    tl.store(x + offs, helper(v), mask=offs < n)


@tilework.jit
def plain(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * PLAIN)
"""


def compile_scaled(mod):
    return tilework.compile(mod.scaled, target="sm_90a", signature="*fp32,i32",
                            constexprs={"BLOCK": 128})


def entry_dir(key):
    return FileCache()._path(key)


def counting_backend(monkeypatch):
    """Counts real compiles (the frontend runs; a cache hit does not run it)."""
    calls = []
    real = driver.build_kernel
    monkeypatch.setattr(driver, "build_kernel", lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


@pytest.fixture
def mod(tmp_path):
    return load_module(tmp_path, "scalemod", SCALE_SRC)


def test_entries_carry_checksums(mod):
    ck = compile_scaled(mod)
    d = entry_dir(ck.key)
    manifest = json.loads(open(os.path.join(d, "manifest.json")).read())
    import hashlib
    for name, (size, digest) in manifest["files"].items():
        data = open(os.path.join(d, name), "rb").read()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (size, digest)
    assert set(manifest["files"]) == {f"scaled.{s}" for s in ck.asm} | {"metadata.json"}


@pytest.mark.parametrize("damage", ["truncate-cubin", "truncate-ptx", "garbage-metadata",
                                    "empty-metadata", "delete-ptx", "garbage-manifest",
                                    "old-manifest"])
def test_a_damaged_entry_is_recompiled_and_rewritten(mod, monkeypatch, damage):
    ck = compile_scaled(mod)
    d = entry_dir(ck.key)
    what, _, name = damage.partition("-")
    path = os.path.join(d, {"cubin": "scaled.cubin", "ptx": "scaled.ptx",
                            "metadata": "metadata.json", "manifest": "manifest.json"}[name])
    if not os.path.exists(path):
        pytest.skip("no ptxas: no cubin")
    if what == "truncate":
        data = open(path, "rb").read()
        open(path, "wb").write(data[:len(data) // 2])
    elif what == "garbage":
        open(path, "w").write("{not json")
    elif what == "empty":
        open(path, "w").write("{}")
    elif what == "delete":
        os.unlink(path)
    elif what == "old":  # the manifest of the cache before checksums: a list of names
        open(path, "w").write(json.dumps(sorted(os.listdir(d))))
    calls = counting_backend(monkeypatch)
    ck2 = compile_scaled(mod)
    assert calls, "the damaged entry was served"
    assert ck2.asm == ck.asm and ck2.metadata["signature"] == ck.metadata["signature"]
    calls.clear()
    ck3 = compile_scaled(mod)  # rewritten: a hit again
    assert not calls and ck3.asm == ck.asm
    assert not [n for n in os.listdir(os.path.dirname(d)) if n.startswith((".tmp-", ".dead-"))]


def test_consistent_but_meaningless_entry_is_rewritten(mod, monkeypatch):
    """An entry whose checksums match but whose metadata is `{}` (written so by hand, with its
    manifest) is not a kernel: recompiled and replaced."""
    ck = compile_scaled(mod)
    d = entry_dir(ck.key)
    FileCache().evict(ck.key)
    FileCache().put(ck.key, {"metadata.json": "{}"})
    calls = counting_backend(monkeypatch)
    assert compile_scaled(mod).asm == ck.asm and calls
    assert "scaled.ptx" in os.listdir(d)


def test_constexpr_globals_are_in_the_key(mod):
    """Editing `SCALE = tl.constexpr(2.0)` to 5.0 (here: rebinding it) compiles anew, as
    Triton's key holds the globals a kernel (and its @jit helpers) read."""
    a = compile_scaled(mod)
    mod.SCALE = tl.constexpr(5.0)
    b = compile_scaled(mod)
    assert a.key != b.key
    assert "5.000000e+00" in b.asm["tile"] and "5.000000e+00" not in a.asm["tile"]
    mod.SCALE = tl.constexpr(2.0)
    assert compile_scaled(mod).key == a.key
    mod.DT = tl.float16  # a dtype global
    assert compile_scaled(mod).key != a.key


def test_helper_source_is_in_the_key(tmp_path):
    a = load_module(tmp_path, "m1", SCALE_SRC)
    b = load_module(tmp_path, "m2", SCALE_SRC.replace("return v * SCALE", "return v + SCALE"))
    assert compile_scaled(a).key != compile_scaled(b).key


def test_reading_a_plain_global_is_an_error_naming_it(mod):
    with pytest.raises(CompilationError) as e:
        tilework.compile(mod.plain, target="sm_90a", signature="*fp32,i32",
                         constexprs={"BLOCK": 128})
    assert e.value.message == (
        "cannot read global variable `PLAIN` in a kernel: kernels read only globals that are "
        "tl.constexpr (`PLAIN = tl.constexpr(...)` or `PLAIN: tl.constexpr = ...`), dtypes, "
        "@jit functions, modules, functions and classes")
    assert e.value.filename.endswith("scalemod.py")


ANNOTATED_SRC = """
import tilework
import tilework.language as tl

SCALE: tl.constexpr = 2.0


@tilework.jit
def scaled(x, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tl.store(x + r, tl.load(x + r, mask=r < n) * SCALE, mask=r < n)
"""


def test_annotated_constexpr_global_is_read_and_keyed(tmp_path):
    """`SCALE: tl.constexpr = 2.0` (Triton's annotated constexpr global) is readable, its value
    is in the key, and the interpreter reads the same value."""
    import numpy as np
    a = load_module(tmp_path, "annmod", ANNOTATED_SRC)
    ck = compile_scaled(a)
    assert "2.000000e+00" in ck.asm["tile"] or "2.0" in ck.asm["tile"]
    a.SCALE = 3.0
    assert compile_scaled(a).key != ck.key
    x = np.arange(4, dtype=np.float32)
    tilework.jit(a.scaled.fn, interpret=True)[(1,)](x, 4, BLOCK=4)
    np.testing.assert_array_equal(x, np.arange(4) * 3.0)


def test_concurrent_writers(tmp_path):
    """Threads putting the same key at once: one complete entry, no temporary folders, every
    reader sees all of it."""
    fc = FileCache(str(tmp_path / "c"))
    files = {f"f{i}": os.urandom(4096) for i in range(8)}
    errors = []

    def writer():
        try:
            for _ in range(5):
                fc.put("ab" * 32, files)
                got = fc.get("ab" * 32)
                if got is not None and got != files:
                    errors.append("partial read")
        except Exception as e:  # pragma: no cover - a failure is the test's finding
            errors.append(repr(e))
    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert fc.get("ab" * 32) == files
    assert os.listdir(tmp_path / "c" / "ab") == ["ab" * 32]


def test_concurrent_compiles_share_one_entry(tmp_path):
    """Two processes compile the same kernel into one cache at once."""
    import subprocess
    import sys
    f = tmp_path / "k.py"
    f.write_text(SCALE_SRC)
    code = ("import importlib.util, tilework\n"
            f"s = importlib.util.spec_from_file_location('k', {str(f)!r})\n"
            "m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n"
            "ck = tilework.compile(m.scaled, target='gfx942', signature='*fp32,i32', "
            "constexprs={'BLOCK': 128})\nprint(ck.key)\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    keys = {o.strip() for o, _ in outs}
    assert len(keys) == 1
    key = keys.pop()
    root = os.environ["TILEWORK_CACHE_DIR"]
    assert os.listdir(os.path.join(root, key[:2])) == [key]
    assert FileCache().get(key) is not None


def test_a_kernel_read_from_the_disk_cache_reports_registers(mod):
    """The launch path's warm-cache kernel (`CachedKernel`, no compiler imported) answers
    Triton's `n_regs`/`n_spills` and `metadata.shared` as the compiled kernel does: the
    fused-softmax tutorial sizes its grid from them, and its second run (served from disk)
    raised AttributeError."""
    from tilework.runtime.warm_cache import from_files
    ck = compile_scaled(mod)
    d = entry_dir(ck.key)
    files = {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)
             if n != "manifest.json"}
    cached = from_files(files, "sm_90a", ck.options, ck.key)
    if ck.n_regs is None:
        pytest.skip("no ptxas: registers unknown")
    assert cached.metadata.shared == ck.metadata.shared == ck.metadata["shared"]
    assert (cached.n_regs, cached.n_spills) == (ck.n_regs, ck.n_spills)
    assert 0 < cached.n_regs <= 255 and cached.n_spills == 0
