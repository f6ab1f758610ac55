"""`AxisAnalysis.nonneg` (lowering/axis_info.py): which integer values are provably >= 0, the
fact tile-tma-guard asks of a TMA store's coordinates.  Random expressions over program
ids, grid sizes, constants and int arguments are evaluated on random inputs (as the hardware's
i32 arithmetic, without overflow): every value the analysis calls >= 0 is, and the named
cases get the expected answers (a loop's variable, tiles of aranges)."""
import random

import mlir.ir as ir
import pytest

from tilework.dialects import new_context
from tilework.lowering.axis_info import AxisAnalysis

LEAVES = ("pid", "np", "const", "arg")
BINARY = ("addi", "subi", "muli", "divsi", "remsi", "divui", "minsi", "maxsi", "andi", "shrsi",
          "select")


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _eval(op, a, b, c):
    if op == "addi":
        return a + b
    if op == "subi":
        return a - b
    if op == "muli":
        return a * b
    if op == "divsi":
        return _trunc_div(a, b)
    if op == "remsi":
        return a - b * _trunc_div(a, b)
    if op == "divui":
        return (a % 2**32) // (b % 2**32) if a >= 0 else None  # (x >= 0: its unsigned value)
    if op == "minsi":
        return min(a, b)
    if op == "maxsi":
        return max(a, b)
    if op == "andi":
        return a & b
    if op == "shrsi":
        return a >> 3
    if op == "select":
        return a if c else b
    raise AssertionError(op)


def _program(seed):
    """(MLIR text of a kernel computing random expressions, [(index of the op, evaluator)])."""
    rnd = random.Random(seed)
    lines, values = [], []  # values: (ssa name, fn(env) -> int)
    n = [0]

    def fresh():
        n[0] += 1
        return f"%v{n[0]}"

    def leaf():
        kind = rnd.choice(LEAVES)
        name = fresh()
        if kind == "pid":
            lines.append(f'{name} = "tile.get_program_id"() {{axis = 0 : i32}} : () -> i32')
            return name, lambda env: env["pid"]
        if kind == "np":
            lines.append(f'{name} = "tile.get_num_programs"() {{axis = 0 : i32}} : () -> i32')
            return name, lambda env: env["np"]
        if kind == "arg":
            return "%arg0", lambda env: env["arg"]
        c = rnd.randint(-40, 40) or 7
        lines.append(f"{name} = arith.constant {c} : i32")
        return name, lambda env, c=c: c

    def expr(depth):
        if depth == 0 or rnd.random() < 0.25:
            return leaf()
        op = rnd.choice(BINARY)
        a, fa = expr(depth - 1)
        if op in ("divsi", "remsi", "divui"):  # a nonzero divisor of known sign
            c = rnd.choice([3, 5, 16, -7])
            b, fb = fresh(), (lambda env, c=c: c)
            lines.append(f"{b} = arith.constant {c} : i32")
        else:
            b, fb = expr(depth - 1)
        name = fresh()
        if op == "select":
            k = fresh()
            lines.append(f"{k} = arith.cmpi slt, {a}, {b} : i32")
            lines.append(f"{name} = arith.select {k}, {a}, {b} : i32")
            fn = (lambda env, fa=fa, fb=fb: _eval("select", fa(env), fb(env), fa(env) < fb(env)))
        else:
            lines.append(f"{name} = arith.{op} {a}, {b} : i32")

            def fn(env, op=op, fa=fa, fb=fb):
                x, y = fa(env), fb(env)
                return None if x is None or y is None else _eval(op, x, y, None)
        values.append((len(lines) - 1, fn))  # (the op of line k is the block's op k)
        return name, fn

    for _ in range(12):
        expr(3)
    body = "\n    ".join(lines)
    text = (f"func.func @k(%arg0: i32) attributes {{tile.kernel}} {{\n    {body}\n"
            f"    return\n}}")
    return text, values


def _analysis(text):
    mod = ir.Module.parse(text)
    f = mod.body.operations[0].operation
    an = AxisAnalysis(f)
    results = [op.results[0] for op in f.regions[0].blocks[0].operations if len(op.results)]
    return mod, an, results


@pytest.mark.parametrize("seed", range(40))
def test_nonneg_is_sound(seed):
    text, values = _program(seed)
    rnd = random.Random(1000 + seed)
    envs = [{"pid": rnd.randint(0, 5000), "np": rnd.randint(1, 5000),
             "arg": rnd.randint(-5000, 5000) or 3} for _ in range(64)]
    envs += [{"pid": 0, "np": 1, "arg": -1}, {"pid": 7, "np": 8, "arg": 0}]
    with new_context():
        mod, an, results = _analysis(text)
        proved = 0
        for name, fn in values:
            if an.nonneg(results[name]):
                proved += 1
                for env in envs:
                    v = fn(env)
                    assert v is None or v >= 0, (name, env, v, text)
        assert proved, text  # (every program has some: about a third of 1,454 values)


KERNEL = """
func.func @k(%n: i32, %step: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %cm1 = arith.constant -1 : i32
  %pid = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
  %r = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32>
  %s = "tile.splat"(%pid) : (i32) -> tensor<64xi32>
  %sum = arith.addi %s, %r : tensor<64xi32>
  %e = "tile.expand_dims"(%sum) {axis = 1 : i32} : (tensor<64xi32>) -> tensor<64x1xi32>
  %b = "tile.broadcast"(%e) : (tensor<64x1xi32>) -> tensor<64x32xi32>
  %sn = "tile.splat"(%cm1) : (i32) -> tensor<64xi32>
  %neg = arith.addi %sn, %r : tensor<64xi32>
  %ext = arith.extsi %pid : i32 to i64
  %zext = arith.extui %n : i32 to i64
  scf.for %i = %pid to %n step %c64 : i32 {
    %x = arith.muli %i, %c64 : i32
  }
  scf.for %j = %n to %c64 step %c1 : i32 {
    %y = arith.muli %j, %c64 : i32
  }
  scf.for %k = %c0 to %c64 step %step : i32 {
    %z = arith.muli %k, %c64 : i32
  }
  return
}
"""


def test_named_facts():
    with new_context():
        mod = ir.Module.parse(KERNEL)
        f = mod.body.operations[0].operation
        an = AxisAnalysis(f)
        entry = f.regions[0].blocks[0]
        top = [ln.split(" = ")[0].strip() for ln in KERNEL.splitlines()
               if ln.startswith("  %")]  # (the entry block's values, in order)
        ops = dict(zip(top, [op.results[0] for op in entry.operations if len(op.results)]))
        assert not an.nonneg(entry.arguments[0])  # an int argument may be negative
        for name in ("%pid", "%r", "%s", "%sum", "%e", "%b", "%ext", "%zext", "%c0", "%c64"):
            assert an.nonneg(ops[name]), name
        for name in ("%cm1", "%sn", "%neg"):
            assert not an.nonneg(ops[name]), name
        loops = [op for op in entry.operations if op.operation.name == "scf.for"]
        ivs = [op.regions[0].blocks[0].arguments[0] for op in loops]
        # from a program id by a constant step: >= 0; from an int argument, or by a runtime
        # step: nothing proved
        assert [an.nonneg(v) for v in ivs] == [True, False, False]
        x = next(iter(loops[0].regions[0].blocks[0].operations)).results[0]
        assert an.nonneg(x)
