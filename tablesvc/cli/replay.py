"""``tablesvc replay``: play a recorded game through the engine, hand by hand."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablesvc.cli.arguments import rules_argument
from tablesvc.engine.results import GameResult, HandResult, round_name
from tablesvc.formats.record import RecordedGame, RecordError
from tablesvc.text import safe_text

if TYPE_CHECKING:
    from tablesvc.replay import ReplayReport

NAME = "replay"

_EPILOG = """\
formats: Tenhou mjlog XML, mjai JSON lines, tenhou.net/6 JSON (detected from the content), and a
table's journal (<data_dir>/<table>.sqlite3 or an archived game, see 'tablesvc games').
A record that starts at any hand (a log cut at the front, a single hand) is taken up
where its first hand stands: round, counters, sticks, dealer and scores.

The first line says which rules the game is played under and why: the record's own,
--rules, or the default where the record does not say (with --json, an object
{"rules", "rules_from": "record"|"option"|"default"} before the hands).

--results-only plays the game the way a score sheet (or a table of phones) does: from each
hand's result alone (the winners' hands as shown, who dealt in, the situations the tiles
cannot show such as ippatsu or haitei, the tenpai seats of a draw, nagashi mangan, the
riichi declarations), settled afresh by the engine and compared with the record as usual.

A hand's deltas are what its result moved (win or draw payments, counters, riichi sticks
collected); each riichi deposit of the hand is listed apart, as the recorded logs do.

Where the engine refuses an event, every hand played before it is printed, then the
refusal. Where the record differs from the engine (or is refused), the message names the
known lobby rule that would replay it exactly, when one does: 4 han 30 fu rounded up to
mangan (kiriage=yes), the dealer keeping the deal in the last hand (dealer_stops_when_top=no),
the deal passing after every hand (dealer_keeps_deal=no); --rules "tenhou; kiriage=yes" plays it.

exit status: 0 played (a file cut short stops with a note on standard error), 1 the file
cannot be read or the engine refuses an event, 3 --strict found a hand that differs from
the record (the message names the hand and both values; the hands before it are printed).
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="replay a recorded game through the engine",
        description="Play a recorded game through the engine and print each hand's result.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("game_file", metavar="GAME_FILE", help="the game record")
    p.add_argument("--format", choices=["mjlog", "mjai", "tenhou6"], help="the record's format (default: detect)")
    p.add_argument("--rules", type=rules_argument,
                   help="rule set to play under (default: the record's own, else ema2012)")
    p.add_argument("--json", action="store_true", help="one JSON object per hand, then the final result")
    p.add_argument("--analysis", action="store_true",
                   help="with --json: each win's waits and tiles left, each ready seat's at an exhaustive draw, "
                   "and every state's analysis as a line of its own (docs/engine.md)")
    p.add_argument("--strict", action="store_true",
                   help="compare each hand with the record's own deltas and stop at the first difference")
    p.add_argument("--results-only", action="store_true",
                   help="play the game from its hand results alone, as a score sheet or a phone table does")
    p.add_argument("--export", nargs=2, metavar=("FORMAT", "OUT"), help="also write the game as mjai or tenhou6")
    feed = p.add_argument_group("playing the game onto the feed, as a live table publishes it")
    feed.add_argument("--feed", action="store_true",
                      help="publish the game to --broker as a table of its own, paced by --speed, every hand on "
                      "broadcast/hands (docs/mqtt.md)")
    feed.add_argument("--broker", metavar="URL", help="the broker, mqtt://user:password@host:1883 (a table "
                      "service's account, <site>/<table> under the shipped ACL)")
    feed.add_argument("--speed", type=float, default=1.0, help="1 real time (default), 10 ten times faster, "
                      "0 as fast as it goes")
    feed.add_argument("--site", default="replay", help="the site in the topics (default replay)")
    feed.add_argument("--table", default="table-1", help="the table in the topics (default table-1)")
    feed.add_argument("--delay", type=float, default=0.0, metavar="SECONDS",
                      help="hold broadcast/hands back this long, as an organiser's delay (default 0)")
    p.set_defaults(run=run)


def _say(text: str, file: Any = None) -> None:
    """Print a line that may hold a name from a journal written before names were checked (a lone surrogate):
    shown as U+FFFD instead of ending the replay in a UnicodeEncodeError."""
    print(safe_text(text), file=file if file is not None else sys.stdout)


