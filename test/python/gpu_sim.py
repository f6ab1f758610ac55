"""A CPU stand-in for an NVIDIA GPU in tests without one.

`run(compiled, grid, *args)` executes the `llir` stage of a kernel compiled for an sm_* target
on this CPU (llvmlite MCJIT): one OS thread per GPU thread of a program, programs one after
another, with the kernel's shared memory as one buffer all threads of a program see, `bar.sync`
as a barrier of those threads and butterfly shuffles exchanged within each warp of 32.  So the
compiled code (layouts, register relabelling, shared-memory round trips, barriers, loops) is
checked against numpy, not only the interpreter's semantics.

Supported: thread/program ids and counts, barriers, `shfl.sync.bfly`, `mma.sync` and
`ldmatrix` (the `llvm.nvvm.mma.*` / `ldmatrix.*` intrinsics: each warp's operands gathered;
mma by simt_mma.mma_sync), `cp.async` (copied when issued, zero-filled past its src-size:
one legal schedule; commit/wait are then nothing, so a wrong wait count is the SIMT emulator's
to catch), LLVM's target-independent intrinsics.  The predicated inline PTX `ld.global`/`st.global` of masked accesses run as branches around LLVM loads and stores, their pinned compares (`add` + `setp` asm) as `add` + `icmp`; the inline PTX `atom`/`red` of atomics (either order of scope and
semantics) run as LLVM
`atomicrmw` (`atom.cas` as `cmpxchg`); rsqrt.approx and div.full correctly rounded, ex2.approx.ftz as exp2 with subnormal results flushed, `prmt` (llvm.nvvm.prmt) as the PTX ISA defines it, the directed-rounding inline PTX
(`add.rm.f32`, `cvt.rz.f32.s64`, ...) exactly (sim_rounding.py); the host's half/bfloat
libcalls (`__truncdfhf2`, ...) as Python helpers, and any other symbol the JIT cannot
resolve (it would link address 0) rejected before the run.  Not supported (raises `Unsupported`): other inline PTX (`ex2.approx`, ...), printf, other NVVM intrinsics.  Arguments: numpy arrays for
pointers (their data address is passed), Python ints/floats for scalars, in the order of the
compiled kernel's parameters.
"""
from __future__ import annotations

import ctypes
import re
import struct
import threading

import numpy as np

import sim_rounding

WARP = 32
SMEM_BYTES = 1 << 18


class Unsupported(Exception):
    pass


_SREG = {f"llvm.nvvm.read.ptx.sreg.{r}.{a}": f"sim_{r}_{a}"
         for r in ("tid", "ctaid", "nctaid", "ntid") for a in "xyz"}
_BARRIERS = ("llvm.nvvm.barrier0", "llvm.nvvm.barrier.cta.sync.aligned.all",
             "llvm.nvvm.barrier.cta.sync.all", "llvm.nvvm.barrier.sync")
_CTYPES = {"ptr": ctypes.c_void_p, "i1": ctypes.c_bool, "i8": ctypes.c_int8,
           "i16": ctypes.c_int16, "i32": ctypes.c_int32, "i64": ctypes.c_int64,
           "float": ctypes.c_float, "double": ctypes.c_double,
           "half16": ctypes.c_uint16, "bf16": ctypes.c_uint16}  # (half/bfloat as bits)


