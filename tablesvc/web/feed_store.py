"""What the web server knows of each table, from the MQTT feed alone, and who is told of changes.

The store holds, per table, the latest retained snapshots (``status``,
``state``, ``devices/*``), the hand results of the game, the journal entries
seen on ``events`` (to number discards for the referee and to rebuild the game
for downloads), alerts for the dashboard, and a bounded ring of the messages
pushed to pages. A page that lost its connection names the last ``state``
``seq`` it holds (SSE ``Last-Event-ID``) and gets every message that came
after it from the ring, in order; a page the ring cannot serve any more (or a
new one) gets a snapshot.

The MQTT thread calls :meth:`Store.feed`; pages (on the asyncio loop) call
:meth:`Store.subscribe`. One lock guards the tables; subscribers are told
through ``loop.call_soon_threadsafe`` so the MQTT thread never waits on a page.
Payloads are read defensively: a field the feed does not carry (yet) is
simply not shown, and a malformed message is logged and dropped, never fatal.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tablesvc.tiles import parse_tiles

__all__ = ["Alert", "Pushed", "Store", "Subscription", "TableFeed", "sse"]

log = logging.getLogger(__name__)

RING_SIZE = 1000  # messages kept per table for pages that reconnect (a whole hand is ~200)
ALERTS_KEPT = 50
RULINGS_SHOWN = 20  # the referee's latest rulings on the table page
QUEUE_SIZE = 5000  # a page that falls this far behind is dropped; it reconnects and resumes


def sse(kind: str, data: Any, seq: int | None = None) -> str:
    """One Server-Sent Events message."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {kind}\ndata: {text}\n\n"


@dataclass(frozen=True)
class Pushed:
    """One message pushed to the pages of a table, written once as SSE text for every page: ``kind`` is the
    SSE event name, ``seq`` its SSE id (only ``state`` carries one: the state of ``seq`` is the last message
    the service sends for a journal entry)."""

    index: int
    kind: str
    text: str
    seq: int | None = None


@dataclass(frozen=True)
class Alert:
    """Something on a table that needs a person."""

    ts: float
    kind: str  # events: refused, chombo; conditions while they last: device, offline, idle, sticks
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"ts": self.ts, "kind": self.kind, "text": self.text}


def _name(state: dict[str, Any] | None, seat: Any) -> str:
    winds = ("East", "South", "West", "North")
    if not isinstance(seat, int) or not 0 <= seat < 4:
        return "?"
    try:
        name = state["seats"][seat].get("name") if state else None
    except (KeyError, IndexError, TypeError, AttributeError):
        name = None
    return str(name) if name else winds[seat]


def _epoch(ts: Any) -> float | None:
    """A feed time as seconds since the epoch: ISO 8601 (``2026-11-23T23:12:11.042Z``) or a number."""
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        return float(ts)
    if isinstance(ts, str):
        try:
            return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _mjai(tiles: Any) -> list[str]:
    """Tiles as the journal writes them (``"844m489p50s"``, or a list) in the state's notation (mjai)."""
    try:
        if isinstance(tiles, str):
            return [t.mjai for t in parse_tiles(tiles)]
        if isinstance(tiles, list):
            return [t.mjai for x in tiles for t in parse_tiles(str(x))]
    except ValueError:
        pass
    return []


def _fold_entry(effective: list[tuple[int, dict[str, Any]]], seq: int,
                entry: dict[str, Any]) -> list[tuple[int, dict[str, Any]]] | None:
    """``effective`` with journal entry ``seq`` folded in (an undo drops events, an amend replaces one), or
    None where the entry cannot be read. ``effective`` itself may be changed."""
    kind, body = entry.get("kind"), entry.get("event") or {}
    try:
        if kind == "undo":
            del effective[len(effective) - int(body["count"]):]
        elif kind == "amend":
            target = int(body["seq"])
            effective = [(s, body["event"] if s == target else e) for s, e in effective]
        else:
            effective.append((seq, body))
    except (KeyError, TypeError, ValueError):
        return None
    return effective


