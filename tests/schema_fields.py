"""The fields a JSON Schema names, as dotted paths (``seats[].discards[].tile``), for the docs check.

A ``$ref`` ends a path: what it points to is documented once, in its own table.
"""

from __future__ import annotations

from typing import Any


def field_paths(node: Any, prefix: str = "") -> list[str]:
    """Every property path below ``node`` in document order, without duplicates."""
    out: list[str] = []
    if not isinstance(node, dict) or "$ref" in node:
        return out
    for key in ("anyOf", "oneOf", "allOf"):
        for option in node.get(key, []):
            out += field_paths(option, prefix)
    if "items" in node and isinstance(node["items"], dict):
        out += field_paths(node["items"], prefix + "[]")
    for name, sub in node.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        out.append(path)
        out += field_paths(sub, path)
    return list(dict.fromkeys(out))
