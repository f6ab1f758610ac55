"""device_print / device_assert on the GPU (skipped without a GPU).  A failed device assert
leaves the CUDA context unusable, so those run in a subprocess."""
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402


@tilework.jit
def printer(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0)
    tl.device_print("v", v)
    tl.device_print("n", n)


def test_device_print_lines(capfd):
    x = torch.tensor([1.5, -2.25, 3.0, 4.0], device="cuda")
    printer[(2,)](x, 3, BLOCK=4)
    torch.cuda.synchronize()
    out = capfd.readouterr().out.splitlines()
    want = {f"pid ({p}, 0, 0) idx ({i}) v: {v}" for p in (0, 1)
            for i, v in enumerate(["1.500000", "-2.250000", "3.000000", "0.000000"])}
    want |= {f"pid ({p}, 0, 0) idx () n: 3" for p in (0, 1)}
    assert sorted(out) == sorted(want)  # each element once, scalars once per program


@tilework.jit
def wide(x, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tl.device_print("r", r.to(tl.int64) * 3000000000, hex=True)


def test_device_print_64_bit_hex(capfd):
    wide[(1,)](torch.zeros(1, device="cuda"), BLOCK=4)
    torch.cuda.synchronize()
    out = sorted(capfd.readouterr().out.splitlines())
    assert out == [f"pid (0, 0, 0) idx ({i}) r: 0x{i * 3000000000:016x}" for i in range(4)]


SCRIPT = textwrap.dedent('''
    import torch, tilework, tilework.language as tl

    @tilework.jit
    def checker(x, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n, other=1)
        tl.device_assert(v > 0, "v must be positive")

    x = torch.tensor([3, 1, -2, 5], device="cuda", dtype=torch.int32)
    checker[(1,)](x, 2, BLOCK=4, debug=True)
    torch.cuda.synchronize()
    print("masked ok", flush=True)
    checker[(1,)](x, 4, BLOCK=4)  # debug off: not checked
    torch.cuda.synchronize()
    print("off ok", flush=True)
    checker[(1,)](x, 4, BLOCK=4, debug=True)
    torch.cuda.synchronize()
    print("not reached", flush=True)
''')


def test_device_assert_traps_with_the_message(tmp_path):
    script = tmp_path / "assert_script.py"  # @jit reads the kernel's source from its file
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300)
    assert "masked ok" in r.stdout and "off ok" in r.stdout
    assert "not reached" not in r.stdout and r.returncode != 0
    assert "v must be positive" in r.stdout + r.stderr  # __assertfail's report
