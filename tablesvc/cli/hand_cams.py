"""``tablesvc demo --hand-cams``: a whole generated table through the four seat cameras.

Each seat's standing hand is rendered as its webcam sees it (``hardware_sims.hand_render``: 20-70 degrees
above the table, the room's light drifting, webcam noise, hands reaching in), read by ``vision.seat``
with the club's set enrolled from that camera, and decoded under what the engine knows. After every hand
each seat's hand as read is printed beside the truth (``?`` a tile not yet sure, ``!`` a wrong one).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter

__all__ = ["add_hand_cams", "run_hand_cams"]


def add_hand_cams(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hand-cams", action="store_true",
                        help="read every seat's standing hand through four rendered seat cameras (enrolled from "
                        "themselves) and print each hand as read beside the truth, hand by hand; no broker or "
                        "pages (with --seed, --hands)")  # fmt: skip


def run_hand_cams(args: argparse.Namespace) -> int:
    from hardware_sims.generator import GeneratorOptions, generate_game
    from hardware_sims.seat_cams import SeatCams
    from hardware_sims.tile_art import drawn_tile_set

    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    hands = args.hands if args.hands is not None else 2
    print(f"tablesvc demo --hand-cams: game seed {seed}, {hands} hand(s); enrolling each seat camera from the "
          "37 kinds stood in three rows...", flush=True)
    cams = SeatCams(drawn_tile_set(), seed=seed, squeeze=True)
    for seat, pose in enumerate(cams.poses):
        squeezed = cams.squeeze[seat]
        size = f"{squeezed[0]}x{squeezed[1]} (squeezed)" if squeezed else "x".join(map(str, pose.image_size))
        print(f"  seat {'ESWN'[seat]}: camera {pose.elevation_deg:.0f} degrees up, {pose.distance_mm:.0f} mm, {size}")
    last: dict[int, object] = {}
    totals = Counter()
    hand_no = 0

    def show() -> None:
        print(f"hand {hand_no}: each seat's last state, read | truth")
        for seat in range(4):
            r = last.get(seat)
            if r is None:
                continue
            truth = list(r.truth.tiles) + ([f"+{r.truth.drawn}"] if r.truth.drawn else [])
            published = Counter(r.reading.tiles) + (Counter([r.reading.drawn]) if r.reading.drawn else Counter())
            wrong = published - (Counter(r.truth.tiles) + (Counter([r.truth.drawn]) if r.truth.drawn else Counter()))
            read = [t + ("!" if wrong[t] else "") for t in r.reading.tiles] + ["?"] * r.reading.unknown
            if r.reading.drawn:
                read.append(f"+{r.reading.drawn}")
            elif r.reading.drawn_unknown:
                read.append("+?")
            verdict = "exact" if r.exact else f"{r.reading.unknown + r.reading.drawn_unknown} unsure, {r.wrong} wrong"
            print(f"  {'ESWN'[seat]}  read  {' '.join(read)}\n     truth {' '.join(truth)}   ({verdict})")
        sys.stdout.flush()

    current = None
    # the generator's first hands are the same whether it plays on or stops: it plays only those shown
    game = generate_game(seed, GeneratorOptions(max_hands=hands) if hands else None)
    for result in cams.play(game, max_hands=hands):
        if result.hand_id != current:
            if current is not None:
                show()
            current, hand_no = result.hand_id, hand_no + 1
            last.clear()
        last[result.seat] = result
        totals["states"] += 1
        totals["exact"] += result.exact
        totals["wrong"] += result.wrong
    if last:
        show()
    n = max(1, totals["states"])
    print(f"{totals['states']} hand states read: {totals['exact']} exact ({100 * totals['exact'] / n:.1f} %), "
          f"{totals['wrong']} tiles published wrong")
    return 0 if totals["wrong"] == 0 else 1
