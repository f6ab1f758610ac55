"""The SIMT emulator's arith and math ops (a mixin of simt_emulator.Emulator): integer ops on
two's-complement numpy arrays, float ops in the operands' own precision, casts."""
from __future__ import annotations

import numpy as np

import mlir.ir as ir

from sim_rounding import fma_exact
from simt_values import BF16, EmulationError, UINT_TYPES, as_unsigned, bit_width, np_type


class ArithOps:
    def op_arith_constant(self, op, args, env, active):
        t = op.results[0].type
        dt, n = np_type(t)
        attr = op.attributes["value"]
        if dt == BF16:  # bfloat16: the float's top 16 bits, rounded to nearest even
            v = ir.DenseElementsAttr(attr).get_splat_value() if n else attr
            b = int(np.array([ir.FloatAttr(v).value], np.float32).view(np.uint32)[0])
            bits = np.array([((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF], np.uint16)
            x = bits.view(BF16)
            return [x.repeat(self.T * max(n, 1)).reshape((self.T, n) if n else self.T)]
        if n:
            v = ir.DenseElementsAttr(attr).get_splat_value()
            x = ir.FloatAttr(v).value if np.dtype(dt).kind == "f" else ir.IntegerAttr(v).value
            return [np.array([x]).astype(dt).repeat(self.T * n).reshape(self.T, n)]
        if np.dtype(dt).kind == "f":
            return [np.full(self.T, ir.FloatAttr(attr).value, dt)]
        if dt == np.bool_:
            return [np.full(self.T, bool(ir.IntegerAttr(attr).value & 1))]
        if str(t) == "bf16" or str(t).startswith("f8"):  # a float kept as its bits
            f = ir.FloatAttr(attr).value
            if str(t) == "bf16":
                return [np.full(self.T, np.float32(f).view(np.uint32) >> 16, np.uint16)]
            if f != 0.0:
                raise EmulationError(f"float8 constant {f} is not emulated")
            return [np.zeros(self.T, np.uint8)]
        val = ir.IntegerAttr(attr).value
        return [np.array([val], dtype=np.int64).astype(dt).repeat(self.T)]

    def _int2(self, fn, args, unsigned=False):
        """fn on 64-bit copies of the operands (zero-extended if `unsigned`), wrapped back."""
        a, b = args
        dt = a.dtype
        if unsigned:
            a, b = as_unsigned(a).astype(np.uint64), as_unsigned(b).astype(np.uint64)
        else:
            a, b = a.astype(np.int64), b.astype(np.int64)
        with np.errstate(all="ignore"):
            r = np.asarray(fn(a, b))
        if dt == np.bool_:
            return [(r & 1).astype(np.bool_)]
        return [r.astype(dt)]

    def op_arith_addi(self, op, a, env, act):
        return self._int2(np.add, a)

    def op_arith_subi(self, op, a, env, act):
        return self._int2(np.subtract, a)

    def op_arith_muli(self, op, a, env, act):
        return self._int2(np.multiply, a)

    def op_arith_mului_extended(self, op, a, env, act):
        """The low and high halves of the unsigned double-width product."""
        dt = a[0].dtype
        w = dt.itemsize * 8
        lo, hi = [], []
        for p, q in zip(as_unsigned(a[0]).tolist(), as_unsigned(a[1]).tolist()):
            r = (int(p) * int(q)) % (1 << (2 * w))
            lo.append(r % (1 << w))
            hi.append(r >> w)
        u = np.dtype(f"u{dt.itemsize}")
        return [np.array(lo, u).view(dt), np.array(hi, u).view(dt)]

    def op_arith_andi(self, op, a, env, act):
        return [a[0] & a[1]]

    def op_arith_ori(self, op, a, env, act):
        return [a[0] | a[1]]

    def op_arith_xori(self, op, a, env, act):
        return [a[0] ^ a[1]]

    def op_arith_divui(self, op, a, env, act):
        return self._int2(lambda x, y: np.where(y == 0, 0, x // np.where(y == 0, 1, y)), a,
                          unsigned=True)

    def op_arith_remui(self, op, a, env, act):
        return self._int2(lambda x, y: np.where(y == 0, 0, x % np.where(y == 0, 1, y)), a,
                          unsigned=True)

    def op_arith_divsi(self, op, a, env, act):
        def f(x, y):
            x, y = x.astype(np.int64), y.astype(np.int64)
            ys = np.where(y == 0, 1, y)
            q = np.abs(x) // np.abs(ys) * np.sign(x) * np.sign(ys)
            return np.where(y == 0, 0, q)
        return self._int2(f, a)

    def op_arith_remsi(self, op, a, env, act):
        def f(x, y):
            x, y = x.astype(np.int64), y.astype(np.int64)
            ys = np.where(y == 0, 1, y)
            q = np.abs(x) // np.abs(ys) * np.sign(x) * np.sign(ys)
            return np.where(y == 0, 0, x - q * ys)
        return self._int2(f, a)

    def op_arith_shli(self, op, a, env, act):
        return self._int2(lambda x, y: np.left_shift(x, y), a)

    def op_arith_shrui(self, op, a, env, act):
        return self._int2(lambda x, y: np.right_shift(x, y), a, unsigned=True)

    def op_arith_shrsi(self, op, a, env, act):
        return self._int2(lambda x, y: np.right_shift(x, y), a)

    def op_arith_maxsi(self, op, a, env, act):
        return [np.maximum(a[0], a[1])]

    def op_arith_minsi(self, op, a, env, act):
        return [np.minimum(a[0], a[1])]

    def op_arith_maxui(self, op, a, env, act):
        return [np.maximum(as_unsigned(a[0]), as_unsigned(a[1])).view(a[0].dtype)]

    def op_arith_minui(self, op, a, env, act):
        return [np.minimum(as_unsigned(a[0]), as_unsigned(a[1])).view(a[0].dtype)]

    _CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
             5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater,
             9: np.greater_equal}

    def op_arith_cmpi(self, op, a, env, act):
        p = ir.IntegerAttr(op.attributes["predicate"]).value
        x, y = a
        if p >= 6:
            x, y = as_unsigned(x), as_unsigned(y)
        return [self._CMPI[p](x, y)]

    def op_arith_cmpf(self, op, a, env, act):
        p = ir.IntegerAttr(op.attributes["predicate"]).value
        x, y = a
        unord = np.isnan(x) | np.isnan(y)
        base = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
                6: np.not_equal}
        with np.errstate(all="ignore"):
            if p == 0:
                return [np.zeros(x.shape, np.bool_)]
            if p == 15:
                return [np.ones(x.shape, np.bool_)]
            if p == 7:
                return [~unord]
            if p == 14:
                return [unord]
            if p <= 6:
                return [base[p](x, y) & ~unord]
            return [base[p - 7](x, y) | unord]

    def op_arith_select(self, op, a, env, act):
        c, x, y = a
        c = c.astype(np.bool_)
        return [np.where(c if x.ndim == 1 else c[:, None], x, y)]

    def _f(self, fn, a):
        with np.errstate(all="ignore"):
            return [np.asarray(fn(*a)).astype(a[0].dtype)]

    def op_arith_addf(self, op, a, env, act):
        return self._f(np.add, a)

    def op_arith_subf(self, op, a, env, act):
        return self._f(np.subtract, a)

    def op_arith_mulf(self, op, a, env, act):
        return self._f(np.multiply, a)

    def op_arith_divf(self, op, a, env, act):
        return self._f(np.divide, a)

    def op_arith_negf(self, op, a, env, act):
        return [-a[0]]

    def op_arith_maxnumf(self, op, a, env, act):
        return self._f(np.fmax, a)

    def op_arith_minnumf(self, op, a, env, act):
        return self._f(np.fmin, a)

    def op_arith_maximumf(self, op, a, env, act):
        return self._f(np.maximum, a)

    def op_arith_minimumf(self, op, a, env, act):
        return self._f(np.minimum, a)

    def op_math_fma(self, op, a, env, act):
        return [fma_exact(*a)]

    def op_math_absf(self, op, a, env, act):
        return [np.abs(a[0])]

    # ---- casts ----------------------------------------------------------------------------
    def _res(self, op):
        return np_type(op.results[0].type)[0]

    def op_arith_extsi(self, op, a, env, act):
        x = a[0]
        if x.dtype == np.bool_:
            return [np.where(x, -1, 0).astype(self._res(op))]
        return [x.astype(self._res(op))]

    def op_arith_extui(self, op, a, env, act):
        return [as_unsigned(a[0]).astype(self._res(op))]

    def op_arith_trunci(self, op, a, env, act):
        dt = self._res(op)
        x = a[0]
        if dt == np.bool_:
            return [(x & 1).astype(np.bool_)]
        return [as_unsigned(x).astype(UINT_TYPES[bit_width(dt)]).view(dt)]

    def op_arith_index_cast(self, op, a, env, act):
        return [a[0].astype(self._res(op))]

    def op_arith_extf(self, op, a, env, act):
        if a[0].dtype == BF16:  # its bits are the float's top 16
            f = (a[0].view(np.uint16).astype(np.uint32) << 16).view(np.float32)
            return [f.astype(self._res(op))]
        return [a[0].astype(self._res(op))]

    def op_arith_truncf(self, op, a, env, act):
        if self._res(op) == BF16:  # to nearest even (NaN kept quiet)
            with np.errstate(all="ignore"):  # (overflow: infinity, as the GPU's)
                f = a[0].astype(np.float32)
                d = a[0] - f.astype(np.float64)
            if a[0].dtype == np.float64:  # rounded once: the float32 step rounded to odd
                odd = (d != 0) & np.isfinite(f) & ((f.view(np.uint32) & 1) == 0)
                f = np.where(odd, np.nextafter(f, np.where(d > 0, np.inf, -np.inf)
                                               .astype(np.float32)), f).astype(np.float32)
            b = f.view(np.uint32).astype(np.uint64)
            r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
            r = np.where(np.isnan(a[0]), np.uint16(0x7FC0), r)
            return [r.view(BF16)]
        with np.errstate(over="ignore"):
            return [a[0].astype(self._res(op))]

    def op_arith_sitofp(self, op, a, env, act):
        x = a[0].astype(np.int64) if a[0].dtype == np.bool_ else a[0]
        return [x.astype(self._res(op))]

    def op_arith_uitofp(self, op, a, env, act):
        return [as_unsigned(a[0]).astype(self._res(op))]

    def op_arith_fptosi(self, op, a, env, act):
        with np.errstate(all="ignore"):
            return [np.trunc(a[0]).astype(self._res(op))]

    def op_arith_fptoui(self, op, a, env, act):
        dt = self._res(op)
        with np.errstate(all="ignore"):
            return [np.trunc(a[0]).astype(UINT_TYPES[bit_width(dt)]).view(dt)]

    def op_arith_bitcast(self, op, a, env, act):
        return [a[0].view(self._res(op))]
