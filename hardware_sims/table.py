"""A table simulator: plays a game record the way a physical table shows it.

Dice, walls and hand start go out through the automatic table; declarations
(riichi, calls, ron, tsumo, tenpai, nine terminals, confirm) through the seat
panel; the tiles on the felt (pond, melds, dora indicators, hands laid down)
as camera observations, exactly what a camera over the table would report
and nothing more: never a concealed draw, never a concealed hand.

Where the outputs go is pluggable (:class:`TableOutputs`): straight into a
service in the same process, or through real serial devices (pseudo-
terminals) and a camera stand-in. ``speed`` paces the game: 1.0 is real
time (about a second per discard), 0 as fast as the service takes it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from tablesvc.engine.events import (
    AbortiveDraw,
    AddedKan,
    Call,
    ConcealedKan,
    DiceRolled,
    Discard,
    DoraRevealed,
    Draw,
    Event,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    Tsumo,
)
from tablesvc.formats.record import RecordedGame
from vision.table.observations import (
    CameraObservation,
    DoraIndicatorSeen,
    HandRevealed,
    KanAdded,
    MeldSeen,
    TileDiscarded,
    UraIndicatorsSeen,
)

__all__ = ["TableOutputs", "TableSimulator"]

CAMERA = "camera-sim"

# seconds of play per kind of moment at speed 1.0
_PACE = {"hand": 4.0, "discard": 1.0, "call": 1.5, "win": 3.0, "draw": 2.0}


class TableOutputs(Protocol):
    """Where the physical table's signals go."""

    def dice(self, d1: int, d2: int) -> None: ...
    def wall_ready(self) -> None: ...
    def hand_start(self) -> None: ...
    def button(self, seat: int, button: str) -> None: ...
    def camera(self, observation: CameraObservation) -> None: ...