def _host_ir(text: str) -> tuple[str, str, list, list]:
    """The kernel's LLVM IR made host code: (IR, kernel name, parameter types, the mma
    and ldmatrix intrinsics hooked by `_hook_mma`)."""
    text = text.replace(" addrspace(1)", "").replace(" addrspace(3)", "")
    text = re.sub(r"@tilework_smem = external global \[0 x i8\]",
                  f"@tilework_smem = global [{SMEM_BYTES} x i8] zeroinitializer", text)
    text = text.replace("define ptx_kernel void", "define void")
    for name, sim in _SREG.items():
        text = text.replace("@" + name + "(", "@" + sim + "(")
    for name in _BARRIERS:
        text = re.sub(r"@" + re.escape(name) + r"\((i32 [^)]*)?\)",
                      lambda m: "@sim_barrier()", text)
        text = re.sub(r"declare void @sim_barrier\(\)[^\n]*\n", "", text)
    text = re.sub(r"declare (void|i32) @llvm\.nvvm\.barrier[^\n]*\n", "", text)
    for mode in ("bfly", "up", "down", "idx"):
        text = text.replace(f"@llvm.nvvm.shfl.sync.{mode}.i32(", f"@sim_shfl_{mode}(")
        text = text.replace(f"@llvm.nvvm.shfl.sync.{mode}.f32(", f"@sim_shfl_{mode}_f32(")
    # cp.async.{ca,cg}.shared.global.<size>[.s](dst, src[, src_size]): a copy when issued
    text = re.sub(r"@llvm\.nvvm\.cp\.async\.c[ag]\.shared\.global\.(\d+)\.s\((ptr [^,]+), "
                  r"(ptr [^,]+), (i32 [^)]+)\)",
                  lambda m: f"@sim_cp_async({m[2]}, {m[3]}, i32 {m[1]}, {m[4]})", text)
    text = re.sub(r"@llvm\.nvvm\.cp\.async\.c[ag]\.shared\.global\.(\d+)\((ptr [^,]+), "
                  r"(ptr [^,)]+)\)",
                  lambda m: f"@sim_cp_async({m[2]}, {m[3]}, i32 {m[1]}, i32 {m[1]})", text)
    text = re.sub(r"[^\n]*call void @llvm\.nvvm\.cp\.async\.(commit|wait)\.group[^\n]*\n", "",
                  text)
    text = re.sub(r"declare [^\n]*@llvm\.nvvm\.cp\.async[^\n]*\n", "", text)
    text += "\ndeclare void @sim_barrier()\n"
    text = _atomics(text)
    text = _predicated(text)
    text = sim_rounding.rewrite(text)  # add.rm.f32, cvt.rz.f32.s64, ...: exact host calls
    for name, body in _APPROX.items():  # approximate NVVM math: correctly rounded here
        if f"@{name}(" in text:
            text = re.sub(rf"declare [^\n]*@{re.escape(name)}\([^\n]*\n", "", text)
            text = text.replace(f"@{name}(", f"@sim_{name.replace('.', '_')}(")
            text += "\n" + body.replace("@NAME", f"@sim_{name.replace('.', '_')}") + "\n"
    text, mmas = _hook_mma(text)
    if "@sim_cp_async(" in text:
        text += "declare void @sim_cp_async(ptr, ptr, i32, i32)\n"
    for bad in ("asm ", "@llvm.nvvm.", "@vprintf", "@__nv_", "@__assertfail"):
        if bad in text:
            line = next(ln for ln in text.splitlines() if bad in ln)
            raise Unsupported(f"the CPU simulator cannot run `{line.strip()}`")
    m = re.search(r"define void @(\w+)\(([^)]*)\)", text)
    params = [p.strip().split()[0] for p in m.group(2).split(",") if p.strip()]
    if "half" in params or "bfloat" in params:
        text, params = _bits_wrapper(text, m.group(1), params)
    return text, m.group(1), params, mmas


def _prmt_ir() -> str:
    """prmt.b32 d, a, b, c in its default mode (PTX ISA): byte n of d is byte c[4n+2:4n] of
    (b:a), or that byte's sign replicated when c[4n+3] is set."""
    lines = ["define i32 @NAME(i32 %a, i32 %b, i32 %c) {", "  %lo = zext i32 %a to i64",
             "  %hz = zext i32 %b to i64", "  %hi = shl i64 %hz, 32", "  %w = or i64 %hi, %lo"]
    for n in range(4):
        lines += [f"  %s{n} = lshr i32 %c, {4 * n}", f"  %n{n} = and i32 %s{n}, 15",
                  f"  %i{n} = and i32 %n{n}, 7", f"  %sh{n} = mul i32 %i{n}, 8",
                  f"  %q{n} = zext i32 %sh{n} to i64", f"  %v{n} = lshr i64 %w, %q{n}",
                  f"  %t{n} = trunc i64 %v{n} to i8", f"  %neg{n} = icmp slt i8 %t{n}, 0",
                  f"  %rep{n} = select i1 %neg{n}, i8 -1, i8 0", f"  %m{n} = and i32 %n{n}, 8",
                  f"  %msb{n} = icmp ne i32 %m{n}, 0",
                  f"  %b{n} = select i1 %msb{n}, i8 %rep{n}, i8 %t{n}",
                  f"  %z{n} = zext i8 %b{n} to i32", f"  %p{n} = shl i32 %z{n}, {8 * n}"]
    lines += ["  %o1 = or i32 %p0, %p1", "  %o2 = or i32 %o1, %p2", "  %o3 = or i32 %o2, %p3",
              "  ret i32 %o3", "}"]
    return "\n".join(lines)


