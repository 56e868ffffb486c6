"""Referee commands from MQTT: validated against a JSON schema, always answered.

A command is ``{"command": NAME, "transaction": ID, ...}``; the reply is
``{"schema", "status": "ok"|"error", "command", "transaction", "data",
"error"}`` with the caller's transaction echoed, on the MQTT 5 response
topic when the caller gave one, else on ``cmd/reply``. Every failure is
answered: malformed JSON, an unknown command, a schema violation, a missing
or wrong token (when the table is configured with tokens), and an event the
engine refuses, with the engine's reason. None of them changes the game.

Every number has the range a real game allows (a seat 0..3, a score within
``SCORE_LIMIT``, an undo of 1..100 events ...), every text a length, and the
whole command a size: a refusal names the field and what it allows, and
never echoes an absurd value back (``set_scores`` with ``10**400`` is "a
401-digit number"). JSON's ``NaN``/``Infinity`` and fractions where a whole
number is due are refused too.

Commands run exactly once per transaction: given a ``recall``/``remember``
pair (the journal's), a command whose transaction was seen before gets its
first reply again and is not carried out again, across restarts; the same
transaction with a different command is refused (two callers numbering
alike must not receive each other's replies). While a command runs,
:attr:`Commands.current` holds its (transaction key, digest), so that the
service journals it with the entry the command writes.

A command may name the referee who sends it (``by``, as the web console does
for its signed-in account): the entry it writes is journalled with the source
``referee:NAME`` instead of ``referee``, so a tournament knows who ruled what.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any

from tablesvc.engine.clock import MAX_MINUTES, Clock, ClockError, parse_deadline
from tablesvc.engine.engine import Rejected
from tablesvc.engine.events import (
    INT_RANGES,
    MAX_TEXT,
    Chombo,
    ClockAddHand,
    ClockExtend,
    ClockStart,
    DeadHand,
    EndGame,
    Event,
    EventFormatError,
    GameStart,
    SetScores,
    TimeUp,
    from_dict,
)
from tablesvc.mqtt.payloads import iso_time
from tablesvc.mqtt.topics import SCHEMA_VERSION
from tablesvc.rules.game_end import MAX_MORE_HANDS, TimeRule
from tablesvc.text import REFEREE_NAME_PATTERN, find_invalid_text, is_valid_text

if TYPE_CHECKING:
    import jsonschema

__all__ = ["CLOCK_ACTIONS", "COMMAND_SCHEMA", "MAX_COMMAND_BYTES", "SITUATION",
           "CommandError", "Commands", "Reply"]

log = logging.getLogger(__name__)

SITUATION = ("round", "honba", "sticks", "scores", "dealer")
"""The start_game fields that take a game up midway (GameStart's), given together."""

#: The largest command accepted, in bytes of JSON: the longest real one (a hand-entered event with four hands) is
#: a few kilobytes.
MAX_COMMAND_BYTES = 64 * 1024
#: Transactions are the caller's ids: a text up to this long, or a whole number JSON carries exactly.
MAX_TRANSACTION = 128
_SAFE_INT = 2**53 - 1


def _whole(low: int, high: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


_SEAT = _whole(*INT_RANGES["seat"])
_REASON = {"type": "string", "maxLength": MAX_TEXT}
#: A tournament clock: the guaranteed time (or the deadline it ends at, the same for a whole hall) and the rule.
_CLOCK = {
    "minutes": _whole(1, MAX_MINUTES),
    "deadline": {"type": "string", "minLength": 1, "maxLength": 40},
    "rule": {"enum": [r.value for r in TimeRule]},
    "more_hands": _whole(0, MAX_MORE_HANDS),
}
CLOCK_ACTIONS = ("start", "extend", "add_hand", "time_up")
"""What the ``clock`` command does: start the clock, extend the time, add a hand after time, call time now."""
_COMMANDS: dict[str, dict[str, Any]] = {
    "start_game": {
        "properties": {
            "players": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 60},
                        "minItems": 4, "maxItems": 4},
            # a preset, optionally with house rules after it: "ema2016; kiriage=yes" (the engine checks them)
            "rules": {"type": "string", "minLength": 1, "maxLength": 500},
            # a game taken up midway (docs/engine.md); the engine checks the situation against the rules
            "round": {"type": "string", "pattern": "^[ESWNeswn][1-4]$"},
            "honba": _whole(*INT_RANGES["honba"]),
            "sticks": _whole(*INT_RANGES["sticks"]),
            # or "sticks": each seat's tray total, read by the table's stick tray reader
            "scores": {"anyOf": [{"type": "array", "items": _whole(*INT_RANGES["scores"]), "minItems": 4,
                                  "maxItems": 4}, {"const": "sticks"}]},
            "dealer": _SEAT,
            # the tournament clock, started with the game (a tournament's round start sends it to every table)
            "clock": {"type": "object", "properties": _CLOCK, "additionalProperties": False},
        },
    },
    "clock": {"properties": {"action": {"enum": list(CLOCK_ACTIONS)}, **_CLOCK, "reason": _REASON},
              "required": ["action"]},
    "undo": {"properties": {"count": _whole(1, 100)}},
    "amend": {"properties": {"seq": _whole(1, 2**31 - 1), "event": {"type": "object"}},
              "required": ["seq", "event"]},
    "event": {"properties": {"event": {"type": "object"}}, "required": ["event"]},
    "chombo": {"properties": {"seat": _SEAT, "reason": _REASON}, "required": ["seat"]},
    "dead_hand": {"properties": {"seat": _SEAT, "reason": _REASON}, "required": ["seat"]},
    "set_scores": {"properties": {"scores": {"type": "array", "items": _whole(*INT_RANGES["scores"]),
                                             "minItems": 4, "maxItems": 4}, "reason": _REASON},
                   "required": ["scores"]},
    "end_game": {"properties": {"reason": _REASON}},
    # the referee's ruling on a difference between the score sticks and the game (dismiss: the sticks are wrong,
    # the players fix their trays; recheck: compare the trays again); the game is not changed
    "sticks": {"properties": {"action": {"enum": ["dismiss", "recheck"]}}, "required": ["action"]},
}

