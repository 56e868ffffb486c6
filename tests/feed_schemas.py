"""The feed's JSON Schemas (docs/schemas/), for every test that receives MQTT payloads.

``validate(topic, payload)`` checks one payload against its topic's schema and
returns the problems (empty when it is valid). ``topic`` is the part below
``<prefix>/<site>/<table>/`` (``state``, ``devices/panel``, ``cmd/reply``...).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
from referencing import Registry, Resource

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"
URN = "urn:tablesvc:schema:"


def schema_name(topic: str) -> str:
    """The schema of a topic below the table's base: ``devices/<name>`` share one."""
    if topic.startswith("camera/"):
        return "camera-snapshot"
    if topic.startswith("broadcast/"):
        return topic.replace("broadcast/", "broadcast-")
    if topic.startswith("cmd/reply/"):  # a referee's own response topic (cmd/reply/<name>)
        return "cmd/reply"
    return "devices" if topic.startswith("devices/") else topic


def schema_file(name: str) -> Path:
    return SCHEMAS / f"{name}.json"


@cache
def _registry() -> Registry:
    resources = []
    for path in sorted(SCHEMAS.rglob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((contents["$id"], Resource.from_contents(contents)))
    return Registry().with_resources(resources)


def _inline(node: Any, base: str, registry: Registry, expanding: tuple[str, ...] = ()) -> Any:
    """The schema with every ``$ref`` replaced by what it points to, for the compiled check. A recursive one
    (an ``amend`` holds an event) is followed one level: an amend inside an amend is no journal entry."""
    if isinstance(node, list):
        return [_inline(x, base, registry, expanding) for x in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        uri = ref if ref.startswith(URN) else base + ref
        if expanding.count(uri) > 1:
            return {"type": "object"}
        doc = uri.partition("#")[0]
        target = registry.resolver().lookup(uri).contents
        rest = {k: v for k, v in node.items() if k != "$ref"}
        inlined = _inline(target, doc, registry, (*expanding, uri))
        return {"allOf": [inlined, _inline(rest, base, registry, expanding)]} if rest else inlined
    return {k: (v if k in ("const", "enum") else _inline(v, base, registry, expanding))
            for k, v in node.items() if k != "$defs"}  # every use of a definition is inlined


#: keywords that only constrain instances of the schema's own type (and annotations): a schema of one type
#: made of these alone, or null, is the same schema with ``"type": [its type, "null"]``
_TYPED_ONLY = frozenset({
    "type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
    "pattern", "format", "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains",
    "maxContains", "properties", "required", "additionalProperties", "patternProperties", "minProperties",
    "maxProperties", "propertyNames", "dependentRequired", "description", "title", "examples"})
_NULL = {"type": "null"}


def _nullable(node: Any) -> Any:
    """``{"anyOf": [X, {"type": "null"}]}`` as X with null among its types, where that is the same schema (X of
    one type, of :data:`_TYPED_ONLY` keywords). The compiled check tries an anyOf's branches by raising an
    exception from each that fails, and the feed's payloads hold dozens of optional fields: merged, a state
    payload is checked in half the time."""
    if isinstance(node, list):
        return [_nullable(x) for x in node]
    if not isinstance(node, dict):
        return node
    node = {k: (v if k in ("const", "enum") else _nullable(v)) for k, v in node.items()}
    alts = node.get("anyOf")
    if len(node) == 1 and isinstance(alts, list) and len(alts) == 2 and _NULL in alts:
        other = alts[1] if alts[0] == _NULL else alts[0]
        if isinstance(other, dict) and isinstance(other.get("type"), str) and set(other) <= _TYPED_ONLY:
            return {**other, "type": [other["type"], "null"]}
    return node


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    """The reference validator (jsonschema, draft 2020-12, the files as written): it says what is wrong."""
    schema = json.loads(schema_file(name).read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, registry=_registry())


@cache
def _compiled(name: str) -> Callable[[Any], Any]:
    """The same schema, references inlined and compiled to Python (fastjsonschema): some fifty times faster,
    for the thousands of payloads one test receives. Only its verdict is used; jsonschema explains."""
    schema = json.loads(schema_file(name).read_text(encoding="utf-8"))
    inlined = _inline({k: v for k, v in schema.items() if k not in ("$schema", "$id")}, schema["$id"], _registry())
    return fastjsonschema.compile(_nullable(inlined))


def validate(topic: str, payload: Any) -> list[str]:
    """What is wrong with ``payload`` as a message of ``topic`` (an empty list when nothing is)."""
    name = schema_name(topic)
    try:
        _compiled(name)(payload)
        fast_ok = True
    except fastjsonschema.JsonSchemaException:
        fast_ok = False
    errors = [] if fast_ok else sorted(_validator(name).iter_errors(payload), key=lambda e: list(e.absolute_path))
    if not fast_ok and not errors:  # the two validators must agree: a disagreement is a fault of this module
        return [f"{topic}: the compiled schema refuses what the schema allows"]
    return [f"{topic} at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors[:3]]