_PRMT = _prmt_ir()
# ex2.approx.ftz: exp2 with a subnormal result flushed to zero (a subnormal input is 0, whose
# exp2 rounds to 1 either way)
_EX2_FTZ = ("define float @NAME(float %x) {\n  %e = call float @llvm.exp2.f32(float %x)\n"
            "  %a = call float @llvm.fabs.f32(float %e)\n"
            "  %t = fcmp olt float %a, 0x3810000000000000\n"
            "  %r = select i1 %t, float 0.0, float %e\n  ret float %r\n}")
_APPROX = {
    "llvm.nvvm.rsqrt.approx.f": "define float @NAME(float %x) {\n  %s = call float "
    "@llvm.sqrt.f32(float %x)\n  %r = fdiv float 1.0, %s\n  ret float %r\n}",
    "llvm.nvvm.div.full": "define float @NAME(float %a, float %b) {\n  %r = fdiv float %a, %b"
    "\n  ret float %r\n}",
    "llvm.nvvm.prmt": _PRMT,
    "llvm.nvvm.ex2.approx.ftz.f32": _EX2_FTZ,  # (the name LLVM 22 upgrades `.ftz.f` to)
    "llvm.nvvm.ex2.approx.ftz.f": _EX2_FTZ,
}
_ATOM = re.compile(
    r'(?:(%[\w.]+) = )?call (\w+) asm sideeffect "(atom|red)\.(?:\w+\.\w+\.global|global\.'
    r'\w+\.\w+)\.(\w+)\.(?:noftz\.)?([usbf])(\d+) [^"]*", "[^"]*"\(ptr ([^,]+), (\w+) ([^)]+)\)')
_CAS = re.compile(
    r'(%[\w.]+) = call (\w+) asm sideeffect "atom\.(?:\w+\.\w+\.global|global\.\w+\.\w+)'
    r'\.cas\.b(\d+) [^"]*", "[^"]*"\(ptr ([^,]+), (\w+) ([^,]+), (\w+) ([^)]+)\)')
_RMW = {("add", "f"): "fadd", "add": "add", ("max", "s"): "max", ("max", "u"): "umax",
        ("min", "s"): "min", ("min", "u"): "umin", "and": "and", "or": "or", "xor": "xor",
        "exch": "xchg"}


def _atomics(text: str) -> str:
    """The lowering's inline PTX `atom`/`red` become LLVM `atomicrmw` (sequentially
    consistent: stronger than any order asked); 16-bit floats travel as i16 registers."""
    count = [0]

    def sub(m):
        res, ptx_op, kind, bits = m[1], m[4], m[5], m[6]
        op = _RMW.get((ptx_op, kind)) or _RMW[ptx_op]
        k = count[0] = count[0] + 1
        vty, val = m[8], m[9]
        fty = {"16": "half", "32": "float", "64": "double"}[bits] if op == "fadd" else None
        lines = []
        if fty is not None and vty != fty:  # (f16 as i16)
            lines.append(f"%sim_av{k} = bitcast {vty} {val} to {fty}")
            val, ty = f"%sim_av{k}", fty
        else:
            ty = vty
        lines.append(f"%sim_ar{k} = atomicrmw {op} ptr {m[7]}, {ty} {val} seq_cst")
        if res is not None:
            lines.append(f"{res} = bitcast {ty} %sim_ar{k} to {m[2]}" if ty != m[2] else
                         f"{res} = add {ty} %sim_ar{k}, 0" if ty.startswith("i") else
                         f"{res} = fadd {ty} %sim_ar{k}, -0.0")
        return "\n  ".join(lines)
    def cas(m):  # atom.cas -> cmpxchg (the old value, as PTX returns it)
        k = count[0] = count[0] + 1
        return (f"%sim_cx{k} = cmpxchg ptr {m[4]}, {m[5]} {m[6]}, {m[7]} {m[8]} seq_cst seq_cst"
                f"\n  {m[1]} = extractvalue {{ {m[2]}, i1 }} %sim_cx{k}, 0")
    return _ATOM.sub(sub, _CAS.sub(cas, text))


_PRED_LD = re.compile(
    r'call (\{[^}]*\}|i\d+) asm sideeffect "@\$\d+ ld(\.volatile)?\.global(?:\.v\d)?\.([bu])(\d+) '
    r'[^"]*", "[^"]*"\(i1 ([^,]+), ptr ([^,]+), ([^)]*)\)')
_PRED_ST = re.compile(
    r'call void asm sideeffect "@\$0 st\.global(?:\.v\d)?\.([bu])(\d+) [^"]*", "[^"]*"'
    r'\(i1 ([^,]+), ptr ([^,]+), ([^)]*)\)')


