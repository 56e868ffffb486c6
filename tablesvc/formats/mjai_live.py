"""The live game as an mjai event stream, one accepted event at a time (the ``mjai`` topic).

The file exporter (``mjai.export_mjai``) sees a whole record and may look
ahead; a live table cannot, so this converter takes each event with the
state just before it (``capture``) and the engine's outputs, and writes the
messages a server would have sent by then. It shares the exporter's writers
for wins and draws, so a live stream and an exported file agree. Kan dora
are written when the table turns them over. Corrections (undo, amend) have
no mjai form: a consumer that must follow them re-reads the ``state`` topic.
"""

from __future__ import annotations

from typing import Any

from tablesvc.engine.events import (
    AbortiveDraw,
    AddedKan,
    Call,
    Chombo,
    ConcealedKan,
    Discard,
    DoraRevealed,
    Draw,
    EndGame,
    Event,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    Tsumo,
)
from tablesvc.engine.results import GameResult, HandResult, Output, RiichiAccepted
from tablesvc.engine.state import Phase
from tablesvc.formats.mjai import UNKNOWN, WINDS, tile_names, write_draw, write_win
from tablesvc.formats.walk import Before, capture

__all__ = ["MjaiStream", "capture"]


class MjaiStream:
    def __init__(self) -> None:
        self._hands: tuple[tuple[Any, ...], ...] | None = None

    def messages(self, event: Event, before: Before, outputs: list[Output]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for o in outputs:  # the previous discard passed: its riichi stick is down
            if isinstance(o, RiichiAccepted):
                deltas = [0, 0, 0, 0]
                deltas[o.seat] = -1000
                out.append({"type": "reach_accepted", "actor": o.seat, "deltas": deltas, "scores": list(o.scores)})
        e = event
        if isinstance(e, GameStart):
            out.append({"type": "start_game", "names": list(e.players), "rules": e.rules})
        elif isinstance(e, HandStart):
            self._hands = e.hands
        elif isinstance(e, DoraRevealed):
            if before.phase is Phase.DEALING:
                tehais = ([tile_names(h) for h in self._hands] if self._hands is not None
                          else [[UNKNOWN] * 13 for _ in range(4)])
                out.append({"type": "start_kyoku", "bakaze": WINDS[(before.round // 4) % 4],
                            "dora_marker": e.tile.mjai, "kyoku": before.round % 4 + 1, "honba": before.honba,
                            "kyotaku": before.sticks, "oya": before.dealer, "scores": list(before.scores),
                            "tehais": tehais})
            else:
                out.append({"type": "dora", "dora_marker": e.tile.mjai})
        else:
            if before.implied_draw is not None:
                guess = e.tile if isinstance(e, Discard) and e.tsumogiri else (
                    e.win_tile if isinstance(e, Tsumo) else None)
                out.append({"type": "tsumo", "actor": before.implied_draw, "pai": guess.mjai if guess else UNKNOWN})
            self._play(e, before, outputs, out)
        return out

    @staticmethod
    def _play(e: Event, b: Before, outputs: list[Output], out: list[dict[str, Any]]) -> None:
        result = next((o for o in outputs if isinstance(o, HandResult)), None)
        final = next((o for o in outputs if isinstance(o, GameResult)), None)
        if isinstance(e, Draw):
            out.append({"type": "tsumo", "actor": e.seat, "pai": e.tile.mjai if e.tile else UNKNOWN})
        elif isinstance(e, Discard):
            if e.riichi:
                out.append({"type": "reach", "actor": e.seat})
            tsumogiri = e.tsumogiri if e.tsumogiri is not None else (b.drawn is not None and b.drawn == e.tile)
            out.append({"type": "dahai", "actor": e.seat, "pai": e.tile.mjai, "tsumogiri": bool(tsumogiri)})
        elif isinstance(e, Call):
            own = list(e.tiles)
            own.remove(e.called)
            kind = {"chi": "chi", "pon": "pon", "kan": "daiminkan"}[e.kind]
            out.append({"type": kind, "actor": e.seat, "target": e.from_seat, "pai": e.called.mjai,
                        "consumed": tile_names(own)})
        elif isinstance(e, AddedKan):
            consumed = tile_names(b.pon.tiles) if b.pon is not None else [e.tile.plain.mjai] * 3
            out.append({"type": "kakan", "actor": e.seat, "pai": e.tile.mjai, "consumed": consumed})
        elif isinstance(e, ConcealedKan):
            out.append({"type": "ankan", "actor": e.seat, "consumed": tile_names(e.tiles)})
        elif isinstance(e, Ron | Tsumo) and result is not None:
            write_win(out, e, b, result)
        elif isinstance(e, ExhaustiveDraw | AbortiveDraw | Chombo) and result is not None:
            write_draw(out, e, b, result)
        elif isinstance(e, EndGame) and final is not None:
            out.append({"type": "end_game", "reason": e.reason or "ended by the referee",
                        "scores": list(final.scores)})
            return
        if result is not None:
            out.append({"type": "end_kyoku"})
        if final is not None:
            out.append({"type": "end_game", "scores": list(final.scores)})
