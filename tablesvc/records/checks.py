"""What the records collector takes from the feed: a result the feed's schema allows, within the database's range.

A message that cannot be stored would otherwise fail in the database (a
number past its integer range, text longer than a column), and a failure
there is retried as if the database were down: the message is never
acknowledged and every later result waits behind it, also after a restart.
Worse, a message a lenient database keeps (SQLite stores ``1.5`` in an
integer column and a string where a number belongs) breaks the standings
that read it later. So every payload is checked here, before it is stored,
against what ``docs/schemas/results.json`` says of the fields the records
keep, and what fails is refused with a :class:`Refused` that names the field.

Fields the records do not keep are not looked at (a newer service may add
some), so a result the schema allows is never refused, except for the
limits below, which no table reaches: a payload of at most
:data:`MAX_PAYLOAD` bytes, nested at most :data:`MAX_DEPTH` deep, whole
numbers within PostgreSQL's ``integer``, no ``NaN`` or ``Infinity``, text
that is valid Unicode without control characters (a NUL), names of at most :data:`MAX_NAME` characters and
game ids of at most :data:`MAX_GAME_ID`, a ranking that ranks each seat
once, with the places its points give.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tablesvc.text import control_character, find_invalid_text

__all__ = ["INT_MAX", "INT_MIN", "MAX_DEPTH", "MAX_GAME_ID", "MAX_NAME", "MAX_PAYLOAD", "Refused", "check_payload",
           "check_result", "check_text", "parse", "parse_object"]

MAX_PAYLOAD = 1_000_000  # bytes: a whole game of results_replaced is about 60 kB
MAX_DEPTH = 12  # the feed nests 6 deep (results_replaced > results > wins > melds > tiles)
MAX_GAME_ID = 64  # games.game is VARCHAR(64)
MAX_NAME = 200  # a player's name (aliases are VARCHAR(200))
MAX_TEXT = 1000  # rules, a hand's name
INT_MIN, INT_MAX = -(2**31), 2**31 - 1  # PostgreSQL integer, the columns' type
_KINDS = ("win", "exhaustive_draw", "abortive_draw", "chombo")
_HAND = re.compile(r"[ESWN][1-4]-[0-9]{1,6}")


class Refused(ValueError):
    """A result the records will not store; the message names the field and says why."""


def _constant(name: str) -> Any:
    raise Refused(f"{name} is no number JSON allows")


def parse(raw: bytes) -> dict[str, Any]:
    """The payload as a JSON object, or :class:`Refused` saying why it cannot be one, its every number whole
    and its every text valid (:func:`_walk`)."""
    value = parse_object(raw)
    _walk(value, "", 1)
    return value


def parse_object(raw: bytes) -> dict[str, Any]:
    """The payload as a JSON object, its values unchecked: for a message of which the records keep a few
    values, each checked where it is read (a table's ``state`` holds fractions, such as its clock's
    remaining seconds, that no result holds)."""
    if len(raw) > MAX_PAYLOAD:
        raise Refused(f"the message is {len(raw):,} bytes; a result is at most {MAX_PAYLOAD:,}")
    try:
        value = json.loads(raw, parse_constant=_constant)
    except RecursionError:
        raise Refused(f"the JSON is nested deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError as exc:
        raise Refused(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise Refused(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(value, dict):
        raise Refused(f"not a JSON object but {type(value).__name__}")
    return value


def check_payload(payload: dict[str, Any]) -> None:
    """A result built here rather than read off the feed (an import from a journal): the checks of
    :func:`parse` on its values, then :func:`check_result`."""
    _walk(payload, "", 1)
    check_result(payload)


def _walk(value: Any, path: str, depth: int) -> None:
    """Depth, numbers and text anywhere in the payload, kept or not: each would fail where it is written."""
    if depth > MAX_DEPTH:
        raise Refused(f"{path or 'the payload'} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            _walk(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, f"{path}[{index}]", depth + 1)
    elif isinstance(value, float):
        raise Refused(f"{path} must be a whole number, not {value!r}")
    elif isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
        raise Refused(f"{path} is {value}, outside the range the records keep ({INT_MIN}..{INT_MAX})")
    if depth == 1:
        bad = find_invalid_text(value)
        if bad:
            raise Refused(f"{bad} is not valid Unicode text (it holds a lone surrogate)")


def _whole(value: Any, path: str, low: int = INT_MIN, high: int = INT_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(f"{path} must be a whole number, not {value!r:.60}")
    if not low <= value <= high:
        raise Refused(f"{path} must be {low}..{high}, not {value}")
    return value


def _seat(value: Any, path: str) -> int:
    return _whole(value, path, 0, 3)


def _text(value: Any, path: str, limit: int) -> str:
    if not isinstance(value, str):
        raise Refused(f"{path} must be text, not {value!r:.60}")
    if len(value) > limit:
        raise Refused(f"{path} must be at most {limit} characters, not {len(value):,}")
    bad = control_character(value)
    if bad is not None:  # a NUL: SQLite keeps it, PostgreSQL refuses it; the same feed would give other records
        raise Refused(f"{path} holds a control character ({bad}); names and ids are one line of visible text")
    return value


def check_text(value: Any, path: str, limit: int = MAX_NAME) -> str:
    """A name the records keep: text of at most ``limit`` characters, valid Unicode."""
    _text(value, path, limit)
    bad = find_invalid_text(value)
    if bad:
        raise Refused(f"{path} is not valid Unicode text (it holds a lone surrogate)")
    return value


def _list(value: Any, path: str, size: int | None = None, most: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise Refused(f"{path} must be a list, not {value!r:.60}")
    if size is not None and len(value) != size:
        raise Refused(f"{path} must hold {size} items, not {len(value)}")
    if most is not None and len(value) > most:
        raise Refused(f"{path} holds {len(value)} items; at most {most}")
    return value


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Refused(f"{path} must be an object, not {value!r:.60}")
    return value


def _players(value: Any, path: str) -> None:
    for i, name in enumerate(_list(value, path, 4)):
        _text(name, f"{path}[{i}]", MAX_NAME)


def _optional(p: dict[str, Any], key: str, path: str, low: int = 0) -> None:
    if p.get(key) is not None:
        _whole(p[key], f"{path}{key}", low)


def _game(p: dict[str, Any], path: str) -> None:
    if "game" not in p:
        return  # an older service: the collector names the game itself
    game = _object(p["game"], f"{path}game")
    if "id" in game:
        _text(game["id"], f"{path}game.id", MAX_GAME_ID)  # empty: the collector names the game itself
    if "players" in game:
        _players(game["players"], f"{path}game.players")
    if "rules" in game:
        _text(game["rules"], f"{path}game.rules", MAX_TEXT)


def _hand(p: Any, path: str) -> None:
    p = _object(p, path.rstrip(".") or "the result")
    hand = _text(p.get("hand"), f"{path}hand", 16)
    if not _HAND.fullmatch(hand):
        raise Refused(f"{path}hand must be a round and its counters (E1-0), not {hand!r}")
    if p.get("result") not in _KINDS:
        raise Refused(f"{path}result must be one of {', '.join(_KINDS)}, not {p.get('result')!r:.60}")
    for key in ("deltas", "scores"):
        for i, x in enumerate(_list(p.get(key), f"{path}{key}", 4)):
            _whole(x, f"{path}{key}[{i}]")
    _optional(p, "number", path)
    _optional(p, "seq", path)
    if "players" in p:
        _players(p["players"], f"{path}players")
    for i, win in enumerate(_list(p.get("wins", []), f"{path}wins", most=3)):
        where = f"{path}wins[{i}]"
        win = _object(win, where)
        _seat(win.get("seat"), f"{where}.seat")
        if win.get("from") is not None:
            _seat(win["from"], f"{where}.from")
        if "points" in win:
            _whole(win["points"], f"{where}.points", 0)
        if "name" in win:
            _text(win["name"], f"{where}.name", MAX_NAME)
    for i, seat in enumerate(_list(p.get("riichi_deposits", []), f"{path}riichi_deposits", most=4)):
        _seat(seat, f"{path}riichi_deposits[{i}]")
    _game(p, path)


def _final(p: Any, path: str) -> None:
    p = _object(p, path.rstrip(".") or "the result")
    ranking = _list(p.get("ranking"), f"{path}ranking", 4)
    seats = []
    for i, row in enumerate(ranking):
        where = f"{path}ranking[{i}]"
        row = _object(row, where)
        seats.append(_seat(row.get("seat"), f"{where}.seat"))
        _whole(row.get("place"), f"{where}.place", 1, 4)
        for key in ("points", "uma", "result"):
            _whole(row.get(key), f"{where}.{key}")
        for key in ("oka", "penalty"):
            if row.get(key) is not None:
                _whole(row[key], f"{where}.{key}")
        if row.get("name") is not None:
            _text(row["name"], f"{where}.name", MAX_NAME)
    if sorted(seats) != [0, 1, 2, 3]:
        raise Refused(f"{path}ranking must rank each of the four seats once, not seats {seats}")
    points = [row["points"] for row in ranking]
    for i, row in enumerate(ranking):  # a place the points give: ties may share a place or be split, no more
        above = sum(1 for x in points if x > row["points"])
        tied = sum(1 for x in points if x == row["points"])
        if not above + 1 <= row["place"] <= above + tied:
            given = str(above + 1) if tied == 1 else f"{above + 1} to {above + tied}"
            raise Refused(f"{path}ranking[{i}].place is {row['place']}, but its points ({row['points']}) give "
                          f"place {given}")
    _optional(p, "seq", path)
    _optional(p, "leftover_sticks", path)
    if "players" in p:
        _players(p["players"], f"{path}players")
    _game(p, path)


def check_result(payload: dict[str, Any]) -> None:
    """A ``results`` payload the records can keep, or :class:`Refused` naming the field that is not."""
    kind = payload.get("type")
    if kind == "hand_result":
        _hand(payload, "")
    elif kind == "game_result":
        _final(payload, "")
    elif kind == "results_replaced":
        _optional(payload, "seq", "")
        numbers = set()
        for i, r in enumerate(_list(payload.get("results"), "results", most=1000)):
            _hand(r, f"results[{i}].")
            number = r["number"] if isinstance(r.get("number"), int) else i  # as the collector numbers them
            if number in numbers:
                raise Refused(f"results[{i}].number {number} is given twice")
            numbers.add(number)
        if payload.get("final") is not None:
            _final(payload["final"], "final.")
        _game(payload, "")