def _predicated(text: str) -> str:
    """The lowering's predicated inline PTX `@p ld.global` / `@p st.global` (memory_ptx.py)
    become calls of helpers that branch around an LLVM load/store: n words of w bits (u8: a
    byte in an i16); a load's tied inputs (`other`) are its result where p is false."""
    helpers = {}

    def helper(kind, n, w, byte):
        name = f"@sim_{kind}_{n}x{w}{'_u8' if byte else ''}"
        if name in helpers:
            return name
        it = f"i{w}"
        mt = "i8" if byte else (it if n == 1 else f"<{n} x {it}>")
        rt = it if n == 1 else "{ " + ", ".join([it] * n) + " }"
        words = ", ".join(f"{it} %w{j}" for j in range(n))
        body = []
        if kind == "ld":
            body += [f"define {rt} {name}(i1 %p, ptr %a, {words}) {{", "  br i1 %p, label %l, label %o",
                     "l:", f"  %v = load {mt}, ptr %a"]
            val = "%v"
            if byte:
                body.append(f"  %v1 = zext i8 %v to {it}")
                val = "%v1"
            if n == 1:
                body += [f"  ret {it} {val}", "o:", f"  ret {it} %w0"]
            else:
                prev = "poison"
                for j in range(n):
                    body.append(f"  %e{j} = extractelement {mt} %v, i32 {j}")
                    body.append(f"  %s{j} = insertvalue {rt} {prev}, {it} %e{j}, {j}")
                    prev = f"%s{j}"
                body += [f"  ret {rt} {prev}", "o:"]
                prev = "poison"
                for j in range(n):
                    body.append(f"  %t{j} = insertvalue {rt} {prev}, {it} %w{j}, {j}")
                    prev = f"%t{j}"
                body.append(f"  ret {rt} {prev}")
        else:
            body += [f"define void {name}(i1 %p, ptr %a, {words}) {{", "  br i1 %p, label %s, label %o",
                     "s:"]
            if byte:
                body += ["  %b = trunc i16 %w0 to i8", "  store i8 %b, ptr %a"]
            elif n == 1:
                body.append(f"  store {it} %w0, ptr %a")
            else:
                prev = "poison"
                for j in range(n):
                    body.append(f"  %v{j} = insertelement {mt} {prev}, {it} %w{j}, i32 {j}")
                    prev = f"%v{j}"
                body.append(f"  store {mt} {prev}, ptr %a")
            body += ["  ret void", "o:", "  ret void"]
        helpers[name] = "\n".join(body + ["}"])
        return name

    def ld(m):
        n = m[1].count(",") + 1 if m[1].startswith("{") else 1
        byte = m[3] == "u"
        w = 16 if byte else int(m[4])
        return f"call {m[1]} {helper('ld', n, w, byte)}(i1 {m[5]}, ptr {m[6]}, {m[7]})"

    def st(m):
        n = m[5].count(",") + 1
        byte = m[1] == "u"
        w = 16 if byte else int(m[2])
        return f"call void {helper('st', n, w, byte)}(i1 {m[3]}, ptr {m[4]}, {m[5]})"
    text = _PRED_ST.sub(st, _PRED_LD.sub(ld, text))
    return _pinned(text) + "".join("\n" + h + "\n" for h in helpers.values())


_PINNED = re.compile(r'(%[\w.]+) = call i1 asm sideeffect "\{ ([^"]*)\}", "=b[^"]*"\(([^)]*)\)')
_ICMP = {("eq", "b"): "eq", ("ne", "b"): "ne", ("lt", "s"): "slt", ("le", "s"): "sle",
         ("gt", "s"): "sgt", ("ge", "s"): "sge", ("lt", "u"): "ult", ("le", "u"): "ule",
         ("gt", "u"): "ugt", ("ge", "u"): "uge"}


