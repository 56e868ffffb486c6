"""``[start]`` in a table's config, end to end: a bare ``start_game`` over a real Mosquitto takes the game up there.

The referee switches the box on during South 2: the table's config says where the game stands, the console
sends ``start_game`` with nothing more, and the retained ``state`` shows the configured round, counters,
sticks, scores and dealer (seat 3, not the seat 1 that South 2 would give by default).
"""

from __future__ import annotations

from tablesvc.config import load_config
from tablesvc.engine.events import GameStart, from_dict
from tablesvc.service import TableService
from tests.test_service_mqtt import Subscriber, config_text, send_command

# ema2012: 4 x 30000 = 120000 = 31000 + 28000 + 35000 + 25000 + one stick of 1000 on the table
START = ('[start]\nround = "S2"\nhonba = 2\nsticks = 1\nscores = [31000, 28000, 35000, 25000]\ndealer = 3\n')
PLAYERS = 'players = ["Ann", "Bob", "Cat", "Dan"]\n'


def test_a_bare_start_game_takes_the_game_up_where_the_config_says(mosquitto, tmp_path):
    text = config_text(mosquitto.url, tmp_path / "data").replace('id = "t1"\n', 'id = "t1"\n' + PLAYERS) + START
    path = tmp_path / "table.toml"
    path.write_text(text)
    config = load_config(path)  # as `tablesvc run --config table.toml` reads it
    assert config.start["dealer"] == 3
    service = TableService(config)
    service.start()
    sub = None
    try:
        assert service.link.wait_ready(15)
        sub = Subscriber(mosquitto.port)
        send_command(sub, {"command": "start_game", "transaction": "go"})
        assert sub.wait_for(lambda: any(r["transaction"] == "go" for r in sub.of("cmd/reply")))
        (reply,) = [r for r in sub.of("cmd/reply") if r["transaction"] == "go"]
        assert reply["status"] == "ok", reply
        assert sub.wait_for(lambda: any(s["phase"] != "not_started" for s in sub.of("state")))
        state = [s for s in sub.of("state") if s["phase"] != "not_started"][-1]
        assert (state["round"], state["honba"], state["sticks"], state["dealer"]) == ("S2", 2, 1, 3)
        assert state["hand_id"] == "S2-2#1"
        assert [(s["name"], s["score"], s["wind"]) for s in state["seats"]] == [
            ("Ann", 31000, "S"), ("Bob", 28000, "W"), ("Cat", 35000, "N"), ("Dan", 25000, "E")]
        # the journal keeps the situation with the game, as a start_game that gave it itself would
        assert service.wait_idle(10)
        (start,) = [from_dict(e.body) for e in service.journal.entries() if e.body.get("type") == "start_game"]
        assert start == GameStart(players=("Ann", "Bob", "Cat", "Dan"), rules="ema2012", round="S2", honba=2,
                                  sticks=1, scores=(31000, 28000, 35000, 25000), dealer=3)
    finally:
        if sub is not None:
            sub.close()
        service.stop()
