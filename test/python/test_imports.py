"""The package's import graph (docs/architecture.md, "Imports flow down only").

Built from the AST of every source file of `tilework` (python/tilework, dialects, lowering,
backends), counting top-level and function-local imports, relative and absolute, and
`from pkg import sub` as an edge to the submodule `pkg.sub`.  Checked:

* no import cycles (the message names the cycle);
* no module uses another module's private name (`from m import _x`, `m._x`);
* imports go down the layers: runtime -> compiler -> frontend -> language, compiler ->
  backends -> lowering -> dialects, frontend -> dialects; a few leaves without MLIR may be
  imported from anywhere;
* a function-local import of a package module only defers a heavy dependency (MLIR, the GPU
  runtimes, torch, llvmlite): its target loads one and the importing module does not.
"""
from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE_ROOTS = {
    "tilework": ROOT / "python" / "tilework",
    "tilework.dialects": ROOT / "dialects",
    "tilework.lowering": ROOT / "lowering",
    "tilework.backends": ROOT / "backends",
}
HEAVY = {"mlir", "cuda", "torch", "llvmlite", "hip", "nvidia", "ziglang"}

# layer -> the layers it may import directly (and, through them, everything below)
LAYERS = {
    "tilework": {"runtime", "compiler", "language", "base"},  # the package's __init__
    "tools": {"runtime", "compiler", "backends", "language", "base"},
    "torch": {"tilework", "runtime", "language", "base"},  # tilework.torch: custom ops on top
    "testing": {"runtime", "base"},  # tilework.testing: do_bench
    "runtime": {"compiler", "base"},
    "compiler": {"frontend", "backends", "base"},
    "frontend": {"language", "dialects", "base"},
    "backends": {"lowering", "base"},
    "lowering": {"dialects", "base"},
    "dialects": {"base"},
    "language": {"base"},
    "base": set(),
}
# modules without MLIR and without package imports that any layer may import: the errors, the
# version, and the layout of AMD's print buffer (written by the lowering and the backend, read
# by the runtime)
LEAVES = {"tilework.errors", "tilework.version", "tilework.runtime.printbuf"}



@dataclass(frozen=True)
class Edge:
    src: str          # importing module
    dst: str          # imported module
    line: int
    lazy: bool        # inside a function
    names: tuple = ()  # names taken from dst (`from dst import a, b`)


@dataclass(frozen=True)
class Private:
    src: str          # the module using the name
    owner: str        # the module the name belongs to
    name: str
    line: int
    text: str

    def __str__(self):
        return f"{self.src}:{self.line}: {self.text}"