def _pinned(text: str) -> str:
    """memory_ptx.pinned_compare's asm (`add.sN %tK, $i, k;` then `setp.<cmp>.<kind>N $0, a,
    b;`) as LLVM `add` and `icmp`."""
    count = [0]

    def sub(m):
        k = count[0] = count[0] + 1
        args = [a.strip().split()[1] for a in m[3].split(",") if a.strip()]
        names, lines = {}, []

        def ref(x):
            x = x.strip()
            return args[int(x[1:]) - 1] if x.startswith("$") else names.get(x, x)
        for stmt in (t.strip() for t in m[2].split(";")):
            a = re.fullmatch(r"add\.s(\d+) (%t\d), (\S+), (-?\d+)", stmt)
            c = re.fullmatch(r"setp\.(\w+)\.([bsu])(\d+) \$0, (\S+), (\S+)", stmt)
            if a:
                names[a[2]] = f"%sim_pin{k}{a[2][1:]}"
                lines.append(f"{names[a[2]]} = add i{a[1]} {ref(a[3])}, {a[4]}")
            elif c:
                lines.append(f"{m[1]} = icmp {_ICMP[c[1], c[2]]} i{c[3]} {ref(c[4])}, "
                             f"{ref(c[5])}")
            elif stmt and not stmt.startswith(".reg"):
                raise Unsupported(f"the CPU simulator cannot run `{stmt}` of {m[0]}")
        return "\n  ".join(lines)
    return _PINNED.sub(sub, text)


_DECL_WARP = re.compile(r"declare (\{[^}]*\}) @(llvm\.nvvm\.(?:mma|ldmatrix)\.[\w.]+)\((.*)\)"
                        r"( #\d+)?\n")
_PARAM_TYPE = re.compile(r"\s*(<[^>]*>|\w+)[^,]*(,|$)")


def _hook_mma(text: str):
    """Each `llvm.nvvm.mma.*` / `llvm.nvvm.ldmatrix.*` intrinsic becomes a wrapper storing its
    operands (32-bit registers; a pointer for ldmatrix) to a buffer and calling `sim_warp(id,
    in, out)`; returns the text and what each id is: ("mma", ptx type, k, result element
    type, operands, results) or ("ldmatrix", trans, num)."""
    ops = []
    for m in list(_DECL_WARP.finditer(text)):
        rty, name = m.group(1), m.group(2)
        params = [t.group(1) for t in _PARAM_TYPE.finditer(m.group(3)) if t.group(1)]
        fields = [f.strip() for f in rty.strip("{} ").split(",")]
        if ".ldmatrix." in name:
            ops.append(("ldmatrix", ".trans." in name, len(fields)))
        else:
            k = int(re.search(r"k(\d+)\.", name).group(1))
            ptx = "f16" if params[0] == "<2 x half>" else name.split(".")[-1]
            relem = {"float": "f32", "i32": "i32", "<2 x half>": "f16"}[fields[0]]
            ops.append(("mma", ptx, k, relem, len(params), len(fields)))
        i = len(ops) - 1
        sizes = [8 if p == "ptr" else 4 for p in params]
        body = [f"define {rty} @sim_warp_{i}(" +
                ", ".join(f"{p} %p{j}" for j, p in enumerate(params)) + ") {",
                f"  %in = alloca [{sum(sizes)} x i8], align 16",
                f"  %out = alloca [{4 * len(fields)} x i8], align 16"]
        for j, p in enumerate(params):
            body += [f"  %q{j} = getelementptr i8, ptr %in, i64 {sum(sizes[:j])}",
                     f"  store {p} %p{j}, ptr %q{j}"]
        body.append(f"  call void @sim_warp(i32 {i}, ptr %in, ptr %out)")
        prev = "poison"
        for j, f in enumerate(fields):
            body += [f"  %r{j} = getelementptr i8, ptr %out, i64 {4 * j}",
                     f"  %v{j} = load {f}, ptr %r{j}",
                     f"  %s{j} = insertvalue {rty} {prev}, {f} %v{j}, {j}"]
            prev = f"%s{j}"
        body += [f"  ret {rty} {prev}", "}"]
        text = text.replace(m.group(0), "")
        text = text.replace(f"@{name}(", f"@sim_warp_{i}(")
        text += "\n" + "\n".join(body) + "\n"
    if ops:
        text += "declare void @sim_warp(i32, ptr, ptr)\n"
    return text, ops


def _cp_async(dst, src, size, src_size):
    """cp.async: `src_size` bytes copied, the rest of `size` zero-filled."""
    n = max(0, min(size, src_size))
    if n:
        ctypes.memmove(dst, src, n)
    if n < size:
        ctypes.memset(dst + n, 0, size - n)


