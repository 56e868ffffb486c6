"""The score sticks as a second witness, over many generated games: is every mispayment caught in its hand, with
the right seats and amount, and does a game paid right raise nothing?

    python bench/sticks.py [--games 100] [--quick]

Each generated game is played twice through the service's own comparison (``tablesvc.stickwatch.StickWatch``
with ``tablesvc.sticks.Reconciler``) and the simulator's players (``hardware_sims.sticks.StickPlayers``), on a
simulated clock (a second per event, each settled reading half a second after the event that moved the sticks):
once paid right, once with one hand (chosen at random among those that move points) paid short by a random
amount. The pseudo-terminals are left out (``tests/test_sticks_service.py`` covers them end to end); what is
measured is the comparison: alerts caught, where, and false alarms.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import logging
import random
import time
from typing import Any

from drivers.observations import TraysRead
from hardware_sims.generator import generate_game
from hardware_sims.sticks import Mispayment, StickPlayers
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import HandStart
from tablesvc.stickwatch import StickWatch


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Tray:
    """What StickPlayers needs of a tray; each change is a settled reading handed to the watch half a second on."""

    def __init__(self, watch: StickWatch, clock: _Clock) -> None:
        self.watch, self.clock = watch, clock
        self.trays, self.riichi = (0, 0, 0, 0), 0
        self.readings = 0

    def set_trays(self, trays: Any, riichi: int) -> None:
        if (tuple(trays), riichi) == (self.trays, self.riichi):
            return  # nothing moved: a reader sends nothing
        self.trays, self.riichi = tuple(trays), riichi
        self.clock.now += 0.5
        self.readings += 1
        self.watch.reading(TraysRead(device="STK1", seq=self.readings % 65536, timestamp=self.clock.now,
                                     trays=self.trays, riichi=riichi))

    def wait_reported(self, timeout: float = 0.0) -> bool:  # noqa: ARG002 - StickTray's signature
        return True


def play(record: Any, mispay: Mispayment | None) -> dict[str, Any]:
    """One game through the comparison; what was published."""
    clock = _Clock()
    published: list[dict[str, Any]] = []
    watch = StickWatch("sticks", published.append, wall_clock=time.time, clock=clock)
    tray = _Tray(watch, clock)
    players = StickPlayers(tray, mispay=mispay)  # type: ignore[arg-type]
    service = Engine()
    hand = 0
    caught_at = None
    for event in record.events:
        clock.now += 1.0
        outputs = service.apply(event)
        if isinstance(event, HandStart):
            hand += 1
        before = len(published)
        watch.after(event.type, outputs, service.state)
        players(event)
        watch.tick()
        if caught_at is None and any(p["status"] == "mismatch" for p in published[before:]):
            caught_at = hand
    statuses = [p["status"] for p in published]
    first = next((p for p in published if p["status"] == "mismatch"), None)
    below_zero = any("below zero" in p["text"] for p in published)
    return {"record": record, "players": players, "first": first, "caught_at": caught_at,
            "mismatches": statuses.count("mismatch"), "faults": statuses.count("fault"), "readings": tray.readings,
            "hands": len(record.hands), "below_zero": below_zero}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="8 games (what the tests run)")
    args = parser.parse_args()
    logging.getLogger("tablesvc.stickwatch").setLevel(logging.ERROR)  # each alert is logged: thousands here
    games = 8 if args.quick else args.games
    rng = random.Random(19)
    right_alerts = right_faults = hands = readings = 0
    caught = in_its_hand = later_below_zero = missed_below_zero = exact = wrong_faults = 0
    delays: list[int] = []
    start = time.perf_counter()
    for seed in range(1, games + 1):
        record = generate_game(seed)
        paid_right = play(record, None)
        right_alerts += paid_right["mismatches"]
        right_faults += paid_right["faults"]
        hands += paid_right["hands"]
        readings += paid_right["readings"]
        moving = [i + 1 for i, h in enumerate(paid_right["record"].hands[:-1])
                  if h.deltas is not None and any(h.deltas)]  # the last hand has no next one to be caught at
        target = rng.choice(moving)
        points = 100 * rng.randint(1, 80)
        wrong = play(record, Mispayment(hand=target, points=points))
        wrong_faults += wrong["faults"]
        mispaid, first = wrong["players"].mispaid, wrong["first"]
        if first is None or mispaid is None:
            missed_below_zero += wrong["below_zero"]
            continue
        caught += 1
        _, payer, payee, _ = mispaid
        if first["check"].startswith(f"the payments of hand {target} "):
            in_its_hand += 1
            delays.append(wrong["caught_at"] - target)
        elif wrong["below_zero"]:
            later_below_zero += 1
        if {(d["seat"], d["difference"]) for d in first["differences"]} == {(payer, points), (payee, -points)}:
            exact += 1
    seconds = time.perf_counter() - start
    print(f"games                         {games} generated, {hands} hands, {readings} settled readings (paid right)")
    print(f"games paid right              {right_alerts} score alerts, {right_faults} reader faults")
    print(f"one hand paid short           {caught}/{games} caught, {in_its_hand}/{games} in their hand, "
          f"{exact}/{games} with the right seats and amount")
    print(f"caught later                  {later_below_zero}/{games}: paid while a player was below zero, which no "
          "tray shows (caught once every score is above it)")
    print(f"not caught                    {games - caught}/{games}, {missed_below_zero} of them while a player was "
          "below zero to the game's end (not compared: no tray holds less than nothing)")
    print(f"reader faults after them      {wrong_faults} (a short-paid tray later asked to pay out more than it "
          "holds: the table no longer adds up)")
    print(f"raised when                   {sum(1 for d in delays if d == 1)}/{len(delays)} as the next hand "
          "started (the payments over)")
    print(f"time                          {seconds:.1f} s for {2 * games} games (generation included)")


if __name__ == "__main__":
    main()
