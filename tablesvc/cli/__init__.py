"""The ``tablesvc`` command: one sub-command per job, logging configured once here."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from tablesvc import __version__
from tablesvc.cli import demo, games, records, replay, run, score, tournament, vision, watch, web

__all__ = ["main"]

_COMMANDS = (score, replay, games, records, tournament, run, demo, watch, vision, web)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablesvc",
        description="Follow a real riichi mahjong table and publish a live, scored game. "
        "Sub-commands: score, replay, games, records, tournament, run, demo, watch, vision, web.",
    )
    parser.add_argument("--version", action="version", version=f"tablesvc {__version__}")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="how much to log on standard error (default: %(default)s)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in _COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
