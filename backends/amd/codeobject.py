"""Reading an hsaco's metadata note without ROCm: the ELF's `NT_AMDGPU_METADATA` note (owner
"AMDGPU", type 32), a MessagePack map (`amdhsa.version`, `amdhsa.kernels`: each kernel's
`.name`, `.wavefront_size`, `.sgpr_count`, `.vgpr_count`, `.group_segment_fixed_size`,
`.kernarg_segment_size`, `.private_segment_fixed_size`, `.args`, ...), as
`llvm-readelf --notes` prints it (AMDGPU ABI, "Code Object Metadata").  Pure Python, so tests
and the runtime can check what the launcher packs against what the kernel expects."""
from __future__ import annotations

import struct

NT_AMDGPU_METADATA = 32
ELFABIVERSION_AMDGPU_HSA = {2: 4, 3: 5, 4: 6}  # e_ident[EI_ABIVERSION] -> code-object version


class CodeObjectError(ValueError):
    pass


def _unpack(buf: bytes, i: int):
    """One MessagePack value at `i` -> (value, next offset)."""
    b = buf[i]
    i += 1
    if b <= 0x7F:
        return b, i
    if b >= 0xE0:
        return b - 0x100, i
    if 0x80 <= b <= 0x8F:
        return _map(buf, i, b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return _array(buf, i, b & 0x0F)
    if 0xA0 <= b <= 0xBF:
        n = b & 0x1F
        return buf[i:i + n].decode(), i + n
    fixed = {0xC0: None, 0xC2: False, 0xC3: True}
    if b in fixed:
        return fixed[b], i
    sized = {0xCC: "B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: "b", 0xD1: ">h", 0xD2: ">i",
             0xD3: ">q", 0xCA: ">f", 0xCB: ">d"}
    if b in sized:
        fmt = sized[b]
        return struct.unpack_from(fmt, buf, i)[0], i + struct.calcsize(fmt)
    lens = {0xD9: "B", 0xDA: ">H", 0xDB: ">I", 0xC4: "B", 0xC5: ">H", 0xC6: ">I",
            0xDC: ">H", 0xDD: ">I", 0xDE: ">H", 0xDF: ">I"}
    if b in lens:
        n = struct.unpack_from(lens[b], buf, i)[0]
        i += struct.calcsize(lens[b])
        if b in (0xDC, 0xDD):
            return _array(buf, i, n)
        if b in (0xDE, 0xDF):
            return _map(buf, i, n)
        raw = buf[i:i + n]
        return (raw.decode() if b >= 0xD9 else bytes(raw)), i + n
    raise CodeObjectError(f"MessagePack byte 0x{b:02x} at {i - 1} is not decoded")


def _array(buf, i, n):
    out = []
    for _ in range(n):
        v, i = _unpack(buf, i)
        out.append(v)
    return out, i


def _map(buf, i, n):
    out = {}
    for _ in range(n):
        k, i = _unpack(buf, i)
        v, i = _unpack(buf, i)
        out[k] = v
    return out, i


def unpack_msgpack(buf: bytes):
    value, end = _unpack(buf, 0)
    if end != len(buf):
        raise CodeObjectError(f"{len(buf) - end} bytes after the MessagePack value")
    return value


def _sections(elf: bytes):
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise CodeObjectError("not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    for k in range(shnum):
        off = shoff + k * shentsize
        _, sh_type, _, _, sh_offset, sh_size = struct.unpack_from("<IIQQQQ", elf, off)
        yield sh_type, elf[sh_offset:sh_offset + sh_size]


def metadata_note(hsaco: bytes) -> dict:
    """The decoded AMDGPU metadata note of a code object, plus `code_object_version` (from the
    ELF header's ABI version)."""
    for sh_type, data in _sections(hsaco):
        if sh_type != 7:  # SHT_NOTE
            continue
        i = 0
        while i + 12 <= len(data):
            namesz, descsz, ntype = struct.unpack_from("<III", data, i)
            name = data[i + 12:i + 12 + namesz].rstrip(b"\0")
            d0 = i + 12 + (namesz + 3) // 4 * 4
            if name == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
                note = unpack_msgpack(data[d0:d0 + descsz])
                note["code_object_version"] = ELFABIVERSION_AMDGPU_HSA.get(hsaco[8])
                return note
            i = d0 + (descsz + 3) // 4 * 4
    raise CodeObjectError("no AMDGPU metadata note in the code object")


def kernel_note(hsaco: bytes, name: str) -> dict:
    """The note's entry of kernel `name`."""
    for k in metadata_note(hsaco).get("amdhsa.kernels", []):
        if k.get(".name") == name:
            return k
    raise CodeObjectError(f"kernel {name!r} is not in the code object's metadata note")
