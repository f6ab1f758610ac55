"""A CPU stand-in for an NVIDIA GPU in tests without one.

`run(compiled, grid, *args)` executes the `llir` stage of a kernel compiled for an sm_* target
on this CPU (llvmlite MCJIT): one OS thread per GPU thread of a program, programs one after
another, with the kernel's shared memory as one buffer all threads of a program see, `bar.sync`
as a barrier of those threads and butterfly shuffles exchanged within each warp of 32.  So the
compiled code (layouts, register relabelling, shared-memory round trips, barriers, loops) is
checked against numpy, not only the interpreter's semantics.

Supported: thread/program ids and counts, barriers, `shfl.sync.bfly`, LLVM's target-independent
intrinsics.  Not supported (raises `Unsupported`): inline PTX (atomics, `ex2.approx`, ...),
printf, other NVVM intrinsics.  Arguments: numpy arrays for pointers (their data address is
passed), Python ints/floats for scalars, in the order of the compiled kernel's parameters.
"""
from __future__ import annotations

import ctypes
import re
import threading

import numpy as np

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


def _host_ir(text: str) -> tuple[str, str, list]:
    """The kernel's LLVM IR made host code: (IR, kernel name, parameter types)."""
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
    text += "\ndeclare void @sim_barrier()\n"
    for bad in ("asm ", "@llvm.nvvm.", "@vprintf", "@__nv_", "@__assertfail"):
        if bad in text:
            line = next(ln for ln in text.splitlines() if bad in ln)
            raise Unsupported(f"the CPU simulator cannot run `{line.strip()}`")
    m = re.search(r"define void @(\w+)\(([^)]*)\)", text)
    params = [p.strip().split()[0] for p in m.group(2).split(",") if p.strip()]
    if "half" in params or "bfloat" in params:
        text, params = _bits_wrapper(text, m.group(1), params)
    return text, m.group(1), params


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
        self.callbacks = {}
        i32f = ctypes.CFUNCTYPE(ctypes.c_int32)
        for r in ("tid", "ctaid", "nctaid", "ntid"):
            for k, a in enumerate("xyz"):
                self.callbacks[f"sim_{r}_{a}"] = i32f(self._sreg(r, k))
        self.callbacks["sim_barrier"] = ctypes.CFUNCTYPE(None)(self._barrier)
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


def _bits_to_float(bits: int) -> float:
    return float(np.array([bits], np.uint32).view(np.float32)[0])


def _float_bits(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def _f16_bf16_helpers():
    """compiler-rt's half/bfloat conversions (MCJIT does not find them in this process); the
    16-bit values travel in the low bits of an xmm register, as a float's bit pattern."""
    f = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)

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
    return {"__extendhfsf2": f(ext_h), "__gnu_h2f_ieee": f(ext_h), "__truncsfhf2": f(trunc_h),
            "__gnu_f2h_ieee": f(trunc_h), "__truncsfbf2": f(trunc_bf), "__extendbfsf2": f(ext_bf)}


_HELPERS = None
_ENGINES = []


def run(ck, grid, *args, num_threads: int | None = None):
    """Runs the compiled kernel `ck` (sm_* target) over `grid` on the CPU."""
    import llvmlite.binding as lb
    if not str(ck.target).startswith("sm_") and "nvidia" not in str(ck.target) and \
            not str(ck.metadata.get("target", "")).startswith("sm_"):
        raise Unsupported("the CPU simulator runs NVIDIA (sm_*) kernels")
    text, name, params = _host_ir(ck.asm["llir"])
    n = num_threads or ck.metadata["num_warps"] * ck.metadata.get("warp_size", WARP)
    sim = _Sim(n)
    lb.initialize_native_target()
    lb.initialize_native_asmprinter()
    global _HELPERS
    if _HELPERS is None:
        _HELPERS = _f16_bf16_helpers()
        for sym, cb in _HELPERS.items():
            lb.add_symbol(sym, ctypes.cast(cb, ctypes.c_void_p).value)
    tm = lb.Target.from_default_triple().create_target_machine(  # (F16C: native half casts)
        cpu=lb.get_host_cpu_name(), features=lb.get_host_cpu_features().flatten(), opt=2)
    mod = lb.parse_assembly(text)
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    for sym, cb in sim.callbacks.items():
        lb.add_symbol(sym, ctypes.cast(cb, ctypes.c_void_p).value)
    engine = lb.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
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
