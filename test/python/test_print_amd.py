"""tl.device_print on AMD without AMD hardware: records in a buffer the runtime owns.

* the gfx942 code: the buffer global (exported from the hsaco, for hipModuleGetGlobal), the
  atomic reservation and the record stores, no unresolved symbols, the descriptors in the
  metadata; NVIDIA keeps vprintf;
* the lowered per-thread code run by the SIMT emulator (with the buffer's global and atomics
  added), its buffer decoded and compared with the interpreter's lines; a full buffer drops
  records and counts them; a buffer no runtime set up is left alone;
* the decoder on records built in Python against `interp_debug.format_lines`;
* the HIP runtime's side (allocation, the global, printing after the launch, dropped records,
  the reset) against a fake `hip` module, and its rejections.
"""
import json
import re
import struct

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.runtime import printbuf as PB
from tilework.runtime.interp_debug import format_lines

import mlir.ir as ir
from simt_emulator import GLOBAL_SHIFT, Emulator, EmulationError

P = tl.pointer_type
interpreted = tilework.jit(interpret=True)


def printer(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0)
    tl.device_print("v", v)


def many(x, n, u, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    v = tl.load(x + r)
    tl.device_print("v", v)
    tl.device_print("n=", n, r - 3, hex=True)
    tl.device_print("grid", r[:, None] * 10 + r[None, :])
    tl.device_print("u ", u)
    tl.device_print("b", r.to(tl.uint8) + 250)
    tl.device_print("w", r.to(tl.int64) * 3000000000, hex=True)
    tl.device_print("neg", -r.to(tl.int64) * 3000000000)
    tl.device_print("fbits", v, hex=True)
    tl.device_print("just text")
    tl.device_print("100% ", n)  # no printf here: the prefix is not escaped


MANY_SIG = {"x": P(tl.float32), "n": tl.int32, "u": tl.int32}


def _compile(fn, sig, consts, target="gfx942"):
    return compile(ASTSource(tilework.jit(fn), sig, consts, {}), target, cache=False)


# ---- the compiled code --------------------------------------------------------------------------

def _dynamic_symbols(elf: bytes) -> dict:
    """name -> (type, size) of an ELF64 shared object's .dynsym (what the loader exports)."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    out = {}
    for _, stype, _, _, off, size, link, _, _, ent in secs:
        if stype != 11:  # SHT_DYNSYM
            continue
        stroff = secs[link][4]
        for k in range(1, size // ent):
            name, info, _, _, _, sz = struct.unpack_from("<IBBHQQ", elf, off + k * ent)
            end = elf.index(b"\0", stroff + name)
            out[elf[stroff + name:end].decode()] = (info & 0xF, sz)
    return out


def test_gfx942_code_has_the_buffer_the_atomic_and_the_stores():
    ck = _compile(printer, {"x": P(tl.float32), "n": tl.int32}, {"BLOCK": 256})
    llir, asm = ck.asm["llir"], ck.asm["amdgcn"]
    assert "@tilework_print_buf = protected addrspace(1) global ptr addrspace(1) null" in llir
    assert 'atomicrmw add ptr addrspace(1) %' in llir and 'syncscope("agent")' in llir
    assert "printf" not in llir and "__ockl" not in llir
    # nothing to resolve: the only declarations are LLVM intrinsics
    assert all(d.startswith("llvm.") for d in re.findall(r"^declare [^@]*@([\w.$]+)\(", llir,
                                                         re.M))
    assert "global_atomic_add_x2" in asm and "global_store_dwordx4" in asm
    assert "tilework_print_buf@rel32" in asm
    assert _dynamic_symbols(ck.asm["hsaco"])["tilework_print_buf"] == (1, 8)  # OBJECT, 8 B
    assert ck.metadata["print"] == {"buffer": "tilework_print_buf", "formats": [
        {"prefix": " v: ", "operand": -1, "kind": "f", "bits": 32, "shape": [256]}]}


def test_descriptors_of_every_kind():
    ck = _compile(many, MANY_SIG, {"BLOCK": 4})
    f = ck.metadata["print"]["formats"]
    assert [(d["prefix"], d["operand"], d["kind"], d["bits"], d["shape"]) for d in f] == [
        (" v: ", -1, "f", 32, [4]), (" n=: ", 0, "x", 32, []), (" n=: ", 1, "x", 32, [4]),
        (" grid: ", -1, "i", 32, [4, 4]), (" u: ", -1, "i", 32, []),
        (" b: ", -1, "u", 8, [4]), (" w: ", -1, "x", 64, [4]), (" neg: ", -1, "i", 64, [4]),
        (" fbits: ", -1, "x", 32, [4]), (" just text", -1, None, 0, []),
        (" 100%: ", -1, "i", 32, [])]
    assert ck.asm["llir"].count("atomicrmw add") == len(f)


def test_nvidia_keeps_vprintf():
    ck = _compile(printer, {"x": P(tl.float32), "n": tl.int32}, {"BLOCK": 256}, "sm_90a")
    assert "@vprintf" in ck.asm["llir"] and "tilework_print_buf" not in ck.asm["llir"]
    assert "print" not in ck.metadata


# ---- the lowered code, emulated -----------------------------------------------------------------

class PrintEmulator(Emulator):
    """The SIMT emulator plus what device_print needs: the global holding the buffer's
    address (`slot`, 0 = no runtime set it up) and `llvm.atomicrmw add` (lanes in order)."""

    def setup(self, capacity, set_up=True):
        self.buf = np.zeros(PB.HEADER + capacity, np.uint8)
        self.buf[:PB.HEADER] = np.frombuffer(PB.header(capacity), np.uint8)
        self.slot = np.zeros(8, np.uint8)
        self.set_up = set_up
        return self

    def _address(self, arr):
        for i, b in enumerate(self.buffers):  # the arguments' arrays, then ours
            if b is arr:
                return (i + 1) << GLOBAL_SHIFT
        self.buffers.append(arr)
        return len(self.buffers) << GLOBAL_SHIFT

    def op_llvm_mlir_addressof(self, op, a, env, act):
        if ir.FlatSymbolRefAttr(op.attributes["global_name"]).value != PB.SYMBOL:
            return super().op_llvm_mlir_addressof(op, a, env, act)
        if self.set_up:
            self.slot[:] = np.frombuffer(struct.pack("<q", self._address(self.buf)), np.uint8)
        return [np.full(self.T, self._address(self.slot), np.int64)]

    def op_llvm_atomicrmw(self, op, a, env, act):
        if ir.IntegerAttr(op.attributes["bin_op"]).value != 1:
            raise EmulationError("only atomicrmw add is emulated")
        p, v = a
        size = v.dtype.itemsize
        _, buf, idx = self._bytes(p, size, act)
        old = np.zeros(self.T, v.dtype)
        for j, t in enumerate(np.nonzero(act)[0]):
            old[t] = buf[idx[j]].view(v.dtype)[0]
            buf[idx[j]] = np.array([old[t] + v[t]], v.dtype).view(np.uint8)
        return [old]


def _emulate(fn, sig, consts, grid, args, capacity=1 << 16, set_up=True):
    emu = PrintEmulator.from_kernel(tilework.jit(fn), sig, consts, "gfx942", num_warps=2)
    emu.setup(capacity, set_up).run(grid, *args)
    gm = next(op.operation for op in emu.module.body.operations
              if op.operation.name == "gpu.module")
    descs = emu.compiled.metadata["print"]["formats"]
    assert json.loads(ir.StringAttr(gm.attributes["tilework.prints"]).value) == descs
    return emu, descs


def test_emulated_records_decode_to_the_interpreters_lines(capsys):
    x = np.array([1.5, -2.25, 3.0, 1e10], np.float32)
    interpreted(many)[(2, 1)](x, -5, 7, BLOCK=4)
    want = capsys.readouterr().out.splitlines()
    emu, descs = _emulate(many, MANY_SIG, {"BLOCK": 4}, (2, 1), (x, -5, 7))
    lines, dropped = PB.decode(descs, emu.buf.tobytes())
    assert dropped == 0 and len(lines) == len(want) == 2 * (4 + 1 + 4 + 16 + 1 + 4 * 4 + 1 + 1)
    assert sorted(lines) == sorted(want)
    assert f"pid (1, 0, 0) idx (3) w: 0x{9000000000:016x}" in lines
    assert "pid (0, 0, 0) idx () 100%: -5" in lines


def dtypes(x, h, d, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tl.device_print("h", tl.load(h + r))
    tl.device_print("hbits", tl.load(h + r), hex=True)
    tl.device_print("d", tl.load(d + r))
    tl.device_print("i8", r.to(tl.int8) - 100)
    tl.device_print("bool", r < 3)


DTYPES_SIG = {"x": P(tl.float32), "h": P(tl.float16), "d": P(tl.float64)}


def test_emulated_other_dtypes(capsys):
    h = np.array([0.5, -65504, 1e-3, 7], np.float16)
    d = np.array([1e300, -2.5, 0.1, 3], np.float64)
    x = np.zeros(1, np.float32)
    interpreted(dtypes)[(1,)](x, h, d, BLOCK=4)
    want = capsys.readouterr().out.splitlines()
    emu, descs = _emulate(dtypes, DTYPES_SIG, {"BLOCK": 4}, (1,), (x, h, d))
    lines, _ = PB.decode(descs, emu.buf.tobytes())
    assert len(lines) == 20 and sorted(lines) == sorted(want)


def test_bf16_and_pointers_compile():
    def k(x, b):
        r = tl.arange(0, 64)
        tl.device_print("bf", tl.load(b + r))
        tl.device_print("bfbits", tl.load(b + r), hex=True)
        tl.device_print("p", x + r)
    ck = _compile(k, {"x": P(tl.float32), "b": P(tl.bfloat16)}, {})
    assert [(d["kind"], d["bits"]) for d in ck.metadata["print"]["formats"]] == [
        ("f", 16), ("x", 16), ("p", 64)]
    assert "global_atomic_add_x2" in ck.asm["amdgcn"]


def test_emulated_replicated_tile_prints_each_element_once():
    # 8 elements on 128 threads: only the owners of the not-wrapped copies write records
    emu, descs = _emulate(printer, {"x": P(tl.float32), "n": tl.int32}, {"BLOCK": 8}, (1,),
                          (np.arange(8, dtype=np.float32), 8))
    lines, _ = PB.decode(descs, emu.buf.tobytes())
    assert sorted(lines) == [f"pid (0, 0, 0) idx ({i}) v: {i}.000000" for i in range(8)]


def test_emulated_full_buffer_drops_and_counts():
    emu, descs = _emulate(printer, {"x": P(tl.float32), "n": tl.int32}, {"BLOCK": 64}, (3,),
                          (np.zeros(64, np.float32), 64), capacity=5 * PB.RECORD + 7)
    lines, dropped = PB.decode(descs, emu.buf.tobytes())
    assert len(lines) == 5 and dropped == 3 * 64 - 5
    assert PB.counts(emu.buf[:PB.HEADER].tobytes()) == (5, 187)
    assert not emu.buf[PB.HEADER + 5 * PB.RECORD:].any()  # nothing past the last record


def test_emulated_without_a_buffer_writes_nothing():
    emu, _ = _emulate(printer, {"x": P(tl.float32), "n": tl.int32}, {"BLOCK": 64}, (2,),
                      (np.zeros(64, np.float32), 64), set_up=False)
    assert PB.counts(emu.buf[:PB.HEADER].tobytes()) == (0, 0) and not emu.buf[PB.HEADER:].any()


# ---- the decoder ----------------------------------------------------------------------------------

def _raw(v, kind, bits):
    if kind == "f":
        return struct.pack("<d", float(v))
    if kind == "x":
        a = np.asarray(v)
        u = int(a.view(f"u{a.itemsize}")) if a.dtype != np.bool_ else int(a)
        return struct.pack("<Q", u)
    return struct.pack("<q" if kind == "i" else "<Q", int(v))


@pytest.mark.parametrize("vals, elem, signed, hex_, kind, bits", [
    (np.array([1.5, -2.25, np.inf, 1e-7], np.float32), "f32", True, False, "f", 32),
    (np.array([[1, -2], [3, 2**31 - 1]], np.int32), "i32", True, False, "i", 32),
    (np.array([0, 255, 7], np.uint8), "ui8", False, False, "u", 8),
    (np.array([2**64 - 1, 5], np.uint64), "ui64", False, False, "u", 64),
    (np.array([-(2**63), 2**62], np.int64), "i64", True, False, "i", 64),
    (np.array([-5, 3], np.int32), "i32", True, True, "x", 32),
    (np.array([-5, 3], np.int16), "i16", True, True, "x", 16),
    (np.array([-(2**40)], np.int64), "i64", True, True, "x", 64),
    (np.array([1.0, -0.5], np.float32), "f32", True, True, "x", 32),
    (np.array([True, False]), "i1", False, False, "u", 1),
    (np.array([True, False]), "i1", False, True, "x", 1),
    (np.arange(12, dtype=np.int32).reshape(3, 4) * 7, "i32", True, False, "i", 32),
    (np.int32(-9), "i32", True, False, "i", 32),
])
def test_decoder_matches_the_interpreter(vals, elem, signed, hex_, kind, bits):
    a = np.asarray(vals)
    for operand in (-1, 2):
        desc = {"prefix": " p: ", "operand": operand, "kind": kind, "bits": bits,
                "shape": list(a.shape)}
        recs = b"".join(PB.record(0, (3, 1, 2), 17, k, _raw(a.reshape(-1)[k], kind, bits))
                        for k in range(a.size))
        buf = struct.pack("<QQ", len(recs), 1 << 20) + recs
        lines, dropped = PB.decode([desc], buf)
        assert dropped == 0
        assert lines == format_lines((3, 1, 2), " p: ", (a, elem, signed), hex_, operand)


def test_decoder_pointers_prefix_alone_and_layout_constants():
    descs = [{"prefix": " p: ", "operand": -1, "kind": "p", "bits": 64, "shape": []},
             {"prefix": " hello", "operand": -1, "kind": None, "bits": 0, "shape": []}]
    data = PB.record(0, (0, 0, 0), 0, 0, struct.pack("<Q", 0x7F0012345678)) + \
        PB.record(1, (4, 5, 6), 0, 0, bytes(8))
    assert PB.format_records(descs, data) == ["pid (0, 0, 0) idx () p: 0x7f0012345678",
                                              "pid (4, 5, 6) hello"]
    assert format_lines((4, 5, 6), " hello", None, False) == ["pid (4, 5, 6) hello"]
    rec = PB.record(1, (2, 3, 4), 5, 6, b"\x07" * 8)
    assert len(rec) == PB.RECORD and PB.HEADER % 8 == 0 and PB.RECORD % 8 == 0
    assert [struct.unpack_from("<I", rec, o)[0] for o in
            (PB.DESC, PB.PID, PB.PID + 4, PB.PID + 8, PB.TID, PB.INDEX)] == [1, 2, 3, 4, 5, 6]
    assert rec[PB.VALUE:] == b"\x07" * 8


def test_decoder_counts_a_full_buffer():
    assert PB.counts(struct.pack("<QQ", 10 * PB.RECORD, 4 * PB.RECORD + 31)) == (4, 6)
    assert PB.counts(PB.header(100)) == (0, 0)


def test_decoder_rejects_an_unknown_descriptor():
    desc = {"prefix": " v: ", "operand": -1, "kind": "i", "bits": 32, "shape": []}
    with pytest.raises(ValueError, match=r"device_print record 1 has descriptor 3; the "
                                         r"kernel has 1"):
        PB.format_records([desc], PB.record(0, (0, 0, 0), 0, 0, bytes(8)) +
                          PB.record(3, (0, 0, 0), 0, 0, bytes(8)))


# ---- the HIP runtime, against a fake hip-python ------------------------------------------------

class FakeHip:
    """hip-python's calls used by HipRuntime, on device memory made of bytearrays; a launch
    runs `kernel(fake)`, which plays the device."""

    def __init__(self, global_bytes=8, global_error=0):
        self.mem, self.top, self.syncs = {}, 1 << 32, 0
        self.gptr, self.global_error = self.alloc(global_bytes), global_error
        self.kernel = None

    def alloc(self, n):
        self.mem[self.top], self.top = bytearray(n), self.top + n + 4096
        return self.top - n - 4096

    def at(self, addr, n):
        base = max(b for b in self.mem if b <= addr)
        assert addr + n <= base + len(self.mem[base]), "out of bounds"
        return self.mem[base], addr - base

    def hipGetErrorString(self, err):
        return f"hipError {err}"

    def hipModuleLoadData(self, image):
        return 0, "module"

    def hipModuleGetFunction(self, mod, name):
        return 0, "function"

    def hipGetDevice(self):
        return 0, 0

    def hipModuleGetGlobal(self, mod, name):
        assert name == b"tilework_print_buf"
        return self.global_error, self.gptr, len(self.mem[self.gptr])

    def hipMalloc(self, n):
        return 0, self.alloc(n)

    def hipMemcpyHtoD(self, dst, src, n):
        m, o = self.at(dst, n)
        m[o:o + n] = bytes(src)[:n]
        return (0,)

    def hipMemcpyDtoH(self, dst, src, n):
        m, o = self.at(src, n)
        dst[:n] = m[o:o + n]
        return (0,)

    def hipStreamSynchronize(self, stream):
        self.syncs += 1
        return (0,)

    def hipModuleLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        if self.kernel:
            self.kernel(self)
        return (0,)

    def device_prints(self, values):
        """What the device code does: reserve, then write the records that fit."""
        buf, = struct.unpack("<Q", self.mem[self.gptr][:8])
        m, o = self.at(buf, PB.HEADER)
        used, cap = struct.unpack_from("<QQ", m, o)
        struct.pack_into("<Q", m, o, used + len(values) * PB.RECORD)
        for k, v in enumerate(values):
            off = used + k * PB.RECORD
            if off + PB.RECORD <= cap:
                m[o + PB.HEADER + off:o + PB.HEADER + off + PB.RECORD] = PB.record(
                    0, (k, 0, 0), 0, 0, struct.pack("<d", v))


def _runtime(fake):
    from tilework.runtime.hip import HipRuntime
    rt = HipRuntime.__new__(HipRuntime)  # without hip-python
    rt.hip, rt.stream = fake, lambda: None
    return rt


PRINTER_SIG = {"x": P(tl.float32), "n": tl.int32}


def test_hip_runtime_sets_up_prints_and_resets(monkeypatch, capsys):
    monkeypatch.setenv("TILEWORK_PRINT_BUFFER_SIZE", str(PB.HEADER + 3 * PB.RECORD))
    fake = FakeHip()
    rt = _runtime(fake)
    k = rt.load(_compile(printer, PRINTER_SIG, {"BLOCK": 1}))
    buf = k.printbuf
    assert struct.unpack("<Q", fake.mem[fake.gptr]) == (buf,)  # the global points at it
    assert bytes(fake.mem[buf][:PB.HEADER]) == PB.header(3 * PB.RECORD)
    fake.kernel = lambda f: f.device_prints([0.5, 1.5, 2.5, 3.5, 4.5])
    rt.launch(k, (5, 1, 1), (0, 1))
    out = capsys.readouterr()
    assert out.out.splitlines() == [f"pid ({i}, 0, 0) idx (0) v: {i + 0.5:f}" for i in range(3)]
    assert out.err.strip() == ("tilework: printer: 2 device_print records dropped (the buffer "
                               "is full; raise TILEWORK_PRINT_BUFFER_SIZE)")
    assert fake.syncs == 1 and PB.counts(bytes(fake.mem[buf][:PB.HEADER])) == (0, 0)
    fake.kernel = lambda f: f.device_prints([7.0])
    rt.launch(k, (1, 1, 1), (0, 1))  # the same buffer, emptied
    out = capsys.readouterr()
    assert out.out.splitlines() == ["pid (0, 0, 0) idx (0) v: 7.000000"] and out.err == ""


def test_hip_runtime_leaves_kernels_without_prints_alone():
    def plain(x, n):
        tl.store(x, n.to(tl.float32))
    fake = FakeHip()
    rt = _runtime(fake)
    k = rt.load(_compile(plain, PRINTER_SIG, {}))
    rt.launch(k, (1, 1, 1), (0, 1))
    assert k.printbuf is None and fake.syncs == 0 and len(fake.mem) == 1


def test_hip_runtime_rejects_a_global_that_is_not_a_pointer():
    from tilework.runtime.hip import HipError
    with pytest.raises(HipError, match=r"^printer: tilework_print_buf has 4 bytes, expected a "
                                        r"pointer \(8\)$"):
        _runtime(FakeHip(global_bytes=4)).load(_compile(printer, PRINTER_SIG, {"BLOCK": 1}))


def test_hip_runtime_reports_a_missing_global():
    from tilework.runtime.hip import HipError
    with pytest.raises(HipError, match=r"^printer: finding tilework_print_buf failed: "
                                        r"hipError 500$"):
        _runtime(FakeHip(global_error=500)).load(_compile(printer, PRINTER_SIG, {"BLOCK": 1}))


@pytest.mark.parametrize("value", ["lots", "16"])
def test_hip_runtime_rejects_a_bad_buffer_size(monkeypatch, value):
    monkeypatch.setenv("TILEWORK_PRINT_BUFFER_SIZE", value)
    with pytest.raises(ValueError, match=rf"^TILEWORK_PRINT_BUFFER_SIZE='{value}': want a number "
                                         r"of bytes, at least 48$"):
        _runtime(FakeHip()).load(_compile(printer, PRINTER_SIG, {"BLOCK": 1}))
