"""A terminal view of tables from their MQTT feed: what a club owner keeps open on a screen.

Pure bookkeeping (:class:`Watcher` turns messages into a text screen) kept
apart from the connection, so it is tested with payloads alone. Every table
under the prefix appears as its retained status and state arrive; a table
whose service died shows ``offline`` (its Last Will), a device that went
silent shows in red words. The marks it uses are explained by :data:`LEGEND`,
printed under every screen.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LEGEND", "TableView", "Watcher", "meld_text", "result_line"]

LEGEND = ("marks: > whose move  * riichi discard (laid sideways)  (5m) discard taken by a call  "
          "[5m] called tile of a meld, <Ann from whom  R in riichi  D dead hand  ! refused input")


def result_line(result: dict[str, Any], names: list[str] | None = None) -> str:
    """One line for a ``results`` payload: a hand result or the final ranking."""

    names = result.get("players") or names  # results name the players themselves

    def name(seat: int | None) -> str:
        if seat is None:
            return "?"
        return names[seat] if names and 0 <= seat < len(names) else f"seat {seat}"

    if result.get("type") == "game_result":
        places = ", ".join(f"{r['place']}. {r.get('name') or name(r['seat'])} {r['points']} ({r['result']:+d})"
                           for r in result.get("ranking", []))
        return f"final: {places}"
    if result.get("type") == "results_replaced":
        return f"results corrected: {len(result.get('results', []))} hand(s) again"
    hand = result.get("hand", "?")
    deltas = " ".join(f"{d:+d}" if d else "0" for d in result.get("deltas", []))
    if result.get("result") == "win":
        wins = "; ".join(
            f"{name(w['seat'])} {'tsumo' if w['from'] is None else 'ron from ' + name(w['from'])} "
            f"{w['han']} han {w['fu']} fu{' ' + w['limit'] if w.get('limit') else ''}"
            for w in result.get("wins", []))
        if not wins and result.get("draw"):
            wins = str(result["draw"]).replace("_", " ")
        return f"{hand}  {wins}  [{deltas}]"
    what = (result.get("draw") or result.get("result") or "").replace("_", " ")
    return f"{hand}  {what}  [{deltas}]"


@dataclass
class TableView:
    site: str
    table: str
    status: str = "unknown"
    version: str = ""
    state: dict[str, Any] | None = None
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    sticks: dict[str, Any] | None = None  # the score sticks compared with the game (a stick tray reader)
    results: deque[str] = field(default_factory=lambda: deque(maxlen=4))
    events: deque[str] = field(default_factory=lambda: deque(maxlen=6))
    errors: deque[str] = field(default_factory=lambda: deque(maxlen=3))
    last_seq: int = 0

    def names(self) -> list[str] | None:
        if self.state is None:
            return None
        return [s.get("name", f"seat {s['seat']}") for s in self.state.get("seats", [])]


class Watcher:
    """Folds feed messages (topic, payload) into one view per table."""

    def __init__(self, prefix: str = "tablesvc", table: str | None = None) -> None:
        self.prefix = prefix
        self.only = table
        self.tables: dict[tuple[str, str], TableView] = {}
        self.bad_messages = 0

    def feed(self, topic: str, payload: bytes) -> str | None:
        """Take one message; returns a line worth printing at once (a hand result), if any."""
        parts = topic.split("/")
        if len(parts) < 4 or parts[0] != self.prefix:
            return None
        site, table, kind = parts[1], parts[2], "/".join(parts[3:])
        if self.only is not None and table != self.only and f"{site}/{table}" != self.only:
            return None
        view = self.tables.setdefault((site, table), TableView(site, table))
        if not payload:
            return None  # a retained message being cleared
        try:
            data = json.loads(payload)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.bad_messages += 1
            return None
        if not isinstance(data, dict):
            self.bad_messages += 1
            return None
        if kind == "status":
            view.status = str(data.get("status", "unknown"))
            view.version = str(data.get("version", ""))
        elif kind == "state":
            view.state = data
        elif kind.startswith("devices/"):
            view.devices[kind.split("/", 1)[1]] = data
        elif kind == "sticks":
            view.sticks = data
        elif kind == "events":
            seq = int(data.get("seq", 0))
            view.last_seq = max(view.last_seq, seq)
            event = data.get("event", {})
            view.events.append(f"#{seq} {data.get('kind')} {_brief(event)}")
        elif kind == "results":
            line = result_line(data, view.names())
            view.results.append(line)
            return f"{site}/{table}  {line}"
        elif kind == "errors":
            view.errors.append(f"{data.get('source')}: {data.get('error')}")
        return None

    def render(self, *, legend: bool = True) -> str:
        """Every table, then (by default) the legend of the marks used."""
        if not self.tables:
            return f"waiting for tables under {self.prefix}/ ..."
        blocks = [self._render(v) for _, v in sorted(self.tables.items())]
        return "\n\n".join(blocks + ([LEGEND] if legend else []))

    @staticmethod
    def _render(v: TableView) -> str:
        lines = [f"{v.site}/{v.table}  [{v.status}]" + (f"  tablesvc {v.version}" if v.version else "")]
        s = v.state
        if s is not None:
            names = v.names() or []
            wall = f"  wall {s['wall']}" if s.get("wall") is not None else ""
            lines.append(f"  {s.get('round')}-{s.get('honba')}  sticks {s.get('sticks')}{wall}  "
                         f"dora {' '.join(s.get('dora', []))}  {s.get('phase')}")
            for seat in s.get("seats", []):
                turn = ">" if s.get("turn") == seat.get("seat") and s.get("phase") == "playing" else " "
                flags = ("R" if seat.get("riichi") else "") + ("D" if seat.get("dead") else "")
                pond = " ".join(_pond_tile(d) for d in seat.get("discards", [])[-10:])
                lines.append(f" {turn}{seat.get('wind')} {seat.get('name', ''):<12} {seat.get('score'):>6} {flags:<2} "
                             f"{pond}")
                melds = seat.get("melds") or []
                if melds:
                    lines.append(f"      melds: {'; '.join(meld_text(m, names) for m in melds)}")
            clock = s.get("clock")
            if isinstance(clock, dict):
                lines.append(f"  clock: {clock_line(clock, s.get('phase'))}")
            conditions = s.get("conditions")
            if conditions:
                lines.append("  all last:")
                for seat, said in enumerate(conditions):
                    for line in said:
                        lines.append(f"    {names[seat] if seat < len(names) else seat}: {line}")
            final = s.get("final")
            if final:
                lines.append("  final ranking:")
                for r in final.get("ranking", []):
                    penalty = f"  penalty {r['penalty']}" if r.get("penalty") else ""
                    lines.append(f"    {r['place']}. {r.get('name', r['seat'])!s:<12} {r['points']:>6}  "
                                 f"uma {r['uma']:+d}  result {r['result']:+d}{penalty}")
        for name, d in sorted(v.devices.items()):
            state = "ok" if d.get("connected") else f"DOWN ({d.get('state', '')})"
            bad = sum((d.get("frames_bad") or {}).values()) if isinstance(d.get("frames_bad"), dict) else 0
            lines.append(f"  device {name}: {state}, {d.get('frames_ok', 0)} frames, {bad} bad")
        if v.sticks is not None:
            mark = "!" if v.sticks.get("status") in ("mismatch", "fault") else " "
            lines.append(f"{mark} sticks {v.sticks.get('status')}: {v.sticks.get('text')}")
        lines.extend(f"  {r}" for r in v.results)
        lines.extend(f"  > {e}" for e in v.events)
        lines.extend(f"  ! {e}" for e in v.errors)
        return "\n".join(lines)


def clock_line(clock: dict[str, Any], phase: Any = None) -> str:
    """The tournament clock of ``state.clock`` in a line: ``until 12:15:00 UTC (ema, +5 min)`` or, after time,
    ``time up, 2 hands left (ema)``."""
    added = clock.get("added") or 0
    extras = ", ".join(x for x in (f"+{clock['extended']} min" if clock.get("extended") else "",
                                   f"+{added} hand{'' if added == 1 else 's'}" if added else "") if x)
    rule = str(clock.get("rule", "?")) + (f" {clock['more_hands']}" if clock.get("rule") == "more_hands" else "")
    how = f"({rule}{', ' + extras if extras else ''})"
    if phase == "game_over":
        return f"finished {how}"
    if clock.get("time_up"):
        left = clock.get("hands_left")
        return f"time up, {left} hand{'' if left == 1 else 's'} left {how}" if left is not None else f"time up {how}"
    deadline = str(clock.get("deadline") or "")
    return f"until {deadline[11:19]} UTC {how}" if deadline else f"running {how}"


def _pond_tile(d: dict[str, Any]) -> str:
    tile = str(d.get("tile", "?")) + ("*" if d.get("riichi") else "")
    return f"({tile})" if d.get("called") else tile


def meld_text(meld: dict[str, Any], names: list[str] | None = None) -> str:
    """``pon [P] P P <Ann``: the called tile in brackets, from whom; a concealed kan as its four tiles."""
    tiles = [str(t) for t in meld.get("tiles", [])]
    called = meld.get("called")
    if called is not None and called in tiles:
        i = tiles.index(called)
        tiles[i] = f"[{called}]"
    source = meld.get("from")
    who = ""
    if source is not None:
        who = f" <{names[source] if names and 0 <= source < len(names) else f'seat {source}'}"
    return f"{meld.get('kind', '?')} {' '.join(tiles)}{who}"


def _brief(event: dict[str, Any]) -> str:
    keys = ("seat", "tile", "kind", "tiles", "from_seat", "dice", "count")
    return " ".join(f"{k}={event[k]}" for k in keys if k in event)
