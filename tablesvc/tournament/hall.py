"""Starting a round: ``start_game`` with the four names and the tournament's rules to every table, at once.

Each table's service gets the command on its ``cmd`` topic, like a referee's,
with a transaction of its own, and its reply says whether it started. A
table that does not answer in time (its service offline, its broker link
down) or refuses (a game still in play there) is listed with the reason,
never skipped in silence: the round is recorded as started with the tables
that did and those that did not, and ``--retry`` sends the command again to
the latter only. A round is started once; starting it again is refused.

The hall is reached through a :class:`Hall`: :class:`MqttHall` opens a
connection of its own (the ``tournament`` command), the web server passes
its own connection (a referee starting the round from the console).

The tournament's clock travels with ``start_game`` (its ``clock`` field:
the guaranteed minutes and the rule at the end of time) when the tournament
has minutes set; :func:`start_command` is the one place that builds it.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from tablesvc.tournament.model import HallTable, PlayerStatus, Round, RoundStatus, Tournament, TournamentError
from tablesvc.tournament.tournament_db import TournamentStore

__all__ = ["Hall", "MqttHall", "StartReport", "clock_field", "hall_time_up", "round_deadline", "start_command",
           "start_round", "table_clock"]

log = logging.getLogger(__name__)


class Hall(Protocol):
    def online(self, site: str, table: str) -> bool | None:
        """The table's service says it is online (True), offline (False), or has said nothing (None)."""

    def send(self, site: str, table: str, payload: dict[str, Any], on_reply: Callable[[dict[str, Any]], None]) -> bool:
        """Publish a command; False when not connected. ``on_reply`` gets the table's reply (any thread)."""


@dataclass(frozen=True)
class StartReport:
    round: Round
    started: list[int]  # hall table numbers that answered ok
    not_started: dict[int, str]  # table number -> why (offline, no reply, the table's refusal)
    notes: dict[int, str] = field(default_factory=dict)  # started tables with something to say (no clock there)

    def lines(self, tables: list[HallTable], again: str | None = None) -> list[str]:
        """The report; ``again`` is the command line that retries the tables not started, as the caller ran
        it (its database and broker)."""
        by = {t.number: t for t in tables}
        out = [f"round {self.round.number}: {len(self.started)} table(s) started"]
        for n in self.started:
            note = f" ({self.notes[n]})" if n in self.notes else ""
            out.append(f"  table {n} ({by[n].site}/{by[n].table_id}): started{note}")
        for n, why in sorted(self.not_started.items()):
            out.append(f"  table {n} ({by[n].site}/{by[n].table_id}): NOT STARTED: {why}")
        if self.not_started:
            out.append("send start_game again to the tables not started: "
                       + (again or f"tablesvc tournament start-round {self.round.number} --retry --broker URL"))
        return out


def round_deadline(t: Tournament, r: Round, now: datetime) -> str | None:
    """The round's one end of time: the one recorded when it was first started (a table started late with
    --retry gets the same), else ``now`` plus the round's minutes; None without a clock."""
    if not t.minutes:
        return None
    if r.deadline:
        return r.deadline
    return (now + timedelta(minutes=t.minutes)).isoformat(timespec="seconds").replace("+00:00", "Z")


def clock_field(t: Tournament, deadline: str | None = None) -> dict[str, Any] | None:
    """``start_game``'s ``clock``: the guaranteed minutes, the round's deadline (one for the whole hall) and the
    rule at the end of time ("ema", "finish_hand", or "more_hands:N"); None when the tournament plays without a
    clock."""
    if not t.minutes:
        return None
    clock: dict[str, Any] = {"minutes": t.minutes}
    if deadline:
        clock["deadline"] = deadline
    if t.time_rule:
        rule, _, more = t.time_rule.partition(":")
        clock["rule"] = rule
        if more:
            clock["more_hands"] = int(more)
    return clock


def start_command(t: Tournament, names: tuple[str, str, str, str], transaction: str,
                  deadline: str | None = None) -> dict[str, Any]:
    command: dict[str, Any] = {"command": "start_game", "transaction": transaction, "players": list(names),
                               "rules": t.rules}
    clock = clock_field(t, deadline)
    if clock is not None:
        command["clock"] = clock
    return command


