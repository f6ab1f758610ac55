"""Random tile programs for the differential fuzzer: Python source of one `@tilework.jit` kernel.

A program loads two inputs `x`, `y` (1-D tile of BLOCK or 2-D tile of BM x BN, with masked
tails), builds values by random statements and stores 1-3 of them (`out0..`).  Every value has a
dtype the generator knows exactly (operands of another dtype are cast explicitly, so Triton's
promotion rules are not modelled here) and a flag `exact`: values made only of operations that
round the same way everywhere (integer ops, float +,-,*, min/max, floor, casts, selects,
integer reductions and scans) are compared bit for bit; anything downstream of a
transcendental, a division, a float reduction or scan is compared within a tolerance
(fuzz_harness.close).  Inexact values never feed comparisons, integer casts, conditions or
atomics, where a last-bit difference would become a large one.

Forms kept out on purpose (undefined in Triton, so either answer is right): integer division
by zero and INT_MIN / -1 (divisors are `(b & 7) + 1`), shifts by the bit width or more
(amounts masked), float-to-int casts of NaN or out-of-range values (clamped through `where`),
NaN through tl.maximum/minimum (no NaN reaches them: see _clean), atomics whose returned
old value is used (order dependent).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16,
        "uint32": 32, "uint64": 64, "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}
# clamp range for float -> int casts (inside every int type, exact in every float type)
CLAMP = {"int8": (-128, 127), "int16": (-2048, 2047), "int32": (-2048, 2047),
         "int64": (-2048, 2047), "uint8": (0, 255), "uint16": (0, 2047), "uint32": (0, 2047),
         "uint64": (0, 2047)}
MATH = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "erf", "sigmoid"]


@dataclass
class Val:
    name: str
    dt: str
    exact: bool


def is_int(dt):
    return dt in INTS


class Gen:
    def __init__(self, seed: int, gpu: bool = False):
        self.r = random.Random(seed)
        self.seed = seed
        self.gpu = gpu
        r = self.r
        self.two_d = r.random() < 0.5
        if self.two_d:
            self.bm, self.bn = r.choice([(4, 64), (8, 32), (16, 16), (32, 8), (2, 128),
                                         (16, 64), (64, 16), (32, 32), (1, 32), (8, 8)])
            self.numel = self.bm * self.bn
        else:
            self.block = r.choice([16, 32, 64, 128, 256, 512, 1024])
            self.numel = self.block
        self.num_warps = r.choice([1, 2, 4, 4, 8]) if self.numel >= 256 else r.choice([1, 2, 4])
        self.dx = r.choice(INTS + FLOATS + ["int32", "float32"])
        self.dy = r.choice(INTS + FLOATS + ["int32", "float32"])
        self.lines: list[str] = []
        self.vals = [Val("x", self.dx, True), Val("y", self.dy, True)]
        self.n = 0
        self.outs: list[Val] = []
        self.atomic = None  # (op, dtype, size) when the program has an atomic
        self.features: set[str] = set()
        self.summed_names: set[str] = set()  # values carrying float sums' rounding

    # ---- helpers ----------------------------------------------------------------------------
    def fresh(self):
        self.n += 1
        return f"v{self.n}"

    def pick(self, exact=False, kind=None):
        c = [v for v in self.vals if (v.exact or not exact) and
             (kind is None or (kind == "int") == is_int(v.dt))]
        return self.r.choice(c) if c else None

    def cast(self, expr, src, dst):
        """`expr` (of dtype src) as dst; float -> int clamped and NaN-free first."""
        if src == dst:
            return expr
        if is_int(dst) and not is_int(src):
            lo, hi = CLAMP[dst]
            e = self._clean(expr)
            expr = f"tl.minimum(tl.maximum({e}, {float(lo)}), {float(hi)})"
        return f"({expr}).to(tl.{dst})"

    @staticmethod
    def _clean(expr):
        return f"tl.where(({expr}) != ({expr}), 0.0, {expr})"

    def emit(self, line, depth=1):
        self.lines.append("    " * depth + line)

    def summed(self, name, expr):
        """Marks `name` order dependent when `expr` sums floats or reads such a value: its
        error is absolute (of the partial sums' size), so no math function amplifies it."""
        if re.search(r"tl\.(sum|cumsum|cumprod)\(", expr) and not all(
                is_int(v.dt) for v in self.vals if re.search(rf"\b{v.name}\b", expr)) or \
                any(re.search(rf"\b{n}\b", expr) for n in self.summed_names):
            self.summed_names.add(name)

    def assign(self, expr, dt, exact, depth=1):
        name = self.fresh()
        self.summed(name, expr)
        self.emit(f"{name} = {expr}", depth)
        v = Val(name, dt, exact)
        self.vals.append(v)
        return v

    # ---- expressions: (code, dtype, exact) --------------------------------------------------
    def expr(self, depth=0):
        r = self.r
        kinds = ["bin", "bin", "bin", "un", "where", "cast", "red", "scan", "perm", "math",
                 "join"]
        k = r.choice(kinds)
        return getattr(self, "e_" + k)()

    def e_bin(self):
        r = self.r
        a = self.pick()
        if is_int(a.dt) or r.random() < 0.3:
            b = self.pick(exact=True) if not a.exact or is_int(a.dt) else self.pick()
        else:
            b = self.pick(kind="float")
        if is_int(a.dt) and not b.exact:
            b = self.pick(exact=True)
        bx = self.cast(b.name, b.dt, a.dt)
        exact = a.exact and b.exact
        if is_int(a.dt):
            if not a.exact:
                a = self.pick(exact=True)
            op = r.choice(["+", "-", "*", "&", "|", "^", "<<", ">>", "//", "%", "max", "min"])
            self.features.add("int_" + op)
            if op in ("<<", ">>"):
                return f"({a.name} {op} ({bx} & {BITS[a.dt] - 1}))", a.dt, True
            if op in ("//", "%"):
                return f"({a.name} {op} (({bx} & 7) + 1))", a.dt, True
            if op in ("max", "min"):
                return f"tl.{op}imum({a.name}, {bx})", a.dt, True
            return f"({a.name} {op} {bx})", a.dt, True
        ops = ["+", "-", "*", "/", "max", "min", "fma"] if exact else ["+", "-", "*"]
        op = r.choice(ops)
        self.features.add("float_" + op)
        if op in ("max", "min"):
            return f"tl.{op}imum({a.name}, {bx})", a.dt, exact
        if op == "/":
            return f"({a.name} / (tl.abs({bx}) + 1.0))", a.dt, False
        if op == "fma":
            c = self.pick(exact=True, kind="float") or a
            return (f"tl.fma({a.name}, {bx}, {self.cast(c.name, c.dt, a.dt)})", a.dt,
                    False)
        if self.gpu and op in ("+", "-") and not a.dt == "float64":
            exact = False  # (ptxas contracts a*b+c into fma on the device)
        return f"({a.name} {op} {bx})", a.dt, exact and not self.gpu

    def e_un(self):
        a = self.pick()
        ops = ["-", "abs"] + (["~"] if is_int(a.dt) else ["floor", "ceil"])
        op = self.r.choice(ops)
        self.features.add("un_" + op)
        if op == "abs":
            return f"tl.abs({a.name})", a.dt, a.exact
        if op in ("floor", "ceil"):
            if not a.exact or a.dt == "float16":
                return f"(-{a.name})", a.dt, a.exact
            return f"tl.{op}({a.name})", a.dt, a.exact
        return f"({op}{a.name})", a.dt, a.exact

    def e_where(self):
        c1 = self.pick(exact=True)
        c2 = self.pick(exact=True)
        a, b = self.pick(), self.pick()
        cmp = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
        self.features.add("where")
        cond = f"({c1.name} {cmp} {self.cast(c2.name, c2.dt, c1.dt)})"
        return (f"tl.where({cond}, {a.name}, {self.cast(b.name, b.dt, a.dt)})", a.dt,
                a.exact and b.exact)

    def e_cast(self):
        a = self.pick(exact=True)
        dst = self.r.choice(INTS + FLOATS + ["bfloat16"])
        self.features.add("cast")
        if dst == "bfloat16":
            if is_int(a.dt):
                return self.cast(a.name, a.dt, "float32"), "float32", True
            # a round trip through bf16 (rounding to nearest even on both sides)
            return f"({a.name}.to(tl.bfloat16)).to(tl.{a.dt})", a.dt, a.exact
        return self.cast(a.name, a.dt, dst), dst, a.exact

    def _bcast(self, e, axis):
        if not self.two_d:
            return e
        return f"({e})[None, :]" if axis == 0 else f"({e})[:, None]"

    def e_red(self):
        r = self.r
        a, b = self.pick(), self.pick()
        axis = r.choice([0, 1]) if self.two_d else 0
        ops = ["sum", "max", "min"] + (["xor_sum"] if is_int(b.dt) else []) + \
            (["argmax", "argmin"] if b.exact else [])
        op = r.choice(ops)
        self.features.add(f"red_{op}")
        red = f"tl.{op}({b.name}, axis={axis})"
        exact = b.exact and (is_int(b.dt) or op != "sum")
        if op.startswith("arg"):
            red_dt = "int32"
        else:
            red_dt = b.dt  # (sum of narrow ints widens: cast back below)
            red = f"({red}).to(tl.{b.dt})"  # (sums widen narrow types)
        if is_int(a.dt) and not exact:
            return self.e_bin()
        return (f"({a.name} + {self._bcast(self.cast(red, red_dt, a.dt), axis)})", a.dt,
                a.exact and exact and not (self.gpu and not is_int(a.dt)))

    def e_scan(self):
        b = self.pick()
        axis = self.r.choice([0, 1]) if self.two_d else 0
        op = self.r.choice(["cumsum", "cumsum", "cumprod"])
        self.features.add(f"scan_{op}")
        arg = b.name
        if op == "cumprod" and not is_int(b.dt):  # (factors near 1: no overflow midway)
            arg = f"tl.minimum(tl.maximum({self._clean(b.name)}, 0.97), 1.03)"
        e = f"tl.{op}({arg}, axis={axis})"
        e = f"({e}).to(tl.{b.dt})"  # (scans widen narrow types)
        return e, b.dt, b.exact and is_int(b.dt)

    def e_perm(self):
        b = self.pick()
        self.features.add("perm")
        if self.two_d:
            if self.r.random() < 0.5:
                return f"tl.reshape(tl.trans({b.name}), ({self.bm}, {self.bn}))", b.dt, b.exact
            return (f"tl.reshape(tl.permute({b.name}, (1, 0)), ({self.bm}, {self.bn}))", b.dt,
                    b.exact)
        if self.block < 4:
            return b.name, b.dt, b.exact
        a = self.r.choice([2, 4, self.block // 2, self.block // 4])
        return (f"tl.reshape(tl.trans(tl.reshape({b.name}, ({a}, {self.block // a}))), "
                f"({self.block},))"), b.dt, b.exact

    def e_join(self):
        a = self.pick()
        b = self.pick()
        self.features.add("join")
        j = f"tl.join({a.name}, {self.cast(b.name, b.dt, a.dt)})" if (b.exact or not is_int(a.dt)) \
            else f"tl.join({a.name}, {a.name})"
        k = self.r.choice([0, 1])
        return f"tl.split({j})[{k}]", a.dt, a.exact and (b.exact or k == 0)

    def e_math(self):
        c = [v for v in self.vals if not is_int(v.dt) and v.name not in self.summed_names]
        a = self.r.choice(c) if c else None
        if a is None:
            return self.e_bin()
        f = self.r.choice(MATH)
        self.features.add("math_" + f)
        x = self.cast(a.name, a.dt, "float32") if a.dt == "float16" else a.name
        dt = "float32" if a.dt == "float16" else a.dt
        if f in ("exp", "exp2", "sin", "cos", "sigmoid"):
            x = f"tl.where({x} != {x}, 0.0, {x})"  # (no NaN reaches minimum/maximum)
        arg = {"exp": f"tl.minimum(tl.maximum({x}, -20.0), 20.0)",
               "exp2": f"tl.minimum(tl.maximum({x}, -20.0), 20.0)",
               "log": f"(tl.abs({x}) + 0.5)", "log2": f"(tl.abs({x}) + 0.5)",
               "sqrt": f"tl.abs({x})", "rsqrt": f"(tl.abs({x}) + 0.25)",
               "sin": f"tl.minimum(tl.maximum({x}, -50.0), 50.0)",
               "cos": f"tl.minimum(tl.maximum({x}, -50.0), 50.0)",
               "erf": x, "sigmoid": f"tl.minimum(tl.maximum({x}, -30.0), 30.0)"}[f]
        return f"tl.{f}({arg})", dt, False

    # ---- statements ------------------------------------------------------------------------
    def s_assign(self):
        e, dt, exact = self.expr()
        self.assign(e, dt, exact)

    def s_if(self):
        r = self.r
        c = self.pick(exact=True)
        if r.random() < 0.5:
            cond = f"s0 > {r.randint(-3, 3)}"
        else:
            red = r.choice(["max", "min", "sum"]) if is_int(c.dt) else r.choice(["max", "min"])
            lo = 0 if c.dt.startswith("uint") else -2  # (a negative int meets no unsigned
            cond = f"tl.{red}({c.name}) {r.choice(['>', '<'])} {r.randint(lo, 2)}"  # tile)
        e1, dt, ex1 = self.expr()
        e2, dt2, ex2 = self.expr()
        if is_int(dt) and not ex2:
            e2, dt2, ex2 = "x", self.dx, True
        if is_int(dt) and not ex1:
            e1, dt, ex1 = "y", self.dy, True
            if is_int(dt2) is False and not ex2:
                e2, dt2, ex2 = "y", self.dy, True
        name = self.fresh()
        self.features.add("if")
        self.emit(f"if {cond}:")
        self.emit(f"{name} = {e1}", 2)
        self.emit("else:")
        self.emit(f"{name} = {self.cast(e2, dt2, dt)}", 2)
        self.summed(name, e1 + " " + e2 + " " + cond)
        self.vals.append(Val(name, dt, ex1 and ex2))

    def s_loop(self):
        r = self.r
        a = self.pick()
        b = self.pick(exact=True) if is_int(a.dt) else self.pick()
        if is_int(a.dt) and not a.exact:
            a = b
        name = self.fresh()
        self.emit(f"{name} = {a.name}")
        acc = Val(name, a.dt, a.exact and b.exact)
        op = r.choice(["+", "*", "-", "^"] if is_int(a.dt) else ["+", "*", "-", "max"])
        if op == "max":
            step = f"tl.maximum({name}, {self.cast(b.name, b.dt, a.dt)})"
        else:
            step = f"({name} {op} {self.cast(b.name, b.dt, a.dt)})"
        if op == "*" and not is_int(a.dt):
            step = f"({name} * 0.5 + {self.cast(b.name, b.dt, a.dt)})"
            acc.exact = acc.exact and not self.gpu
        if is_int(a.dt) and r.random() < 0.5:
            step = f"({step} + tl.sum({name}, axis={r.choice([0, 1]) if self.two_d else 0})" \
                   f"{'[:, None]' if self.two_d else ''}.to(tl.{a.dt}))"
            if self.two_d and "axis=0" in step:
                step = step.replace("[:, None]", "[None, :]")
        kind = r.choice(["for_rt", "for_const", "while"])
        self.features.add(kind)
        if kind == "for_rt":
            self.emit("for i in range(0, s1):")
            self.emit(f"{name} = {step}", 2)
        elif kind == "for_const":
            self.emit(f"for i in range({r.randint(1, 4)}):")
            self.emit(f"{name} = {step}", 2)
        else:
            self.emit("i = 0")
            self.emit("while i < s1:")
            self.emit(f"{name} = {step}", 2)
            self.emit("i += 1", 2)
        self.summed(name, step + " " + a.name)
        self.vals.append(acc)

    def s_atomic(self):
        v = self.pick(exact=True, kind="int") or self.vals[0]
        r = self.r
        dt = r.choice(["int32", "uint32", "int64"])
        op = r.choice(["add", "max", "min", "and", "or", "xor"])
        size = r.choice([1, 3, 7, 16])
        self.atomic = (op, dt, size)
        self.features.add("atomic_" + op)
        self.emit(f"tl.atomic_{op}(cnt_ptr + (offs % {size}), {self.cast(v.name, v.dt, dt)}, "
                  f"mask=mask)")

    def program(self) -> str:
        r = self.r
        nstmt = r.randint(2, 7)
        for _ in range(nstmt):
            k = r.random()
            if k < 0.12:
                self.s_if()
            elif k < 0.24:
                self.s_loop()
            elif k < 0.30 and self.atomic is None:
                self.s_atomic()
            else:
                self.s_assign()
        cands = self.vals[2:] or self.vals
        self.outs = r.sample(cands, min(len(cands), r.randint(1, 3)))
        if self.vals[-1] not in self.outs and len(self.vals) > 2:
            self.outs[0] = self.vals[-1]
        for i, v in enumerate(self.outs):
            self.emit(f"tl.store(out{i}_ptr + offs, {v.name}, mask=mask)")
        return self.source()

    def source(self) -> str:
        outs = "".join(f"out{i}_ptr, " for i in range(len(self.outs)))
        if self.two_d:
            head = [f"def kernel(x_ptr, y_ptr, {outs}cnt_ptr, M, N, s0, s1, "
                    "BM: tl.constexpr, BN: tl.constexpr):",
                    "    rm = tl.program_id(0) * BM + tl.arange(0, BM)",
                    "    rn = tl.program_id(1) * BN + tl.arange(0, BN)",
                    "    offs = rm[:, None] * N + rn[None, :]",
                    "    mask = (rm[:, None] < M) & (rn[None, :] < N)"]
        else:
            head = [f"def kernel(x_ptr, y_ptr, {outs}cnt_ptr, M, N, s0, s1, "
                    "BLOCK: tl.constexpr):",
                    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
                    "    mask = offs < N"]
        ox = "0.0" if self.dx in FLOATS else "0"
        oy = "1.0" if self.dy in FLOATS else "1"
        head += [f"    x = tl.load(x_ptr + offs, mask=mask, other={ox})",
                 f"    y = tl.load(y_ptr + offs, mask=mask, other={oy})"]
        return ("# fuzz program, seed %d\nimport tilework\nimport tilework.language as tl\n\n\n"
                "@tilework.jit\n" % self.seed) + "\n".join(head + self.lines) + "\n"
