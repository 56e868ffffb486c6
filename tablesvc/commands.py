"""Referee commands from MQTT: validated against a JSON schema, always answered.

A command is ``{"command": NAME, "transaction": ID, ...}``; the reply is
``{"schema", "status": "ok"|"error", "command", "transaction", "data",
"error"}`` with the caller's transaction echoed, on the MQTT 5 response
topic when the caller gave one, else on ``cmd/reply``. Every failure is
answered: malformed JSON, an unknown command, a schema violation, a missing
or wrong token (when the table is configured with tokens), and an event the
engine refuses, with the engine's reason. None of them changes the game.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from tablesvc.engine.engine import Rejected
from tablesvc.engine.events import Chombo, DeadHand, EndGame, Event, EventFormatError, GameStart, SetScores, from_dict
from tablesvc.mqtt.topics import SCHEMA_VERSION

__all__ = ["COMMAND_SCHEMA", "SITUATION", "CommandError", "Commands", "Reply"]

log = logging.getLogger(__name__)

SITUATION = ("round", "honba", "sticks", "scores", "dealer")
"""The start_game fields that take a game up midway (GameStart's), given together."""
_SEAT = {"type": "integer", "minimum": 0, "maximum": 3}
_REASON = {"type": "string", "maxLength": 500}
_COMMANDS: dict[str, dict[str, Any]] = {
    "start_game": {
        "properties": {
            "players": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 60},
                        "minItems": 4, "maxItems": 4},
            # a preset, optionally with house rules after it: "ema2016; kiriage=yes" (the engine checks them)
            "rules": {"type": "string", "minLength": 1, "maxLength": 500},
            # a game taken up midway (docs/engine.md); the engine checks the situation against the rules
            "round": {"type": "string", "pattern": "^[ESWNeswn][1-4]$"},
            "honba": {"type": "integer", "minimum": 0},
            "sticks": {"type": "integer", "minimum": 0},
            "scores": {"type": "array", "items": {"type": "integer"}, "minItems": 4, "maxItems": 4},
            "dealer": _SEAT,
        },
    },
    "undo": {"properties": {"count": {"type": "integer", "minimum": 1, "maximum": 100}}},
    "amend": {"properties": {"seq": {"type": "integer", "minimum": 1}, "event": {"type": "object"}},
              "required": ["seq", "event"]},
    "event": {"properties": {"event": {"type": "object"}}, "required": ["event"]},
    "chombo": {"properties": {"seat": _SEAT, "reason": _REASON}, "required": ["seat"]},
    "dead_hand": {"properties": {"seat": _SEAT, "reason": _REASON}, "required": ["seat"]},
    "set_scores": {"properties": {"scores": {"type": "array", "items": {"type": "integer"}, "minItems": 4,
                                             "maxItems": 4}, "reason": _REASON},
                   "required": ["scores"]},
    "end_game": {"properties": {"reason": _REASON}},
}

COMMAND_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tablesvc referee command",
    "type": "object",
    "required": ["command"],
    "properties": {
        "command": {"enum": sorted(_COMMANDS)},
        "transaction": {"type": ["string", "integer"]},
        "token": {"type": "string"},
    },
    "allOf": [
        {"if": {"properties": {"command": {"const": name}}},
         "then": {**spec, "properties": {**spec["properties"], "command": {}, "transaction": {}, "token": {}},
                  "additionalProperties": False}}
        for name, spec in _COMMANDS.items()
    ],
}
_VALIDATOR = jsonschema.Draft202012Validator(COMMAND_SCHEMA)


class CommandError(ValueError):
    """A command that cannot be carried out; the message goes back to the caller."""


@dataclass(frozen=True)
class Reply:
    payload: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.payload["status"] == "ok"


class Commands:
    """Carries out commands against the service's operations (given as callables, to stay testable)."""

    def __init__(self, *, submit: Callable[[Event, str], int], undo: Callable[[int, str], int],
                 amend: Callable[[int, Event, str], int], tokens: tuple[str, ...] = (),
                 default_rules: str = "ema2012", default_players: tuple[str, str, str, str] | None = None,
                 default_start: Mapping[str, Any] | None = None) -> None:
        self._submit = submit
        self._undo = undo
        self._amend = amend
        self._tokens = tokens
        self._rules = default_rules
        self._players = default_players or ("East", "South", "West", "North")
        self._start = dict(default_start or {})

    def handle(self, raw: bytes, source: str = "cmd") -> Reply:
        """Parse, check and carry out one command; never raises."""
        command: dict[str, Any] = {}
        try:
            try:
                command = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise CommandError(f"not JSON: {exc}") from None
            if not isinstance(command, dict):
                raise CommandError("a command is a JSON object with a 'command' field")
            errors = sorted(_VALIDATOR.iter_errors(command), key=lambda e: list(e.absolute_path))
            if errors:
                first = errors[0]
                where = "/".join(str(p) for p in first.absolute_path) or "command"
                raise CommandError(f"invalid command at {where}: {first.message}")
            self._authorise(command)
            data = self._run(command, source)
            return self._reply(command, "ok", data=data)
        except (CommandError, Rejected, EventFormatError) as exc:
            return self._reply(command, "error", error=str(exc))
        except Exception as exc:  # every command is answered, even when something unforeseen breaks
            log.exception("command %r failed", command.get("command") if isinstance(command, dict) else None)
            return self._reply(command, "error", error=f"the service could not carry it out: {exc}")

    def _authorise(self, command: dict[str, Any]) -> None:
        if not self._tokens:
            return
        token = command.get("token")
        if not isinstance(token, str) or not any(hmac.compare_digest(token, t) for t in self._tokens):
            raise CommandError("unauthorised: this table accepts commands only with a referee token")

    def _run(self, c: dict[str, Any], source: str) -> dict[str, Any]:
        name = c["command"]
        if name == "start_game":
            players = tuple(c.get("players", self._players))
            # a situation given with the command replaces the configured one as a whole
            situation = {k: c[k] for k in SITUATION if k in c} or dict(self._start)
            if "scores" in situation:
                situation["scores"] = tuple(situation["scores"])
            event = GameStart(players=players, rules=c.get("rules", self._rules), **situation)  # type: ignore[arg-type]
            seq = self._submit(event, source)
        elif name == "undo":
            seq = self._undo(int(c.get("count", 1)), source)
        elif name == "amend":
            seq = self._amend(int(c["seq"]), from_dict(c["event"]), source)
        elif name == "event":
            seq = self._submit(from_dict(c["event"]), source)
        elif name == "chombo":
            seq = self._submit(Chombo(seat=c["seat"], reason=c.get("reason", "")), source)
        elif name == "dead_hand":
            seq = self._submit(DeadHand(seat=c["seat"], reason=c.get("reason", "")), source)
        elif name == "set_scores":
            s = c["scores"]
            seq = self._submit(SetScores(scores=(s[0], s[1], s[2], s[3]), reason=c.get("reason", "")), source)
        else:  # end_game (the schema admits no other)
            seq = self._submit(EndGame(reason=c.get("reason", "")), source)
        return {"seq": seq}

    @staticmethod
    def _reply(command: dict[str, Any], status: str, *, data: Any = None, error: str | None = None) -> Reply:
        return Reply({
            "schema": SCHEMA_VERSION,
            "status": status,
            "command": command.get("command") if isinstance(command, dict) else None,
            "transaction": command.get("transaction") if isinstance(command, dict) else None,
            "data": data,
            "error": error,
        })
