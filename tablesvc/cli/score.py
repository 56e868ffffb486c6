"""``tablesvc score``: value one hand, or a JSON-lines batch of hands."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from tablesvc.cli.arguments import rules_argument
from tablesvc.scorecard import FLAGS, ScoreRequest, score

NAME = "score"
log = logging.getLogger(__name__)

_EPILOG = """\
examples:
  tablesvc score 234m22406p345678s --win 8s --tsumo --riichi --dora 1p --seat S --round E
  tablesvc score 123m456p789s99s --meld pon:PPP --win 9s --ron --rules ema2016 --json
  tablesvc score --batch hands.jsonl --rules tenhou      # '-' reads standard input
  tablesvc score --photo hand.jpg --tsumo --riichi --dora 3m   # the hand as laid in a photo

tiles: 1m..9m 1p..9p 1s..9s, red fives 0m 0p 0s (or 5mr), honours 1z..7z or E S W N P F C
(P white, F green, C red dragon). The hand is the concealed tiles with the winning tile
(written without it, it is added). Melds: KIND:TILES with KIND chi, pon, kan (open),
ankan (concealed) or kakan (added), e.g. pon:PPP chi:345s ankan:1111m.

--batch: one JSON object per line, keys are the long options with '-' as '_'
({"hand": "234m22406p345678s", "win": "8s", "tsumo": true, "dora": ["1p"]}); one JSON
object per line out, {"error": ...} for a line that cannot be scored.

--photo: the tiles are read from a photo of the hand as laid (tablesvc vision read): the
largest group is the concealed part, groups of 3 or 4 set apart are melds (pon, chi, kan; a
concealed kan shows two backs), the tile set apart alone is the winning tile (or give --win).
What was read is printed first, then each tile numbered (1, 2, ... in reading order; 5p? a
tile the reader is not sure of, taken as its best guess unless corrected; ? unknown; # a back);
a photo without a valid hand prints what it read and why. Corrections use those numbers:
  --fix 5=9s        tile 5 is a 9s (repeat, or --fix 5=9s,7=E)
  --add 7p          a tile the reader missed, in the concealed part (--add 7p@12: after tile 12)
  --remove 14       tile 14 is no tile of the hand (repeat, or --remove 14,15)
  --apart 12-14     tiles 12..14 lie apart: a meld set apart, or --apart 14 the winning tile
  --join 7          tile 7's group joins the one before (a gap the reader took for a meld's)
On a terminal, each tile not sure is asked for (Enter takes the best guess), then any other
correction in the same words (fix 5=9s, add 7p, remove 14, apart 12-14, join 7); --no-ask never
asks.

exit status: 0 scored, 1 the hand is invalid or not a win under the rules (the message says
why), 2 bad command line, or a photo that holds no hand to score, 3 the tile finder (--photo)
is not installed.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="score a winning hand under a rule set",
        description="Score a winning riichi hand exactly: yaku, han, fu, limit and who pays what.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("hand", nargs="?", help="concealed tiles including the winning tile, e.g. 234m22406p345678s")
    p.add_argument("--win", metavar="TILE", help="the winning tile")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--ron", action="store_true", help="won on a discard (the default)")
    how.add_argument("--tsumo", action="store_true", help="won by self-draw")
    p.add_argument("--meld", action="append", metavar="KIND:TILES", help="a declared set; repeat for each")
    p.add_argument("--dora", action="append", metavar="TILE", help="a dora indicator; repeat for kan dora")
    p.add_argument("--ura", action="append", metavar="TILE", help="an ura dora indicator (counts with riichi)")
    p.add_argument("--seat", default="S", choices="ESWN", help="the winner's seat wind (default: S, a non-dealer)")
    p.add_argument("--round", default="E", choices="ESWN", help="the round wind (default: E)")
    for flag in FLAGS:
        p.add_argument(f"--{flag.replace('_', '-')}", action="store_true", help=_FLAG_HELP[flag])
    p.add_argument("--honba", type=int, default=0, metavar="N", help="counters on the table (300 each)")
    p.add_argument("--sticks", type=int, default=0, metavar="N", help="riichi sticks on the table (1000 each)")
    p.add_argument("--from", dest="from_", choices="ESWN", help="the discarder's seat, to name them in payments")
    p.add_argument("--pao", choices="ESWN", help="seat liable (pao) for Big Three Dragons / Big Four Winds")
    p.add_argument("--rules", default="ema2012", type=rules_argument,
                   help="rule set: a preset (ema2012, ema2016, ema2025, tenhou), house rules after it as in "
                   "'ema2016; kiriage=yes' (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a card")
    p.add_argument("--batch", metavar="FILE", help="score a JSON-lines file ('-' = standard input)")
    p.add_argument("--photo", metavar="PHOTO", help="read the hand from a photo of it as laid (see below)")
    p.add_argument("--fix", action="append", metavar="N=TILE", help="with --photo: tile N (as printed) is TILE")
    p.add_argument("--add", action="append", metavar="TILE[@N]", help="with --photo: a tile the reader missed")
    p.add_argument("--remove", action="append", metavar="N", help="with --photo: tile N is no tile of the hand")
    p.add_argument("--apart", action="append", metavar="N[-M]", help="with --photo: tiles N..M lie apart (a meld, "
                   "or the winning tile)")
    p.add_argument("--join", action="append", metavar="N", help="with --photo: tile N's group joins the one before it")
    p.add_argument("--no-ask", action="store_true", help="with --photo: never ask on a terminal")
    from tablesvc.cli.vision import _photo_options

    _photo_options(p)
    p.set_defaults(run=run)


