"""The web server's store on its own: what a page gets on connecting and on coming back, and bad input."""

from __future__ import annotations

import asyncio
import json

from tablesvc.web.feed_store import Store


def _state(seq: int, phase: str = "playing", discards: int = 0) -> bytes:
    seats = [{"seat": s, "name": n, "score": 25000, "discards": [{"tile": "5m", "riichi": False, "called": False}] *
              (discards if s == 0 else 0), "melds": []} for s, n in enumerate(("Ann", "Bob", "Cy", "Di"))]
    return json.dumps({"seq": seq, "phase": phase, "hand_id": "E1-0#1", "seats": seats}).encode()


def _event(seq: int, kind: str, body: dict, ts: str = "2026-11-23T23:12:11.042Z") -> bytes:
    return json.dumps({"seq": seq, "ts": ts, "source": "test", "kind": kind, "event": {"type": kind, **body}}).encode()


def _subscribe(store: Store, key, last=None):
    loop = asyncio.new_event_loop()
    try:
        return store.subscribe(loop, key, last)
    finally:
        loop.close()


def test_a_page_that_comes_back_gets_what_it_missed_and_a_new_page_a_snapshot():
    store = Store()
    base = "tablesvc/club/t1"
    store.feed(f"{base}/status", b'{"status": "online"}')
    store.feed(f"{base}/events", _event(1, "start_game", {"players": ["Ann", "Bob", "Cy", "Di"]}))
    store.feed(f"{base}/state", _state(1))
    store.feed(f"{base}/events", _event(2, "hand_start", {}))
    store.feed(f"{base}/state", _state(2))
    store.feed(f"{base}/events", _event(3, "discard", {"seat": 0, "tile": "5m"}))
    store.feed(f"{base}/results", json.dumps({"type": "hand_result", "seq": 3, "result": "win", "deltas": [0] * 4,
                                              "wins": []}).encode())
    store.feed(f"{base}/state", _state(3, discards=1))
    _, missed, snapshot = _subscribe(store, ("club", "t1"), 2)
    assert snapshot is None
    assert [(m.kind, m.seq) for m in missed] == [("results", None), ("state", 3)]
    assert "id: 3\nevent: state\n" in missed[-1].text
    _, missed, snapshot = _subscribe(store, ("club", "t1"), None)
    assert missed is None and snapshot["state"]["seq"] == 3 and len(snapshot["results"]) == 1
    assert snapshot["state"]["discard_seqs"] == [[3], [], [], []]  # the console can amend it by its seq
    _, missed, snapshot = _subscribe(store, ("club", "t1"), 999)  # an id the ring does not hold: snapshot
    assert missed is None and snapshot is not None
    table = store.table("club", "t1")
    assert table.game_started_ts == table.last_event_ts == 1795475531.042  # ISO 8601 times read


def test_bad_messages_are_dropped_and_nothing_else_changes():
    store = Store()
    base = "tablesvc/club/t1"
    store.feed(f"{base}/state", _state(5))
    for topic, payload in ((f"{base}/state", b"not json"), (f"{base}/state", b"[1, 2]"),
                           (f"{base}/events", b'{"seq": "x"}'), (f"{base}/results", b'{"type": 5}'),
                           ("tablesvc/club", b"{}"), ("other/club/t1/state", b"{}"), (f"{base}/state", b""),
                           (f"{base}/state", b"[" * 50_000 + b"]" * 50_000), (f"{base}/state", b'{"a": "\xff"}')):
        store.feed(topic, payload)
    table = store.table("club", "t1")
    assert table.state["seq"] == 5 and table.entries == {} and table.results == []
    assert store.summaries("*")[0]["players"][0]["name"] == "Ann"


def test_a_new_game_starts_a_new_history():
    store = Store()
    base = "tablesvc/club/t1"
    for seq in (1, 2, 3):
        store.feed(f"{base}/events", _event(seq, "discard" if seq > 1 else "start_game", {"seat": 0, "tile": "5m"}))
    store.feed(f"{base}/results", json.dumps({"type": "hand_result", "seq": 3, "result": "win", "deltas": [0] * 4,
                                              "wins": []}).encode())
    store.feed(f"{base}/events", _event(1, "start_game", {}))
    table = store.table("club", "t1")
    assert sorted(table.entries) == [1] and table.results == []


