"""The house (issues 25, 48): judge's import graph, read from the source with ast (every import: top level,
inside functions and under ``if TYPE_CHECKING:``), has no circle and no arrow that runs back up LAYERS, the one
layer map, whose entries are whole folders and top-level modules; no module is over 450 lines; the label names
are written only in judge/verdicts.py and in the one adapter table that maps a dataset's own names onto them."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "judge"
MAX_LINES = 450

# THE LAYER MAP (docs/house.md and docs/extending.md point here and say why). Low to high: a module may import
# its own layer (without a circle) and any layer below, never one above, type-only imports included. Every entry
# is a top-level module or a whole folder of judge/: a folder sits wholly in one layer, so where a file lives says
# what it may import (test_layers_name_folders_only).
LAYERS: list[tuple[str, ...]] = [
    # 0. the vocabulary and the plumbing everything uses: the errors and exit codes, the labels, texts, secrets
    ("judge.errors", "judge.verdicts", "judge.resources", "judge.jsonstream", "judge.text", "judge.redact"),
    # 1. refusing input: problems, the environment, the writing and reading doors, numbers, the boundary
    ("judge.problems", "judge.env", "judge.files", "judge.input_files", "judge.numeric", "judge.boundary"),
    # 2. the typed models, the results and the prompts
    ("judge.models", "judge.prompts", "judge.results"),
    # 3. the outside world: the LLM port; Ray
    ("judge.llm", "judge.raylib"),
    # 4. formats and search (deterministic, no model)
    ("judge.datasets", "judge.search", "judge.align", "judge.align_ray", "judge.align_file", "judge.longcontext"),
    # 5. measures over data (gold matching included)
    ("judge.metrics", "judge.validate"),
    # 6. the stages, then the judges, then the control claims made from them
    ("judge.stages",),
    ("judge.judges",),
    ("judge.controls",),
    # 7. a run's config, one record's pipeline, the runs and the label sheets drawn from them, scores, reports
    ("judge.config", "judge.thresholds"),
    ("judge.pipeline",),
    ("judge.runs", "judge.labels"),
    ("judge.scoring",),
    ("judge.report",),
    # 8. the entry points, then the test harness that drives them
    ("judge.api", "judge.starter"),
    ("judge.cli", "judge.pytest_plugin", "judge"),
    ("judge.testing",),
]

LABEL_NAMES = frozenset({"supported", "partially_supported", "unsupported", "contradicted", "judge_error"})
LABEL_HOMES = {"judge.verdicts", "judge.datasets.wice"}  # the vocabulary, and the one adapter table onto it

# Arrows still to go, each with who takes it away; the test fails on any arrow not listed here.
PENDING: set[tuple[str, str]] = set()
PENDING_LONG: set[str] = set()
PENDING_LABELS: set[str] = set()


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _module_of(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _tree(name: str) -> ast.Module:
    return ast.parse(MODULES[name].read_text(encoding="utf-8"))


def imports(typing_only: bool = False) -> dict[str, set[str]]:
    """module -> the judge modules it imports; ``typing_only``: the imports under TYPE_CHECKING too (a type
    named from a layer above still makes the lower module know the higher one; a circle of types alone
    costs nothing at run time)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in MODULES.items():
        tree = _tree(name)
        hidden = {id(n) for c in ast.walk(tree) if isinstance(c, ast.If) and "TYPE_CHECKING" in ast.unparse(c.test) for n in ast.walk(c)}
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(tree):
            if id(node) in hidden and not typing_only:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".") if node.level else node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
            for t in targets:
                m = _module_of(t) if t.split(".")[0] == "judge" else None
                if m and m != name:
                    graph[name].add(m)
    return graph


def layer(name: str) -> int:
    best, at = -1, None
    for i, names in enumerate(LAYERS):
        for n in names:
            if (name == n or name.startswith(n + ".")) and len(n) > best:
                best, at = len(n), i
    assert at is not None, f"{name} is in no layer: add it to LAYERS and to docs/house.md"
    return at


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in MODULES:
        if v not in index:
            visit(v)
    return out


def arrows_up(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(a, b) for a, bs in graph.items() for b in bs if layer(b) > layer(a)}


def label_modules() -> set[str]:
    """Modules that write a label name as a string (docstrings aside)."""
    out = set()
    for name in MODULES:
        tree = _tree(name)
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        if any(isinstance(n, ast.Constant) and n.value in LABEL_NAMES and id(n) not in docs for n in ast.walk(tree)):
            out.add(name)
    return out


def test_every_module_has_a_layer():
    for name in MODULES:
        layer(name)


def test_no_circles():
    assert circles(imports(typing_only=True)) == []  # not even one of type names alone


def test_layers_name_folders_only():
    """No module placed apart from its folder: every entry is judge itself, a top-level module or a folder."""
    named = [n for names in LAYERS for n in names]
    assert len(named) == len(set(named)), sorted(n for n in named if named.count(n) > 1)
    assert all(n == "judge" or n.count(".") == 1 for n in named), [n for n in named if n != "judge" and n.count(".") != 1]


def test_no_arrow_runs_back_up():
    up = arrows_up(imports(typing_only=True))
    assert up <= PENDING, "\n".join(f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})" for a, b in sorted(up - PENDING))


def test_no_module_over_450_lines():
    long = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, p in MODULES.items()}
    over = {n: k for n, k in long.items() if k > MAX_LINES and n not in PENDING_LONG}
    assert not over, over


def test_label_names_live_in_verdicts_and_one_adapter_table():
    assert label_modules() <= LABEL_HOMES | PENDING_LABELS, sorted(label_modules() - LABEL_HOMES - PENDING_LABELS)


def exception_classes() -> set[str]:
    """module.Class of every exception class defined in judge/ (a class whose base is a builtin exception or
    one of judge's own, by name)."""
    import builtins

    known = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    classes = [(name, n.name, {ast.unparse(b).rpartition(".")[2] for b in n.bases})
               for name in MODULES for n in ast.walk(_tree(name)) if isinstance(n, ast.ClassDef)]
    found: set[str] = set()
    while True:
        more = {f"{m}.{c}" for m, c, bases in classes if bases & known} - found
        if not more:
            return found
        found |= more
        known |= {q.rpartition(".")[2] for q in more}


def test_every_exception_has_its_exit_code_in_errors():
    """Every exception class of judge, and the exit code it means, in one table (judge/errors.py::EXIT_CODES)."""
    from judge.errors import EXIT_CODES

    listed = {n for n in EXIT_CODES if not n.startswith("builtins.")}
    assert exception_classes() - listed == set(), "add them to judge.errors.EXIT_CODES"
    assert listed - exception_classes() == set(), "EXIT_CODES names classes that are gone"
