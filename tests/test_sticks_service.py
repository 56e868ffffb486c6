"""The score sticks as a second witness, end to end: generated games played on simulated devices (an automatic
table, a seat panel and a stick tray reader on real pseudo-terminals), the players paying in sticks, the real
service comparing the trays with the game and publishing on a real Mosquitto."""

from __future__ import annotations

import json
import uuid

import pytest

from hardware_sims.pytest_plugin import SimulatedTable
from hardware_sims.sticks import Mispayment
from tablesvc.mqtt.link import IncomingMessage
from tablesvc.service import TableService
from tests.feed_schemas import validate

# The trays here settle in a fifth of the protocol's second, and each service compares them on that time scale:
# the reconciler's settling time and flutter window scaled alike, its grace ten settling times (a payment's
# reading comes one settling time after the payment, well within it). A game pays in the same readings, in the
# same order, in a fifth of the time; the reconciler at the protocol's own times is tests/test_sticks.py's.
SETTLE = 0.2


def _on_test_time(service: TableService) -> TableService:
    """``service`` comparing its trays on the time scale of :data:`SETTLE`."""
    reconciler = service.sticks.reconciler
    reconciler.settle = SETTLE
    reconciler.flutter_window = 2 * SETTLE
    reconciler.grace = 10 * SETTLE
    return service


@pytest.fixture
def stick_table(mosquitto, tmp_path, pty_device, stick_tray):
    """The plugin's ``stick_table``, its tray and service on the time scale of :data:`SETTLE`."""
    table = SimulatedTable(mosquitto, tmp_path, pty_device,
                           make_tray=lambda device_id: stick_tray(device_id, settle=SETTLE))
    _on_test_time(table.service)
    table.start()
    yield table
    table.stop()


def _command(table, **command) -> dict:
    """A referee command over the service's own inbox, as MQTT delivers it; the reply."""
    replies = table.messages("cmd/reply")
    command.setdefault("transaction", str(uuid.uuid4()))
    table.service.inbox.put(("cmd", IncomingMessage(f"{table.base}/cmd", json.dumps(command).encode())))
    assert table.wait_for(lambda: any(r.get("transaction") == command["transaction"] for r in replies), 20)
    reply = next(r for r in replies if r.get("transaction") == command["transaction"])
    assert validate("cmd/reply", reply) == [], reply  # every reply as its schema says
    return reply


def _valid(messages: list[dict]) -> None:
    for message in messages:
        assert validate("sticks", message) == [], message


def test_a_game_paid_right_raises_nothing_and_its_riichi_sticks_are_accounted_for(stick_table):
    sticks = stick_table.messages("sticks")
    # a short whole game (8 hands, 5 riichi): each payment and riichi stick is a tray reading that settles for
    # its settling time
    stick_table.play(seed=6)
    stick_table.service.wait_idle(20)
    state = stick_table.service.table.state
    assert state.final is not None  # the whole game
    assert stick_table.players.unreported == 0
    _valid(sticks)
    statuses = [m["status"] for m in sticks]
    assert "mismatch" not in statuses and "fault" not in statuses, [m["text"] for m in sticks]
    checks = {m["check"] for m in sticks if m["status"] == "ok"}
    assert "the game's start" in checks
    assert any(c.startswith("the payments of hand ") for c in checks)
    riichi = [m for m in sticks if m["status"] == "ok" and m["check"].endswith("'s riichi")]
    assert riichi, "the game played has a riichi (seed 6): its stick on the table is compared"
    assert any(m["riichi"] >= 1 and m["game"]["sticks"] >= 1 for m in riichi)
    # the service has handled every input; its last verdict may still be on its way through the broker
    assert stick_table.wait_for(lambda: sticks[-1]["status"] == "ok" and sticks[-1]["game"]["scores"] == list(
        state.scores), 10), sticks[-1]
    assert sticks[-1]["status"] == "ok" and sticks[-1]["differences"] == []
    assert sticks[-1]["game"]["scores"] == list(state.scores)
    assert sum(sticks[-1]["trays"]) + 1000 * sticks[-1]["riichi"] == sum(state.scores) + 1000 * state.sticks


