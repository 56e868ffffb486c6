"""The ``broadcast/hands`` payload: every hand with its analysis, for a broadcast's scenes only.

Pure: the state, the hands and the analysis in, one JSON-ready dict out
(``docs/schemas/broadcast-hands.json``). Seats are named by their place at
the table, E S W N for seats 0-3, in that order; ``wind`` is the seat's wind
in the hand. Tiles are mjai names as :mod:`tablesvc.tiles` writes them (red
fives ``5mr``); the keys of ``waits`` and ``ukeire`` are kinds, written
plain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tablesvc.analysis.seats import SeatAnalysis
from tablesvc.engine.results import round_name
from tablesvc.engine.state import GameState
from tablesvc.tiles import Tile

__all__ = ["SEAT_LETTERS", "hands_payload", "seat_json"]

SEAT_LETTERS = "ESWN"
_KIND_NAMES = [Tile.of(k).mjai for k in range(34)]


def _sorted(tiles: Sequence[Tile]) -> list[str]:
    return [t.mjai for t in sorted(tiles, key=lambda t: (t.kind, t.red))]


def seat_json(a: SeatAnalysis | None) -> dict[str, Any]:
    """One seat's analysis fields (empty ones where the hand is unknown)."""
    if a is None:
        return {"shanten": None, "waits": {}, "karaten": False, "furiten": False, "ukeire": {}, "deal_in": {}}
    return {
        "shanten": a.shanten,
        "waits": {_KIND_NAMES[k]: {"wall": w.wall, "unseen": w.unseen} for k, w in sorted(a.waits.items())},
        "karaten": a.karaten,
        "furiten": a.furiten,
        "ukeire": {_KIND_NAMES[k]: n for k, n in sorted(a.ukeire.items())},
        "deal_in": {t.mjai: [{"seat": SEAT_LETTERS[d.seat], "points": d.points} for d in ds]
                    for t, ds in a.deal_in.items()},
    }


def hands_payload(state: GameState, hands: Sequence[Sequence[Tile] | None], analysis: Sequence[SeatAnalysis | None],
                  *, seq: int, ts: float, delay_s: float, drawn: Sequence[Tile | None] | None = None
                  ) -> dict[str, Any] | None:
    """The payload after journal entry ``seq`` (at unix time ``ts``); None outside a hand. ``drawn``: each
    seat's drawn tile where the state does not know it."""
    h = state.hand
    if h is None:
        return None
    seats = []
    for seat in range(4):
        s = h.seats[seat]
        hand = hands[seat]
        tile = drawn[seat] if drawn is not None else s.drawn
        if hand is None or tile is None or tile not in hand or len(hand) % 3 != 2:
            tile = None
        concealed = list(hand) if hand is not None else []
        if tile is not None:
            concealed.remove(tile)
        seats.append({
            "seat": SEAT_LETTERS[seat],
            "wind": SEAT_LETTERS[(seat - h.dealer) % 4],
            "name": state.players[seat],
            "score": state.scores[seat],
            "riichi": s.riichi,
            "concealed": _sorted(concealed) if hand is not None else None,
            "drawn": tile.mjai if tile is not None else None,
            "melds": [{"kind": _MELD_KINDS[m.kind], "tiles": [t.mjai for t in m.tiles],
                       "called": m.called.mjai if m.called is not None else None,
                       "from": SEAT_LETTERS[m.from_seat] if m.from_seat is not None else None} for m in s.melds],
            **seat_json(analysis[seat]),
        })
    return {
        "schema": 1,
        "ts": round(ts, 3),
        "seq": seq,
        "hand_id": f"{round_name(h.round)}-{h.honba}#{state.hand_number + 1}",
        "delay_s": delay_s,
        "round": round_name(h.round),
        "honba": h.honba,
        "sticks": h.sticks,
        "wall": h.wall,
        "dora": [t.mjai for t in h.dora],
        "turn": SEAT_LETTERS[h.turn] if h.step.value in ("discard", "draw") else None,
        "seats": seats,
    }


_MELD_KINDS = {"chi": "chi", "pon": "pon", "kan": "open_kan", "ankan": "closed_kan", "kakan": "added_kan"}
