"""tablesvc/formats/ has no import loop: the formats never import the replay that imports them.

The replay reads every format; the formats share the hand tracking
(``formats/tracker.py``) and the engine walk (``formats/walk.py``, with the
tile order both write) and the record with its report
(``formats/record.py``), never one another's readers or ``tablesvc.replay``
(not even for type hints). What one module uses of another is public there:
no copies of one helper in two modules, no private names imported.
"""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "tablesvc" / "formats"


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("path", sorted(FORMATS.glob("*.py")), ids=lambda p: p.name)
def test_formats_do_not_import_the_replay(path):
    assert "tablesvc.replay" not in _imports(path)


def test_readers_do_not_import_each_other():
    assert "tablesvc.formats.mjai" not in _imports(FORMATS / "tenhou6.py")
    assert "tablesvc.formats.tenhou6" not in _imports(FORMATS / "mjai.py")
    for shared in ("tracker.py", "walk.py", "record.py"):
        assert not {m for m in _imports(FORMATS / shared) if m.startswith("tablesvc.formats.")} - {
            "tablesvc.formats.record"}


def _top_level_names(path: Path) -> set[str]:
    return {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(n, ast.FunctionDef | ast.ClassDef)}


def test_no_helper_is_defined_in_two_format_modules():
    names = {p.name: _top_level_names(p) for p in sorted(FORMATS.glob("*.py"))}
    twice = {(a, b): names[a] & names[b] for a, b in itertools.combinations(names, 2) if names[a] & names[b]}
    assert twice == {}


@pytest.mark.parametrize("path", [*sorted(FORMATS.glob("*.py")), ROOT / "tablesvc" / "replay.py"],
                         ids=lambda p: p.name)
def test_nothing_private_is_imported_from_another_module(path):
    private = [(node.module, a.name) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tablesvc")
               for a in node.names if a.name.startswith("_")]
    assert private == []


def test_the_replay_imports_the_archive_at_the_top_without_a_cycle():
    tree = ast.parse((ROOT / "tablesvc" / "replay.py").read_text(encoding="utf-8"))
    top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom)}
    inner = {node.module for fn in tree.body if isinstance(fn, ast.FunctionDef) for node in ast.walk(fn)
             if isinstance(node, ast.ImportFrom | ast.Import)}
    assert "tablesvc.archive" in top and inner == set()
    for first in ("tablesvc.replay", "tablesvc.archive", "tablesvc.formats.mjai_live", "tablesvc.cli"):
        done = subprocess.run([sys.executable, "-c", f"import {first}, tablesvc.replay"], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (first, done.stderr)