def run(args: argparse.Namespace) -> int:
    from tablesvc.replay import Mismatch, Refused, load_record, replay, replay_results

    if args.analysis and not args.json:
        print("tablesvc replay: --analysis writes JSON lines: give --json too", file=sys.stderr)
        return 2
    if args.results_only and (args.analysis or args.feed):
        print("tablesvc replay: --analysis and --feed follow a game tile by tile; without --results-only",
              file=sys.stderr)
        return 2
    if args.feed:
        return _feed(args)
    try:
        record = load_record(args.game_file, args.format)
    except RecordError as exc:
        _say(f"tablesvc replay: {exc}", file=sys.stderr)
        return 1
    if args.results_only and args.export:
        print("tablesvc replay: --export writes a game tile by tile; without --results-only", file=sys.stderr)
        return 2
    stop: Mismatch | None = None
    try:
        watch = None
        if args.analysis:
            from tablesvc.analysis.replay import RecordAnalyst

            watch = RecordAnalyst(lines=True)
        if args.results_only:
            report = replay_results(record, strict=args.strict, rules=args.rules)
        else:
            report = replay(record, strict=args.strict, rules=args.rules, watch=watch)
    except Mismatch as exc:
        if exc.report is None:
            raise
        stop, report = exc, exc.report
    except RecordError as exc:
        _say(f"tablesvc replay: {exc}", file=sys.stderr)
        return 1
    players = report.state.players if report.state else record.players
    rules, origin = _rules_played(report, record.rules, args.rules)
    _say(json.dumps({"rules": rules, "rules_from": origin}) if args.json else
          f"rules: {rules} ({_ORIGIN[origin]})")
    if args.analysis and stop is None:
        _print_analysis(watch.items)
    else:
        for hand in report.hands:  # every hand played, also those before a refusal or a difference
            _say(json.dumps(_hand_json(hand)) if args.json else _hand_line(hand, players))
    if report.final is not None and stop is None:
        _say(json.dumps(_final_json(report.final)) if args.json else _final_text(report.final, players))
    if stop is not None:
        _say(f"tablesvc replay: {args.game_file}: {stop}", file=sys.stderr)
    for message in report.mismatches:
        _say(f"tablesvc replay: differs from the record: {message}", file=sys.stderr)
    if stop is not None or report.mismatches:
        _name_lobby_rule(record, rules)
    if isinstance(stop, Refused):
        return 1
    if stop is not None:
        return 3
    if report.stopped:
        _say(f"tablesvc replay: note: {report.stopped}", file=sys.stderr)
    if args.export:
        return _export(args.export[0], Path(args.export[1]), report)
    return 0


