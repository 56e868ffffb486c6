"""docs/mqtt.md lists exactly the topics of the catalogue, with the same retain and QoS."""

import re
from pathlib import Path

import pytest

from tablesvc.mqtt.topics import TOPICS, TopicTree

DOC = Path(__file__).resolve().parent.parent / "docs" / "mqtt.md"


def test_docs_table_matches_the_catalogue():
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([\w/<>]+)` \| (\w+) \| (yes|no) \| (\d) \|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3) == "yes", int(m.group(4)))
    assert rows == {t.name: (t.writer, t.retained, t.qos) for t in TOPICS}


def test_topic_tree_refuses_wildcards_and_builds_names():
    tree = TopicTree("tablesvc", "club", "t1")
    assert tree.events == "tablesvc/club/t1/events" and tree.cmd_reply == "tablesvc/club/t1/cmd/reply"
    assert tree.device("panel") == "tablesvc/club/t1/devices/panel"
    for bad in ("a/b", "+", "#", " x"):
        with pytest.raises(ValueError, match="cannot be part of an MQTT topic"):
            TopicTree("tablesvc", bad, "t1")


# ---------------------------------------------------------------- schemas and field tables

import json  # noqa: E402

from tablesvc.mqtt.topics import SCHEMA_FILES  # noqa: E402
from tablesvc.service.commands import COMMAND_SCHEMA  # noqa: E402
from tests.feed_schemas import SCHEMAS, schema_name, validate  # noqa: E402
from tests.schema_fields import field_paths  # noqa: E402


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))


def _doc_tables() -> dict[str, list[str]]:
    """Each field table of docs/mqtt.md by the schema its marker names: the fields, in order."""
    tables: dict[str, list[str]] = {}
    current = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        marker = re.match(r"<!-- schema: ([\w/.#-]+) -->", line)
        if marker:
            current = tables.setdefault(marker.group(1), [])
            continue
        row = re.match(r"\| `([\w.\[\]]+)` \|", line)
        if current is not None and row:
            current.append(row.group(1))
        elif current is not None and not line.startswith("|"):
            current = None if line.strip() else current
    return tables


def _documented_locations() -> dict[str, dict]:
    """Every object the schemas describe with fields: a topic's schema, or one of its definitions."""
    found = {}
    for path in sorted(SCHEMAS.rglob("*.json")):
        name = path.relative_to(SCHEMAS).with_suffix("").as_posix()
        schema = _schema(name)
        if schema.get("properties"):
            found[f"{name}.json"] = schema
        for key, sub in schema.get("$defs", {}).items():
            if isinstance(sub, dict) and sub.get("properties"):
                found[f"{name}.json#{key}"] = sub
    return found


def test_every_topic_has_a_schema_and_the_command_schema_is_the_code():
    for topic in TOPICS:
        assert SCHEMA_FILES[topic.name] == schema_name(topic.name)
        schema = _schema(SCHEMA_FILES[topic.name])
        assert schema["$id"] == f"urn:tablesvc:schema:{SCHEMA_FILES[topic.name]}"
    written = {k: v for k, v in _schema("cmd").items() if k != "$id"}
    assert written == json.loads(json.dumps(COMMAND_SCHEMA))  # docs/schemas/cmd.json is COMMAND_SCHEMA


def test_every_field_of_every_schema_is_documented_and_nothing_else():
    tables = _doc_tables()
    locations = _documented_locations()
    assert set(tables) == set(locations), "a schema object without a field table in docs/mqtt.md, or the reverse"
    for where, schema in locations.items():
        assert tables[where] == field_paths(schema), f"docs/mqtt.md's table for {where} is not its schema's fields"


def test_the_schemas_refuse_what_the_feed_must_never_say():
    good = {"schema": 1, "ts": "2026-11-23T23:12:11.042Z", "source": "T1", "error": "no", "detail": None}
    assert validate("errors", good) == []
    assert validate("errors", {**good, "ts": 1795994531.04})  # epoch numbers are not the feed's time format
    assert validate("errors", {**good, "ts": "2026-11-23T23:12:11+00:00"})  # nor ISO without ms and Z
    event = {"schema": 1, "seq": 3, "ts": good["ts"], "source": "T1", "kind": "discard",
             "event": {"type": "discard", "seat": 0, "tile": "5mr", "riichi": False, "tsumogiri": None}}
    assert validate("events", event) == []
    assert validate("events", {**event, "event": {**event["event"], "tile": "0m"}})  # compact notation
    tsumo = {"type": "tsumo", "seat": 1, "hand": "234m", "win_tile": "4m", "ura": []}
    assert validate("events", {**event, "kind": "tsumo", "event": tsumo})  # a hand as a string


def test_the_compiled_check_says_what_the_schema_says_of_every_field_nulled_or_mistyped():
    """The tests check thousands of payloads with the schemas compiled (references inlined, optional fields
    merged into one type list): on a state and a hand's result of a real game, every field set to null, to a
    string or to a number must get the same verdict from the compiled check as from the schema as written."""
    import fastjsonschema

    from hardware_sims.generator import generate_game
    from tablesvc.engine.engine import Engine
    from tablesvc.engine.results import HandResult
    from tablesvc.mqtt.payloads import result_payload, state_payload
    from tests.feed_schemas import _compiled, _validator

    engine, state, result = Engine(), None, None
    for i, event in enumerate(generate_game(13).events, 1):
        outputs = engine.apply(event)
        if state is None and engine.state.hand is not None and sum(len(s.pond) for s in engine.state.hand.seats) > 8:
            state = json.loads(json.dumps(state_payload(engine.state, i, ts=0.0)))
        hand = next((o for o in outputs if isinstance(o, HandResult)), None)
        if hand is not None and result is None:
            result = json.loads(json.dumps(result_payload(hand, i, engine.state.players)))
        if state is not None and result is not None:
            break

    def leaves(node, path=()):
        if isinstance(node, dict):
            for k, v in node.items():
                yield from leaves(v, (*path, k))
        elif isinstance(node, list) and node:
            for i, item in enumerate(node[:2]):  # two of each list: the seats, the ponds, the tiles
                yield from leaves(item, (*path, i))
        else:
            yield path

    def changed(node, path, value):
        if not path:
            return value
        copy = dict(node) if isinstance(node, dict) else list(node)
        copy[path[0]] = changed(node[path[0]], path[1:], value)
        return copy

    checked = refused = 0
    for name, payload in (("state", state), ("results", result)):
        compiled, reference = _compiled(name), _validator(name)
        for path in leaves(payload):
            for value in (None, "x", 7):
                mutated = changed(payload, path, value)
                try:
                    compiled(mutated)
                    fast = True
                except fastjsonschema.JsonSchemaException:
                    fast = False
                assert fast == reference.is_valid(mutated), (name, path, value)
                checked += 1
                refused += not fast
    assert checked > 200 and 0 < refused < checked  # both verdicts were given many times
