"""tablesvc/formats/ has no import loop: the formats never import the replay that imports them.

The replay reads every format; the formats share the hand tracking
(``formats/tracker.py``) and the engine walk (``formats/walk.py``) and the
record with its report (``formats/record.py``), never one another's readers
or ``tablesvc.replay`` (not even for type hints).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

FORMATS = Path(__file__).resolve().parent.parent / "tablesvc" / "formats"


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
