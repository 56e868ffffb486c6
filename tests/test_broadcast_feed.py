"""broadcast/hands on a real Mosquitto: a recorded game played onto the feed (tablesvc replay --feed) by a
table service under the shipped ACL reaches the broadcast account alone, hand for hand as the record
holds them; the public state never shows a concealed tile; and the organiser's delay holds across a
restart of the service (what was due while it was down comes after the restart, never earlier)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from hardware_sims.pytest_plugin import eventually
from tablesvc.analysis.follow import RecordHands
from tablesvc.engine.events import Discard, GameStart, HandStart
from tablesvc.engine.results import HandResult
from tablesvc.feed_replay import feed_config, play_onto_feed
from tablesvc.replay import load_record
from tablesvc.service import TableService
from tests.conftest import MJLOG_DIR
from tests.feed_schemas import validate
from tests.test_deploy_acl import PASSWORD, deployed_broker  # noqa: F401 - the fixture

GAME = MJLOG_DIR / "double-ron.mjlog"
needs_game = pytest.mark.skipif(not GAME.exists(), reason="../shared/data/tenhou-mjlog not found beside the checkout")


def first_hand(path):
    """The record up to the end of its first hand."""
    record = load_record(path)
    follower = RecordHands()
    for n, event in enumerate(record.events):
        _, _, outputs = follower.step(event)
        if any(isinstance(o, HandResult) for o in outputs):
            return replace(record, events=record.events[:n + 1])
    raise AssertionError("no hand ends in the record")


class Listener:
    """A plain MQTT 3.1.1 subscriber that keeps every message by topic, with the time it arrived."""

    def __init__(self, port: int, user: str | None = None, topics: tuple[str, ...] = ("#",)) -> None:
        self.messages: list[tuple[str, bytes, float]] = []
        self.lock = threading.Lock()
        self.subscribed = threading.Event()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2,
                                  client_id=f"listener-{user}-{time.monotonic_ns()}")
        if user is not None:
            self.client.username_pw_set(user, PASSWORD)
        self.client.on_message = self._message
        self.acknowledged: set[int] = set()
        self.client.on_subscribe = self._subscribed
        self.client.on_connect = lambda c, *_: [c.subscribe(t, qos=1) for t in topics]
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        assert self.subscribed.wait(10), f"{user} could not subscribe"

    def _subscribed(self, _c, _u, mid, *_) -> None:
        with self.lock:
            self.acknowledged.add(mid)
        self.subscribed.set()

    def barrier(self) -> None:
        """One more acknowledged subscription: the broker sends a subscriber everything in the order it
        accepted it, so once the acknowledgement is here, every message the broker routed to this listener
        before it is here too (a positive event instead of a sleep)."""
        _, mid = self.client.subscribe(f"tablesvc/barrier/{time.monotonic_ns()}", qos=1)
        eventually(lambda: mid in self.acknowledged, 15, what="the barrier's acknowledgement")

    def _message(self, _c, _u, msg) -> None:
        with self.lock:
            self.messages.append((msg.topic, msg.payload, time.time()))

    def on(self, suffix: str) -> list[tuple[str, bytes, float]]:
        with self.lock:
            return [m for m in self.messages if m[0].endswith(suffix)]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def wait_for(predicate, timeout: float = 30.0, what: str = "") -> None:
    eventually(predicate, timeout, what=what)


@needs_game
def test_a_replayed_game_reaches_the_broadcast_account_alone(deployed_broker, tmp_path):  # noqa: F811
    port = deployed_broker.port
    record = first_hand(GAME)
    others = {name: Listener(port, name, ("#", "tablesvc/+/+/broadcast/#", "tablesvc/club-a/table-1/broadcast/hands"))
              for name in ("viewer", "web", "web-club-a", "referee-a", "player-ann", "club-a/table-2")}
    broadcast = Listener(port, "broadcast", ("tablesvc/+/+/broadcast/#", "tablesvc/+/+/state"))
    try:
        config = feed_config(f"mqtt://club-a%2Ftable-1:{PASSWORD}@127.0.0.1:{port}", site="club-a",
                             table="table-1", data_dir=tmp_path / "data")
        played = play_onto_feed(record, config, speed=0)
        assert played == len(record.events)
        # every discard of the hand is followed by a state with every hand, as the record holds them
        follower = RecordHands()
        expected = []
        for event in record.events:
            _, seen, _ = follower.step(event)
            if isinstance(event, Discard):
                expected.append(tuple(tuple(sorted(t.mjai for t in hand)) for hand in seen.hands))

        def got() -> set:
            return {tuple(tuple(sorted(s["concealed"] + ([s["drawn"]] if s["drawn"] else []))) for s in p["seats"])
                    for p in (json.loads(p) for _, p, _ in broadcast.on("/broadcast/hands"))}

        wait_for(lambda: broadcast.on("/state") and set(expected) <= got(), what="every hand of the feed")
        hands = [json.loads(p) for _, p, _ in broadcast.on("/broadcast/hands")]
        for payload in hands:
            assert validate("broadcast/hands", payload) == []
        for listener in others.values():
            listener.barrier()  # anything misdelivered to another account has arrived by now
        assert any(s["waits"] for p in hands for s in p["seats"])  # the winner was ready before the win
        # nobody else ever sees a hand: not on broadcast/#, and the public state holds counts, no tile
        for name, listener in others.items():
            assert not [t for t, _, _ in listener.messages if "/broadcast/" in t], name
        states = [json.loads(p) for t, p, _ in others["viewer"].messages if t.endswith("/state")]
        assert states and all(isinstance(s["concealed"], int) for st in states for s in st["seats"])
    finally:
        for listener in (*others.values(), broadcast):
            listener.close()


@needs_game
def test_the_delay_holds_across_a_restart(mosquitto, tmp_path):
    """States held back by the delay are kept through a restart: those due while the service was down come
    right after it starts again, the rest at their time; none is ever published before ts + delay."""
    start = 1_800_000_000.0
    now = [start]
    delay = 60.0
    record = first_hand(GAME)
    config = feed_config(mosquitto.url, site="club", table="t1", data_dir=tmp_path / "data", delay_s=delay)
    listener = Listener(mosquitto.port, None, ("tablesvc/club/t1/broadcast/hands",))
    follower = RecordHands()
    moves = next(i for i, e in enumerate(record.events) if isinstance(e, Discard)) + 12
    service = TableService(config, new_game=True, wall_clock=lambda: now[0])
    service.start()
    try:
        assert service.link.wait_connected(15)
        for event in record.events[:moves]:
            public, seen, _ = follower.step(event)
            service.submit(public, "test")
            if seen is not None:
                service.hands(seen)
            assert service.wait_idle(15)
            now[0] += 1.0  # a second a move: all of them within the delay
        held = service.broadcast.pending()
        assert len(held) >= 8 and all(due > now[0] for due in held)
    finally:
        service.stop()
    listener.barrier()  # what the stopped service ever published has reached the listener by now
    assert listener.on("broadcast/hands") == []  # nothing before its time
    # down until half of what was held is due
    now[0] = sorted(held)[len(held) // 2]
    service = TableService(config, wall_clock=lambda: now[0])
    service.start()
    try:
        assert service.link.wait_connected(15)
        due = sum(1 for d in held if d <= now[0])
        wait_for(lambda: len(listener.on("broadcast/hands")) >= due, what="the states due at the restart")
        assert service.broadcast.pending() == [d for d in held if d > now[0]]  # the rest still held back
        listener.barrier()
        assert len(listener.on("broadcast/hands")) == due  # the due ones, not the rest
        published = [(json.loads(p), now[0]) for _, p, _ in listener.on("broadcast/hands")]
        for later in sorted(d for d in held if d > now[0]):
            now[0] = later
            count = len(published)
            wait_for(lambda c=count: len(listener.on("broadcast/hands")) > c, what="the next state")
            published += [(json.loads(p), now[0]) for _, p, _ in listener.on("broadcast/hands")[len(published):]]
        # the last state reaches the listener as the service lets go of it
        wait_for(lambda: service.broadcast.pending() == [], what="nothing held back any more")
        assert len(published) == len(held)
        for payload, at in published:
            assert payload["ts"] + delay <= at, "a state published before its time"
            assert payload["delay_s"] == delay and validate("broadcast/hands", payload) == []
        assert [p["ts"] for p, _ in published] == sorted(p["ts"] for p, _ in published)
    finally:
        service.stop()
        listener.close()


def test_hands_that_disagree_with_the_table_are_not_published(tmp_path):
    """A source's hands that cross the table's events (a tile count the engine does not have) wait for the
    table: nothing is published from them."""
    from tablesvc.engine.engine import Engine
    from tablesvc.service.broadcast import Broadcast

    sent: list[dict] = []
    b = Broadcast(lambda p: sent.append(p) or True, clock=lambda: 0.0)
    engine = Engine()
    follower = RecordHands()
    record = first_hand(GAME) if GAME.exists() else None
    if record is None:
        pytest.skip("../shared/data/tenhou-mjlog not found beside the checkout")
    for event in record.events:
        public, seen, _ = follower.step(event)
        engine.apply(public)
        if isinstance(event, GameStart | HandStart):
            continue
        if isinstance(event, Discard):
            stale = follower.seen()
            # the hands after the next draw, given before the table has seen it: one seat holds 14
            b.hands(replace(stale, hands=tuple((*h, h[0]) if i == (event.seat + 1) % 4 else h
                                               for i, h in enumerate(stale.hands))))
            before = len(sent)
            b.changed(engine.state, 1, 0.0)
            assert len(sent) == before
            b.hands(seen)
            b.changed(engine.state, 1, 0.0)
            assert len(sent) == before + 1
            break