def test_a_mispayment_is_caught_in_its_hand_naming_the_seats_and_the_amount(stick_table):
    sticks = stick_table.messages("sticks")
    state = stick_table.service.table

    def raised() -> bool:
        return any(m["status"] == "mismatch" for m in sticks)

    stick_table.play(seed=3, mispay=Mispayment(hand=2, points=1000), until=raised)
    assert stick_table.wait_for(raised, 20)
    _valid(sticks)
    hand, payer, payee, points = stick_table.players.mispaid
    alert = next(m for m in sticks if m["status"] == "mismatch")
    assert hand == 2 and alert["check"].startswith("the payments of hand 2 ")
    # caught before the third hand was played: when it started, the payments of the second were over
    assert state.state.hand_number <= 3
    assert {(d["seat"], d["difference"]) for d in alert["differences"]} == {(payer, points), (payee, -points)}
    names = stick_table.service.table.state.players
    first = min(payer, payee)
    assert alert["text"].startswith(f"{names[first]}'s tray holds ")
    assert f"{names[max(payer, payee)]}'s 1,000 {'more' if max(payer, payee) == payer else 'less'}" in alert["text"]
    assert not any(m["status"] == "fault" for m in sticks)
    # a mispayment moves sticks between trays: the table's points are all there, so it is no fault
    assert sum(alert["trays"]) + 1000 * alert["riichi"] == sum(alert["game"]["scores"]) + 1000 * alert["game"][
        "sticks"]
    # nothing changed the game's scores: they are the game's own, as an engine of the players' own says
    stick_table.service.wait_idle(20)
    assert list(state.state.scores) == list(stick_table.players.engine.state.scores)

    # the referee rules the game wrong: the scores from the trays, in one command; the alert clears
    trays = alert["trays"]
    reply = _command(stick_table, command="set_scores", scores=trays, reason="scores from the trays")
    assert reply["status"] == "ok", reply
    assert stick_table.wait_for(lambda: sticks[-1]["status"] == "ok" and sticks[-1]["check"] ==
                                "the referee's scores", 20), sticks[-1]
    assert list(state.state.scores) == trays


def test_the_referee_dismisses_a_difference_and_the_fixed_trays_clear_it(stick_table):
    sticks = stick_table.messages("sticks")
    tray = stick_table.tray
    reply = _command(stick_table, command="start_game", players=["Aoi", "Ben", "Chloe", "Dai"])
    assert reply["status"] == "ok"
    tray.set_trays((30000,) * 4)
    assert tray.wait_reported()
    assert stick_table.wait_for(lambda: sticks and sticks[-1]["status"] == "ok", 20)
    tray.set_trays((31000, 29000, 30000, 30000))  # Aoi took a stick of Ben's
    assert tray.wait_reported()
    reply = _command(stick_table, command="sticks", action="recheck")
    assert reply["status"] == "ok" and reply["data"]["sticks"] == "waiting"
    assert stick_table.wait_for(lambda: sticks[-1]["status"] == "mismatch", 20)  # after the grace
    assert sticks[-1]["text"].startswith("Aoi's tray holds 31,000, the game says 30,000; Ben's 1,000 less")
    reply = _command(stick_table, command="sticks", action="dismiss")
    assert reply["data"]["sticks"] == "waiting" and "fix their trays" in reply["data"]["text"]
    tray.set_trays((30000,) * 4)
    assert tray.wait_reported()
    assert stick_table.wait_for(lambda: sticks[-1]["status"] == "ok", 20)
    assert list(stick_table.service.table.state.scores) == [30000] * 4  # the game was never changed


def test_a_flaky_tray_is_a_device_fault_never_a_score_alert(stick_table):
    sticks = stick_table.messages("sticks")
    tray = stick_table.tray
    assert _command(stick_table, command="start_game", players=["Aoi", "Ben", "Chloe", "Dai"])["status"] == "ok"
    tray.set_trays((30000,) * 4)
    assert tray.wait_reported()
    assert stick_table.wait_for(lambda: sticks and sticks[-1]["status"] == "ok", 20)
    tray.flutter(1.5)  # a reading every 20 ms, five in the 0.4 s window are a fault
    assert stick_table.wait_for(lambda: sticks[-1]["status"] == "fault", 20)
    assert "never settle" in sticks[-1]["fault"]
    # a fault is no witness: a game cannot start from it
    reply = _command(stick_table, command="start_game", scores="sticks")
    assert reply["status"] == "error" and "no reading it can be trusted" in reply["error"]
    # the reader settles again (its trays held [30000] * 4 all along): compared again; the jittered readings
    # never became a score alert
    assert stick_table.wait_for(lambda: sticks[-1]["status"] == "ok", 30), sticks[-1]
    assert not any(m["status"] == "mismatch" for m in sticks)
    # unplugged: lost, a fault too
    tray.unplug()
    assert stick_table.wait_for(lambda: sticks[-1]["status"] == "fault" and "lost" in sticks[-1]["fault"], 20)
    _valid(sticks)


