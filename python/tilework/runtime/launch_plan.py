"""The per-key fast path of a tuned launch: what `Autotuner.run` keeps once a key is tuned.

A launch of `@autotune` (over `@heuristics`, over `@jit`) whose key is tuned needs only the
chosen config's constexprs and options, its `pre_hook`, the heuristics' values and the
kernel's own launch.  `CallShape` reads, for calls of one shape (positional count, keyword
names, every argument's type), the tuple that decides the tuning key (the key values, each
argument's dtype) by code generated for that shape; a `Plan` per such tuple holds the config,
the keyword arguments the launch adds, and the heuristics to evaluate per call.  A heuristic
is evaluated once per plan where, given only the key values and the config, it reads no
other name and gives the value it gives on all the arguments (`determined_by`); any other
runs on each call, as do the config's `pre_hook` (read from the config on
each call).  The autotuner checks a plan against its own state on every use (the one
authority: `Autotuner.cache` still maps the key to the plan's config), so a cleared cache or
a re-wrapped function falls back to the full path.  What a plan assumes, as Triton documents
them: heuristics are functions of their arguments, and a Config is not changed once it is
tuned (its pre_hook may be replaced: it is read on each call).
"""
from __future__ import annotations

MAX_PLANS = 256  # per call shape (cleared when full, as the shapes per autotuner)

_DTYPE_TEXT: dict = {}  # id(dtype) -> (dtype, str(dtype)): a tuning key holds each argument's


def dtype_text(dt) -> str:
    """str(dt), remembered per dtype object (held, so its id is not reused)."""
    e = _DTYPE_TEXT.get(id(dt))
    if e is not None and e[0] is dt:
        return e[1]
    text = str(dt)
    if len(_DTYPE_TEXT) < 1024:
        _DTYPE_TEXT[id(dt)] = (dt, text)
    return text


class _Missing:
    """An argument without a `dtype` (its place in a plan key)."""
    __slots__ = ()


MISSING = _Missing()
_SCALARS = (int, float, bool)
# dtype classes whose objects are equal only when their texts are (torch's dtypes: one object
# per dtype), kept as they are in a plan key; any other dtype is keyed by its text
_RAW_DTYPES: set = {_Missing}


def _note_dtype_class(d) -> None:
    t = type(d)
    if t.__module__ == "torch" and t.__name__ == "dtype":
        _RAW_DTYPES.add(t)


class CallShape:
    """Calls of one shape: `key(args, kwargs)` -> the plan key (the key values, then each
    non-scalar argument's dtype, in the tuning key's order), and the plans by that key."""
    __slots__ = ("key", "plans")

    def __init__(self, key):
        self.key = key
        self.plans: dict = {}

    @staticmethod
    def of(arg_names, keys, args, kwargs):
        """The CallShape of this call's shape, or None where it has no fast key (too many
        positional arguments, a keyword given positionally too: the full path's messages; a
        tuple argument, whose members' dtypes count)."""
        n = len(args)
        if n > len(arg_names) or any(k in arg_names[:n] for k in kwargs):
            return None
        srcs = [f"args[{i}]" for i in range(n)] + [f"kwargs[{k!r}]" for k in kwargs]
        where = dict(zip(list(arg_names[:n]) + list(kwargs), srcs))
        parts = [where[k] for k in keys if k in where]
        for i, (src, v) in enumerate(zip(srcs, (*args, *kwargs.values()))):
            t = type(v)
            if t in _SCALARS:
                continue
            if t is tuple:
                return None
            _note_dtype_class(getattr(v, "dtype", None))
            parts.append(f"(d{i} if type(d{i} := getattr({src}, 'dtype', _NO)) in _RAW "
                         f"else _txt(d{i}))")
        body = ", ".join(parts) + ("," if len(parts) == 1 else "")
        ns = {"_NO": MISSING, "_RAW": _RAW_DTYPES, "_txt": dtype_text}
        exec(f"def _plan_key(args, kwargs):\n    return ({body})\n", ns)
        return CallShape(ns["_plan_key"])