def start_round(store: TournamentStore, tid: int, number: int, hall: Hall, *, retry: bool = False,
                timeout: float = 10.0, token: str | None = None) -> StartReport:
    """Send ``start_game`` to every table of round ``number`` (with ``retry``: to those that did not start) and
    record who started. Raises :class:`TournamentError` when the round cannot be started at all."""
    t = store.tournament(tid)
    r, pending = store.begin_start(tid, number, retry=retry)
    players = {p.number: p for p in store.players(tid)}
    for i, four in enumerate(r.seating.tables, 1):
        for p in four:
            if players[p].status is PlayerStatus.WITHDRAWN:
                raise TournamentError(f"round {number}, table {i}: {players[p].name} has withdrawn and the seat "
                                      f"waits: tablesvc tournament add NAME --substitute {p} (or seat the round "
                                      "again) before starting it")
    tables = {h.number: h for h in store.tables(tid)}
    now = datetime.now(UTC)
    started_at = now.isoformat(timespec="seconds")
    deadline = round_deadline(t, r, now)
    not_started: dict[int, str] = {}
    stamp = secrets.token_hex(3)
    payloads = {}
    for i in pending:
        names = tuple(players[p].name for p in r.seating.tables[i - 1])
        payload = start_command(t, names, f"tournament-{tid}-r{number}-t{i}-{stamp}",  # type: ignore[arg-type]
                                deadline)
        if token:
            payload["token"] = token
        payloads[i] = payload
    replies = _send_all(hall, tables, payloads, timeout, not_started)
    # a table whose service does not know the tournament clock yet: started without it, and said so
    older = {i: {k: v for k, v in payloads[i].items() if k != "clock"}
             | {"transaction": f"{payloads[i]['transaction']}-c"}
             for i, reply in replies.items() if reply.get("status") != "ok" and "'clock'" in str(reply.get("error"))}
    replies.update(_send_all(hall, tables, older, timeout, not_started))
    started, notes = [], {}
    for i in payloads:
        if i in not_started:
            continue
        reply = replies.get(i)
        h = tables[i]
        if reply is None:
            state = hall.online(h.site, h.table_id)
            why = "its service is offline" if state is False else "its service has never been seen on the broker" \
                if state is None else f"no reply within {timeout:.0f} s"
            not_started[i] = f"{why}: start the table's service, then --retry"
        elif reply.get("status") == "ok":
            started.append(i)
            if i in older:
                notes[i] = "without the clock: the table's service does not know it (update tablesvc there)"
        else:
            not_started[i] = f"the table refused: {reply.get('error')}"
    rnd = store.mark_started(tid, number, started, sorted(not_started), started_at, deadline if started else None)
    for i, why in sorted(not_started.items()):
        log.warning("round %d: table %d (%s/%s) not started: %s", number, i, tables[i].site, tables[i].table_id, why)
    return StartReport(rnd, sorted(started), not_started, notes)


def _send_all(hall: Hall, tables: dict[int, HallTable], payloads: dict[int, dict[str, Any]], timeout: float,
              not_started: dict[int, str]) -> dict[int, dict[str, Any]]:
    """Send every table its command at once and wait (up to ``timeout``) for the replies; a table the command
    could not even be sent to goes into ``not_started``."""
    replies: dict[int, dict[str, Any]] = {}
    done = threading.Condition()
    sent = 0
    for i, payload in payloads.items():
        h = tables[i]

        def arrived(reply: dict[str, Any], table: int = i) -> None:
            with done:
                replies[table] = reply
                done.notify_all()

        if hall.online(h.site, h.table_id) is False:
            log.warning("table %d (%s/%s) says it is offline; %s sent anyway", i, h.site, h.table_id,
                        payload["command"])
        if not hall.send(h.site, h.table_id, payload, arrived):
            not_started[i] = "not sent: no connection to the broker"
            continue
        sent += 1
    deadline = time.monotonic() + timeout
    with done:
        while len(replies) < sent and time.monotonic() < deadline:
            done.wait(max(0.0, deadline - time.monotonic()))
        return dict(replies)


def hall_time_up(store: TournamentStore, tid: int, hall: Hall, *, reason: str = "", round_number: int | None = None,
                 timeout: float = 10.0, token: str | None = None) -> tuple[list[int], dict[int, str]]:
    """Time called for the whole hall at once: every started table of the round in play gets the clock's
    ``time_up``; the tables that took it, and those that did not with why (a table already past its time, one
    not answering), never skipped in silence."""
    rounds = store.rounds(tid)
    playing = [r for r in rounds if r.status is RoundStatus.STARTED and round_number in (None, r.number)]
    if not playing:
        raise TournamentError("no round is in play: time is called in a round in play")
    r = playing[-1]
    done, refused = [], {}
    for table in r.started_tables:
        try:
            table_clock(store, tid, table, hall, time_up=True, reason=reason, round_number=r.number, timeout=timeout,
                        token=token)
            done.append(table)
        except TournamentError as exc:
            refused[table] = str(exc)
    return done, refused