def _module_name(prefix: str, root: pathlib.Path, path: pathlib.Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([prefix] + parts)


def _discover() -> dict:
    """module name -> (path, is_package)."""
    mods = {}
    for prefix, root in SOURCE_ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            name = _module_name(prefix, root, path)
            # python/tilework has no dialects/lowering/backends folders; never shadow them
            assert name not in mods, f"{name} defined twice: {mods[name][0]} and {path}"
            mods[name] = (path, path.name == "__init__.py")
    return mods


MODULES = _discover()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _type_checking(node) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


class _Imports(ast.NodeVisitor):
    """The imports of one module: internal edges, external roots, names bound to modules."""

    def __init__(self, module: str, is_package: bool):
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.edges: list[Edge] = []
        self.external: list[tuple[str, bool]] = []  # (top-level package, lazy)
        self.bound: dict[str, str] = {}            # local name -> internal module
        self.private: list[str] = []
        self.depth = 0

    def _internal(self, dotted: str) -> str | None:
        """The longest internal module that `dotted` names or lies in, else None."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            cand = ".".join(parts[:i])
            if cand in MODULES:
                return cand
        return None

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node):
        if _type_checking(node):  # never executed
            for n in node.orelse:
                self.visit(n)
            return
        self.generic_visit(node)

    def visit_Import(self, node):
        for a in node.names:
            target = self._internal(a.name)
            if target is None:
                self.external.append((a.name.split(".")[0], self.depth > 0))
                continue
            self.edges.append(Edge(self.module, target, node.lineno, self.depth > 0))
            if a.asname:
                self.bound[a.asname] = target
            else:
                head = a.name.split(".")[0]
                if head in MODULES:
                    self.bound[head] = head

    def visit_ImportFrom(self, node):
        if node.level:
            base = self.package.split(".")
            base = base[:len(base) - (node.level - 1)]
            base = ".".join(base + ([node.module] if node.module else []))
        else:
            base = node.module
        if base not in MODULES:
            if self._internal(base) is None and node.level == 0:
                self.external.append((base.split(".")[0], self.depth > 0))
                return
            assert base in MODULES, f"{self.module}:{node.lineno}: no module {base}"
        names = []
        for a in node.names:
            sub = f"{base}.{a.name}"
            if sub in MODULES:
                self.edges.append(Edge(self.module, sub, node.lineno, self.depth > 0))
                self.bound[a.asname or a.name] = sub
            else:
                names.append(a.name)
            if _is_private(a.name):
                self.private.append(Private(self.module, base, a.name, node.lineno,
                                            f"`from {base} import {a.name}`"))
        if names or all(f"{base}.{a.name}" not in MODULES for a in node.names):
            self.edges.append(Edge(self.module, base, node.lineno, self.depth > 0,
                                   tuple(names)))


class _Attributes(ast.NodeVisitor):
    """`m._x` where `m` names a module of the package."""

    def __init__(self, module: str, bound: dict):
        self.module, self.bound, self.private = module, bound, []

    def visit_Attribute(self, node):
        chain, n = [], node
        while isinstance(n, ast.Attribute):
            chain.append(n.attr)
            n = n.value
        if isinstance(n, ast.Name) and n.id in self.bound:
            mod = self.bound[n.id]
            for attr in reversed(chain):
                if f"{mod}.{attr}" in MODULES:
                    mod = f"{mod}.{attr}"
                    continue
                if _is_private(attr) and mod != self.module:
                    self.private.append(Private(self.module, mod, attr, node.lineno,
                                                f"`{mod}.{attr}`"))
                break
            return  # the chain was resolved as a whole
        self.generic_visit(node)


@dataclass
class Graph:
    edges: list
    external: dict   # module -> [(package, lazy)]
    private: list


def build_graph() -> Graph:
    edges, external, private = [], {}, []
    for name, (path, is_pkg) in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        imp = _Imports(name, is_pkg)
        imp.visit(tree)
        attrs = _Attributes(name, imp.bound)
        attrs.visit(tree)
        edges += [e for e in imp.edges if e.dst != name]
        external[name] = imp.external
        private += imp.private + attrs.private
    return Graph(edges, external, private)


GRAPH = build_graph()


def layer(module: str) -> str:
    if module in LEAVES:
        return "base"
    if module == "tilework":
        return "tilework"
    return module.split(".")[1]


def _below(src_layer: str) -> set:
    seen, todo = set(), list(LAYERS[src_layer])
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo += LAYERS[x]
    return seen


def _parents(module: str):
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def heavy_modules(graph: Graph) -> set:
    """Modules whose import (top-level imports, transitively, and their packages') loads a
    heavy dependency."""
    heavy = {m for m, ext in graph.external.items() if any(p in HEAVY and not lazy
                                                           for p, lazy in ext)}
    top = {}
    for e in graph.edges:
        if not e.lazy:
            top.setdefault(e.src, set()).add(e.dst)
    changed = True
    while changed:
        changed = False
        for m in MODULES:
            if m not in heavy and any(d in heavy or any(p in heavy for p in _parents(d))
                                      for d in top.get(m, ())):
                heavy.add(m)
                changed = True
    return heavy


def find_cycle(edges) -> list | None:
    """A cycle of the graph as [m0, m1, ..., m0], or None."""
    adj = {}
    for e in edges:
        adj.setdefault(e.src, set()).add(e.dst)
    color, stack = {}, []

    def dfs(m):
        color[m] = 1
        stack.append(m)
        for d in sorted(adj.get(m, ())):
            if color.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in color:
                c = dfs(d)
                if c:
                    return c
        stack.pop()
        color[m] = 2
        return None

    for m in sorted(adj):
        if m not in color:
            c = dfs(m)
            if c:
                return c
    return None


def _fmt(e: Edge) -> str:
    where = "function-local" if e.lazy else "top-level"
    return f"{e.src}:{e.line} -> {e.dst} ({where})"


# --------------------------------------------------------------------------------------------

def test_graph_is_built():
    """The walker sees the modules and the kinds of imports it must (guards the checks below
    against passing on an empty graph)."""
    assert {"tilework", "tilework.language.core", "tilework.frontend.codegen",
            "tilework.compiler.driver", "tilework.runtime.jit", "tilework.dialects.tile",
            "tilework.lowering.to_llvm", "tilework.lowering.rules.memory",
            "tilework.backends.nvidia.compiler"} <= set(MODULES)
    pairs = {(e.src, e.dst) for e in GRAPH.edges}
    assert ("tilework.lowering", "tilework.lowering.layout_passes") in pairs  # from . import x
    assert ("tilework.compiler.driver", "tilework.backends") in pairs  # absolute
    assert ("tilework.frontend.codegen", "tilework.frontend.ops") in pairs  # relative
    assert any(e.lazy for e in GRAPH.edges)
    assert ("mlir", False) in GRAPH.external["tilework.lowering.to_llvm"]


def test_no_import_cycles():
    edges = list(GRAPH.edges)
    cycle = find_cycle(edges)
    if cycle:
        hops = []
        for a, b in zip(cycle, cycle[1:]):
            e = next(e for e in edges if e.src == a and e.dst == b)
            hops.append(_fmt(e))
        raise AssertionError("import cycle:\n  " + "\n  ".join(hops))


def test_no_private_names_across_modules():
    bad = [str(p) for p in GRAPH.private]
    assert not bad, "private names used across modules:\n  " + "\n  ".join(bad)


def test_imports_go_down_the_layers():
    bad = []
    for e in GRAPH.edges:
        a, b = layer(e.src), layer(e.dst)
        if a == b or b == "base" or b in _below(a):
            continue
        bad.append(f"{_fmt(e)}: {a} may not import {b}")
    assert not bad, "upward or sideways imports:\n  " + "\n  ".join(bad)


def test_leaves_import_nothing_of_the_package():
    for m in LEAVES:
        assert m in MODULES, m
        assert not [e for e in GRAPH.edges if e.src == m], f"{m} must stay a leaf"
        assert not any(p in HEAVY for p, _ in GRAPH.external[m]), f"{m} must not load {HEAVY}"


def test_function_local_imports_only_defer_heavy_dependencies():
    heavy = heavy_modules(GRAPH)
    bad = []
    for e in GRAPH.edges:
        if not e.lazy:
            continue
        target_heavy = e.dst in heavy or any(p in heavy for p in _parents(e.dst))
        if not target_heavy:
            bad.append(f"{_fmt(e)}: {e.dst} loads no heavy dependency; import it at the top")
        elif e.src in heavy:
            bad.append(f"{_fmt(e)}: {e.src} already loads a heavy dependency at import; "
                       f"import {e.dst} at the top")
    assert not bad, "function-local imports that defer nothing:\n  " + "\n  ".join(bad)


def test_the_checks_catch_violations():
    """The checkers on small made-up graphs: they find what they must."""
    e = [Edge("a", "b", 1, False), Edge("b", "c", 2, True), Edge("c", "a", 3, False)]
    assert find_cycle(e) == ["a", "b", "c", "a"]
    assert find_cycle(e[:2]) is None
    imp = _Imports("tilework.frontend.codegen", False)
    imp.visit(ast.parse("from ..runtime import jit\nfrom ..language.core import _x\n"
                        "def f():\n    from . import ops\n    jit._launcher()\n"))
    assert [(x.dst, x.lazy) for x in imp.edges] == [
        ("tilework.runtime.jit", False), ("tilework.language.core", False),
        ("tilework.frontend.ops", True)]
    assert [str(p) for p in imp.private] == [
        "tilework.frontend.codegen:2: `from tilework.language.core import _x`"]
    attrs = _Attributes("tilework.frontend.codegen", imp.bound)
    attrs.visit(ast.parse("jit._launcher()\njit.jit\n"))
    assert [str(p) for p in attrs.private] == [
        "tilework.frontend.codegen:1: `tilework.runtime.jit._launcher`"]
    assert "language" in _below("runtime") and "runtime" not in _below("compiler")
    assert "frontend" not in _below("backends") and "lowering" not in _below("frontend")