def _ruling(seq: int, entry: dict[str, Any]) -> dict[str, Any] | None:
    """Journal entry ``seq`` as the table page's "Referee" panel lists it, or None where no referee made it."""
    source = entry.get("source")
    if not isinstance(source, str) or not (source == "referee" or source.startswith("referee:")):
        return None
    body = entry.get("event") if isinstance(entry.get("event"), dict) else {}
    target = body.get("seq") if entry.get("kind") == "amend" else None
    return {"seq": seq, "kind": entry.get("kind"), "by": source.partition(":")[2] or None,
            "ts": _epoch(entry.get("ts")), "target": target if isinstance(target, int) else None}


@dataclass
class TableFeed:
    """One table as the feed shows it."""

    site: str
    table: str
    status: dict[str, Any] | None = None
    status_since: float | None = None  # when this server saw the status change (None: it found it so)
    state: dict[str, Any] | None = None
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    sticks: dict[str, Any] | None = None  # the score sticks compared with the game (tables with a tray reader)
    results: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] | None = None
    entries: dict[int, dict[str, Any]] = field(default_factory=dict)  # journal seq -> events payload
    alerts: deque[Alert] = field(default_factory=lambda: deque(maxlen=ALERTS_KEPT))
    ring: deque[Pushed] = field(default_factory=lambda: deque(maxlen=RING_SIZE))
    counter: int = 0
    last_event_ts: float | None = None  # wall clock of the latest journal entry (its ts)
    game_started_ts: float | None = None  # the ts of the game's first journal entry, where the server saw it
    game_ended_ts: float | None = None  # the ts of the state that said the game is over
    # the fold of entries 1.._folded (see effective_events), kept as entries arrive: every state pushed to the
    # pages asks for it, and folding the whole game again each time grows with the square of the game's length
    _fold: list[tuple[int, dict[str, Any]]] = field(default_factory=list, repr=False)
    _folded: int = 0
    # the referees' entries among ``entries`` (seq -> ruling, see rulings), kept as entries arrive for the same reason
    _rulings: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)

    @property
    def key(self) -> tuple[str, str]:
        return self.site, self.table

    @property
    def online(self) -> bool:
        return bool(self.status and self.status.get("status") == "online")

    @property
    def since(self) -> float | None:
        """Online or offline since when, in the table's own words where it has them: online since its service
        started (the retained status's ``started``, so a web server started later does not reset it); offline
        since this server saw it go (its Last Will says nothing of when), None when it found it offline."""
        if self.online:
            started = _epoch((self.status or {}).get("started"))
            if started is not None:
                return started
        return self.status_since

    # ------------------------------------------------------------------ derived views

    def discard_seqs(self, events: list[tuple[int, dict[str, Any]]] | None = None) -> list[list[int | None]] | None:
        """For each seat, the journal seq of each discard in its pond (as the state lists them), where the
        server saw the events of the whole hand; None where it did not (it joined mid-hand). ``events``:
        :meth:`effective_events`, where already known."""
        if self.state is None or not self.entries:
            return None
        events = events if events is not None else self.effective_events()
        if events is None:
            return None
        # the hand in play's start, looked for from the end: a state is pushed for every event, and the whole
        # game need not be read each time
        start = next((i for i in range(len(events) - 1, -1, -1) if events[i][1].get("type") == "hand_start"), None)
        if start is None:
            return None
        seqs: list[list[int | None]] = [[], [], [], []]
        for seq, e in events[start:]:
            if e.get("type") == "discard" and isinstance(e.get("seat"), int) and 0 <= e["seat"] < 4:
                seqs[e["seat"]].append(seq)
        for seat, info in enumerate(self.state.get("seats") or []):
            if isinstance(info, dict) and len(info.get("discards") or []) != len(seqs[seat]):
                return None  # the events seen do not match the pond: do not guess
        return seqs

    def effective_events(self) -> list[tuple[int, dict[str, Any]]] | None:
        """The game's events after undo/amend (as the table folds its journal); None when entries are
        missing (the server joined mid-game or lost some). Entries that arrive in order are folded once
        (:meth:`add_entry`); anything else is folded from the start."""
        if not self.entries:
            return None
        while self._folded + 1 in self.entries:
            folded = _fold_entry(self._fold, self._folded + 1, self.entries[self._folded + 1])
            if folded is None:
                break
            self._fold, self._folded = folded, self._folded + 1
        if self._folded == len(self.entries):  # exactly entries 1..n, all folded
            return list(self._fold)
        return self._fold_all()

    def add_entry(self, seq: int, entry: dict[str, Any]) -> None:
        """Keep a journal entry; one that replaces an entry already folded folds the game again."""
        if seq <= self._folded:
            self._fold, self._folded = [], 0
        self.entries[seq] = entry
        ruling = _ruling(seq, entry)
        if ruling is not None:
            self._rulings[seq] = ruling
        else:
            self._rulings.pop(seq, None)

    def clear_entries(self) -> None:
        self.entries.clear()
        self._fold, self._folded = [], 0
        self._rulings.clear()

    def _fold_all(self) -> list[tuple[int, dict[str, Any]]] | None:
        last = max(self.entries)
        if any(s not in self.entries for s in range(1, last + 1)):
            return None
        effective: list[tuple[int, dict[str, Any]]] = []
        for seq in range(1, last + 1):
            folded = _fold_entry(effective, seq, self.entries[seq])
            if folded is None:
                log.warning("%s/%s: journal entry %d (%s) cannot be read", self.site, self.table, seq,
                            self.entries[seq].get("kind"))
                return None
            effective = folded
        return effective

    def view_state(self) -> dict[str, Any] | None:
        """The state as pages get it: the feed's payload plus ``discard_seqs`` for the referee console and
        ``downloads`` (per format, None or why the game cannot be downloaded so) for the table page."""
        if self.state is None:
            return None
        from tablesvc.web.downloads import availability

        effective = self.effective_events()
        return {**self.state, "discard_seqs": self.discard_seqs(effective),
                "downloads": availability(self, effective), "rulings": self.rulings()}

    def rulings(self) -> list[dict[str, Any]]:
        """The referees' entries of the game this server saw (commands: source ``referee`` or ``referee:NAME``),
        oldest first, the last ``RULINGS_SHOWN``: the table page's "Referee" panel ("amended by Ann, 21:04")."""
        return [self._rulings[seq] for seq in sorted(self._rulings)[-RULINGS_SHOWN:]]

    def hands_played(self) -> int:
        hand_id = (self.state or {}).get("hand_id")
        if isinstance(hand_id, str) and "#" in hand_id:
            try:
                return max(0, int(hand_id.rsplit("#", 1)[1]) - 1)  # the number of the hand being (or next) played
            except ValueError:
                pass
        return sum(1 for r in self.results if r.get("type") == "hand_result")

    def summary(self, now: float, idle_limit: float) -> dict[str, Any]:
        """One dashboard row."""
        state = self.state or {}
        seats = [s for s in state.get("seats") or [] if isinstance(s, dict)]
        alerts = [a.to_dict() for a in self.alerts]
        active: list[dict[str, Any]] = []
        if self.status is not None and not self.online:
            active.append({"ts": self.since, "kind": "offline", "text": "table offline"})
        for name, dev in sorted(self.devices.items()):
            if self.online and dev.get("connected") is False:
                active.append({"ts": None, "kind": "device",
                               "text": f"{name} lost ({dev.get('state') or 'not connected'})"})
        sticks = self.sticks or {}
        if self.online and sticks.get("status") == "mismatch":  # the trays and the game disagree: the referee rules
            active.append({"ts": _epoch(sticks.get("ts")), "kind": "sticks", "text": f"sticks: {sticks.get('text')}"})
        elif self.online and sticks.get("status") == "fault":  # a reader that cannot be trusted: no score alert
            active.append({"ts": _epoch(sticks.get("ts")), "kind": "device",
                           "text": f"{sticks.get('link') or 'sticks'}: {sticks.get('fault') or sticks.get('text')}"})
        if (self.online and state.get("phase") in ("playing", "dealing", "between_hands")
                and self.last_event_ts is not None and now - self.last_event_ts > idle_limit):
            active.append({"ts": self.last_event_ts, "kind": "idle",
                           "text": f"idle for {int((now - self.last_event_ts) // 60)} min"})
        return {
            "site": self.site,
            "table": self.table,
            "online": self.online,
            "known": self.status is not None,
            "since": self.since,
            "started": (self.status or {}).get("started"),
            "version": (self.status or {}).get("version"),
            "phase": state.get("phase"),
            "round": state.get("round"),
            "honba": state.get("honba"),
            "rules": state.get("rules"),
            "players": [{"name": s.get("name") or _name(state, i), "score": s.get("score"), "wind": s.get("wind")}
                        for i, s in enumerate(seats)] if state.get("phase") not in (None, "not_started") else [],
            "dealer": state.get("dealer"),
            "hands_played": self.hands_played(),
            "game_started": self.game_started_ts,
            "game_ended": self.game_ended_ts,
            "last_event": self.last_event_ts,
            "devices": [self._device_row(n, d) for n, d in sorted(self.devices.items())],
            "alerts": active + alerts[::-1][:8],
            "clock": state.get("clock") if isinstance(state.get("clock"), dict) else None,
        }

    @staticmethod
    def _device_row(name: str, dev: dict[str, Any]) -> dict[str, Any]:
        bad = dev.get("frames_bad")
        errors = sum(v for v in bad.values() if isinstance(v, int)) if isinstance(bad, dict) else 0
        if isinstance(dev.get("errors"), int):
            errors += dev["errors"]
        return {"name": name, "connected": bool(dev.get("connected")), "state": dev.get("state"),
                "errors": errors, "reconnects": dev.get("reconnects") or 0,
                "rate": dev.get("fps") if dev.get("fps") is not None else dev.get("lines_per_second")}

    def snapshot(self) -> dict[str, Any]:
        return {"site": self.site, "table": self.table, "status": self.status, "since": self.since,
                "state": self.view_state(), "devices": self.devices, "sticks": self.sticks, "results": self.results,
                "final": self.final, "alerts": [a.to_dict() for a in self.alerts]}


