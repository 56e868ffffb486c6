"""The whole MQTT API in one place: every topic, who writes it, retain, QoS, and its payload.

Consumers (overlays, dashboards, scoring screens, AI tools) and this service
read the same catalogue; ``docs/mqtt.md`` is checked against it by a test.
Payloads are JSON objects with a ``schema`` version field, each described by
a JSON Schema in ``docs/schemas/`` (the tests check every payload they
receive against it, and the docs' field tables against the schemas).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SCHEMA_FILES", "SCHEMA_VERSION", "TOPICS", "TopicSpec", "TopicTree"]

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class TopicSpec:
    name: str  # below <prefix>/<site>/<table>/
    writer: str  # "service" or "referee"
    retained: bool
    qos: int
    payload: str  # one line: the payload's fields


TOPICS: tuple[TopicSpec, ...] = (
    TopicSpec("status", "service", True, 1,
              '{"schema", "status": "online"|"offline", "version", "started", "table", "site"}'),
    TopicSpec("state", "service", True, 1,
              '{"schema", "seq", "ts", "hand_id", "phase", "rules", "round", "honba", "sticks", "dealer", "turn", '
              '"step", "wall", "dora", "seats": [{"seat", "name", "wind", "score", "riichi", "discards", "melds", '
              '"concealed", "dead"}], "last_result", "final", "conditions", "conditions_detail"}'),
    TopicSpec("events", "service", False, 1,
              '{"schema", "seq", "ts", "source", "kind", "event"}: every journal entry, gap-free seq'),
    TopicSpec("results", "service", False, 1,
              '{"schema", "seq", "type": "hand_result"|"game_result"|"results_replaced", ...}: names, winning '
              "hand, yaku, han, fu, payments, deltas; final ranking with uma; after a correction, every result "
              "again"),
    TopicSpec("mjai", "service", False, 1, "one mjai event (JSON object) per message"),
    TopicSpec("errors", "service", False, 1,
              '{"schema", "ts", "source", "error", "detail"}: an observation or command the engine refused, '
              "with its reason"),
    TopicSpec("devices/<name>", "service", True, 1,
              '{"schema", "name", "ts", "connected", "state", "frames_ok", "frames_bad": {reason: count}, '
              '"lines_per_second", "last_seen", "reconnects"} (cameras: "fps", "frames", "errors")'),
    TopicSpec("camera/<name>/snapshot", "service", True, 0,
              '{"schema", "camera", "ts", "reason", "tiles", "unknown", "width", "height", "jpeg"}: what the camera '
              "sees, annotated (zones, each tile's reading, unknown in red; reason: why the engine refused the "
              "camera's report, else null), JPEG in base64; every few seconds and at each refusal"),
    TopicSpec("sticks", "service", True, 1,
              '{"schema", "ts", "link", "status": "off"|"waiting"|"ok"|"mismatch"|"fault", "text", "check", "trays", '
              '"riichi", "game": {"scores", "sticks"}, "differences": [{"seat", "name", "tray", "game", '
              '"difference"}], "fault"}: the score sticks compared with the game (tables with a stick tray reader)'),
    TopicSpec("broadcast/hands", "service", True, 1,
              '{"schema", "ts", "seq", "hand_id", "delay_s", "round", "honba", "sticks", "wall", "dora", "turn", '
              '"seats": [{"seat", "wind", "name", "score", "riichi", "concealed", "drawn", "melds", "shanten", '
              '"waits", "karaten", "furiten", "ukeire", "deal_in"}]}: every hand and its analysis, after the '
              "organiser's delay; only a broadcast account may read it (tables that know every hand)"),
    TopicSpec("cmd", "referee", False, 1,
              '{"command", "transaction", "token", ...}: start_game, undo, amend, event, chombo, dead_hand, '
              "set_scores, end_game, clock, sticks"),
    TopicSpec("cmd/reply", "service", False, 1,
              '{"schema", "status": "ok"|"error", "command", "transaction", "data", "error"} (or on the '
              "MQTT 5 response topic, one level under cmd/reply)"),
)

SCHEMA_FILES: dict[str, str] = {t.name: "devices" if t.name.startswith("devices/") else "camera-snapshot"
                                if t.name.startswith("camera/") else t.name.replace("broadcast/", "broadcast-")
                                for t in TOPICS}
"""Each topic's JSON Schema, ``docs/schemas/<file>.json`` (``devices/<name>`` share one, so do cameras' snapshots)."""


class TopicTree:
    """Topic names of one table: ``<prefix>/<site>/<table>/...``."""

    def __init__(self, prefix: str, site: str, table: str) -> None:
        for label, value in (("prefix", prefix), ("site", site), ("table", table)):
            if not value or any(c in value for c in "+#/\0") or value != value.strip():
                raise ValueError(f"{label} {value!r} cannot be part of an MQTT topic (no '/', '+', '#' or spaces)")
        self.base = f"{prefix}/{site}/{table}"

    def __getattr__(self, name: str) -> str:
        if name in _SIMPLE:
            return f"{self.base}/{_SIMPLE[name]}"
        raise AttributeError(name)

    def device(self, name: str) -> str:
        return f"{self.base}/devices/{name}"

    def camera_snapshot(self, name: str) -> str:
        return f"{self.base}/camera/{name}/snapshot"


_SIMPLE = {
    "status": "status",
    "state": "state",
    "events": "events",
    "results": "results",
    "mjai": "mjai",
    "errors": "errors",
    "sticks": "sticks",
    "cmd": "cmd",
    "cmd_reply": "cmd/reply",
    "broadcast_hands": "broadcast/hands",
}