_FLAG_HELP = {
    "riichi": "riichi was declared",
    "double_riichi": "double riichi (riichi on the first uninterrupted turn)",
    "ippatsu": "won within one go-around of riichi",
    "haitei": "tsumo on the last wall tile",
    "houtei": "ron on the last discard",
    "rinshan": "tsumo on a kan replacement tile",
    "chankan": "ron by robbing a kan",
    "tenhou": "dealer's win on the dealt hand",
    "chiihou": "non-dealer's tsumo on the first draw",
    "renhou": "non-dealer's ron before their first draw",
    "nagashi": "nagashi mangan (no hand needed)",
}


def _mapping(args: argparse.Namespace) -> dict[str, Any]:
    data: dict[str, Any] = {
        "hand": args.hand,
        "win": args.win,
        "tsumo": args.tsumo,
        "ron": args.ron,
        "meld": args.meld or [],
        "dora": args.dora or [],
        "ura": args.ura or [],
        "seat": args.seat,
        "round": args.round,
        "honba": args.honba,
        "sticks": args.sticks,
        "rules": args.rules,
        "from": args.from_,
        "pao": args.pao,
    }
    data.update({flag: getattr(args, flag) for flag in FLAGS})
    return data


def run(args: argparse.Namespace) -> int:
    if args.batch:
        if args.hand:
            print("tablesvc score: give either a hand or --batch FILE, not both", file=sys.stderr)
            return 2
        return run_batch(args.batch, args.rules, sys.stdout)
    if not args.photo and (args.fix or args.add or args.remove or args.apart or args.join):
        print("tablesvc score: --fix, --add, --remove, --apart and --join correct a photo's tiles: give --photo PHOTO",
              file=sys.stderr)
        return 2
    if args.photo:
        if args.hand:
            print("tablesvc score: give either a hand or --photo PHOTO, not both", file=sys.stderr)
            return 2
        return run_photo(args)
    try:
        answer = score(ScoreRequest.from_mapping(_mapping(args)))
    except ValueError as exc:
        print(f"tablesvc score: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(answer.to_json()) if args.json else answer.card())
    return 0


def _corrections(args: argparse.Namespace):
    """The corrections given on the command line (:class:`tablesvc.photo_fix.Corrections`)."""
    from tablesvc.photo_fix import Corrections

    fixes = Corrections()
    for word, values in (("fix", args.fix), ("add", args.add), ("remove", args.remove), ("apart", args.apart),
                         ("join", args.join)):
        for value in values or ():
            for part in value.split(",") if word in ("fix", "remove") else [value]:
                if part.strip():
                    fixes.add(f"{word} {part.strip()}")
    return fixes


def _ask(groups, stdin: TextIO, stdout: TextIO):
    """On a terminal: each tile not sure asked for (Enter takes the best guess), then free corrections."""
    from tablesvc.photo_fix import BadCorrection, Corrections, Tile, _tile_name

    fixed: list[list[Tile | None]] = [list(g) for g in groups]
    number = 0
    for g in fixed:
        for k, t in enumerate(g):
            number += 1
            if t is None or not t.face_up or t.sure:
                continue
            guesses = " ".join(t.guesses) or "none"
            default = t.tile or (t.guesses[0] if t.guesses else "")
            while True:
                stdout.write(f"tile {number} is not sure (best guesses: {guesses}); which tile is it? "
                             f"[Enter: {default or 'none'}, - : not a tile] ")
                stdout.flush()
                answer = stdin.readline()
                if not answer:  # the input ended: what was given so far
                    return [[t for t in g if t is not None] for g in fixed if any(t is not None for t in g)]
                answer = answer.strip()
                if answer == "-":
                    g[k] = None  # not a tile: removed below
                    break
                try:
                    name = _tile_name(answer or default, f"tile {number}")
                except BadCorrection as exc:
                    stdout.write(f"  {exc}\n")
                    continue
                g[k] = Tile(name, True, True, ())
                break
    kept = [[t for t in g if t is not None] for g in fixed]
    kept = [g for g in kept if g]
    while True:
        stdout.write(f"now: {Corrections.numbered(kept)}\nanything else? (fix 5=9s, add 7p, remove 14, "
                     "apart 12-14, join 7; Enter to score) ")
        stdout.flush()
        answer = stdin.readline().strip()
        if not answer:
            return kept
        more = Corrections()
        try:
            more.add(answer)
            kept = more.apply(kept)
        except BadCorrection as exc:
            stdout.write(f"  {exc}\n")


def run_photo(args: argparse.Namespace) -> int:
    """Read the hand from ``--photo``, correct it as told (options, or asked on a terminal), then score it as a
    typed one (exit 2 with what was read and why not)."""
    from tablesvc.cli.vision import FINDER_MISSING, read_photo
    from tablesvc.photo_fix import BadCorrection, Corrections, Tile
    from tablesvc.photo_hand import LaidTile, NotAHand, laid_hand
    from vision.photos.reader import FinderMissing

    try:
        fixes = _corrections(args)
    except BadCorrection as exc:
        print(f"tablesvc score: {exc}", file=sys.stderr)
        return 2
    try:
        reading, image = read_photo(args, args.photo)
    except FinderMissing as exc:
        print(f"tablesvc score: {exc}", file=sys.stderr)
        return FINDER_MISSING
    if reading is None:
        print(f"tablesvc score: {image}", file=sys.stderr)
        return 2
    read = [[Tile(reading.tiles[i].tile, reading.tiles[i].face_up, reading.tiles[i].sure or not
                  reading.tiles[i].face_up, tuple(k for k, _ in reading.tiles[i].guesses)) for i in g]
            for g in reading.groups]  # fmt: skip
    if not args.json:
        print(f"read: {reading.text()}")
        print(f"  numbered: {Corrections.numbered(read)}")
        if reading.dropped:
            print(f"  ({reading.dropped} boxes on things that are no tile dropped)")
    problem = reading.problem()
    try:
        groups = fixes.apply(read)
    except BadCorrection as exc:
        print(f"tablesvc score: {exc}", file=sys.stderr)
        return 2
    if fixes and not args.json:
        print(f"corrected: {Corrections.numbered(groups)}")
    if not args.json and not args.no_ask and sys.stdin.isatty() and not problem:
        groups = _ask(groups, sys.stdin, sys.stdout)
    unsure = [f"{n} ({t.tile}; or {' '.join(g for g in t.guesses if g != t.tile) or 'none'})"
              for n, t in enumerate((t for g in groups for t in g), 1) if t.face_up and t.tile and not t.sure]
    if unsure and not args.json:
        print(f"not sure, taken as the best guess: {', '.join(unsure)}; check them (--fix N=TILE)")
    try:
        if problem and not fixes:
            raise NotAHand(problem)
        laid = [[LaidTile(t.tile, t.face_up) for t in g] for g in groups]
        hand = laid_hand(laid, args.win)
        data = {**_mapping(args), **hand.mapping()}
        data["meld"] = [*hand.melds, *(args.meld or [])]
        answer = score(ScoreRequest.from_mapping(data))
    except ValueError as exc:  # NotAHand, InvalidHandError, TileParseError
        if str(exc).endswith("name the winning tile"):
            exc = ValueError(f"{exc} (--win TILE, or --apart N)")
        elif "could not be read" in str(exc):
            exc = ValueError(f"{exc} (--fix N=TILE)")
        if args.json:
            print(json.dumps({"photo": args.photo, "read": reading.to_json()["tiles"], "error": str(exc)}))
        else:
            print(f"cannot score: {exc}")
        print(f"tablesvc score: {args.photo} holds no hand to score", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({**answer.to_json(), "hand": hand.text(), "photo": args.photo,
                          "unsure": len(unsure)}))  # fmt: skip
    else:
        if hand.left_out:
            print(f"left out: {hand.left_out} other tiles of the photo, not part of the hand")
        print(answer.card())
    return 0


def score_lines(lines: Iterable[str], default_rules: str | None) -> Iterator[dict[str, Any]]:
    """Score each JSON line; a line that fails yields ``{"error": ..., "line": n}``."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            yield {"error": f"not JSON: {exc.msg} at column {exc.colno}", "line": number}
            continue
        if not isinstance(data, dict):
            yield {"error": "each line must be a JSON object", "line": number}
            continue
        try:
            yield score(ScoreRequest.from_mapping(data, default_rules)).to_json()
        except ValueError as exc:
            yield {"error": str(exc), "line": number}


def run_batch(path: str, default_rules: str | None, out: TextIO) -> int:
    try:
        source: TextIO = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        print(f"tablesvc score: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 1
    failed = total = 0
    with source:
        for result in score_lines(source, default_rules):
            total += 1
            failed += "error" in result
            out.write(json.dumps(result) + "\n")
    if failed:
        log.warning("%d of %d lines could not be scored", failed, total)
    return 0