class Subscription:
    """A page's queue of pushed messages (the asyncio side)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, key: tuple[str, str] | str) -> None:
        self.loop = loop
        self.key = key
        self.queue: asyncio.Queue[Pushed | None] = asyncio.Queue(QUEUE_SIZE)
        self.dropped = False

    def push(self, message: Pushed) -> None:
        """From any thread."""
        self.loop.call_soon_threadsafe(self._put, message)

    def end(self) -> None:
        """End the stream (the page went away): on the loop's thread."""
        self._put(None)

    def _put(self, message: Pushed | None) -> None:
        if self.dropped:
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.dropped = True  # too slow: end its stream; the browser reconnects with Last-Event-ID
            self.queue.get_nowait()
            self.queue.put_nowait(None)


class Store:
    """Every table of the site(s) the server follows."""

    def __init__(self, prefix: str = "tablesvc", *, idle_limit: float = 600.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.prefix = prefix
        self.idle_limit = idle_limit
        self.clock = clock
        self.tables: dict[tuple[str, str], TableFeed] = {}
        self._lock = threading.Lock()
        self._subs: dict[tuple[str, str] | str, set[Subscription]] = {}
        self.replies: dict[str, Callable[[dict[str, Any]], None]] = {}  # transaction -> waiter
        self.server_alerts: OrderedDict[str, tuple[float, str, int]] = OrderedDict()  # text -> (ts, kind, count)

    # ------------------------------------------------------------------ MQTT side

    def feed(self, topic: str, payload: bytes) -> None:
        """One MQTT message (any thread)."""
        parts = topic.split("/")
        if len(parts) < 4 or parts[0] != self.prefix:
            return
        site, table, kind = parts[1], parts[2], "/".join(parts[3:])
        if kind == "cmd" or kind.startswith("broadcast/"):
            return  # commands to the table, and the private hands (only the broadcast scenes get them): not the feed
        if kind == "mjai":
            return  # the downloads are rebuilt from the journal entries on `events`: not even parsed
        if not payload:
            return  # a retained message cleared
        try:
            data = json.loads(payload)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested beyond reason
            log.warning("%s: not JSON, ignored", topic)
            return
        if not isinstance(data, dict):
            log.warning("%s: not a JSON object, ignored", topic)
            return
        if kind == "cmd/reply" or kind.startswith("cmd/reply/"):
            waiter = self.replies.pop(str(data.get("transaction")), None)
            if waiter is not None:
                waiter(data)
            return
        pushed: list[Pushed] = []
        with self._lock:
            t = self.tables.get((site, table))
            if t is None:
                t = self.tables[(site, table)] = TableFeed(site, table)
            try:
                self._apply(t, kind, data, pushed)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                log.warning("%s: payload not understood (%s), ignored", topic, exc)
                return
            subs = list(self._subs.get(t.key, ())) + list(self._subs.get(site, ())) + list(self._subs.get("*", ()))
        for message in pushed:
            for sub in subs:
                if sub.key == t.key:
                    sub.push(message)
        if pushed:
            row = Pushed(0, "table", sse("table", self.summary(site, table)))
            for sub in subs:
                if sub.key != t.key:
                    sub.push(row)

    def _push(self, t: TableFeed, kind: str, data: dict[str, Any], out: list[Pushed], seq: int | None = None) -> None:
        t.counter += 1
        message = Pushed(t.counter, kind, sse(kind, data, seq), seq)
        t.ring.append(message)
        out.append(message)

    def _alert(self, t: TableFeed, kind: str, text: str, out: list[Pushed], ts: float | None = None) -> None:
        alert = Alert(ts if ts is not None else self.clock(), kind, text)
        t.alerts.append(alert)
        self._push(t, "alert", alert.to_dict(), out)

    def _apply(self, t: TableFeed, kind: str, data: dict[str, Any], out: list[Pushed]) -> None:
        now = self.clock()
        if kind == "status":
            was = t.status.get("status") if t.status else None
            if data.get("status") != was:  # an offline table is an alert while it lasts (see TableFeed.summary)
                t.status_since = now if was is not None else None
            t.status = data
            self._push(t, "status", {"status": data, "since": t.since}, out)
        elif kind == "state":
            t.state = data
            seq = data.get("seq")
            if data.get("phase") == "not_started":
                self._new_game(t, out)
            last = data.get("last_result")
            if not t.results and isinstance(last, dict) and last.get("type") == "hand_result":
                t.results = [last]  # a server started mid-game knows the last hand from the retained state
            if t.final is None and isinstance(data.get("final"), dict):
                t.final = data["final"]
            if data.get("phase") == "game_over":  # time in game stops at the game's end
                if t.game_ended_ts is None:
                    ts = _epoch(data.get("ts"))
                    t.game_ended_ts = ts if ts is not None else t.last_event_ts if t.last_event_ts is not None else now
            else:
                t.game_ended_ts = None
            self._push(t, "state", t.view_state() or {}, out, seq if isinstance(seq, int) else None)
        elif kind == "events":
            seq = int(data["seq"])
            if seq == 1 or (t.entries and seq < min(t.entries)):
                t.clear_entries()  # a new game: the table starts a new journal
                self._new_game(t, out)
            t.add_entry(seq, data)
            ts = _epoch(data.get("ts"))
            t.last_event_ts = ts if ts is not None else now
            if seq == 1:
                t.game_started_ts = t.last_event_ts
        elif kind == "results":
            self._result(t, data, out)
        elif kind == "errors":
            text = str(data.get("error") or "an event was refused")
            source = data.get("source")
            self._alert(t, "refused", f"{source}: {text}" if source else text, out)
        elif kind == "sticks":
            t.sticks = data  # a mismatch or a fault is an alert while it lasts (see TableFeed.summary)
            self._push(t, "sticks", data, out)
        elif kind.startswith("devices/"):
            name = kind.split("/", 1)[1]
            t.devices[name] = data  # a device lost is an alert while it lasts (see TableFeed.summary)
            self._push(t, "device", {"name": name, "health": data}, out)

    def _new_game(self, t: TableFeed, out: list[Pushed]) -> None:
        """A new game: the last one's results and alerts go, on the pages too (else a console would show the
        last game's result card over the new game's first state, and a dashboard the last game's alerts)."""
        if t.results or t.final is not None:
            t.results, t.final = [], None
            self._push(t, "results", {"results": [], "final": None, "latest": None}, out)
        if t.alerts:
            t.alerts.clear()
            self._push(t, "alerts", {"alerts": []}, out)
        t.game_started_ts = t.game_ended_ts = None

    def _result(self, t: TableFeed, data: dict[str, Any], out: list[Pushed]) -> None:
        rtype = data.get("type")
        if rtype == "hand_result":
            self._enrich(t, data)
            seq = data.get("seq")
            if not any(r.get("seq") == seq and seq is not None for r in t.results):
                t.results.append(data)
            if data.get("result") == "chombo" or data.get("chombo") is not None:
                who = _name(t.state, data.get("chombo"))
                self._alert(t, "chombo", f"chombo by {who} in {data.get('hand', '?')}", out)
        elif rtype == "game_result":
            t.final = data
        elif rtype == "results_replaced":
            results = [r for r in data.get("results") or [] if isinstance(r, dict)]
            for r in results:
                self._enrich(t, r)
            t.results = results
            t.final = data.get("final") if isinstance(data.get("final"), dict) else None
        else:
            return
        self._push(t, "results", {"results": t.results, "final": t.final, "latest": data}, out)

    @staticmethod
    def _enrich(t: TableFeed, result: dict[str, Any]) -> None:
        """Where the feed's result does not carry the winning hand, win tile or ura indicators, take them
        from the journal entry that ended the hand (the ``ron``/``tsumo`` event the server saw)."""
        seq = result.get("seq")
        entry = t.entries.get(seq) if isinstance(seq, int) else None
        if entry is None or entry.get("kind") not in ("ron", "tsumo"):
            return
        body = entry.get("event") or {}
        if "ura" not in result and body.get("ura"):
            result["ura"] = _mjai(body["ura"])
        win_tile = body.get("win_tile")
        if entry.get("kind") == "ron":
            prev = t.entries.get(seq - 1)
            for back in range(1, 40):  # the discard (or added kan) it was called on
                prev = t.entries.get(seq - back)
                if prev is None:
                    break
                pe = prev.get("event") or {}
                if prev.get("kind") in ("discard", "kakan"):
                    win_tile = pe.get("tile") or (pe.get("tiles") or [None])[-1]
                    break
        claims = {c.get("seat"): c.get("hand") for c in body.get("claims") or [] if isinstance(c, dict)}
        for win in result.get("wins") or []:
            if not isinstance(win, dict):
                continue
            hand = claims.get(win.get("seat")) if entry.get("kind") == "ron" else body.get("hand")
            if hand and not any(k in win for k in ("hand", "tiles", "concealed")):
                win["hand"] = _mjai(hand)
            if win_tile and not any(k in win for k in ("win_tile", "winning_tile", "tile")):
                win["win_tile"] = (_mjai(win_tile) or [None])[0]

    # ------------------------------------------------------------------ page side

    def subscribe(self, loop: asyncio.AbstractEventLoop, key: tuple[str, str] | str,
                  last_seq: int | None = None) -> tuple[Subscription, list[Pushed] | None, dict[str, Any] | None]:
        """A page's stream. For a table: (subscription, messages after ``last_seq`` or None, snapshot or None):
        the ring serves a page that comes back; a new page, or one the ring no longer covers, gets the snapshot.
        For a site (``key`` a string; ``"*"`` every site) the snapshot is the dashboard rows."""
        sub = Subscription(loop, key)
        with self._lock:
            self._subs.setdefault(key, set()).add(sub)
            if isinstance(key, str):
                return sub, None, {"tables": [self._summary(t) for t in self._tables_of(key)]}
            t = self.tables.get(key)
            if t is None:
                return sub, None, {"site": key[0], "table": key[1], "status": None, "state": None, "devices": {},
                                   "sticks": None, "results": [], "final": None, "alerts": []}
            if last_seq is not None:
                ring = list(t.ring)
                at = next((i for i in range(len(ring) - 1, -1, -1)
                           if ring[i].kind == "state" and ring[i].seq == last_seq), None)
                if at is not None:
                    return sub, ring[at + 1:], None
            return sub, None, t.snapshot()

    def close_all(self) -> None:
        """End every page's stream (the server is stopping; browsers reconnect to the next one)."""
        with self._lock:
            subs = [sub for group in self._subs.values() for sub in group]
        for sub in subs:
            sub.loop.call_soon_threadsafe(sub._put, None)

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            group = self._subs.get(sub.key)
            if group is not None:
                group.discard(sub)
                if not group:
                    del self._subs[sub.key]  # nothing is kept for a name once its last page has gone

    # ------------------------------------------------------------------ the web server's own alerts

    def server_alert(self, kind: str, text: str) -> None:
        """Something about the web server itself that needs a person (a sign-in lock-out): on the dashboard.
        The same alert again is counted on the one line, moved to the top."""
        with self._lock:
            count = self.server_alerts.pop(text, (0.0, kind, 0))[2] + 1
            self.server_alerts[text] = (self.clock(), kind, count)
            while len(self.server_alerts) > ALERTS_KEPT:
                self.server_alerts.popitem(last=False)
            subs = [sub for key, group in self._subs.items() if isinstance(key, str) for sub in group]
        message = Pushed(0, "server", sse("server", self.server_view()))
        for sub in subs:
            sub.push(message)

    def server_view(self) -> dict[str, Any]:
        """The dashboard's "Web server" panel: the latest alerts, newest first, each with how often it came."""
        with self._lock:
            return {"alerts": [{"ts": ts, "kind": kind, "text": text, "count": count}
                               for text, (ts, kind, count) in reversed(self.server_alerts.items())]}

    def _tables_of(self, site: str) -> Iterable[TableFeed]:
        return [t for k, t in sorted(self.tables.items()) if site == "*" or k[0] == site]

    def _summary(self, t: TableFeed) -> dict[str, Any]:
        return t.summary(self.clock(), self.idle_limit)

    def summary(self, site: str, table: str) -> dict[str, Any]:
        with self._lock:
            return self._summary(self.tables[(site, table)])

    def summaries(self, site: str) -> list[dict[str, Any]]:
        with self._lock:
            return [self._summary(t) for t in self._tables_of(site)]

    def table(self, site: str, table: str) -> TableFeed | None:
        return self.tables.get((site, table))

    def locked(self) -> threading.Lock:
        return self._lock
