"""Payloads of the MQTT topics (see ``topics.py``), built from the engine's state and outputs.

The ``state`` payload is *public*: what anyone at the table can see (ponds,
melds, dora indicators, scores, riichi sticks, how many concealed tiles a
player holds), never a concealed tile, so it can go to a stream overlay
without spoiling the game.
"""

from __future__ import annotations

from typing import Any

from tablesvc.engine.results import GameResult, HandResult, RiichiAccepted, round_name
from tablesvc.engine.state import GameState
from tablesvc.journal import Entry
from tablesvc.mqtt.topics import SCHEMA_VERSION

__all__ = ["event_payload", "hand_id", "result_payload", "state_payload", "status_payload"]

_WINDS = "ESWN"


def hand_id(state: GameState) -> str:
    """A stable id of the current (or next) hand: ``E1-0`` plus the hand count, e.g. ``E2-1#5``."""
    return f"{round_name(state.round)}-{state.honba}#{state.hand_number + 1}"


def status_payload(online: bool, *, version: str, started: str, site: str, table: str) -> dict[str, Any]:
    return {"schema": SCHEMA_VERSION, "status": "online" if online else "offline", "version": version,
            "started": started, "site": site, "table": table}


def state_payload(state: GameState, seq: int) -> dict[str, Any]:
    h = state.hand
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
                melds=[{"kind": m.kind, "tiles": [t.mjai for t in m.tiles], "from": m.from_seat} for m in s.melds],
                concealed=s.count,
                dead=s.dead,
            )
        else:
            info.update(riichi=False, discards=[], melds=[], concealed=0, dead=False)
        seats.append(info)
    last = state.results[-1] if state.results else None
    return {
        "schema": SCHEMA_VERSION,
        "seq": seq,
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
        "last_result": result_payload(last, seq) if last is not None else None,
        "final": result_payload(state.final, seq) if isinstance(state.final, GameResult) else None,
    }


def event_payload(entry: Entry) -> dict[str, Any]:
    """One journal entry as published on ``events`` (consumers dedupe by ``seq``)."""
    return {"schema": SCHEMA_VERSION, "seq": entry.seq, "ts": entry.ts, "source": entry.source, "kind": entry.kind,
            "event": entry.body}


def result_payload(result: HandResult | GameResult | RiichiAccepted, seq: int) -> dict[str, Any]:
    if isinstance(result, HandResult):
        return {
            "schema": SCHEMA_VERSION,
            "seq": seq,
            "type": "hand_result",
            "hand": f"{round_name(result.round)}-{result.honba}",
            "result": result.kind,
            "draw": result.draw,
            "summary": result.describe(),
            "wins": [
                {"seat": w.seat, "from": w.from_seat, "han": w.han, "fu": w.fu, "limit": w.limit or None,
                 "points": w.points, "pao": w.pao, "yaku": [{"name": n, "han": v} for n, v in w.yaku]}
                for w in result.wins
            ],
            "tenpai": list(result.tenpai) if result.tenpai is not None else None,
            "chombo": result.chombo,
            "deltas": list(result.deltas),
            "riichi_deposits": list(result.deposits),
            "scores": list(result.scores),
            "dealer_continues": result.dealer_continues,
        }
    if isinstance(result, GameResult):
        return {
            "schema": SCHEMA_VERSION,
            "seq": seq,
            "type": "game_result",
            "scores": list(result.scores),
            "leftover_sticks": result.leftover_sticks,
            "ranking": [{"seat": s.seat, "place": s.place, "points": s.points, "uma": s.uma, "oka": s.oka,
                         "penalty": s.penalty, "result": s.result} for s in result.standings],
        }
    return {"schema": SCHEMA_VERSION, "seq": seq, "type": "riichi_accepted", "seat": result.seat,
            "scores": list(result.scores)}
