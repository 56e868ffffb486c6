"""Argument types shared by the subcommands."""

from __future__ import annotations

import argparse

from tablesvc.rules.ruleset import UnknownRuleSetError, get_ruleset


def rules_argument(text: str) -> str:
    """``--rules``: a preset, optionally with house rules after it ("ema2016; kiriage=yes"); argparse
    reports what is wrong with it (exit 2) before anything runs."""
    try:
        get_ruleset(text)
    except UnknownRuleSetError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text
