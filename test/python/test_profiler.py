"""The profiler and `launch_metadata=` without a GPU: interpreted launches are timed with the
host clock; the launch path is untouched while no profile records."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.language.function import installed_launcher
from tilework.runtime import launcher, profiler

SEEN = []


def add_meta(grid, kernel, args):
    SEEN.append((grid, kernel, sorted(args)))
    n = args["n"]
    return {"name": f"add n={n}", "bytes": 3 * 4 * n, "flops32": n}


@tilework.jit(interpret=True, launch_metadata=add_meta)
def add(x, y, o, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@tilework.jit(interpret=True)
def plain(o, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(o + offs, offs.to(tl.float32), mask=offs < n)


def test_launch_path_untouched_when_off():
    assert installed_launcher() is launcher.run
    with tilework.profile(print_table=False):
        assert installed_launcher() is not launcher.run
    assert installed_launcher() is launcher.run


def test_records_launches_metadata_and_results():
    SEEN.clear()
    x = np.random.default_rng(0).standard_normal(100).astype(np.float32)
    o = np.zeros_like(x)
    with tilework.profile(print_table=False) as prof:
        for _ in range(3):
            add[(4,)](x, x, o, 100, B=32)
        add[lambda meta: (2,)](x, x, o, 50, B=32)
        plain[(1,)](o, 7, B=8)
    np.testing.assert_array_equal(o[7:50], 2 * x[7:50])  # the launches ran
    s = prof.stats()
    assert list(s) == ["add n=100", "add n=50", "plain"]
    a = s["add n=100"]
    assert a["launches"] == 3 and a["bytes"] == 3 * 1200 and a["flops"] == {32: 300}
    assert a["total_ms"] > 0 and a["mean_ms"] == pytest.approx(a["total_ms"] / 3)
    assert a["gbps"] == pytest.approx(3600 / (a["total_ms"] / 1e3) / 1e9)
    assert a["bw_peak"] is None  # no known card here
    assert s["plain"]["launches"] == 1 and s["plain"]["gbps"] is None
    # the hook gets the grid as three ints, the kernel (None: interpreted), args by name
    assert SEEN[0] == ((4, 1, 1), None, ["B", "n", "o", "x", "y"])
    assert SEEN[3][0] == (2, 1, 1)
    table = prof.table().splitlines()
    assert table[0] == "tilework profile on cpu (interpreter) (peaks unknown)"
    assert table[1].split() == ["kernel", "launches", "total", "ms", "mean", "us", "GB/s",
                                "%BW", "TFLOP/s", "%peak"]
    assert table[2].split()[:3] == ["add", "n=100", "3"]
    assert table[4].split()[:2] == ["plain", "1"] and table[4].split()[-4:] == ["-"] * 4


def test_no_records_outside_a_profile():
    SEEN.clear()
    o = np.zeros(8, np.float32)
    add[(1,)](o, o, o, 8, B=8)
    assert SEEN == []  # the hook runs only while profiling


@pytest.mark.parametrize("name,key", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H200", "H200"), ("NVIDIA A100-SXM4-80GB", "A100"), ("Tesla T4", None)])
def test_card_peaks(name, key):
    assert profiler.card_peaks(name)[0] == key


def test_fractions_of_the_peak(monkeypatch):
    monkeypatch.setattr(profiler, "device_name", lambda: "NVIDIA H200")
    prof = profiler.Profile()
    for _ in range(2):
        r = profiler.Record("gemm", {"bytes": 4.8e9, "flops16": 989e12 * 0.5e-3 / 2 * 2})
        r.host_ms = 2.0
        prof.records.append(r)
    s = prof.stats()["gemm"]
    # 9.6 GB in 4 ms = 2400 GB/s = half of 4.8 TB/s; 2 * 494.5 GFLOP in 4 ms = 247 TFLOP/s
    assert s["gbps"] == pytest.approx(2400.0)
    assert s["bw_peak"] == pytest.approx(0.5)
    assert s["flops_peak"] == pytest.approx(0.25)
    assert prof.table().splitlines()[0] == \
        "tilework profile on NVIDIA H200 (peaks: 4.80 TB/s, 989 TFLOP/s 16-bit dense)"


def test_start_twice_is_refused():
    prof = profiler.Profile().start()
    try:
        with pytest.raises(RuntimeError, match="this profile is already recording"):
            prof.start()
    finally:
        prof.stop()
    assert installed_launcher() is launcher.run


def test_environment_variable_prints_at_exit(tmp_path):
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent('''
        import numpy as np, tilework, tilework.language as tl
        @tilework.jit(interpret=True)
        def fill(o, B: tl.constexpr):
            tl.store(o + tl.arange(0, B), tl.full((B,), 2.0, tl.float32))
        o = np.zeros(16, np.float32)
        for _ in range(2):
            fill[(1,)](o, B=16)
        assert o.sum() == 32
    '''))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env={**__import__("os").environ, "TILEWORK_PROFILE": "1"}, check=True)
    lines = out.stderr.splitlines()
    assert lines[0] == "tilework profile on cpu (interpreter) (peaks unknown)"
    assert lines[2].split()[:2] == ["fill", "2"]