def test_alerts_last_while_their_cause_does():
    now = [1795475531.042 + 60]
    store = Store(idle_limit=300, clock=lambda: now[0])
    base = "tablesvc/club/t1"
    store.feed(f"{base}/status", b'{"status": "online"}')
    store.feed(f"{base}/events", _event(1, "start_game", {}))
    store.feed(f"{base}/state", _state(1))
    store.feed(f"{base}/devices/camera", b'{"name": "camera", "connected": true, "state": "reading"}')
    assert store.summaries("club")[0]["alerts"] == []
    store.feed(f"{base}/devices/camera", b'{"name": "camera", "connected": false, "state": "no frames"}')
    kinds = [(a["kind"], a["text"]) for a in store.summaries("club")[0]["alerts"]]
    assert kinds == [("device", "camera lost (no frames)")]
    store.feed(f"{base}/devices/camera", b'{"name": "camera", "connected": true, "state": "reading"}')
    now[0] += 600  # ten minutes without an event in a game being played
    assert [a["kind"] for a in store.summaries("club")[0]["alerts"]] == ["idle"]
    store.feed(f"{base}/status", b'{"status": "offline"}')
    row = store.summaries("club")[0]
    assert [a["kind"] for a in row["alerts"]] == ["offline"] and row["online"] is False and row["since"] == now[0]


def test_a_server_started_mid_game_knows_the_last_hand_from_the_retained_state():
    store = Store()
    state = json.loads(_state(40, phase="between_hands"))
    state["last_result"] = {"type": "hand_result", "seq": 39, "result": "exhaustive_draw", "deltas": [0] * 4}
    store.feed("tablesvc/club/t1/state", json.dumps(state).encode())
    _, _, snapshot = _subscribe(store, ("club", "t1"))
    assert [r["seq"] for r in snapshot["results"]] == [39]
    assert snapshot["state"]["discard_seqs"] is None  # no events seen: the console cannot number discards


def _journal_fold(entries: dict[int, dict]) -> list[tuple[int, dict]] | None:
    """The game as the table folds its journal, written out here: None unless entries 1..n are all there."""
    if not entries or sorted(entries) != list(range(1, max(entries) + 1)):
        return None
    game: list[tuple[int, dict]] = []
    for seq in sorted(entries):
        kind, body = entries[seq]["kind"], entries[seq]["event"]
        if kind == "undo":
            game = game[:len(game) - body["count"]]
        elif kind == "amend":
            game = [(s, body["event"] if s == body["seq"] else e) for s, e in game]
        else:
            game.append((seq, body))
    return game


def test_the_game_the_pages_get_follows_every_undo_amend_gap_and_redelivery():
    """The store folds entries as they come; whatever order they come in, it answers as a fold from the start."""
    store = Store()
    base = "tablesvc/club/t1"
    discard = {"type": "discard", "seat": 0, "tile": "5m"}
    sent: dict[int, dict] = {}
    arrivals = [
        (1, "start_game", {"type": "start_game", "players": ["Ann", "Bob", "Cy", "Di"]}),
        (2, "hand_start", {"type": "hand_start"}),
        (3, "discard", discard),
        (4, "discard", {**discard, "seat": 1, "tile": "7p"}),
        (5, "amend", {"seq": 3, "event": {**discard, "tile": "6m"}}, "referee:Ann"),
        (6, "undo", {"count": 1}, "referee"),
        (8, "discard", {**discard, "seat": 2}),  # 7 is late: a gap until it comes
        (7, "discard", {**discard, "seat": 1, "tile": "9s"}, "referee:Bob"),
        (7, "discard", {**discard, "seat": 1, "tile": "1s"}),  # a redelivery that differs: folded again
        (9, "undo", {"count": 2}),
        (10, "amend", {"seq": 2, "event": {"type": "hand_start", "dice": [3, 4]}}, "referee:Cy"),
    ]
    for seq, kind, body, *source in arrivals:
        entry = {"seq": seq, "ts": "2026-11-23T23:12:11.042Z", "source": source[0] if source else "test",
                 "kind": kind, "event": body}
        sent[seq] = entry
        store.feed(f"{base}/events", json.dumps(entry).encode())
        store.feed(f"{base}/state", _state(seq))
        got = store.table("club", "t1").effective_events()
        assert got == _journal_fold(sent), (seq, kind)
        # the referee's rulings as the table page lists them: every referee entry held now, a redelivery by
        # someone else no longer one
        rulings = [(r["seq"], r["kind"], r["by"], r["target"]) for r in store.table("club", "t1").rulings()]
        assert rulings == [(s, e["kind"], e["source"].partition(":")[2] or None,
                            e["event"]["seq"] if e["kind"] == "amend" else None)
                           for s, e in sorted(sent.items()) if e["source"].startswith("referee")], seq
    assert [r["seq"] for r in store.table("club", "t1").rulings()] == [5, 6, 10]
    assert [s for s, _ in got] == [1, 2, 3]  # after both undos: the start, the amended deal, the amended discard
    assert got[1][1] == {"type": "hand_start", "dice": [3, 4]} and got[2][1]["tile"] == "6m"
    # a new game starts the fold anew
    store.feed(f"{base}/events", _event(1, "start_game", {"players": ["Ann", "Bob", "Cy", "Di"]}))
    assert [s for s, _ in store.table("club", "t1").effective_events()] == [1]
