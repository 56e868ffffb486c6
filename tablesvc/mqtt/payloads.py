"""Payloads of the MQTT topics (see ``topics.py``), built from the engine's state and outputs.

The ``state`` payload is *public*: what anyone at the table can see (ponds,
melds, dora indicators, scores, riichi sticks, how many concealed tiles a
player holds), never a concealed tile, so it can go to a stream overlay
without spoiling the game. A winning hand is shown at the table, so the
``results`` (and ``state.last_result``) carry it.

One notation on every topic: tiles in mjai notation (``1m``..``9s``, red
fives ``5mr 5pr 5sr``, honours ``E S W N P F C``), groups of tiles as JSON
lists of them. One time format: ISO 8601 in UTC with milliseconds
(``2026-11-23T23:12:11.042Z``), see :func:`iso_time`. Every payload is
described by a JSON Schema in ``docs/schemas/<topic>.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from tablesvc.engine.clock import Clock
from tablesvc.engine.events import EVENT_TYPES, from_dict, to_dict
from tablesvc.engine.results import GameResult, HandResult, RiichiAccepted, round_name
from tablesvc.engine.state import GameState, Phase
from tablesvc.mqtt.topics import SCHEMA_VERSION
from tablesvc.rules.conditions import Price, SeatConditions, all_last_conditions, describe, target_line
from tablesvc.rules.ruleset import UnknownRuleSetError, get_ruleset
from tablesvc.storage.journal import Entry

__all__ = ["all_last", "clock_payload", "event_payload", "hand_id", "iso_time", "result_payload", "state_payload",
           "status_payload", "wire_event"]

_WINDS = "ESWN"


def hand_id(state: GameState) -> str:
    """A stable id of the current (or next) hand: ``E1-0`` plus the hand count, e.g. ``E2-1#5``."""
    return f"{round_name(state.round)}-{state.honba}#{state.hand_number + 1}"


def iso_time(epoch: float) -> str:
    """A wall-clock time as every topic writes it: ISO 8601, UTC, milliseconds, ``Z``.

    Chosen over epoch seconds because a person reading ``mosquitto_sub`` or a log sees the time at once,
    JavaScript's ``Date.parse`` and Python's ``datetime.fromisoformat`` read it as is, it sorts as text,
    and it cannot be mistaken for milliseconds (the epoch unit of JavaScript) or seconds (Python's)."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def wire_event(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """A journal entry's body in the notation of the feed: an event (or the event of an ``amend``) is read and
    written again, so a journal written with compact hand strings is published in mjai lists all the same."""
    try:
        if kind in EVENT_TYPES:
            return to_dict(from_dict(body))
        if kind == "amend" and isinstance(body.get("event"), dict):
            return {**body, "event": to_dict(from_dict(body["event"]))}
    except ValueError:
        pass  # the journal's own text, as written (the table refuses an unreadable journal before this)
    return body


def status_payload(online: bool, *, version: str, started: str, site: str, table: str) -> dict[str, Any]:
    return {"schema": SCHEMA_VERSION, "status": "online" if online else "offline", "version": version,
            "started": started, "site": site, "table": table}


def state_payload(state: GameState, seq: int, *, ts: float | None = None,
                  result_seqs: Sequence[int] | None = None, final_seq: int | None = None) -> dict[str, Any]:
    """The retained snapshot after journal entry ``seq`` (written at ``ts``). ``result_seqs`` gives the seq of
    the entry that ended each finished hand and ``final_seq`` the game's, so ``last_result`` and ``final``
    keep the seq they were published with. In the game's last hand it carries the all-last conditions."""
    h = state.hand
    players = list(state.players)
    seats = []
    for seat in range(4):
        info: dict[str, Any] = {
            "seat": seat,
            "name": state.players[seat],
            "wind": _WINDS[(seat - state.dealer) % 4],
            "score": state.scores[seat],
        }
        if h is not None:
            s = h.seats[seat]
            info.update(
                riichi=s.riichi,
                discards=[{"tile": p.tile.mjai, "riichi": p.riichi, "called": p.called} for p in s.pond],
                melds=[{"kind": m.kind, "tiles": [t.mjai for t in m.tiles],
                        "called": m.called.mjai if m.called is not None else None, "from": m.from_seat}
                       for m in s.melds],
                concealed=s.count,
                dead=s.dead,
            )
        else:
            info.update(riichi=False, discards=[], melds=[], concealed=0, dead=False)
        seats.append(info)
    last = state.results[-1] if state.results else None
    conditions = all_last(state)
    last_seq = result_seqs[len(state.results) - 1] if result_seqs and len(result_seqs) == len(state.results) else seq
    return {
        "schema": SCHEMA_VERSION,
        "seq": seq,
        "ts": iso_time(ts) if ts is not None else None,
        "hand_id": hand_id(state) if h is None else f"{round_name(h.round)}-{h.honba}#{state.hand_number + 1}",
        "phase": state.phase.value,
        "rules": state.rules,
        "round": round_name(state.round if h is None else h.round),
        "honba": state.honba if h is None else h.honba,
        "sticks": state.sticks if h is None else h.sticks,
        "dealer": state.dealer,
        "turn": h.turn if h is not None else None,
        "step": h.step.value if h is not None else None,
        "wall": h.wall if h is not None else None,
        "dora": [t.mjai for t in h.dora] if h is not None else [],
        "seats": seats,
        "last_result": result_payload(last, last_seq, players) if last is not None else None,
        "final": (result_payload(state.final, final_seq if final_seq is not None else seq, players)
                  if isinstance(state.final, GameResult) else None),
        "conditions": describe(conditions, players) if conditions is not None else None,
        "conditions_detail": [_condition_detail(c, players) for c in conditions] if conditions is not None else None,
        "clock": clock_payload(state.clock, ts),
    }