def table_clock(store: TournamentStore, tid: int, table: int, hall: Hall, *, extend: int | None = None,
                add_hand: bool = False, time_up: bool = False, reason: str = "", round_number: int | None = None,
                timeout: float = 10.0, token: str | None = None) -> dict[str, Any]:
    """A referee's word on one table's clock in the round in play: ``extend`` minutes more, or one hand more
    (``add_hand``), as the table's ``clock`` command; the table's reply data. Refused naming the round for a
    round not started or finished, naming the table for one not in the hall or not started."""
    if (extend is not None) + add_hand + time_up != 1:
        raise TournamentError("give the minutes to extend by, one hand to add, or time up")
    rounds = store.rounds(tid)
    if round_number is None:
        playing = [r for r in rounds if r.status is RoundStatus.STARTED]
        if not playing:
            raise TournamentError("no round is in play: a table's clock runs only in a round in play")
        r = playing[-1]
    else:
        found = [x for x in rounds if x.number == round_number]
        if not found:
            raise TournamentError(f"round {round_number} is not seated")
        r = found[0]
    if r.status is RoundStatus.FINISHED:
        raise TournamentError(f"round {r.number} is finished: its tables' clocks are closed")
    if r.status is not RoundStatus.STARTED:
        raise TournamentError(f"round {r.number} has not started: its tables have no clock yet")
    tables = {h.number: h for h in store.tables(tid)}
    if table not in tables or table > len(r.seating.tables):
        raise TournamentError(f"round {r.number} has no table {table}")
    if table not in r.started_tables:
        raise TournamentError(f"table {table} of round {r.number} did not start: start it (start-round --retry)")
    h = tables[table]
    command: dict[str, Any] = {"command": "clock", "transaction": f"tournament-{tid}-clock-{secrets.token_hex(4)}",
                               "action": "add_hand" if add_hand else "time_up" if time_up else "extend"}
    if extend is not None:
        command["minutes"] = extend
    if reason:
        command["reason"] = reason
    if token:
        command["token"] = token
    not_sent: dict[int, str] = {}
    reply = _send_all(hall, tables, {table: command}, timeout, not_sent).get(table)
    if table in not_sent:
        raise TournamentError(f"table {table} ({h.site}/{h.table_id}): {not_sent[table]}")
    if reply is None:
        raise TournamentError(f"table {table} ({h.site}/{h.table_id}) did not answer within {timeout:.0f} s: is its "
                              "service online?")
    if reply.get("status") != "ok":
        raise TournamentError(f"table {table} ({h.site}/{h.table_id}) refused: {reply.get('error')}")
    log.info("round %d, table %d: clock %s", r.number, table, command["action"])
    return {"round": r.number, "table": table, "action": command["action"], "minutes": extend,
            "reply": reply.get("data")}


class MqttHall:
    """The hall over a connection of its own: statuses (retained) and command replies of every table."""

    def __init__(self, url: Any, *, prefix: str = "tablesvc", ca_file: str | None = None,
                 client_id: str | None = None) -> None:
        from tablesvc.mqtt.link import MqttLink
        from tablesvc.mqtt.url import BrokerURL

        self.prefix = prefix
        self.url = url if isinstance(url, BrokerURL) else BrokerURL.parse(url)
        self._status: dict[tuple[str, str], bool] = {}
        self._waiting: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._lock = threading.Lock()
        self.link = MqttLink(self.url, client_id=client_id or f"tablesvc-tournament-{secrets.token_hex(4)}",
                             on_connected=lambda: None, on_message=self._message,
                             subscriptions=(f"{prefix}/+/+/status", f"{prefix}/+/+/cmd/reply"), ca_file=ca_file)

    def __enter__(self) -> MqttHall:
        self.link.start()
        if not self.link.wait_ready(10):
            self.link.stop()
            raise TournamentError(f"cannot reach the broker {self.url}: {self.link.failure or 'no answer in 10 s'}")
        time.sleep(0.3)  # the retained statuses arrive right after the subscription
        return self

    def __exit__(self, *exc: object) -> None:
        self.link.stop()

    def _message(self, msg: Any) -> None:
        parts = msg.topic.split("/")
        try:
            data = json.loads(msg.payload) if msg.payload else {}
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(data, dict) or len(parts) < 4:
            return
        if parts[3] == "status":
            with self._lock:
                self._status[(parts[1], parts[2])] = data.get("status") == "online"
        elif parts[3] == "cmd" and parts[4:5] == ["reply"]:
            with self._lock:
                waiter = self._waiting.pop(str(data.get("transaction")), None)
            if waiter is not None:
                waiter(data)

    def online(self, site: str, table: str) -> bool | None:
        with self._lock:
            return self._status.get((site, table))

    def send(self, site: str, table: str, payload: dict[str, Any], on_reply: Callable[[dict[str, Any]], None]) -> bool:
        with self._lock:
            self._waiting[str(payload["transaction"])] = on_reply
        info = self.link.publish(f"{self.prefix}/{site}/{table}/cmd", json.dumps(payload).encode())
        if info is None:
            with self._lock:
                self._waiting.pop(str(payload["transaction"]), None)
            return False
        return True
