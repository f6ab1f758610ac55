"""The compat kernels (compat_kernels.py: Triton kernels with only their imports changed) run
by tilework's interpreter against numpy, compiled for sm_90a and gfx942, and, where the CPU
simulator can run them (no inline PTX), compiled for sm_80 and simulated (gpu_sim.py)."""
import copy

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

import gpu_sim
from compat import cases as C
from compat import compat_kernels as K

NP_TO_TL = {np.float32: tl.float32, np.float16: tl.float16, np.float64: tl.float64,
            np.int32: tl.int32, np.int64: tl.int64, np.int16: tl.int16, np.int8: tl.int8}


@pytest.fixture
def case(request):
    rng = np.random.default_rng(abs(hash(request.param)) % 2**32)
    return next(c for c in C.make_cases(rng) if c.name == request.param)


def signature(kernel, case):
    """Parameter -> dtype of the runtime arguments (pointers from the arrays' dtypes)."""
    names = [p for p in kernel.arg_names if p not in case.constexprs]
    sig = {}
    for p, a in zip(names, case.args):
        if isinstance(a, np.ndarray):
            sig[p] = tl.pointer_type(NP_TO_TL[a.dtype.type])
        elif isinstance(a, float):
            sig[p] = tl.float32
        else:
            sig[p] = tl.int32
    return sig


def test_kernels_use_only_the_triton_api():
    """The source has no tilework name but in its imports and decorators (the Triton twin of
    test_compat_gpu.py is this text with those replaced)."""
    import inspect
    src = inspect.getsource(K)
    body = src.split('"""', 2)[2]
    rest = body.replace("import tilework.language as tl", "").replace("import tilework\n", "") \
        .replace("@tilework.jit", "")
    assert "tilework" not in rest


@pytest.mark.parametrize("case", C.NAMES, indirect=True)
def test_interpreted(case):
    kernel = tilework.jit(interpret=True)(getattr(K, case.kernel).fn)
    args = copy.deepcopy(case.args)
    kernel[case.grid](*args, **case.constexprs)
    case.check([args[i] for i in case.outputs])


# (case, target) whose compilation aborts the process today: compiled in a subprocess, an
# abort is an expected failure (tl.num_programs on AMD: MLIR's ROCDL translation of
# rocdl.grid.dim.x yields an i64 where the IR has i32, and LLVM asserts on the next icmp/add)
ABORTS = {("softmax", "gfx942"): "tl.num_programs in arithmetic aborts the ROCDL translation"}


def _compile_in_subprocess(case, target):
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = (f"import sys; sys.path.insert(0, {here!r})\n"
            "import numpy as np\n"
            "from compat import cases as C, compat_kernels as K, test_compat as T\n"
            "from tilework.compiler.driver import ASTSource, compile\n"
            f"case = next(c for c in C.make_cases(np.random.default_rng(0)) "
            f"if c.name == {case.name!r})\n"
            "k = getattr(K, case.kernel)\n"
            "compile(ASTSource(k, T.signature(k, case), case.constexprs, {}), "
            f"{target!r}, cache=False)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
@pytest.mark.parametrize("case", C.NAMES, indirect=True)
def test_compiles(case, target):
    kernel = getattr(K, case.kernel)
    if (case.name, target) in ABORTS:
        r = _compile_in_subprocess(case, target)
        if r.returncode != 0 and "Assertion" in r.stderr:
            pytest.xfail(ABORTS[(case.name, target)])
        assert r.returncode == 0, r.stderr[-2000:]
        return
    ck = compile(ASTSource(kernel, signature(kernel, case), case.constexprs, {}), target,
                 cache=False)
    assert ck.asm.get("cubin") or ck.asm.get("ptx") or ck.asm.get("hsaco") or ck.asm["amdgcn"]


@pytest.mark.parametrize("case", C.NAMES, indirect=True)
def test_compiled_simulated(case):
    kernel = getattr(K, case.kernel)
    ck = compile(ASTSource(kernel, signature(kernel, case), case.constexprs, {}), "sm_80",
                 cache=False)
    args = copy.deepcopy(case.args)
    try:
        gpu_sim.run(ck, case.grid, *args)
    except gpu_sim.Unsupported as e:
        pytest.skip(str(e))
    case.check([args[i] for i in case.outputs])
