"""The lazy face each room of ``vision`` shows: a name is imported from its module on first use.

A room's ``__init__`` lists what a caller imports and where each name lives; importing the room
loads nothing (no OpenCV, no numpy) until a name is asked for, so ``import vision.table`` is free.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_face(package: str, where: Mapping[str, str], namespace: dict[str, Any],
              ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose name ``n`` lives in ``package.where[n]``."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *where])

    return __getattr__, __dir__