def clock_payload(clock: Clock | None, ts: float | None) -> dict[str, Any] | None:
    """The tournament clock in the state: its deadline (pages count down to it) and what ``remaining_s`` was
    at ``ts``, the time of the state, for a reader without a clock of its own."""
    if clock is None:
        return None
    remaining = clock.remaining(ts) if ts is not None else None
    return {
        "deadline": iso_time(clock.deadline) if clock.deadline is not None else None,
        "remaining_s": round(remaining, 3) if remaining is not None else None,
        "minutes": clock.minutes,
        "extended": clock.extended,
        "rule": clock.rule.value,
        "more_hands": clock.more_hands,
        "added": clock.added,
        "time_up": clock.time_up,
        "hands_left": clock.hands_left,
    }


def all_last(state: GameState) -> tuple[SeatConditions, ...] | None:
    """The all-last conditions of the hand being played (or about to be dealt), when it can end the game."""
    if state.phase not in (Phase.BETWEEN_HANDS, Phase.DEALING, Phase.PLAYING):
        return None
    h = state.hand
    try:
        rules = get_ruleset(state.rules)
    except UnknownRuleSetError:  # the engine refused such a game at its start: nothing to say
        return None
    return all_last_conditions(
        rules, state.round if h is None else h.round, state.scores, state.dealer if h is None else h.dealer,
        honba=state.honba if h is None else h.honba, sticks=state.sticks if h is None else h.sticks,
        penalties=state.penalties, dead=tuple(s.dead for s in h.seats) if h is not None else (False,) * 4,
        first_dealer=state.first_dealer)


