"""The declaration machinery: what an op, a type and a dialect are, and what is generated from
them (IRDL text, operand segment names, the purity set, verifier dispatch, typed builders).

An op is declared once, in the family module of `tilework.dialects.opdefs`:

    TILE.op("umulhi", "the high half of the full product of two unsigned integers",
            operands=[operand("lhs", t := any_type()), operand("rhs", t)],
            results=[result("result", t)], traits={PURE, ELEMENTWISE, SAME_SHAPE},
            verify=_umulhi)

A constraint object is an IRDL constraint variable: each call of `any_type()`, `tensor()`,
`is_type(...)` makes a fresh one, and using one object for several operands/results requires
them to have the same type (as a reused SSA value in IRDL).
"""
from __future__ import annotations

import inspect
import keyword
from dataclasses import dataclass, field

import mlir.ir as ir

# ---------------------------------------------------------------------------------------------
# constraints


class Constraint:
    """An IRDL type constraint; the object's identity is its variable."""

    def __init__(self, irdl: str):
        self.irdl = irdl

    def __repr__(self):
        return f"Constraint({self.irdl!r})"

    @property
    def fixed(self) -> str | None:
        """The one type this constraint allows, if it is `is_type(...)`."""
        return self.irdl[len("irdl.is "):] if self.irdl.startswith("irdl.is ") else None


def any_type() -> Constraint:
    return Constraint("irdl.any")


def is_type(t: str) -> Constraint:
    """Exactly the builtin type `t` (e.g. "i32")."""
    return Constraint(f"irdl.is {t}")


def base(kind) -> Constraint:
    """Any type or attribute of one kind: a builtin one by name ("!builtin.tensor",
    "#builtin.dense_array": type parameters that are attributes) or a declared TypeDef."""
    if isinstance(kind, TypeDef):
        return Constraint(f"irdl.base @{kind.dialect}::@{kind.name}")
    return Constraint(f'irdl.base "{kind}"')


def tensor() -> Constraint:
    """Any builtin ranked tensor (the tile)."""
    return base("!builtin.tensor")


@dataclass(frozen=True)
class AttrKind:
    """An attribute constraint and the conversion builders apply to plain Python values."""
    irdl: str
    convert: object  # python value -> ir.Attribute