def test_a_game_starts_from_the_sticks(stick_table):
    tray = stick_table.tray
    tray.set_trays((32000, 24000, 30000, 33000), riichi=1)
    assert tray.wait_reported()
    stick_table.service.wait_idle(10)
    reply = _command(stick_table, command="start_game", players=["Aoi", "Ben", "Chloe", "Dai"], round="S2",
                     scores="sticks")
    assert reply["status"] == "ok", reply
    state = stick_table.service.table.state
    assert state.scores == [32000, 24000, 30000, 33000] and state.sticks == 1


def test_the_demo_with_a_mispayment_prints_the_alert_naming_the_seats_and_amount():
    """``tablesvc demo --mispay``: a stick tray reader on a third pseudo-terminal, hand 2 paid 1,000 short."""
    import re
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tablesvc", "demo", "--speed", "0", "--seed", "5", "--mispay", "2",
                           "--hands", "3", "--web", "off"], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "stick tray: " in proc.stdout and "(hand 2 is paid 1,000 short)" in proc.stdout
    alerts = re.findall(r"^  sticks mismatch: (.*)$", proc.stdout, re.M)
    assert alerts and all(a.endswith("(after the payments of hand 2 (E2))") for a in alerts)
    # seed 5's hand 2: Aoi ron from Chloe; Chloe handed 1,000 too little
    assert re.match(r"Aoi's tray holds [\d,]+, the game says [\d,]+; Chloe's 1,000 more", alerts[0])
    assert "fault" not in proc.stdout


def test_commands_take_the_scores_from_the_trays_and_refuse_without_a_reading():
    from tablesvc.service.commands import Commands

    started = []
    reading = [None]
    commands = Commands(submit=lambda event, source: started.append(event) or 1, undo=lambda *a: 1,
                        amend=lambda *a: 1, trays=lambda: reading[0], sticks=lambda action: {"sticks": action})
    refused = commands.handle(b'{"command": "start_game", "scores": "sticks"}')
    assert not refused.ok and "no reading it can be trusted" in refused.payload["error"] and not started
    reading[0] = ((31000, 29000, 30000, 29000), 1)
    assert commands.handle(b'{"command": "start_game", "scores": "sticks"}').ok
    assert started[-1].scores == (31000, 29000, 30000, 29000) and started[-1].sticks == 1
    reading[0] = ((31000, 29000, 30000, 30000), 1)  # a stick on the table and a referee who says there is none
    assert commands.handle(b'{"command": "start_game", "scores": "sticks", "sticks": 0}').ok
    assert started[-1].sticks == 0  # given with the command: not the reader's
    # a single settled reading that does not add up (110,000 on a 120,000 table) is no score to start from
    count = len(started)
    reading[0] = ((30000, 30000, 30000, 20000), 0)
    for raw in (b'{"command": "start_game", "scores": "sticks"}',
                b'{"command": "start_game", "scores": "sticks", "rules": "ema2016"}'):
        refused = commands.handle(raw)
        assert not refused.ok and len(started) == count
        assert "110,000 in all" in refused.payload["error"] and "holds 120,000" in refused.payload["error"]
        assert "a stick is missing or misread" in refused.payload["error"]
    assert commands.handle(b'{"command": "sticks", "action": "dismiss"}').payload["data"] == {"sticks": "dismiss"}
    assert not commands.handle(b'{"command": "sticks", "action": "pay"}').ok
    bare = Commands(submit=lambda event, source: 1, undo=lambda *a: 1, amend=lambda *a: 1)
    for raw in (b'{"command": "sticks", "action": "recheck"}', b'{"command": "start_game", "scores": "sticks"}'):
        reply = bare.handle(raw)
        assert not reply.ok and "no stick tray reader" in reply.payload["error"]


