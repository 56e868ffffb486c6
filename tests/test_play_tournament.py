"""A tournament round on two phone tables and two simulated device tables: ``start-round`` starts all four with the
seating's names and the clock, the phones enter their hands through ``/api/play`` while the device tables play
generated games through the table simulator, time is called on the phone tables (EMA: the hand in play and one
more; on one of them before any hand is entered), every game ends, and the tournament's standings hold all sixteen
players, with a chombo entered from a phone and a referee's tournament penalty at a phone table."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("sqlalchemy", reason="the records extra is not installed (pip install -e '.[test]')")

from hardware_sims.generator import GeneratorOptions, generate_game
from hardware_sims.table import DirectOutputs, TableSimulator
from tablesvc.mqtt.link import IncomingMessage
from tablesvc.records.records_db import RecordsStore
from tablesvc.tournament.actions import current_standings
from tablesvc.tournament.hall import MqttHall, start_round
from tablesvc.tournament.model import PenaltyKind, SeatingMethod, Tournament
from tablesvc.tournament.seating import shuffled
from tablesvc.tournament.tournament_db import NewPlayer, TournamentStore
from tests.test_play_table import PhoneTable, api, state, wait_until
from tests.test_records_collector import CollectorProcess
from tests.web_support import broker, web  # noqa: F401

RULES = "ema2012"  # the simulator deals red fives


def test_a_round_with_phone_tables_and_device_tables(broker, web, tmp_path):  # noqa: F811
    db = str(tmp_path / "records.sqlite3")
    records = RecordsStore(db)
    store = TournamentStore(records)
    tid = store.create(Tournament("Phones Open", RULES, 1, time_rule="ema", minutes=90))
    store.add_players(tid, [NewPlayer(f"Player {i:02d}", None) for i in range(1, 17)])
    hall = [("hall", "phone-1"), ("hall", "phone-2"), ("hall", "dev-1"), ("hall", "dev-2")]
    store.set_tables(tid, hall)
    store.save_seating(tid, 1, shuffled(list(range(1, 17))), SeatingMethod.SHUFFLED)
    collector = CollectorProcess(broker.url, db, "tournament-records", tmp_path)
    collector.start()
    tables = {t: PhoneTable(broker.url, tmp_path / t, s, t).start() for s, t in hall}
    try:
        for _, t in hall:
            wait_until(lambda t=t: web.store.table("hall", t) is not None, message=f"the web server sees {t}")
        with MqttHall(broker.url) as link:
            report = start_round(store, tid, 1, link, timeout=20)
        assert not report.not_started, report.not_started
        for _, t in hall:
            s = tables[t].service.table.state
            assert s.clock is not None and s.clock.minutes == 90  # every table plays on the tournament's clock
            assert all(name.startswith("Player ") for name in s.players)  # the seating's names

        # the device tables play generated games through the simulator, as their panels and camera would report,
        # both at once as in a hall: whole games among the shortest the generator deals (626 and 731 events)
        def play(t: str, seed: int) -> None:
            service = tables[t].service
            record = generate_game(seed, GeneratorOptions(rules=RULES, players=service.table.state.players))
            sim = TableSimulator(record, DirectOutputs(service.observe), start_game=lambda _e: None)
            for event in record.events:
                sim.show(event)

        players = [threading.Thread(target=play, args=(t, seed)) for t, seed in (("dev-1", 73), ("dev-2", 65))]
        for th in players:
            th.start()
        for th in players:
            th.join(180)
        for t in ("dev-1", "dev-2"):
            service = tables[t].service
            assert service.wait_idle(60)
            assert service.table.state.phase.value == "game_over"

        # a tournament penalty for a player at phone-1, given by the referee as at any table
        by_site = {(h.site, h.table_id): h.number for h in store.tables(tid)}
        seating = next(r for r in store.rounds(tid) if r.number == 1).seating
        late = seating.tables[by_site[("hall", "phone-1")] - 1][1]
        store.add_penalty(tid, late, points=4000, reason="late", kind=PenaltyKind.PENALTY, round_number=1,
                          table=by_site[("hall", "phone-1")])
        chombo = seating.tables[by_site[("hall", "phone-1")] - 1][2]

        # phone-1: a chombo (the hand replayed), two hands won, then time is called: EMA plays the hand in play
        # and one more. phone-2: time is called before any hand is entered: the hand being played counts, as at a
        # table with devices
        time_at = {"phone-1": 3, "phone-2": 0}
        for t in ("phone-1", "phone-2"):
            wait_until(lambda t=t: state(web, "hall", t).get("phase") == "between_hands", message=f"{t} started")
            for number in range(time_at[t] + 2):
                if number == time_at[t]:
                    service = tables[t].service
                    service.inbox.put(("cmd", IncomingMessage(f"{service.config.topics.base}/cmd",
                                                              b'{"command": "clock", "action": "time_up", '
                                                              b'"transaction": "referee-time"}')))
                    assert service.wait_idle(20)
                    # phone-2: how its game is played is not known before its first entry, which then counts
                    assert service.table.state.clock.hands_left == (1 if number == 0 else 2)
                wait_until(lambda t=t, n=number: state(web, "hall", t).get("hand_id", "").endswith(f"#{n + 1}"),
                           message=f"{t} shows hand {number + 1}")
                event = {"type": "win_entry", "from_seat": (number + 2) % 4, "hand_number": number,
                         "wins": [{"seat": (number + 1) % 4, "han": 2, "fu": 30}]}
                if t == "phone-1" and number == 0:
                    event = {"type": "chombo_entry", "seat": 2, "hand_number": 0}
                status, answer = api(web, "hall", t, {"action": "enter", "key": f"{t}-hand-{number:04d}",
                                                      "event": event})
                assert status == 200, answer
            final = tables[t].service.table.state.final
            assert final is not None and final.ended == "time"
            assert len(tables[t].service.table.state.results) == time_at[t] + 2

        # the records hold the four games, and the tournament's standings every player of them
        def standings():
            return current_standings(store, tid)

        wait_until(lambda: sum(1 for g in standings().tables if g.status == "finished") == 4, 30,
                   "the collector records all four games with their final results")
        result = standings()
        assert {(g.site, g.table_id) for g in result.tables if g.game is not None} == set(hall)
        assert len(result.players) == 16 and all(p.games == 1 for p in result.players)
        by_player = {p.player.number: p for p in result.players}
        # the chombo entered on phone-1 is in its game (ema2012: paid as a reverse mangan) and in the standings
        phone_1 = tables["phone-1"].service.table.state
        assert phone_1.results[0].kind == "chombo" and phone_1.results[0].deltas[2] == -8000
        assert by_player[chombo].score == phone_1.scores[2] - 30000
        assert sum(p.games_result for p in result.players) == 0
        # the tournament's penalty, given at phone-1, taken off the player's total
        assert by_player[late].penalties == 4000 and by_player[late].total == by_player[late].games_result - 4000
        assert all(p.total == p.games_result for n, p in by_player.items() if n != late)
    finally:
        collector.terminate()
        for t in tables.values():
            t.stop()