def _i32(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


INT = AttrKind('irdl.base "#builtin.integer"', _i32)
STRING = AttrKind('irdl.base "#builtin.string"', lambda v: ir.StringAttr.get(str(v)))
DENSE_I32 = AttrKind('irdl.base "#builtin.dense_array"',
                     lambda v: ir.DenseI32ArrayAttr.get([int(x) for x in v]))
SYMBOL = AttrKind("irdl.any", lambda v: ir.FlatSymbolRefAttr.get(str(v)))


# ---------------------------------------------------------------------------------------------
# traits: what passes may assume of an op (IRDL cannot declare MLIR traits)

PURE = "pure"                    # no side effects: tile-cse merges it, dead ones are erased
ELEMENTWISE = "elementwise"      # result element i depends on operand elements i only
SAME_SHAPE = "same-shape"        # every tile operand and result has one shape
TERMINATOR = "terminator"        # ends its block
READS = "reads-memory"
WRITES = "writes-memory"
EFFECT = "other-effect"          # observable without memory (printing, trapping, a kept hint)
TRAITS = (PURE, ELEMENTWISE, SAME_SHAPE, TERMINATOR, READS, WRITES, EFFECT)
EFFECTS = (READS, WRITES, EFFECT)

TARGETS = ("nvidia", "amd")  # the backends every op must lower on (or say why not)


# ---------------------------------------------------------------------------------------------
# declarations

@dataclass(frozen=True)
class Arg:
    """An operand or result.  `group`: operands/results `<group>0..n-1` that builders take as
    one list (IRDL has no variadic of unequal types, so they are n optional segments)."""
    name: str
    constraint: Constraint
    optional: bool = False
    group: str | None = None


def operand(name, c: Constraint) -> Arg:
    return Arg(name, c)


def optional(name, c: Constraint) -> Arg:
    return Arg(name, c, optional=True)


def result(name, c: Constraint) -> Arg:
    return Arg(name, c)


def group(name, make_constraint, n: int, required: bool = True) -> list[Arg]:
    """`name0` (required unless `required` is False) .. `name{n-1}` (optional), each with its
    own constraint variable."""
    return [Arg(f"{name}{i}", make_constraint(), optional=i > 0 or not required, group=name)
            for i in range(n)]


@dataclass(frozen=True)
class Attr:
    name: str
    kind: AttrKind
    choices: tuple | None = None  # allowed string values, checked with one message format
    default: object = inspect.Parameter.empty  # builders' default


@dataclass
class OpDef:
    name: str                       # "tile.load"
    doc: str
    operands: tuple = ()
    results: tuple = ()
    attrs: tuple = ()
    traits: frozenset = frozenset()
    verify: object = None           # fn(op) -> error message or None
    # target -> why the op cannot lower there (coverage test: no rule may exist for it)
    unsupported: dict = field(default_factory=dict)
    # "row": the interpreter has a row for it; "builtin": its builtin computes directly under
    # the interpreter and never emits it; None: never emitted by the frontend (tilegpu ops)
    interp: str | None = "row"
    # IRDL needs operandSegmentSizes only with several optional operands; ops with one may go
    # without (tile.print does: its only operand is optional)
    segment_sizes: bool = True

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def segment_names(self) -> tuple | None:
        """Operand names when some operand is optional (builders then set
        operandSegmentSizes, unless `segment_sizes` is False)."""
        if self.segment_sizes and any(a.optional for a in self.operands):
            return tuple(a.name for a in self.operands)
        return None

    def check(self, op: ir.Operation) -> str | None:
        """Declared attribute choices, then the op's own verifier."""
        for a in self.attrs:
            if a.choices is not None:
                v = ir.StringAttr(op.attributes[a.name]).value
                if v not in a.choices:
                    return (f"{self.short} {a.name} must be one of {', '.join(a.choices)}; "
                            f"got '{v}'")
        return self.verify(op) if self.verify is not None else None


@dataclass(frozen=True)
class TypeDef:
    dialect: str
    name: str
    params: tuple  # ((name, Constraint), ...)
    doc: str


# names the generated builders use themselves
_RESERVED = {"builder", "operands", "osizes", "rsizes", "attrs", "res", "attributes",
             "result_type", "result_types"}


class Dialect:
    """A dialect's declarations.  `registry`: where it is registered (DIALECTS, the dialects
    loaded into every context; tests pass their own)."""

    def __init__(self, name: str, doc: str = "", registry: dict | None = None):
        self.name = name
        self.doc = doc
        self.types: list[TypeDef] = []
        self.raw_irdl: list[str] = []  # verbatim IRDL (attributes defined elsewhere)
        self.ops: dict[str, OpDef] = {}
        registry = DIALECTS if registry is None else registry
        if name in registry:
            raise ValueError(f"dialect {name} is declared twice")
        registry[name] = self

    def type(self, name, doc, params=()) -> TypeDef:
        t = TypeDef(self.name, name, tuple(params), doc)
        self.types.append(t)
        return t

    def op(self, short, doc, *, operands=(), results=(), attrs=(), traits=(), verify=None,
           unsupported=None, interp="row", segment_sizes=True) -> OpDef:
        full = f"{self.name}.{short}"
        if full in self.ops:
            raise ValueError(f"op {full} is declared twice")
        traits = frozenset(traits)
        unknown = traits - set(TRAITS)
        if unknown:
            raise ValueError(f"op {full}: unknown traits {sorted(unknown)}")
        for a in list(operands) + list(results) + list(attrs):
            if a.name in _RESERVED or keyword.iskeyword(a.name) or not a.name.isidentifier():
                raise ValueError(f"op {full}: '{a.name}' cannot name an operand, result or "
                                 f"attribute (its builder's parameters are Python names)")
        d = OpDef(full, doc, tuple(operands), tuple(results), tuple(attrs), traits, verify,
                  dict(unsupported or {}), interp, segment_sizes)
        self.ops[full] = d
        return d

    def irdl(self) -> str:
        lines = [f"irdl.dialect @{self.name} {{"]
        for t in self.types:
            lines.append(f"  // {t.name}: {t.doc}")
            lines.append(f"  irdl.type @{t.name} {{")
            names = _Vars()
            for _, c in t.params:
                lines.append(f"    {names.define(c)}")
            params = ", ".join(f"{n}: {names[c]}" for n, c in t.params)
            lines.append(f"    irdl.parameters({params})")
            lines.append("  }")
        for raw in self.raw_irdl:
            lines.extend("  " + ln if ln.strip() else "" for ln in raw.strip("\n").splitlines())
        for d in self.ops.values():
            lines.extend(_op_irdl(d))
        lines.append("}")
        return "\n".join(lines)


class _Vars:
    """SSA names of constraint variables, one per Constraint object."""

    def __init__(self):
        self.names = {}
        self.kept = []  # the constraints named: alive, so that no id is reused

    def define(self, c) -> str:
        name = f"%v{len(self.kept)}"
        self.kept.append(c)
        self.names[id(c)] = name
        return f"{name} = {c.irdl}"

    def __contains__(self, c):
        return id(c) in self.names

    def __getitem__(self, c):
        return self.names[id(c)]


def _op_irdl(d: OpDef) -> list[str]:
    out = [f"  // {d.short}: {d.doc}", f"  irdl.operation @{d.short} {{"]
    names = _Vars()
    for a in d.operands + d.results:
        if a.constraint not in names:
            out.append(f"    {names.define(a.constraint)}")
    attr_vars = []
    for a in d.attrs:
        c = Constraint(a.kind.irdl)
        out.append(f"    {names.define(c)}")
        attr_vars.append(f'"{a.name}" = {names[c]}')
    if attr_vars:
        out.append(f"    irdl.attributes {{{', '.join(attr_vars)}}}")

    def args(lst):
        return ", ".join(f"{a.name}: {'optional ' if a.optional else ''}{names[a.constraint]}"
                         for a in lst)
    if d.operands:
        out.append(f"    irdl.operands({args(d.operands)})")
    out.append(f"    irdl.results({args(d.results)})")
    out.append("  }")
    return out


DIALECTS: dict[str, Dialect] = {}


def all_ops() -> list[OpDef]:
    return [d for dia in DIALECTS.values() for d in dia.ops.values()]


def get(name: str) -> OpDef | None:
    dia = DIALECTS.get(name.split(".", 1)[0])
    return dia.ops.get(name) if dia is not None else None


def named_operands(op: ir.Operation) -> dict[str, ir.Value | None]:
    """Named operands of an op with optional operands (operandSegmentSizes)."""
    d = get(op.name)
    names = tuple(a.name for a in d.operands)
    if "operandSegmentSizes" in op.attributes:
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    else:  # one optional operand (IRDL checks that): present iff the count says so
        extra = len(op.operands) - sum(1 for a in d.operands if not a.optional)
        sizes = [1 if not a.optional or extra else 0 for a in d.operands]
    out, i = {}, 0
    for name, n in zip(names, sizes):
        out[name] = op.operands[i] if n else None
        i += n
    return out


# ---------------------------------------------------------------------------------------------
# typed builders: Python source generated per op (fast, with real signatures; print it with
# `builder_source(op)`)

def _inferred(d: OpDef, r: Arg) -> str | None:
    """An expression for result `r`'s type when the declaration implies it: a fixed type, or
    the constraint variable of a required, ungrouped operand."""
    if r.constraint.fixed is not None:
        return f"_ir.Type.parse({r.constraint.fixed!r})"
    src = next((o for o in d.operands
                if o.constraint is r.constraint and not o.optional and not o.group), None)
    return f"{src.name}.type" if src is not None else None


def _groups(args) -> dict:
    out = {}
    for a in args:
        if a.group:
            out[a.group] = out.get(a.group, 0) + 1
    return out


def builder_source(d: OpDef) -> str:
    """`def build_<op>(builder, <operands>, *, <result types>, <attrs>, attributes=None)`.

    `builder` is anything with `create(name, operands, result_types, attributes) -> results`
    (the frontend's Builder, whose interpreter subclass evaluates the op at once), or None to
    create the op at the current insertion point and location.  Optional operands default to
    None; a group is one list.  Attributes take plain Python values (converted by their kind)
    or ir.Attributes; `attributes` adds undeclared (discardable) ones.  Returns the result of
    an op with one result, None for none, else the list of results."""
    fname = f"build_{d.short}"
    groups, rgroups = _groups(d.operands), _groups(d.results)
    single = len(d.results) == 1 and not d.results[0].optional
    params, body, done = ["builder"], ["operands, osizes = [], []"], set()
    for a in d.operands:
        if a.group:
            if a.group in done:
                continue
            done.add(a.group)
            n = groups[a.group]
            params.append(a.group)
            body += [f"{a.group} = list({a.group})",
                     f"if len({a.group}) > {n}:",
                     f"    raise TypeError(f'{fname}: at most {n} {a.group} values, got "
                     f"{{len({a.group})}}')",
                     f"if not {a.group} and {not a.optional}:",  # (a group may be empty)
                     f"    raise TypeError('{fname}: {a.group}0 is required')",
                     f"operands += {a.group}",
                     f"osizes += [1] * len({a.group}) + [0] * ({n} - len({a.group}))"]
        elif a.optional:
            params.append(f"{a.name}=None")
            body += [f"if {a.name} is not None:", f"    operands.append({a.name})",
                     f"osizes.append(0 if {a.name} is None else 1)"]
        else:
            params.append(a.name)
            body += [f"if {a.name} is None:",
                     f"    raise TypeError('{fname}: {a.name} is required')",
                     f"operands.append({a.name})", "osizes.append(1)"]
    kw, rtypes, done = [], [], set()
    body.append("rsizes = []")
    for r in d.results:
        if r.group:
            if r.group in done:
                continue
            done.add(r.group)
            name, n = f"{r.group}_types", rgroups[r.group]
            kw.append(name)
            body += [f"{name} = list({name})",
                     f"rsizes += [1] * len({name}) + [0] * ({n} - len({name}))"]
            rtypes.append(f"*{name}")
            continue
        inferred = _inferred(d, r)
        name = "result_type" if single else f"{r.name}_type"
        kw.append(f"{name}=None" if inferred or r.optional else name)
        if inferred:
            body += [f"if {name} is None:", f"    {name} = {inferred}"]
        if r.optional:
            rtypes.append(f"*([{name}] if {name} is not None else [])")
            body.append(f"rsizes.append(0 if {name} is None else 1)")
        else:
            rtypes.append(name)
            body.append("rsizes.append(1)")
    attrs = []
    for i, a in enumerate(d.attrs):
        kw.append(a.name if a.default is inspect.Parameter.empty else f"{a.name}={a.default!r}")
        attrs.append(f"{a.name!r}: _attr({i}, {a.name})")
    kw.append("attributes=None")
    body.append(f"attrs = {{{', '.join(attrs)}}}")
    if d.segment_names():
        body.append("attrs['operandSegmentSizes'] = _ir.DenseI32ArrayAttr.get(osizes)")
    if any(r.optional for r in d.results):
        body.append("attrs['resultSegmentSizes'] = _ir.DenseI32ArrayAttr.get(rsizes)")
    body += ["if attributes:", "    attrs.update(attributes)",
             f"res = _create(builder, {d.name!r}, operands, [{', '.join(rtypes)}], attrs)"]
    body.append("return res[0]" if single else "return list(res)" if d.results else "return None")
    doc = f"Builds `{d.name}`: {d.doc}".replace("\\", "\\\\").replace('"', '\\"')
    return (f"def {fname}({', '.join(params + ['*'] + kw)}):\n    \"{doc}\"\n"
            + "".join(f"    {line}\n" for line in body))


def _create(builder, name, operands, result_types, attrs):
    if builder is None:
        return ir.Operation.create(name, results=result_types, operands=operands,
                                   attributes=attrs).results
    return builder.create(name, operands, result_types, attrs)


def make_builder(d: OpDef):
    """The builder of `d` (see `builder_source`)."""
    kinds = [a.kind for a in d.attrs]

    def attr(i, v):
        return v if isinstance(v, ir.Attribute) else kinds[i].convert(v)
    namespace = {"_ir": ir, "_attr": attr, "_create": _create}
    exec(compile(builder_source(d), f"<builder of {d.name}>", "exec"), namespace)
    return namespace[f"build_{d.short}"]