COMMAND_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tablesvc referee command",
    "type": "object",
    "required": ["command"],
    "properties": {
        "command": {"enum": sorted(_COMMANDS)},
        "transaction": {"anyOf": [{"type": "string", "minLength": 1, "maxLength": MAX_TRANSACTION},
                                  _whole(-_SAFE_INT, _SAFE_INT)]},
        "token": {"type": "string", "maxLength": 256},
        "by": {"type": "string", "pattern": REFEREE_NAME_PATTERN},
    },
    "allOf": [
        {"if": {"properties": {"command": {"const": name}}},
         "then": {**spec, "properties": {**spec["properties"], "command": {}, "transaction": {}, "token": {},
                                                         "by": {}},
                  "additionalProperties": False}}
        for name, spec in _COMMANDS.items()
    ],
}


@cache
def _validator() -> jsonschema.Draft202012Validator:
    """The command schema's validator, made when the first command comes: loading jsonschema is a tenth of a
    second that a service refused at its start, and every command-line tool, need not spend."""
    import jsonschema

    return jsonschema.Draft202012Validator(COMMAND_SCHEMA)


class CommandError(ValueError):
    """A command that cannot be carried out; the message goes back to the caller."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _parse(raw: bytes) -> dict[str, Any]:
    """The command object, or :class:`CommandError` saying why not (size, JSON, shape)."""
    if len(raw) > MAX_COMMAND_BYTES:
        raise CommandError(f"a command of {len(raw)} bytes; at most {MAX_COMMAND_BYTES}")
    try:
        # fractions stay Decimal, so 1.0 is not taken for the whole number 1 (nor 1e400 for infinity)
        command = json.loads(raw, parse_float=Decimal, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, a number of 4300+ digits
        raise CommandError(f"not JSON: {str(exc)[:200]}") from None
    if not isinstance(command, dict):
        raise CommandError("a command is a JSON object with a 'command' field")
    return command


def _check_text(command: dict[str, Any]) -> None:
    """Refuse text that is no valid Unicode anywhere in a command: journalled, it would break every later
    publish, export and listing of the game."""
    bad = find_invalid_text(command)
    if bad is not None:
        where = bad.replace("[", "/").replace("]", "").replace(".", "/")
        raise CommandError(f"invalid command at {where}: not valid Unicode text (it holds a lone surrogate, "
                           "such as \\ud800); send the text as UTF-8")


def _echoable(command: dict[str, Any]) -> dict[str, Any]:
    """The command as far as the reply echoes it: a transaction the schema refused is not sent back."""
    ok = {k: v for k, v in command.items() if k in ("command", "transaction")
          and (not isinstance(v, str) or is_valid_text(v))}
    if not _validator().is_valid({"command": "end_game", **({"transaction": ok["transaction"]} if "transaction" in ok
                                                           else {})}):
        ok.pop("transaction", None)
    if not isinstance(ok.get("command"), str) or ok["command"] not in _COMMANDS:
        ok.pop("command", None)
    return ok


def _short(value: Any) -> str:
    """A value for an error message, never longer than a line: a 401-digit number is not echoed back."""
    if isinstance(value, Decimal):
        return str(value)[:40]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**12:
        return f"a {len(str(abs(value)))}-digit number"
    if isinstance(value, str) and len(value) > 40:
        return f"a text of {len(value)} characters"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _digest(command: dict[str, Any]) -> str:
    """What a command asks for, without its token: a repeat has the same digest."""
    what = {k: v for k, v in command.items() if k != "token"}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def _explain(error: jsonschema.ValidationError) -> str:
    """The first schema error in words: the field, what was there (shortened), and what is allowed."""
    where = "/".join(str(p) for p in error.absolute_path) or "command"
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator in ("minimum", "maximum", "type") and "minimum" in schema and "maximum" in schema:
        base = error.message if error.validator != "type" else f"{_short(error.instance)} is not a whole number"
        if len(repr(error.instance)) > 60:
            base = f"{_short(error.instance)} is out of range"
        return (f"invalid command at {where}: {base} (allowed: a whole number from {schema['minimum']} to "
                f"{schema['maximum']})")
    if error.validator == "maxLength":
        return f"invalid command at {where}: {_short(error.instance)} is too long (at most {schema['maxLength']})"
    if error.validator == "anyOf" and where == "transaction":
        return (f"invalid command at transaction: {_short(error.instance)} is not a transaction id (a text of 1 to "
                f"{MAX_TRANSACTION} characters, or a whole number within ±{_SAFE_INT})")
    message = error.message
    if len(repr(error.instance)) > 60:
        message = message.replace(repr(error.instance), _short(error.instance))
    return f"invalid command at {where}: {message[:300]}"


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
                 default_start: Mapping[str, Any] | None = None,
                 recall: Callable[[str], tuple[str, dict[str, Any] | None, int | None] | None] | None = None,
                 remember: Callable[[str, str, dict[str, Any]], None] | None = None,
                 now: Callable[[], float] = time.time,
                 trays: Callable[[], tuple[tuple[int, int, int, int], int] | None] | None = None,
                 sticks: Callable[[str], dict[str, Any]] | None = None) -> None:
        """``now`` is the wall clock a clock's minutes are counted from (the deadline is journalled);
        ``trays``: the latest settled stick tray reading (trays, riichi sticks), None while there is none;
        ``sticks``: the referee's ruling on a difference between trays and game (``dismiss``, ``recheck``).
        Both None on a table without a stick tray reader."""
        self._now = now
        self._trays = trays
        self._sticks = sticks
        self._recall = recall
        self._remember = remember
        self.current: tuple[str, str] | None = None  # (transaction key, digest) of the command being carried out
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
            command = _parse(raw)
            try:
                _check_text(command)
            except CommandError:
                command = _echoable(command)
                raise
            errors = sorted(_validator().iter_errors(command), key=lambda e: [str(p) for p in e.absolute_path])
            if errors:
                command = _echoable(command)
                raise CommandError(_explain(errors[0]))
            self._authorise(command)
        except (CommandError, Rejected, EventFormatError) as exc:
            return self._reply(command, "error", error=str(exc))
        except Exception as exc:  # every command is answered, even when something unforeseen breaks
            log.exception("command %r failed", command.get("command") if isinstance(command, dict) else None)
            return self._reply(command, "error", error=f"the service could not carry it out: {exc}")
        return self._once(command, source)

    def _once(self, command: dict[str, Any], source: str) -> Reply:
        """Carry out a valid, authorised command, unless its transaction was seen before."""
        key = digest = None
        try:
            if "transaction" in command and self._recall is not None:
                key = json.dumps(command["transaction"])
                digest = _digest(command)
                prior = self._recall(key)
                if prior is not None:
                    return self._repeat(command, digest, *prior)
            self.current = (key, digest) if key is not None and digest is not None else None
            if "by" in command:  # the referee who sent it (the web console's signed-in account), journalled
                source = f"{source}:{command['by']}"
            try:
                data = self._run(command, source)
            finally:
                self.current = None
            reply = self._reply(command, "ok", data=data)
        except (CommandError, Rejected, EventFormatError) as exc:
            reply = self._reply(command, "error", error=str(exc))
        except Exception as exc:  # every command is answered, even when something unforeseen breaks
            log.exception("command %r failed", command.get("command") if isinstance(command, dict) else None)
            return self._reply(command, "error", error=f"the service could not carry it out: {exc}")
        if key is not None and digest is not None and self._remember is not None:
            try:
                self._remember(key, digest, reply.payload)
            except Exception:  # the command's entry, if any, is journalled with its key: a repeat is still known
                log.exception("cannot remember the reply to transaction %s", key)
        return reply

    def _repeat(self, command: dict[str, Any], digest: str, first_digest: str, first: dict[str, Any] | None,
                seq: int | None) -> Reply:
        if first_digest != digest:
            return self._reply(command, "error", error=(
                f"transaction {_short(command['transaction'])} was already used for another command; give each "
                "command its own transaction id (a UUID)"))
        log.info("transaction %s seen before: its first reply again, not carried out twice", command["transaction"])
        if first is None:  # journalled, but the service stopped before it answered
            return self._reply(command, "ok", data={"seq": seq})
        return Reply(first)

    @classmethod
    def refusal(cls, raw: bytes, error: str) -> Reply:
        """An error reply to a command that is not even read (a retained one), echoing what can be echoed."""
        try:
            command = _echoable(_parse(raw))
        except CommandError:
            command = {}
        return cls._reply(command, "error", error=error)

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
            if situation.get("scores") == "sticks":
                situation.update(self._from_sticks(situation, c.get("rules", self._rules)))
            if "scores" in situation:
                situation["scores"] = tuple(situation["scores"])
            event = GameStart(players=players, rules=c.get("rules", self._rules), **situation)  # type: ignore[arg-type]
            clock = self._clock_start(c["clock"]) if "clock" in c else None  # checked before the game starts
            seq = self._submit(event, source)
            if clock is not None:
                return {"seq": seq, "clock_seq": self._submit(clock, source)}
        elif name == "clock":
            seq = self._clock(c, source)
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
        elif name == "sticks":
            if self._sticks is None:
                raise CommandError('this table has no stick tray reader (a [[serial]] link of kind "sticks")')
            return self._sticks(c["action"])
        elif name == "set_scores":
            s = c["scores"]
            seq = self._submit(SetScores(scores=(s[0], s[1], s[2], s[3]), reason=c.get("reason", "")), source)
        else:  # end_game (the schema admits no other)
            seq = self._submit(EndGame(reason=c.get("reason", "")), source)
        return {"seq": seq}

    def _clock_start(self, spec: dict[str, Any]) -> ClockStart:
        """The clock_start event of a clock given as minutes (from now) or as a deadline (the hall's, the same
        for every table), checked as the engine will check it, so that start_game never starts a game whose
        clock is then refused."""
        minutes = spec.get("minutes")
        now = self._now()
        if "deadline" in spec:
            try:
                deadline = parse_deadline(spec["deadline"])
            except ClockError as exc:
                raise CommandError(f"invalid command at clock deadline: {exc}") from None
            if minutes is None:
                minutes = math.ceil((deadline - now) / 60)
                if minutes < 1:
                    raise CommandError(f"the deadline {iso_time(deadline)} has passed (it is {iso_time(now)} at "
                                       "this table): give a later one, or minutes")
        elif minutes is None:
            raise CommandError("a clock is started with minutes (the guaranteed time) or a deadline")
        else:
            deadline = now + 60 * minutes
        event = ClockStart(minutes=minutes, deadline=iso_time(deadline), rule=spec.get("rule", TimeRule.EMA.value),
                           more_hands=spec.get("more_hands", 0))
        try:
            Clock.start(event.minutes, event.deadline, event.rule, event.more_hands)
        except ClockError as exc:
            raise CommandError(str(exc)) from None
        return event

    def _clock(self, c: dict[str, Any], source: str) -> int:
        action = c["action"]
        takes = {"start": {"minutes", "deadline", "rule", "more_hands"}, "extend": {"minutes", "reason"},
                 "add_hand": {"reason"}, "time_up": {"reason", "rule"}}[action]
        extra = sorted(set(c) - takes - {"command", "transaction", "token", "by", "action"})
        if extra:
            raise CommandError(f"the clock's {action} does not take {', '.join(extra)} (it takes "
                               f"{', '.join(sorted(takes))})")
        if action == "start":
            return self._submit(self._clock_start(c), source)
        if action == "extend":
            if "minutes" not in c:
                raise CommandError("the clock's extend needs minutes: how many minutes to add")
            return self._submit(ClockExtend(minutes=c["minutes"], reason=c.get("reason", "")), source)
        if action == "add_hand":
            return self._submit(ClockAddHand(reason=c.get("reason", "")), source)
        return self._submit(TimeUp(reason=c.get("reason", ""), rule=c.get("rule")), source)
    def _from_sticks(self, situation: dict[str, Any], rules: str) -> dict[str, Any]:
        """The scores (and, unless given, the riichi sticks on the table) of a game started from the trays: only
        from a reading whose points add up to the table's (four times the rules' starting points), so that a
        stick missing or misread never becomes the game's score."""
        reading = self._trays() if self._trays is not None else None
        if reading is None:
            raise CommandError("scores from the sticks: " + (
                'this table has no stick tray reader (a [[serial]] link of kind "sticks")' if self._trays is None
                else "the stick tray reader has sent no reading it can be trusted with (is it connected? see the "
                "sticks topic)"))
        trays, riichi = reading
        sticks = situation.get("sticks", riichi)
        from tablesvc.rules.ruleset import get_ruleset
        from tablesvc.sticks import RIICHI_STICK

        try:
            table = 4 * get_ruleset(rules).start_points
        except ValueError:  # rules this table does not know: the game's start refuses them, naming them
            return {"scores": trays, **({} if "sticks" in situation else {"sticks": riichi})}
        held = sum(trays) + RIICHI_STICK * sticks
        if held != table:
            raise CommandError(
                f"scores from the sticks: the trays hold {sum(trays):,} and {sticks} riichi stick(s) lie on the "
                f"table, {held:,} in all; a table under {rules} holds {table:,}: a stick is missing or misread, "
                "count the trays again (or give the scores)")
        return {"scores": trays, **({} if "sticks" in situation else {"sticks": riichi})}

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