def _feed(args: argparse.Namespace) -> int:
    """``--feed``: the record played onto the broker by a table service of its own."""
    from tablesvc.config import ConfigError
    from tablesvc.feed_replay import feed_config, play_onto_feed, temporary_data_dir
    from tablesvc.replay import Mismatch, load_record, replay

    if not args.broker:
        print("tablesvc replay: --feed needs --broker mqtt://host:1883", file=sys.stderr)
        return 2
    if args.speed < 0 or args.delay < 0:
        print("tablesvc replay: --speed and --delay are 0 or more", file=sys.stderr)
        return 2
    try:
        record = load_record(args.game_file, args.format)
        replay(record, rules=args.rules)  # a record the engine refuses stops here, with the reason
        config = feed_config(args.broker, site=args.site, table=args.table, data_dir=temporary_data_dir(),
                             delay_s=args.delay)
    except (RecordError, Mismatch, ConfigError) as exc:
        print(f"tablesvc replay: {exc}", file=sys.stderr)
        return 1
    base = config.topics.base
    print(f"playing {args.game_file} onto {base}/... at speed {args.speed:g}; hands on {base}/broadcast/hands "
          f"(delay {args.delay:g} s)", flush=True)
    try:
        played = play_onto_feed(record, config, speed=args.speed)
    except RuntimeError as exc:
        print(f"tablesvc replay: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(f"{played} events played")
    return 0


def _print_analysis(items: list) -> None:
    """The hands with their waits, each after the lines of its states, as the replay's watch kept them."""
    from tablesvc.analysis.replay import AnalysedHand

    seats = "ESWN"
    for item in items:
        if isinstance(item, AnalysedHand):
            data = _hand_json(item.result)
            for win, result in zip(data["wins"], item.result.wins, strict=True):
                win["waits"] = item.win_waits.get(result.seat, {})
            if item.tenpai is not None:
                data["tenpai"] = {seats[seat]: waits for seat, waits in item.tenpai.items()}
            print(json.dumps(data))
        else:
            print(json.dumps({"state": item.index, "event": item.event, "analysis": item.data}))


def _name_lobby_rule(record: RecordedGame, rules: str) -> None:
    """Say which known lobby rule would make the record replay exactly, when one does."""
    from tablesvc.replay import explain_by_lobby_rules

    found = explain_by_lobby_rules(record, rules)
    if found is not None:
        name, rule = found
        _say(f"tablesvc replay: the record replays exactly with --rules \"{name}\" ({rule.meaning}): it was "
              "played under that rule", file=sys.stderr)


_ORIGIN = {"option": "--rules", "record": "the record's own",
           "default": "the default: the record does not say which rules it was played under; --rules chooses"}


def _rules_played(report: ReplayReport, recorded: str | None, option: str | None) -> tuple[str, str]:
    """The rule set the replay played under, and where it came from: option, record or default."""
    played = report.state.rules if report.state is not None else (option or recorded or "ema2012")
    return played, "option" if option else "record" if recorded else "default"


def _export(fmt: str, out: Path, report: ReplayReport) -> int:
    if fmt == "mjai":
        from tablesvc.formats.mjai import export_mjai as export
    elif fmt == "tenhou6":
        from tablesvc.formats.tenhou6 import export_tenhou6 as export
    else:
        _say(f"tablesvc replay: cannot export to {fmt!r}: mjai or tenhou6", file=sys.stderr)
        return 2
    try:
        text = export(report.record, report)
    except RecordError as exc:
        _say(f"tablesvc replay: cannot export to {fmt}: {exc}", file=sys.stderr)
        return 1
    try:
        out.write_text(safe_text(text), encoding="utf-8")
    except OSError as exc:
        _say(f"tablesvc replay: cannot write {out}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


def _signed(v: int) -> str:
    return f"{v:+d}" if v else "0"


def _hand_line(hand: HandResult, players: tuple[str, ...]) -> str:
    deltas = " ".join(f"{_signed(d):>7}" for d in hand.deltas)
    scores = " ".join(f"{s:>6}" for s in hand.scores)
    deposits = f"  riichi: {', '.join(players[s] for s in hand.deposits)}" if hand.deposits else ""
    return (f"{round_name(hand.round)}-{hand.honba}  {hand.describe(players)}\n"
            f"      deltas {deltas}   scores {scores}{deposits}")


def _hand_json(hand: HandResult) -> dict:
    return {
        "round": round_name(hand.round),
        "honba": hand.honba,
        "sticks": hand.sticks,
        "dealer": hand.dealer,
        "result": hand.kind,
        "draw": hand.draw,
        "wins": [
            {"seat": w.seat, "from": w.from_seat, "han": w.han, "fu": w.fu, "limit": w.limit or None,
             "points": w.points, "yaku": [{"name": n, "han": h} for n, h in w.yaku], "pao": w.pao}
            for w in hand.wins
        ],
        "deltas": list(hand.deltas),
        "riichi_deposits": list(hand.deposits),
        "scores": list(hand.scores),
    }


def _final_json(final: GameResult) -> dict:
    return {
        "final_scores": list(final.scores),
        "ranking": [{"seat": s.seat, "place": s.place, "points": s.points, "uma": s.uma, "oka": s.oka,
                     "penalty": s.penalty, "result": s.result} for s in final.standings],
    }


def _final_text(final: GameResult, players: tuple[str, ...]) -> str:
    lines = ["final ranking:"]
    for s in final.standings:
        extra = f" oka {_signed(s.oka)}" if s.oka else ""
        lines.append(f"  {s.place}. {players[s.seat]:<20} {s.points:>6}  uma {_signed(s.uma):>7}{extra}"
                     f"  result {_signed(s.result)}")
    return "\n".join(lines)