class _Reads(dict):
    """The names a heuristic reads (`names`); `whole`: it looked at the dict as a whole
    (iterated it, took its size or a copy), so what it read is not known."""

    def __init__(self, values):
        super().__init__(values)
        self.names = set()
        self.whole = False

    def __getitem__(self, name):
        self.names.add(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self.names.add(name)
        return super().get(name, default)

    def __contains__(self, name):
        self.names.add(name)
        return super().__contains__(name)

    def _all(self, *args):
        self.whole = True
        raise LookupError("read as a whole")

    __iter__ = keys = items = values = __len__ = copy = pop = popitem = setdefault = \
        __eq__ = __ne__ = __or__ = __reversed__ = _all
    __hash__ = None


def determined_by(heuristic, known: dict, value) -> bool:
    """Whether `heuristic(nargs)`, which gave `value` on a launch's arguments, depends only on
    the `known` ones (name -> value: the tuning key's, the config's, heuristics' before it of
    the same kind): evaluated on those alone, it reads no other name, does not look at the
    dict as a whole, and gives an equal value of the same type."""
    reads = _Reads(known)
    try:
        v = heuristic(reads)
        same = type(v) is type(value) and bool(v == value)
    except Exception:
        return False
    return same and not reads.whole and reads.names <= known.keys()


class Plan:
    """One tuned key's launch: `config`; `tkey` (the tuning key the autotuner's cache must still
    map to `config`; None: a single config); `fn`, the autotuner's wrapped function it was made
    for; `jf` the @jit function launched; `ckw` the config's keyword arguments; `const` what
    the launch adds to the call's keyword arguments (`ckw`, the heuristics evaluated once);
    `steps` (name, heuristic or None, value), in order, where any heuristic runs per call
    (empty: none does); `last` the index of the last step that runs."""
    __slots__ = ("config", "tkey", "fn", "jf", "arg_names", "ckw", "const", "steps", "last")

    def __init__(self, config, tkey, fn, jf, arg_names, ckw, const, steps):
        self.config, self.tkey, self.fn, self.jf = config, tkey, fn, jf
        self.arg_names, self.ckw, self.const = arg_names, ckw, const
        run = [i for i, s in enumerate(steps) if s[1] is not None]
        self.steps = tuple(steps) if run else ()
        self.last = run[-1] if run else -1

    def launch(self, grid, args, kwargs):
        """The launch the full path makes for these arguments: the config's pre_hook on the
        arguments and the config's values, the heuristics in order (each on a dict of its
        own), then the kernel."""
        hook = self.config.pre_hook
        steps = self.steps
        if hook is not None or steps:
            h = dict(zip(self.arg_names, args))
            h.update(kwargs)
            h.update(self.ckw)
            if hook is not None:  # (a dict of its own: the heuristics see none of its writes)
                hook(dict(h) if steps else h)
        kw = {**kwargs, **self.const}
        if steps:
            last = self.last
            for i, (name, heur, value) in enumerate(steps):
                if heur is not None:
                    value = kw[name] = heur(h if i == last else dict(h))
                h[name] = value
        return self.jf[grid](*args, **kw)


def make_plan(config, tkey, fn, chain, jf, arg_names, keys, nargs, kwargs):
    """The Plan of a launch whose key maps to `config` (None where the full path must run: a
    keyword argument the config also sets, whose message it gives).  `chain`: the heuristics
    between the autotuner and `jf`, outermost first, as (name, function) in their order."""
    ckw = config.all_kwargs()
    if not kwargs.keys().isdisjoint(ckw):
        return None
    full = {**nargs, **ckw}
    known = {k: full[k] for k in keys if k in nargs}
    known.update(ckw)
    names = [n for n, _ in chain]
    repeated = len(set(names)) != len(names)  # (evaluated per call, in order)
    const, steps = dict(ckw), []
    for name, heur in chain:
        value = heur(dict(full))
        full[name] = value
        if not repeated and determined_by(heur, known, value):
            known[name] = const[name] = value
            steps.append((name, None, value))
        else:
            steps.append((name, heur, None))
    return Plan(config, tkey, fn, jf, tuple(arg_names), ckw, const, steps)
