"""The house: the code stands in layers and no module imports a layer above its own, no module imports one that
imports it back, and ``vision``, ``drivers`` and ``tablesvc.service`` show what a caller should import without
loading it all at ``import``."""

from __future__ import annotations

import ast
import functools
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tablesvc", "vision", "drivers", "hardware_sims")


#: The layers, lowest first: a module imports its own layer and those below, never one above (docs/layout.md).
#: A module belongs to the layer of the longest prefix below that names it.
LAYERS: dict[str, tuple[str, ...]] = {
    "core": ("tablesvc", "tablesvc.tiles", "tablesvc.rules", "tablesvc.engine", "tablesvc.formats",
             "tablesvc.scorecard", "tablesvc.sticks", "tablesvc.text", "tablesvc.tile_design"),
    "storage": ("tablesvc.storage",),
    "wire": ("tablesvc.mqtt",),
    "runtime": ("tablesvc.service", "tablesvc.config", "drivers", "vision"),
    "consumers": ("tablesvc.web", "tablesvc.records", "tablesvc.tournament", "tablesvc.watch", "tablesvc.archive",
                  "tablesvc.replay", "tablesvc.feed_replay", "tablesvc.photo_hand", "tablesvc.photo_fix"),
    "cli": ("tablesvc.cli", "tablesvc.__main__", "tablesvc.broker", "hardware_sims"),
}


def _layer(module: str) -> int | None:
    """The rank of ``module``'s layer (0 the core), None when no layer names it."""
    best: tuple[int, int] | None = None
    for rank, prefixes in enumerate(LAYERS.values()):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), rank)
    return None if best is None else best[1]


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a layer above the importer's own, as ``importer (layer) -> imported (layer)``."""
    names = list(LAYERS)
    found = []
    for module, deps in sorted(graph.items()):
        own = _layer(module)
        for dep in sorted(deps):
            theirs = _layer(dep)
            if own is not None and theirs is not None and theirs > own:  # a module with no layer fails elsewhere
                found.append(f"{module} ({names[own]}) -> {dep} ({names[theirs]})")
    return found


def _modules(root: Path = ROOT) -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _imported(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


@functools.cache
def _graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the first-party modules it imports: at its top, inside a function, or for type checking only
    (a circle of types is still a circle for whoever reads the two modules)."""
    modules = _modules(root)
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
    assert "vision.naming.classifier" in graph and "tablesvc.web.feed_store" in graph  # the walk saw the modules
    assert _circles(graph) == []


def test_every_module_has_a_layer():
    assert [m for m in _graph() if _layer(m) is None] == []


def test_no_module_imports_a_layer_above_its_own():
    graph = _graph()
    assert "tablesvc.storage.journal" in graph and "tablesvc.cli" in graph  # the walk saw the modules
    assert _upward(graph) == []


def test_an_upward_import_is_seen_even_inside_a_function(tmp_path):
    """A copy of the tree where the journal asks the web server for something in a function body (a lazy import,
    the kind that hides from ``import``) and the table fold asks the service at its top: both are named."""
    for path in _modules().values():
        copy = tmp_path / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    journal = tmp_path / "tablesvc" / "storage" / "journal.py"
    journal.write_text(journal.read_text(encoding="utf-8")
                       + "\n\ndef _page():\n    from tablesvc.web import app\n\n    return app\n", encoding="utf-8")
    table = tmp_path / "tablesvc" / "storage" / "table.py"
    table.write_text("from tablesvc.service import commands\n" + table.read_text(encoding="utf-8"), encoding="utf-8")
    assert _upward(_graph(tmp_path)) == [
        "tablesvc.storage.journal (storage) -> tablesvc.web (consumers)",
        "tablesvc.storage.journal (storage) -> tablesvc.web.app (consumers)",
        "tablesvc.storage.table (storage) -> tablesvc.service (runtime)",
        "tablesvc.storage.table (storage) -> tablesvc.service.commands (runtime)",
    ]


def test_reading_a_configuration_loads_no_broker_client_schema_checker_or_database():
    code = ("import sys, tablesvc.config; "
            "print(sorted(m for m in ('paho', 'jsonschema', 'sqlite3', 'tablesvc.mqtt.link', 'tablesvc.service') "
            "if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_the_circle_finder_sees_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("package", ["vision", "vision.table", "vision.photos", "vision.naming", "vision.seat",
                                     "drivers", "tablesvc.service"])
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
    code = ("import sys, vision, vision.table, vision.photos, vision.naming, vision.seat, drivers, tablesvc.service, "
            "tablesvc.storage.journal; "
            "print(sorted(m for m in ('cv2', 'serial', 'paho', 'numpy', 'tablesvc.service.table_service') "
            "if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