def _bits_wrapper(text, name, params):
    """ctypes cannot pass `half`/`bfloat` arguments (the host ABI puts them in vector
    registers): the kernel gets a wrapper taking their 16 bits as i16, as the GPU's parameter
    space holds them (the runtime writes fp16/bf16 scalars as bits: `abi.encode_values`)."""
    text = text.replace(f"define void @{name}(", f"define void @{name}__sim(", 1)
    outer = ["i16" if p in ("half", "bfloat") else p for p in params]
    body, args = [], []
    for i, (p, o) in enumerate(zip(params, outer)):
        if p != o:
            body.append(f"  %v{i} = bitcast i16 %a{i} to {p}")
            args.append(f"{p} %v{i}")
        else:
            args.append(f"{p} %a{i}")
    sig = ", ".join(f"{o} %a{i}" for i, o in enumerate(outer))
    text += (f"\ndefine void @{name}({sig}) {{\n" + "".join(b + "\n" for b in body) +
             f"  call void @{name}__sim({', '.join(args)})\n  ret void\n}}\n")
    return text, [("half16" if p == "half" else "bf16" if p == "bfloat" else o)
                  for p, o in zip(params, outer)]


class _Sim:
    def __init__(self, nthreads: int):
        self.n = nthreads
        self.local = threading.local()
        self.cta = (0, 0, 0)
        self.grid = (1, 1, 1)
        self.errors = []
        self.barrier = threading.Barrier(nthreads, timeout=60)
        self.warp_barriers = [threading.Barrier(min(WARP, nthreads), timeout=60)
                              for _ in range((nthreads + WARP - 1) // WARP)]
        self.slots = [0] * nthreads
        self.mmas = []
        self.warp_locks = [threading.Lock() for _ in self.warp_barriers]
        self.warp_results = [None] * len(self.warp_barriers)
        self.callbacks = {}
        self.callbacks["sim_warp"] = ctypes.CFUNCTYPE(
            None, ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(self._warp_op)
        i32f = ctypes.CFUNCTYPE(ctypes.c_int32)
        for r in ("tid", "ctaid", "nctaid", "ntid"):
            for k, a in enumerate("xyz"):
                self.callbacks[f"sim_{r}_{a}"] = i32f(self._sreg(r, k))
        self.callbacks["sim_barrier"] = ctypes.CFUNCTYPE(None)(self._barrier)
        self.callbacks["sim_cp_async"] = ctypes.CFUNCTYPE(
            None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)(_cp_async)
        for mode in ("bfly", "up", "down", "idx"):
            self.callbacks[f"sim_shfl_{mode}"] = ctypes.CFUNCTYPE(
                ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                ctypes.c_int32)(self._shfl_fn(mode))
            self.callbacks[f"sim_shfl_{mode}_f32"] = ctypes.CFUNCTYPE(
                ctypes.c_float, ctypes.c_int32, ctypes.c_float, ctypes.c_int32,
                ctypes.c_int32)(self._shfl_fn(mode))

    def _sreg(self, r, k):
        def get():
            if r == "tid":
                return self.local.tid if k == 0 else 0
            if r == "ntid":
                return self.n if k == 0 else 1
            return (self.cta if r == "ctaid" else self.grid)[k]
        return get

    def _barrier(self):
        try:
            self.barrier.wait()
        except Exception as e:  # a broken barrier: some thread failed
            self.errors.append(e)

    def _shfl_fn(self, mode):
        """shfl.sync.<mode> (PTX semantics: `clamp` is the segment's last lane for bfly, down
        and idx, its first lane for up); lanes whose source is out of range keep their value."""
        def shfl(mask, val, offset, clamp):
            t = self.local.tid
            warp, lane = divmod(t, WARP)
            wb = self.warp_barriers[warp]
            try:
                self.slots[t] = val
                wb.wait()
                src = {"bfly": lane ^ offset, "up": lane - offset, "down": lane + offset,
                       "idx": offset}[mode]
                ok = (src >= clamp) if mode == "up" else (src <= (clamp & 31))
                ok = ok and 0 <= src < min(WARP, self.n)
                r = self.slots[warp * WARP + src] if ok else val
                wb.wait()
                return r
            except Exception as e:
                self.errors.append(e)
                return val
        return shfl


    def _warp_op(self, kid, inp, outp):
        """mma.sync / ldmatrix of the calling thread's warp: operands gathered from all its
        lanes, the results computed once (by the first lane to get there), each lane's
        registers written back."""
        what = self.mmas[kid]
        t = self.local.tid
        warp, lane = divmod(t, WARP)
        wb = self.warp_barriers[warp]
        try:
            nin = 2 if what[0] == "ldmatrix" else what[4]
            self.slots[t] = np.frombuffer(ctypes.string_at(inp, 4 * nin), np.uint32).copy()
            wb.wait()
            with self.warp_locks[warp]:
                if self.warp_results[warp] is None:
                    x = np.stack([self.slots[warp * WARP + i] for i in range(WARP)])
                    f = self._ldmatrix if what[0] == "ldmatrix" else self._mma
                    self.warp_results[warp] = f(what, x)
            res = self.warp_results[warp][lane].tobytes()
            ctypes.memmove(outp, res, len(res))
            if wb.wait() == 0:
                self.warp_results[warp] = None
        except Exception as e:
            self.errors.append(e)

    @staticmethod
    def _mma(what, x):
        from simt_mma import mma_sync
        _, ptx, k, relem, nin, nout = what
        regs = [x[:, j] for j in range(nin)]
        cdt = {"f32": np.float32, "i32": np.int32, "f16": np.float16}[relem]
        cs = [np.ascontiguousarray(r).view(cdt).reshape(WARP, -1) for r in regs[6:]]
        cs = [c[:, 0] if c.shape[1] == 1 else c for c in cs]
        d = mma_sync(ptx, k, regs[:4], regs[4:6], cs, cdt, 2 if relem == "f16" else 0, WARP)
        return np.stack([np.ascontiguousarray(v).view(np.uint8).reshape(WARP, -1) for v in d],
                        1).reshape(WARP, -1)

    @staticmethod
    def _ldmatrix(what, x):
        """ldmatrix.m8n8.x<num>[.trans].b16: lanes 8q..8q+7 address the rows of matrix q; lane
        l gets row l / 4, elements 2(l % 4), +1 (of the transpose with .trans)."""
        _, trans, num = what
        addrs = x.view(np.uint64)[:, 0]
        out = np.zeros((WARP, num, 2), np.uint16)
        for q in range(num):
            m = np.stack([np.frombuffer(ctypes.string_at(int(addrs[8 * q + i]), 16), np.uint16)
                          for i in range(8)])
            for lane in range(WARP):
                out[lane, q] = (m[2 * (lane % 4): 2 * (lane % 4) + 2, lane // 4] if trans
                                else m[lane // 4, 2 * (lane % 4): 2 * (lane % 4) + 2])
        return out.reshape(WARP, -1).view(np.uint8)


def _bits_to_float(bits: int) -> float:
    return float(np.array([bits], np.uint32).view(np.float32)[0])


def _float_bits(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def _bf16_bits_of_double(x: float) -> int:
    """x rounded to bfloat16 once (to nearest, ties to even): through float32 rounded toward
    zero plus a sticky bit, as rounding double -> float32 -> bf16 twice may differ."""
    if x != x:
        return (_float_bits(x) >> 16) | 0x40
    with np.errstate(over="ignore"):
        f = np.float32(x)
    if abs(float(f)) > abs(x):  # (RZ: one step toward zero; overflow to inf stays FLT_MAX)
        f = np.nextafter(f, np.float32(0.0))
    b = _float_bits(f)
    sticky = float(f) != x
    hi, low = b >> 16, b & 0xFFFF
    if low > 0x8000 or (low == 0x8000 and (sticky or hi & 1)):
        hi += 1  # (sign-magnitude: the magnitude grows, possibly to infinity)
    return hi & 0xFFFF


def _f16_bf16_helpers():
    """compiler-rt's half/bfloat conversions (MCJIT does not find them in this process, unless
    some library happened to load libgcc_s: an unresolved one is a call of address 0); the
    16-bit values travel in the low bits of an xmm register, as a float's bit pattern.  The
    double -> half/bfloat ones (`fptrunc double`: no x86 instruction) round once, as PTX's
    cvt.rn.f16.f64 / cvt.rn.bf16.f64 do."""
    f = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)
    d = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_double)

    def ext_h(x):
        return float(np.array([_float_bits(x) & 0xFFFF], np.uint16).view(np.float16)[0])

    def trunc_h(x):
        return _bits_to_float(int(np.array([x], np.float32).astype(np.float16).view(np.uint16)[0]))

    def trunc_bf(x):
        b = _float_bits(x)
        if x != x:
            r = (b >> 16) | 0x40
        else:
            r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF
        return _bits_to_float(r)

    def ext_bf(x):
        return _bits_to_float((_float_bits(x) & 0xFFFF) << 16)

    def trunc_dh(x):  # (numpy rounds float64 -> float16 once)
        with np.errstate(over="ignore"):
            h = np.array([x], np.float64).astype(np.float16)
        return _bits_to_float(int(h.view(np.uint16)[0]))

    def trunc_dbf(x):
        return _bits_to_float(_bf16_bits_of_double(x))
    return {"__extendhfsf2": f(ext_h), "__gnu_h2f_ieee": f(ext_h), "__truncsfhf2": f(trunc_h),
            "__gnu_f2h_ieee": f(trunc_h), "__truncsfbf2": f(trunc_bf), "__extendbfsf2": f(ext_bf),
            "__truncdfhf2": d(trunc_dh), "__truncdfbf2": d(trunc_dbf)}


_HELPERS = None
_ENGINES = []


def _undefined_symbols(obj: bytes) -> list[str]:
    """The names an ELF64 object leaves undefined (SHN_UNDEF entries of its symbol table);
    [] for another format."""
    if obj[:5] != b"\x7fELF\x02":
        return []
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    names = []
    for _, kind, _, _, off, size, link, _, _, ent in secs:
        if kind != 2:  # SHT_SYMTAB
            continue
        stroff = secs[link][4]
        for k in range(1, size // ent):
            name, _, _, shndx = struct.unpack_from("<IBBH", obj, off + k * ent)
            if shndx == 0 and name:
                names.append(obj[stroff + name: obj.index(b"\0", stroff + name)].decode())
    return names


def _require_resolved(obj: bytes, known) -> None:
    """MCJIT links a symbol it cannot find as address 0, so a call of it crashes the process;
    the host code's libcalls (e.g. `__truncdfhf2` of an `fptrunc double to half`) are found
    here first: ours (`known`), or this process's (libc, libm, ...)."""
    import llvmlite.binding as lb
    proc = ctypes.CDLL(None)
    for name in _undefined_symbols(obj):
        if name in known or lb.address_of_symbol(name) or hasattr(proc, name):
            continue
        raise Unsupported(f"the CPU simulator cannot resolve `{name}` (a function the host "
                          "code of the kernel calls): add it to gpu_sim's helpers")


def run(ck, grid, *args, num_threads: int | None = None):
    """Runs the compiled kernel `ck` (sm_* target) over `grid` on the CPU."""
    import llvmlite.binding as lb
    if not str(ck.target).startswith("sm_") and "nvidia" not in str(ck.target) and \
            not str(ck.metadata.get("target", "")).startswith("sm_"):
        raise Unsupported("the CPU simulator runs NVIDIA (sm_*) kernels")
    text, name, params, mmas = _host_ir(ck.asm["llir"])
    n = num_threads or ck.metadata["num_warps"] * ck.metadata.get("warp_size", WARP)
    sim = _Sim(n)
    sim.mmas = mmas
    lb.initialize_native_target()
    lb.initialize_native_asmprinter()
    global _HELPERS
    if _HELPERS is None:
        _HELPERS = _f16_bf16_helpers() | sim_rounding.helpers()
        for sym, cb in _HELPERS.items():
            lb.add_symbol(sym, ctypes.cast(cb, ctypes.c_void_p).value)
    tm = lb.Target.from_default_triple().create_target_machine(  # (F16C: native half casts)
        cpu=lb.get_host_cpu_name(), features=lb.get_host_cpu_features().flatten(), opt=2)
    mod = lb.parse_assembly(text)
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    for sym, cb in sim.callbacks.items():
        lb.add_symbol(sym, ctypes.cast(cb, ctypes.c_void_p).value)
    engine = lb.create_mcjit_compiler(mod, tm)
    objs = []
    engine.set_object_cache(lambda _m, obj: objs.append(obj), lambda _m: None)
    engine.finalize_object()
    for obj in objs:
        _require_resolved(obj, set(_HELPERS) | set(sim.callbacks))
    _ENGINES.append((engine, sim))  # keep the code and the callbacks alive
    fn = ctypes.CFUNCTYPE(None, *[_CTYPES[p] for p in params])(engine.get_function_address(name))
    if len(args) != len(params):
        raise TypeError(f"{name} takes {len(params)} runtime arguments ({params}), got "
                        f"{len(args)}")
    from tilework.runtime.abi import bf16_bits, fp16_bits
    enc = {"half16": fp16_bits, "bf16": bf16_bits}
    cargs = [a.ctypes.data if isinstance(a, np.ndarray) else
             enc[p](float(a)) if p in enc else a for p, a in zip(params, args)]
    grid = tuple(grid) + (1,) * (3 - len(grid))
    sim.grid = grid
    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                sim.cta = (x, y, z)

                def thread(t):
                    sim.local.tid = t
                    fn(*cargs)
                threads = [threading.Thread(target=thread, args=(t,)) for t in range(n)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
                if sim.errors:
                    raise RuntimeError(f"simulated program {sim.cta} failed: {sim.errors[0]!r}")
