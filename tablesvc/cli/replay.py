"""``tablesvc replay``: play a recorded game through the engine, hand by hand."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tablesvc.cli.arguments import rules_argument
from tablesvc.engine.results import GameResult, HandResult, round_name
from tablesvc.formats.record import RecordedGame, RecordError
from tablesvc.replay import Mismatch, Refused, ReplayReport, explain_by_lobby_rules, load_record, replay

NAME = "replay"

_EPILOG = """\
formats: Tenhou mjlog XML, mjai JSON lines, tenhou.net/6 JSON (detected from the content), and a
table's journal (<data_dir>/<table>.sqlite3 or an archived game, see 'tablesvc games').
A record that starts at any hand (a log cut at the front, a single hand) is taken up
where its first hand stands: round, counters, sticks, dealer and scores.

The first line says which rules the game is played under and why: the record's own,
--rules, or the default where the record does not say (with --json, an object
{"rules", "rules_from": "record"|"option"|"default"} before the hands).

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
    p.add_argument("--strict", action="store_true",
                   help="compare each hand with the record's own deltas and stop at the first difference")
    p.add_argument("--export", nargs=2, metavar=("FORMAT", "OUT"), help="also write the game as mjai or tenhou6")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        record = load_record(args.game_file, args.format)
    except RecordError as exc:
        print(f"tablesvc replay: {exc}", file=sys.stderr)
        return 1
    stop: Mismatch | None = None
    try:
        report = replay(record, strict=args.strict, rules=args.rules)
    except Mismatch as exc:
        if exc.report is None:
            raise
        stop, report = exc, exc.report
    except RecordError as exc:
        print(f"tablesvc replay: {exc}", file=sys.stderr)
        return 1
    players = report.state.players if report.state else record.players
    rules, origin = _rules_played(report, record.rules, args.rules)
    print(json.dumps({"rules": rules, "rules_from": origin}) if args.json else
          f"rules: {rules} ({_ORIGIN[origin]})")
    for hand in report.hands:  # every hand played, also those before a refusal or a difference
        print(json.dumps(_hand_json(hand)) if args.json else _hand_line(hand, players))
    if report.final is not None and stop is None:
        print(json.dumps(_final_json(report.final)) if args.json else _final_text(report.final, players))
    if stop is not None:
        print(f"tablesvc replay: {args.game_file}: {stop}", file=sys.stderr)
    for message in report.mismatches:
        print(f"tablesvc replay: differs from the record: {message}", file=sys.stderr)
    if stop is not None or report.mismatches:
        _name_lobby_rule(record, rules)
    if isinstance(stop, Refused):
        return 1
    if stop is not None:
        return 3
    if report.stopped:
        print(f"tablesvc replay: note: {report.stopped}", file=sys.stderr)
    if args.export:
        return _export(args.export[0], Path(args.export[1]), report)
    return 0


def _name_lobby_rule(record: RecordedGame, rules: str) -> None:
    """Say which known lobby rule would make the record replay exactly, when one does."""
    found = explain_by_lobby_rules(record, rules)
    if found is not None:
        name, rule = found
        print(f"tablesvc replay: the record replays exactly with --rules \"{name}\" ({rule.meaning}): it was "
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
        print(f"tablesvc replay: cannot export to {fmt!r}: mjai or tenhou6", file=sys.stderr)
        return 2
    try:
        text = export(report.record, report)
    except RecordError as exc:
        print(f"tablesvc replay: cannot export to {fmt}: {exc}", file=sys.stderr)
        return 1
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"tablesvc replay: cannot write {out}: {exc.strerror}", file=sys.stderr)
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
