"""``tablesvc demo --phones``: a table with no devices, fed by two scripted phones through ``/play``.

The table is a real table service with no ``[[serial]]`` and no camera; the web server beside it serves its
``/play`` page, whose address (with the table's token, as the table's QR code carries it) the demo prints. Two
scripted phones then play a whole game through the page's calls (``/api/play``), as two players at the table
would: each hand checked first (the payments printed), then entered with a key of its own; one hand is entered
from both phones at the same moment, and the second is told the first won. Open the printed address on a phone
(or a narrow browser window) to watch, or to take over after the game with ``--stay``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import secrets
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The scripted game (ema2012, seat 0 deals East 1): each hand as a phone enters it. A ron with the hand shown,
#: rons and tsumos counted in han and fu, a draw with the dealer tenpai (the deal stays), a chombo (the hand is
#: replayed), then non-dealer wins to the end of South 4.
SCRIPT: list[dict[str, Any]] = [
    {"type": "win_entry", "from_seat": 2, "riichi": [1], "dora": "1p",
     "wins": [{"seat": 1, "hand": "234m22406p345678s", "win_tile": "8s"}]},
    {"type": "win_entry", "from_seat": None, "wins": [{"seat": 2, "han": 3, "fu": 30}]},
    {"type": "draw_entry", "tenpai": [False, False, True, True], "riichi": [3]},
    {"type": "chombo_entry", "seat": 0},
    {"type": "win_entry", "from_seat": 0, "wins": [{"seat": 3, "han": 2, "fu": 40}]},
    {"type": "win_entry", "from_seat": 1, "wins": [{"seat": 0, "han": 5}]},
    {"type": "win_entry", "from_seat": 2, "wins": [{"seat": 1, "han": 1, "fu": 30}]},
    {"type": "win_entry", "from_seat": None, "wins": [{"seat": 2, "han": 4, "fu": 30}]},
    {"type": "win_entry", "from_seat": 0, "wins": [{"seat": 3, "han": 2, "fu": 30}]},
    {"type": "win_entry", "from_seat": 3, "wins": [{"seat": 0, "han": 3, "fu": 40}]},
]
SAME_MOMENT = 4  # the hand both phones enter at once


class Phone:
    """One scripted phone: the calls the /play page makes, with the table's token."""

    def __init__(self, name: str, port: int, site: str, table: str, token: str) -> None:
        self.name, self.port, self.token = name, port, token
        self.path = f"/api/play/{urllib.parse.quote(site, safe='')}/{urllib.parse.quote(table, safe='')}"

    def call(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("POST", self.path, body=json.dumps(body),
                         headers={"Content-Type": "application/json", "X-Table-Token": self.token})
            response = conn.getresponse()
            return response.status, json.loads(response.read())
        finally:
            conn.close()


def run_phones(args: argparse.Namespace, url: str, broker: object, work: Path, make_web: Callable[..., Any]) -> int:
    """The phone table's demo; ``make_web(args, url, prefix, protocol, secret_key=...)`` starts the demo's web
    server (the demo's own, so that both demos serve the same pages)."""
    from tablesvc.config import parse_config
    from tablesvc.service import TableService
    from tablesvc.web.play import play_token

    data_dir = args.data_dir or work / "data"
    config = parse_config(f'[table]\nsite = "{args.site}"\nid = "{args.table}"\nrules = "{args.rules}"\n'
                          f'data_dir = "{data_dir}"\n[mqtt]\nurl = "{url}"\n'
                          f'protocol = "{"3.1.1" if broker else "auto"}"\n')
    service = TableService(config, new_game=True)
    secret = secrets.token_urlsafe(24)
    web = make_web(args, url, config.mqtt.prefix, "3.1.1" if broker else "auto", secret_key=secret)
    if web is None:
        print("tablesvc demo: --phones needs the web server (not --web off): the phones enter through it",
              file=sys.stderr)
        return 2
    try:
        service.start()
        if not service.link.wait_ready(20):
            print(f"tablesvc demo: cannot reach the broker {url}", file=sys.stderr)
            return 1
        token = play_token(secret.encode(), args.site, args.table)
        site, table = urllib.parse.quote(args.site, safe=""), urllib.parse.quote(args.table, safe="")
        print(f"tablesvc demo: a phone table (no devices) {args.site}/{args.table} on {url}")
        print(f"  the phones' page: {web.url}/play/{site}/{table}#t={token}")
        print(f"  dashboard: {web.url}/  (referee password for this demo: {web.demo_password}; signed in, each "
              "table's card has the QR code of its page)", flush=True)
        code = _play(args, web, service, token)
        if args.stay and code == 0:
            print("tablesvc demo: the game is over; the pages stay up until Ctrl-C", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                threading.Event().wait()
        return code
    finally:
        service.stop()
        web.stop()


def _play(args: argparse.Namespace, web: Any, service: Any, token: str) -> int:
    a = Phone("phone A", web.port, args.site, args.table, token)
    b = Phone("phone B", web.port, args.site, args.table, token)
    pause = 0.0 if args.speed <= 0 else min(5.0, 4.0 / args.speed)
    status, answer = a.call({"action": "start", "key": secrets.token_hex(8), "players": ["Aoi", "Ben", "Chi", "Dan"]})
    if status != 200:
        print(f"tablesvc demo: the game did not start: {answer.get('error')}", file=sys.stderr)
        return 1
    print("phone A: game started: Aoi, Ben, Chi, Dan", flush=True)
    script = SCRIPT[: args.hands] if args.hands else SCRIPT
    for number, entry in enumerate(script):
        phone = a if number % 2 == 0 else b
        event = {**entry, "hand_number": number}
        preview = _checked(phone, event)
        if preview is None:
            return 1
        print(f"{phone.name}: {preview['text']}", flush=True)
        print(f"  payments {'  '.join(f'{d:+d}' if d else '0' for d in preview['deltas'])}   scores after "
              f"{'  '.join(str(s) for s in preview['scores'])}", flush=True)
        if number == SAME_MOMENT:  # both players enter it at once: the first to reach the table wins
            for name, (code, reply) in _same_moment((phone, b if phone is a else a), preview["event"]):
                print(f"  {name}: {'entered' if code == 200 else reply.get('error')}", flush=True)
        else:
            status, reply = phone.call({"action": "enter", "key": secrets.token_hex(8), "event": preview["event"]})
            if status != 200:
                print(f"tablesvc demo: {phone.name}: {reply.get('error')}", file=sys.stderr)
                return 1
        _wait_for_hand(service, number + 1)
        time.sleep(pause)
    final = service.table.state.final
    if final is not None:
        names = service.table.state.players
        print("final ranking:")
        for s in final.standings:
            print(f"  {s.place}. {names[s.seat]:<8} {s.points:>6}  result {s.result:+d}")
    return 0


def _same_moment(phones: tuple[Phone, Phone], event: dict[str, Any]) -> list[tuple[str, tuple[int, dict[str, Any]]]]:
    """The same entry sent from both phones at the same moment, each with its own key."""
    answers: dict[str, tuple[int, dict[str, Any]]] = {}
    go = threading.Barrier(len(phones))

    def send(p: Phone) -> None:
        go.wait()
        answers[p.name] = p.call({"action": "enter", "key": secrets.token_hex(8), "event": event})

    threads = [threading.Thread(target=send, args=(p,)) for p in phones]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return sorted(answers.items())


def _checked(phone: Phone, event: dict[str, Any]) -> dict[str, Any] | None:
    """The entry's payments as the phone shows them, once the page's feed has the hand (a few tries)."""
    for _ in range(100):
        status, answer = phone.call({"action": "preview", "event": event})
        if status == 200:
            return answer
        if "not the one being played" not in str(answer.get("error")) and "has not started" not in str(
                answer.get("error")):
            print(f"tablesvc demo: {phone.name}: {answer.get('error')}", file=sys.stderr)
            return None
        time.sleep(0.05)
    print(f"tablesvc demo: {phone.name}: the web server's feed did not catch up", file=sys.stderr)
    return None


def _wait_for_hand(service: Any, hands: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while service.table.state.hand_number < hands and time.monotonic() < deadline:
        time.sleep(0.02)