class TableSimulator:
    """Plays ``record`` through ``outputs``; ``start_game`` is called with the seating first."""

    def __init__(self, record: RecordedGame, outputs: TableOutputs, *, speed: float = 0.0,
                 start_game: Callable[[GameStart], None] | None = None,
                 after_event: Callable[[Event], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``after_event`` is called with each record event once the table has shown it (the players at a
        stick tray pay then: :class:`~hardware_sims.sticks.StickPlayers`)."""
        self.record = record
        self.out = outputs
        self.after_event = after_event
        self.speed = speed
        self.start_game = start_game
        self.clock = clock
        self.stop_event = threading.Event()
        self._sideways_next = [False] * 4
        self._riichi_tile_pending: int | None = None
        self._dora_index = 0

    def stop(self) -> None:
        self.stop_event.set()

    def _pace(self, moment: str) -> None:
        if self.speed > 0:
            self.stop_event.wait(_PACE[moment] / self.speed)

    def _see(self, cls: type[CameraObservation], **fields: object) -> None:
        self.out.camera(cls(camera=CAMERA, timestamp=self.clock(), **fields))  # type: ignore[call-arg]

    def run(self) -> int:
        """Play the whole record; returns how many record events were shown."""
        shown = 0
        for event in self.record.events:
            if self.stop_event.is_set():
                break
            self.show(event)
            if self.after_event is not None:
                self.after_event(event)
            shown += 1
        return shown

    def show(self, e: Event) -> None:
        if isinstance(e, GameStart):
            if self.start_game is not None:
                self.start_game(e)
        elif isinstance(e, DiceRolled):
            self._pace("hand")
            self.out.dice(*e.dice)
        elif isinstance(e, HandStart):
            self._sideways_next = [False] * 4
            self._riichi_tile_pending = None
            self._dora_index = 0
            self.out.wall_ready()
            self.out.hand_start()
        elif isinstance(e, DoraRevealed):
            self._see(DoraIndicatorSeen, index=self._dora_index, tile=e.tile.mjai)
            self._dora_index += 1
        elif isinstance(e, Draw):
            pass  # a concealed draw: nothing to see
        elif isinstance(e, Discard):
            self._pace("discard")
            if e.riichi:
                self.out.button(e.seat, "riichi")
            sideways = e.riichi or self._sideways_next[e.seat]
            self._sideways_next[e.seat] = False
            self._riichi_tile_pending = e.seat if e.riichi else None
            self._see(TileDiscarded, seat=e.seat, tile=e.tile.mjai, sideways=sideways)
        elif isinstance(e, Call):
            self._pace("call")
            if self._riichi_tile_pending is not None:  # the riichi tile was taken: turn the next one
                self._sideways_next[self._riichi_tile_pending] = True
                self._riichi_tile_pending = None
            self.out.button(e.seat, e.kind)
            side = {3: "left", 2: "across", 1: "right"}[(e.from_seat - e.seat) % 4]
            self._see(MeldSeen, seat=e.seat, tiles=tuple(t.mjai for t in e.tiles), called=e.called.mjai,
                      from_side=side)
        elif isinstance(e, AddedKan):
            self._pace("call")
            self.out.button(e.seat, "kan")
            self._see(KanAdded, seat=e.seat, tile=e.tile.mjai)
        elif isinstance(e, ConcealedKan):
            self._pace("call")
            self.out.button(e.seat, "kan")
            self._see(MeldSeen, seat=e.seat, tiles=tuple(t.mjai for t in e.tiles))
        elif isinstance(e, Ron):
            self._pace("win")
            for claim in e.claims:
                self.out.button(claim.seat, "ron")
            for claim in e.claims:
                if claim.hand is not None:
                    self._see(HandRevealed, seat=claim.seat, tiles=tuple(t.mjai for t in claim.hand))
            if e.ura:
                self._see(UraIndicatorsSeen, tiles=tuple(t.mjai for t in e.ura))
            self.out.button(e.claims[0].seat, "confirm")
        elif isinstance(e, Tsumo):
            self._pace("win")
            self.out.button(e.seat, "tsumo")
            if e.hand is not None:
                win = e.win_tile.mjai if e.win_tile else None
                self._see(HandRevealed, seat=e.seat, tiles=tuple(t.mjai for t in e.hand), win_tile=win)
            if e.ura:
                self._see(UraIndicatorsSeen, tiles=tuple(t.mjai for t in e.ura))
            self.out.button(e.seat, "confirm")
        elif isinstance(e, ExhaustiveDraw):
            self._pace("draw")
            for seat in range(4):
                self.out.button(seat, "tenpai" if e.tenpai[seat] else "noten")
        elif isinstance(e, AbortiveDraw):
            self._pace("draw")
            if e.kind == "nine_terminals" and e.seat is not None:
                self.out.button(e.seat, "nine_terminals")
                self.out.button(e.seat, "confirm")
            else:
                self.out.button(0, "confirm")
        # rulings (chombo, dead hand, scores, end of game) come from a referee, not the table


class DirectOutputs:
    """Outputs handed straight to a callback as the observations the drivers would produce.

    For tests and benchmarks of everything above the serial line; the demo
    uses real pseudo-terminal devices instead.
    """

    def __init__(self, deliver: Callable[[object], None], *, table: str = "table-sim", panel: str = "panel-sim",
                 clock: Callable[[], float] = time.monotonic) -> None:
        from drivers import observations as obs

        self._obs = obs
        self._deliver = deliver
        self._table = table
        self._panel = panel
        self._clock = clock
        self._seq = 0

    def _next(self) -> dict:
        self._seq = (self._seq + 1) % 65536
        return {"seq": self._seq, "timestamp": self._clock()}

    def dice(self, d1: int, d2: int) -> None:
        self._deliver(self._obs.DiceRolled(device=self._table, d1=d1, d2=d2, **self._next()))

    def wall_ready(self) -> None:
        self._deliver(self._obs.WallReady(device=self._table, **self._next()))

    def hand_start(self) -> None:
        self._deliver(self._obs.HandStarted(device=self._table, **self._next()))

    def button(self, seat: int, button: str) -> None:
        self._deliver(self._obs.ButtonPressed(device=self._panel, seat=seat, button=self._obs.Button(button),
                                              **self._next()))

    def camera(self, observation: CameraObservation) -> None:
        self._deliver(observation)


class DeviceOutputs:
    """Outputs through real serial devices (pseudo-terminals) and a camera stand-in callback.

    Each device event waits for the host's acknowledgement before the next
    signal goes out, as a player waits for the panel's light: so the order
    in which the table showed things is the order the service learns them,
    across the two devices and the camera.
    """

    def __init__(self, table: object, panel: object, camera: Callable[[CameraObservation], None], *,
                 ack_timeout: float = 10.0) -> None:
        self.table = table
        self.panel = panel
        self._camera = camera
        self.ack_timeout = ack_timeout
        self.unacknowledged = 0

    def _wait(self, device: object, seq: int) -> None:
        if not device.wait_acked(seq, self.ack_timeout):  # type: ignore[attr-defined]
            self.unacknowledged += 1

    def dice(self, d1: int, d2: int) -> None:
        self._wait(self.table, self.table.roll_dice(d1, d2))  # type: ignore[attr-defined]

    def wall_ready(self) -> None:
        self._wait(self.table, self.table.wall_ready())  # type: ignore[attr-defined]

    def hand_start(self) -> None:
        self._wait(self.table, self.table.hand_started())  # type: ignore[attr-defined]

    def button(self, seat: int, button: str) -> None:
        self._wait(self.panel, self.panel.press(seat, button))  # type: ignore[attr-defined]

    def camera(self, observation: CameraObservation) -> None:
        self._camera(observation)
