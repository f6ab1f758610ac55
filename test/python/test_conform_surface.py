"""What an audit of Triton 3.6's `triton.language` surface against ours found missing (issue
14): `fp_downcast_rounding` of `tl.cast` / `.to` ('rtne', 'rtz'; Triton's argument order and
messages), `tl.static_print`'s `sep`/`end`/`file`/`flush`, `tl.ravel(x=...)`,
`libdevice.fast_tanhf`, and `tl.extra.cuda`'s `globaltimer`, `smid`, `num_warps`,
`num_threads`, `gdc_wait`, `gdc_launch_dependents` and `tl.extra.hip.memrealtime`.  Values
against numpy in the interpreter and compiled (sm_90a and gfx942 run by the SIMT emulator);
each rejected form with its message.  On the GPU: test_conform_surface_gpu.py."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.language.extra import cuda as tlc
from tilework.language.extra import hip as tlh
from tilework.language.extra import libdevice
from simt_emulator import Emulator

P = tl.pointer_type


def k_round(x, xd, o16, ob16, o32, N: tl.constexpr, MODE: tl.constexpr):
    """Each narrowing with the rounding mode, stored as its bits."""
    i = tl.arange(0, N)
    v = tl.load(x + i)
    tl.store(o16 + i, v.to(tl.float16, fp_downcast_rounding=MODE).to(tl.uint16, bitcast=True))
    tl.store(ob16 + i, tl.cast(v, tl.bfloat16, MODE).to(tl.uint16, bitcast=True))
    tl.store(o32 + i, tl.load(xd + i).to(tl.float32, MODE).to(tl.uint32, bitcast=True))


def round_inputs(n=256, seed=40):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.uniform(-30, 20, n))).astype(np.float32)
    x[:12] = [np.inf, -np.inf, np.nan, 65519.0, 65520.0, -65520.0, 1e-8, -3e-7, 0.0, -0.0,
              np.finfo(np.float32).max, -np.finfo(np.float32).max]
    xd = rng.standard_normal(n) * np.exp2(rng.uniform(-160, 140, n))
    xd[:4] = [np.inf, np.nan, 3.5e38, -1e-46]
    return x, xd


def _toward_zero(x, nearest, bits_dtype):
    """`nearest` (x rounded to nearest even) moved one step toward zero where it rounded away
    from zero: the reference for 'rtz'."""
    back = nearest.astype(x.dtype)
    with np.errstate(invalid="ignore"):
        away = np.where(x >= 0, back > x, back < x)
    bits = nearest.view(bits_dtype).copy()
    bits[away] -= 1
    return bits


def _bf16_nearest_bits(x):
    b = x.view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), r)


def np_round(x, xd, mode):
    with np.errstate(over="ignore"):
        h, f = x.astype(np.float16), xd.astype(np.float32)
    bf = _bf16_nearest_bits(x)
    if mode == "rtne":
        return h.view(np.uint16), bf, f.view(np.uint32)
    bf_f32 = (bf.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(invalid="ignore"):
        away = np.where(x >= 0, bf_f32 > x, bf_f32 < x)
    bf = bf - away.astype(np.uint16)
    return _toward_zero(x, h, np.uint16), bf, _toward_zero(xd, f, np.uint32)


def _check_round(got, want, nan_mask_of):
    for g, w, isnan in zip(got, want, nan_mask_of):
        nan = isnan(g)
        np.testing.assert_array_equal(nan, isnan(w))
        np.testing.assert_array_equal(g[~nan], w[~nan])


def _nan16(b):
    return (b & 0x7C00 == 0x7C00) & (b & 0x3FF != 0)


def _nanb16(b):
    return (b & 0x7F80 == 0x7F80) & (b & 0x7F != 0)


def _nan32(b):
    return np.isnan(b.view(np.float32))


NANS = (_nan16, _nanb16, _nan32)


@pytest.mark.parametrize("mode", ["rtne", "rtz"])
def test_fp_downcast_rounding_interpreted(mode):
    x, xd = round_inputs()
    outs = (np.zeros(256, np.uint16), np.zeros(256, np.uint16), np.zeros(256, np.uint32))
    tilework.jit(k_round, interpret=True)[(1,)](x, xd, *outs, N=256, MODE=mode)
    _check_round(outs, np_round(x, xd, mode), NANS)


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
@pytest.mark.parametrize("mode", ["rtne", "rtz"])
def test_fp_downcast_rounding_compiled(target, mode):
    x, xd = round_inputs(seed=41)
    outs = (np.zeros(256, np.uint16), np.zeros(256, np.uint16), np.zeros(256, np.uint32))
    emu = Emulator.from_kernel(tilework.jit(k_round), {
        "x": P(tl.float32), "xd": P(tl.float64), "o16": P(tl.uint16), "ob16": P(tl.uint16),
        "o32": P(tl.uint32)}, {"N": 256, "MODE": mode}, target, 4)
    emu.run((1,), x, xd, *outs)
    _check_round(outs, np_round(x, xd, mode), NANS)


def k_bad_round(x, WHAT: tl.constexpr):
    i = tl.arange(0, 16)
    v = tl.load(x + i)
    if WHAT == "mode":
        r = v.to(tl.float16, fp_downcast_rounding="rtp")  # ERR
    elif WHAT == "widen":
        r = v.to(tl.float64, fp_downcast_rounding="rtz")  # ERR
    elif WHAT == "int":
        r = v.to(tl.int16, fp_downcast_rounding="rtne")  # ERR
    elif WHAT == "bitcast":
        r = tl.cast(v, tl.int32, "rtz", True)  # ERR
    else:
        r = v.to(tl.float16, fp_downcast_rounding=v)  # ERR
    tl.store(x + i, r.to(tl.float32))


@pytest.mark.parametrize("what, msg", [
    ("mode", "Invalid rounding mode: rtp. Supported rounding modes are 'rtne' and 'rtz'."),
    ("widen", "fp_downcast_rounding should be set only for truncating fp conversions. "
              "Source scalar type is fp32 and destination type is fp64"),
    ("int", "fp_downcast_rounding should be set only for truncating fp conversions. "
            "Source scalar type is fp32 and destination type is int16"),
    ("bitcast", "fp_downcast_rounding should be set only for truncating fp conversions"),
    ("runtime", "fp_downcast_rounding must be a constexpr, got a runtime value"),
])
def test_fp_downcast_rounding_rejected(what, msg):
    import re
    with pytest.raises(CompilationError, match=re.escape(msg)) as e:
        tilework.compile(tilework.jit(k_bad_round), target="sm_90a", signature={"x": "*fp32"},
                         constexprs={"WHAT": what})
    assert "test_conform_surface.py" in str(e.value)
    with pytest.raises(Exception, match=re.escape(msg)):
        tilework.jit(k_bad_round, interpret=True)[(1,)](np.zeros(16, np.float32), WHAT=what)


def k_small(x, out, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.static_print("N", N, sep="=", end=";\n", flush=True)
    v = tl.reshape(tl.load(x + i), (2, N // 2))
    tl.store(out + i, libdevice.fast_tanhf(tl.ravel(x=v, can_reorder=False)))


def test_static_print_ravel_and_fast_tanhf(capsys):
    x = np.random.default_rng(42).standard_normal(32).astype(np.float32) * 3
    out = np.zeros(32, np.float32)
    tilework.jit(k_small, interpret=True)[(1,)](x, out, N=32)
    np.testing.assert_allclose(out, np.tanh(x), rtol=2e-6, atol=1e-7)
    assert "N=32;\n" in capsys.readouterr().out
    emu = Emulator.from_kernel(tilework.jit(k_small), {"x": P(tl.float32),
                               "out": P(tl.float32)}, {"N": 32}, "sm_90a", 4)
    assert "N=32;\n" in capsys.readouterr().out  # (printed while compiling)
    out[:] = 0
    emu.run((1,), x, out)
    np.testing.assert_allclose(out, np.tanh(x), rtol=2e-6, atol=1e-7)


def k_extra_cuda(out, NW: tl.constexpr):
    t0 = tlc.globaltimer()
    tlc.gdc_wait()
    s = tlc.smid()
    tl.static_assert(tlc.num_warps() == NW and tlc.num_threads() == NW * 32)
    tlc.gdc_launch_dependents()
    p = tl.program_id(0)
    tl.store(out + 3 * p, tlc.globaltimer() - t0)
    tl.store(out + 3 * p + 1, s.to(tl.int64))
    tl.store(out + 3 * p + 2, tlc.num_threads())


def test_extra_cuda_compiles_to_its_registers():
    ck = tilework.compile(tilework.jit(k_extra_cuda), target="sm_90a",
                          signature={"out": "*i64"}, constexprs={"NW": 8}, num_warps=8)
    ptx = ck.asm["ptx"]
    assert ptx.count("%globaltimer;") == 2 and ptx.count("%smid;") == 1
    assert "griddepcontrol.wait;" in ptx and "griddepcontrol.launch_dependents;" in ptx


def k_warps(out, NW: tl.constexpr):
    tl.static_assert(tlc.num_warps() == NW and tlc.num_threads() == NW * 32)
    tl.store(out + tl.arange(0, 2), tl.join(tlc.num_warps(), tlc.num_threads()))


@pytest.mark.parametrize("nw", [1, 4, 8])
def test_num_warps_and_threads_interpreted_and_compiled(nw):
    out = np.zeros(2, np.int32)
    tilework.jit(k_warps, interpret=True)[(1,)](out, NW=nw, num_warps=nw)
    np.testing.assert_array_equal(out, [nw, 32 * nw])
    emu = Emulator.from_kernel(tilework.jit(k_warps), {"out": P(tl.int32)}, {"NW": nw},
                               "sm_90a", nw)
    out[:] = 0
    emu.run((1,), out)
    np.testing.assert_array_equal(out, [nw, 32 * nw])


def k_realtime(out):
    tl.store(out, tlh.memrealtime())


@pytest.mark.parametrize("target, instr", [("gfx942", "s_memrealtime"),
                                           ("gfx1100", "s_sendmsg_rtn_b64")])
def test_memrealtime_per_amd_family(target, instr):
    ck = tilework.compile(tilework.jit(k_realtime), target=target, signature={"out": "*i64"})
    assert instr in ck.asm["amdgcn"]


def test_target_specific_forms_rejected():
    with pytest.raises(CompilationError, match="tl.extra.hip.memrealtime is AMDGCN assembly: "
                                               "it needs an AMD target"):
        tilework.compile(tilework.jit(k_realtime), target="sm_90a", signature={"out": "*i64"})
    with pytest.raises(Exception, match=r"tl\.inline_asm_elementwise \(tile\.inline_asm\) "
                                        r"cannot run in the interpreter"):
        tilework.jit(k_extra_cuda, interpret=True)[(1,)](np.zeros(3, np.int64), NW=4)