def test_start_scores_from_the_sticks_in_the_configuration(mosquitto, tmp_path, pty_device, stick_tray):
    from tablesvc.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match=r'\[start\] scores: "sticks" takes the scores from the stick tray reader'):
        parse_config('[table]\nsite = "s"\nid = "t"\n[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[start]\nscores = "sticks"\n')
    table = SimulatedTable(mosquitto, tmp_path, pty_device,
                           make_tray=lambda device_id: stick_tray(device_id, settle=SETTLE),
                           extra_config='[start]\nround = "S1"\nscores = "sticks"\n')
    _on_test_time(table.service)
    table.start()
    try:
        table.tray.set_trays((31000, 29000, 32000, 28000))  # 120,000: the table of its rules (ema2012)
        assert table.tray.wait_reported()
        table.service.wait_idle(10)
        assert _command(table, command="start_game", players=["Aoi", "Ben", "Chloe", "Dai"])["status"] == "ok"
        state = table.service.table.state
        assert state.scores == [31000, 29000, 32000, 28000] and state.round == 4
    finally:
        table.stop()


def test_a_table_has_one_stick_tray_reader():
    from tablesvc.config import ConfigError, parse_config

    links = "".join(f'[[serial]]\nname = "s{i}"\nurl = "/dev/null"\nkind = "sticks"\nids = ["S{i}"]\n' for i in (1, 2))
    with pytest.raises(ConfigError, match=r"one stick tray reader per table, not 2 \(s1, s2\)"):
        parse_config('[table]\nsite = "s"\nid = "t"\n[mqtt]\nurl = "mqtt://127.0.0.1:1"\n' + links)


def test_a_restarted_service_compares_the_trays_with_the_game_it_resumes(stick_table):
    tray = stick_table.tray
    assert _command(stick_table, command="start_game", players=["Aoi", "Ben", "Chloe", "Dai"])["status"] == "ok"
    tray.set_trays((30000,) * 4)
    assert tray.wait_reported()
    stick_table.service.wait_idle(10)
    assert stick_table.service.sticks.verdict.status.value == "ok"
    stick_table.service.stop()
    tray.set_trays((31000, 29000, 30000, 30000))  # moved while the service was down
    stick_table.service = _on_test_time(TableService(stick_table.config))  # resumes the game from its journal
    sticks = stick_table.messages("sticks")
    stick_table.start()
    # the reader is asked who it is, says what its trays hold, and the game resumed is compared with them
    assert stick_table.wait_for(lambda: sticks and sticks[-1]["trays"] == [31000, 29000, 30000, 30000], 20), sticks
    assert sticks[-1]["check"] == "the service's start" and sticks[-1]["game"]["scores"] == [30000] * 4
    assert stick_table.wait_for(lambda: sticks[-1]["status"] == "mismatch", 20)  # after the grace
    assert sticks[-1]["text"].startswith("Aoi's tray holds 31,000, the game says 30,000; Ben's 1,000 less")


def test_a_malformed_sticks_line_never_changes_the_game(stick_table):
    """Nonsense from the tray reader (text for a total, five trays, a negative tray, a bad checksum, a torn or
    overlong line) is refused at the link: the game, its journal and the comparison stay as they were, and the
    next good reading is compared as ever."""
    sticks = stick_table.messages("sticks")
    tray = stick_table.tray
    assert _command(stick_table, command="start_game", players=["Aoi", "Ben", "Chloe", "Dai"])["status"] == "ok"
    tray.set_trays((30000,) * 4)
    assert tray.wait_reported()
    assert stick_table.wait_for(lambda: sticks and sticks[-1]["status"] == "ok", 20)
    service = stick_table.service
    service.wait_idle(10)
    before = (list(service.table.state.scores), service.journal.last_seq, len(sticks))
    bad = [tray.send_event("TRAYS", "thirty", 30000, 30000, 30000, 0),
           tray.send_event("TRAYS", 30000, 30000, 30000, 30000, 30000, 0),
           tray.send_event("TRAYS", -1000, 31000, 30000, 30000, 0)]
    tray.noise(b"$STK1,77,TRAYS,1,2,3*ZZ\r\n$STK1,78,TRA")
    tray.overlong_line()
    for seq in bad:  # each refused by the host (NAKed), none acknowledged as an event
        assert tray.wait_for(lambda s=seq: s not in tray.pending(), 20), seq
    service.wait_idle(10)
    assert (list(service.table.state.scores), service.journal.last_seq, len(sticks)) == before
    assert service.sticks.verdict.status.value == "ok" and service.sticks.verdict.reading.trays == (30000,) * 4
    tray.set_trays((31000, 29000, 30000, 30000))  # a good reading after them is compared
    assert tray.wait_reported()
    assert stick_table.wait_for(lambda: sticks[-1]["status"] in ("waiting", "mismatch"), 20), sticks[-1]
    assert list(service.table.state.scores) == [30000] * 4
