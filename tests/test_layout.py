"""The house: no module imports one that imports it back, and ``vision``, ``drivers`` and ``tablesvc.service``
show what a caller should import without loading it all at ``import``."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tablesvc", "vision", "drivers", "hardware_sims")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _imported(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def _graph() -> dict[str, set[str]]:
    """Module -> the first-party modules it imports: at its top, inside a function, or for type checking only
    (a circle of types is still a circle for whoever reads the two modules)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                target = _imported(name, path, node)
                deps.add(target)
                deps.update(f"{target}.{a.name}" for a in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_one_that_imports_it_back():
    graph = _graph()
    assert "vision.naming.classifier" in graph and "tablesvc.web.store" in graph  # the walk saw the modules
    assert _circles(graph) == []


def test_the_circle_finder_sees_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("package", ["vision", "vision.table", "vision.photos", "vision.naming", "drivers",
                                     "tablesvc.service"])
def test_each_name_a_face_shows_is_the_one_of_its_module(package):
    face = importlib.import_module(package)
    assert face.__all__
    for name in face.__all__:
        value = getattr(face, name)
        home = importlib.import_module(getattr(value, "__module__", None) or package)
        assert getattr(home, name, value) is value, name
    with pytest.raises(AttributeError):
        face.NoSuchName  # noqa: B018


def test_a_face_loads_nothing_heavy_until_a_name_is_asked_for():
    code = ("import sys, vision, vision.table, vision.photos, vision.naming, drivers, tablesvc.service, "
            "tablesvc.service.journal; "
            "print(sorted(m for m in ('cv2', 'serial', 'paho', 'numpy', 'tablesvc.service.table_service') "
            "if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