def _condition_detail(c: SeatConditions, players: Sequence[str]) -> dict[str, Any]:
    def price(p: Price) -> dict[str, Any]:
        return {"han": p.han, "fu": p.fu, "limit": p.limit.value or None}

    return {
        "seat": c.seat, "name": players[c.seat], "place": c.place, "dealer": c.dealer,
        "dealer_keeps": c.dealer_keeps, "dead": c.dead,
        "targets": [{
            "place": t.place,
            "tsumo": ({**price(t.tsumo.price), "points": t.tsumo.points, "text": t.tsumo.text}
                      if t.tsumo is not None else None),
            "ron": [{"from": r.from_seat, "from_name": players[r.from_seat], **price(r.price), "points": r.points,
                     "text": f"{r.value} from {players[r.from_seat]}"} for r in t.ron],
            "draw": t.draw, "draw_noten": list(t.draw_noten), "draw_tenpai": list(t.draw_tenpai),
            "text": target_line(t, players),
        } for t in c.targets],
    }


def event_payload(entry: Entry) -> dict[str, Any]:
    """One journal entry as published on ``events`` (consumers dedupe by ``seq``)."""
    return {"schema": SCHEMA_VERSION, "seq": entry.seq, "ts": iso_time(entry.ts), "source": entry.source,
            "kind": entry.kind, "event": wire_event(entry.kind, entry.body)}


def result_payload(result: HandResult | GameResult | RiichiAccepted, seq: int,
                   players: Sequence[str]) -> dict[str, Any]:
    """A result as published on ``results``; ``seq`` is the journal entry that produced it. Seats come with the
    players' names (``players`` by seat) so a consumer needs no other topic to write them."""
    names = list(players)

    def name(seat: int | None) -> str | None:
        return names[seat] if seat is not None else None

    if isinstance(result, HandResult):
        return {
            "schema": SCHEMA_VERSION,
            "seq": seq,
            "type": "hand_result",
            "hand": f"{round_name(result.round)}-{result.honba}",
            "hand_id": f"{round_name(result.round)}-{result.honba}#{result.hand_number + 1}",
            "round": round_name(result.round),
            "honba": result.honba,
            "sticks": result.sticks,
            "dealer": result.dealer,
            "players": names,
            "result": result.kind,
            "draw": result.draw,
            "summary": result.describe(tuple(names)),
            "dora": [t.mjai for t in result.dora],
            "ura": [t.mjai for t in result.ura],
            "wins": [
                {"seat": w.seat, "name": name(w.seat), "from": w.from_seat, "from_name": name(w.from_seat),
                 "han": w.han, "fu": w.fu, "limit": w.limit or None, "points": w.points, "pao": w.pao,
                 "pao_name": name(w.pao), "yaku": [{"name": n, "han": v} for n, v in w.yaku],
                 "hand": [t.mjai for t in w.hand], "win_tile": w.win_tile.mjai if w.win_tile is not None else None,
                 "melds": [{"kind": m.kind, "tiles": [t.mjai for t in m.tiles],
                            "called": m.called.mjai if m.called is not None else None, "from": m.from_seat}
                           for m in w.melds]}
                for w in result.wins
            ],
            "tenpai": list(result.tenpai) if result.tenpai is not None else None,
            "chombo": result.chombo,
            "chombo_name": name(result.chombo),
            "deltas": list(result.deltas),
            "riichi_deposits": list(result.deposits),
            "opened": list(result.opened) if len(result.opened) == 4 else None,
            "scores": list(result.scores),
            "dealer_continues": result.dealer_continues,
        }
    if isinstance(result, GameResult):
        return {
            "schema": SCHEMA_VERSION,
            "seq": seq,
            "type": "game_result",
            "players": names,
            "scores": list(result.scores),
            "leftover_sticks": result.leftover_sticks,
            "ended": result.ended,
            "ranking": [{"seat": s.seat, "name": names[s.seat], "place": s.place, "points": s.points, "uma": s.uma,
                         "oka": s.oka, "penalty": s.penalty, "result": s.result} for s in result.standings],
        }
    return {"schema": SCHEMA_VERSION, "seq": seq, "type": "riichi_accepted", "seat": result.seat,
            "name": names[result.seat], "scores": list(result.scores)}
