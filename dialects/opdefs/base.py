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


def tensor() -> Constraint:
    """Any builtin ranked tensor (the tile)."""
    return Constraint('irdl.base "!builtin.tensor"')


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


def group(name, make_constraint, n: int) -> list[Arg]:
    """`name0` (required) .. `name{n-1}` (optional), each with its own constraint variable."""
    return [Arg(f"{name}{i}", make_constraint(), optional=i > 0, group=name) for i in range(n)]


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
    name: str
    params: tuple  # ((name, Constraint), ...)
    doc: str


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
        t = TypeDef(name, tuple(params), doc)
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

    def define(self, c) -> str:
        name = f"%v{len(self.names)}"
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
# typed builders

def _result_inference(d: OpDef) -> list:
    """Per result, fn(bound arguments) -> its type when the declaration implies it (a fixed
    type, or the constraint variable of a required, ungrouped operand), else None."""
    out = []
    for r in d.results:
        src = next((o for o in d.operands if o.constraint is r.constraint
                    and not o.optional and not o.group), None)
        if r.constraint.fixed is not None:
            out.append(lambda a, t=r.constraint.fixed: ir.Type.parse(t))
        elif src is not None:
            out.append(lambda a, n=src.name: a[n].type)
        else:
            out.append(None)
    return out


def make_builder(d: OpDef):
    """`build_<op>(builder, *operands, *, <result>_type(s), <attrs>, attributes=None)`.

    `builder` is anything with `create(name, operands, result_types, attributes) -> results` (the
    frontend's Builder, whose interpreter subclass evaluates the op at once), or None to
    create at the current insertion point and location.  Optional operands default to None;
    a group is one list.  Attributes take plain Python values (converted by their kind) or
    ir.Attributes; `attributes` adds undeclared (discardable) ones.  Returns the result for an
    op with one result, None for none, else the list of results."""
    P = inspect.Parameter
    params = [P("builder", P.POSITIONAL_OR_KEYWORD)]
    seen = set()
    for a in d.operands:
        if a.group:
            if a.group not in seen:
                seen.add(a.group)
                params.append(P(a.group, P.POSITIONAL_OR_KEYWORD))
        else:
            params.append(P(a.name, P.POSITIONAL_OR_KEYWORD,
                            default=None if a.optional else P.empty))
    kw = []
    single = len(d.results) == 1 and not d.results[0].optional
    infer = _result_inference(d)
    if single:
        kw.append(P("result_type", P.KEYWORD_ONLY, default=None if infer[0] else P.empty))
    else:
        seen = set()
        for a in d.results:
            if a.group:
                if a.group not in seen:
                    seen.add(a.group)
                    kw.append(P(f"{a.group}_types", P.KEYWORD_ONLY))
            else:
                kw.append(P(f"{a.name}_type", P.KEYWORD_ONLY,
                            default=None if a.optional or infer[d.results.index(a)] else P.empty))
    for a in d.attrs:
        kw.append(P(a.name, P.KEYWORD_ONLY, default=a.default))
    kw.append(P("attributes", P.KEYWORD_ONLY, default=None))
    sig = inspect.Signature(params + kw)
    fname = f"build_{d.short}"

    def pick(args, lst, key):
        vals, sizes = [], []
        for a in lst:
            if a.group:
                grp = list(args[key(a.group, True)])
                i = int(a.name[len(a.group):])
                if i == 0 and len(grp) > sum(1 for x in lst if x.group == a.group):
                    raise TypeError(f"{fname}: at most {sum(1 for x in lst if x.group == a.group)} "
                                    f"{a.group} values, got {len(grp)}")
                v = grp[i] if i < len(grp) else None
            else:
                v = args[key(a.name, False)]
            if v is None and not a.optional:
                raise TypeError(f"{fname}: {a.name} is required")
            if v is not None:
                vals.append(v)
            sizes.append(0 if v is None else 1)
        return vals, sizes

    def build(*args, **kwargs):
        ba = sig.bind(*args, **kwargs)
        ba.apply_defaults()
        a = ba.arguments
        operands, osizes = pick(a, d.operands, lambda n, g: n)
        for i, r in enumerate(d.results):  # types the declaration implies
            key = "result_type" if single else f"{r.name}_type"
            if not r.group and a.get(key) is None and infer[i]:
                a[key] = infer[i](a)
        if single:
            rtypes, rsizes = [a["result_type"]], [1]
        else:
            rtypes, rsizes = pick(a, d.results, lambda n, g: f"{n}_types" if g else f"{n}_type")
        attrs = {}
        for at in d.attrs:
            v = a[at.name]
            attrs[at.name] = v if isinstance(v, ir.Attribute) else at.kind.convert(v)
        if d.segment_names():
            attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(osizes)
        if any(x.optional for x in d.results):
            attrs["resultSegmentSizes"] = ir.DenseI32ArrayAttr.get(rsizes)
        attrs.update(a["attributes"] or {})
        if a["builder"] is None:
            res = list(ir.Operation.create(d.name, results=rtypes, operands=operands,
                                           attributes=attrs).results)
        else:
            res = a["builder"].create(d.name, operands, rtypes, attrs)
        if single:
            return res[0]
        return list(res) if d.results else None

    build.__signature__ = sig
    build.__name__ = build.__qualname__ = fname
    build.__doc__ = f"Builds `{d.name}`: {d.doc}"
    return build
