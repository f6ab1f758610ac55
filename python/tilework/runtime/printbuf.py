"""The device_print buffer of AMD kernels: its layout (shared by the lowering in
`lowering/rules/debug.py`, so the two cannot drift) and the host-side decoder.

AMD has no printf without ROCm's device libraries, so a printing kernel appends fixed-size
records to a buffer the runtime owns and the host formats them after the launch, in the
format of NVIDIA's vprintf path and of the interpreter (`interp_debug.format_lines`).

    buffer:  u64 reserved bytes (atomic counter; may pass the capacity)
             u64 capacity of the record area in bytes (written by the host)
             records from offset HEADER
    record:  u32 descriptor id, u32 program id x, y, z, u32 thread id,
             u32 row-major index of the element in its tile (0 for scalars),
             8-byte value (kinds below)

Each thread reserves its records with one atomic add on the counter and writes those that fit;
the others are dropped, so records written = min(reserved, capacity) // RECORD and
dropped = reserved // RECORD - written.  The descriptors (one per `tile.print` op: prefix,
operand number, value kind, bit width, tile shape) go into the kernel's metadata under
`print`, so no string ever comes from the device.  Importing this module loads no MLIR (the
lowering imports it too).
"""
from __future__ import annotations

import math
import struct

SYMBOL = "tilework_print_buf"   # addrspace(1) global holding the buffer's address
HEADER = 16
RECORD = 32
# offsets of a record's fields
DESC, PID, TID, INDEX, VALUE = 0, 4, 16, 20, 24
# value kinds: f: f64; i: i64 (sign-extended); u: u64 (zero-extended); x: the bits,
# zero-extended, printed in hex; p: an address; None: no value (a prefix alone)
KINDS = ("f", "i", "u", "x", "p", None)

_HEAD = struct.Struct("<QQ")
_REC = struct.Struct("<IIIIII8s")
assert _HEAD.size == HEADER and _REC.size == RECORD and _REC.size - 8 == VALUE


def header(capacity: int) -> bytes:
    """The header of an empty buffer whose record area is `capacity` bytes."""
    return _HEAD.pack(0, capacity)


def counts(head: bytes) -> tuple[int, int]:
    """(records written, records dropped) from a buffer's header."""
    used, cap = _HEAD.unpack_from(head)
    written = min(used, cap) // RECORD
    return written, used // RECORD - written


def record(desc, pid, tid, index, raw: bytes) -> bytes:
    """One record as the device writes it (for tests and simulators)."""
    return _REC.pack(desc, *pid, tid, index, raw)


def _value(kind, bits, raw) -> str:
    if kind == "f":
        return f"{struct.unpack('<d', raw)[0]:f}"
    if kind == "i":
        return str(struct.unpack("<q", raw)[0])
    u = struct.unpack("<Q", raw)[0]
    if kind == "x":
        return f"0x{u:0{max(1, bits // 4)}x}"
    return hex(u) if kind == "p" else str(u)


def format_record(desc: dict, pid, index: int, raw: bytes) -> str:
    """The line vprintf prints for one element (see `interp_debug.format_lines`)."""
    head = f"pid ({pid[0]}, {pid[1]}, {pid[2]})"
    if desc["kind"] is None:
        return head + desc["prefix"]
    shape, idx = desc["shape"], []
    for d in reversed(shape):
        index, i = divmod(index, d)
        idx.insert(0, i)
    widths = [max(0, math.ceil(math.log10(d))) if d > 0 else 0 for d in shape]
    tag = f"(operand {desc['operand']}) " if desc["operand"] >= 0 else ""
    text = ", ".join(f"{i:>{w}}" if w else str(i) for i, w in zip(idx, widths))
    return f"{head} idx ({text}){desc['prefix']}{tag}{_value(desc['kind'], desc['bits'], raw)}"


def format_records(descs: list, data: bytes) -> list[str]:
    """The lines of the records in `data` (the record area), in the order they were reserved."""
    out = []
    for k in range(len(data) // RECORD):
        d, px, py, pz, _tid, index, raw = _REC.unpack_from(data, k * RECORD)
        if d >= len(descs):  # not a record this kernel writes: a corrupt buffer
            raise ValueError(f"device_print record {k} has descriptor {d}; the kernel has "
                             f"{len(descs)}")
        out.append(format_record(descs[d], (px, py, pz), index, raw))
    return out


def decode(descs: list, buf: bytes) -> tuple[list[str], int]:
    """(lines, records dropped) of a whole buffer (header and record area)."""
    written, dropped = counts(buf[:HEADER])
    return format_records(descs, buf[HEADER:HEADER + written * RECORD]), dropped
