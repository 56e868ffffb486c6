"""Seat cameras in the real service: a table fed by the simulators, four seat cameras whose source is a video
of rendered frames (written by OpenCV, decoded by OpenCV), a real Mosquitto. The seats' hands reach
``broadcast/hands``, the public state carries none, the readings are journalled privately, and a service
restarted with its cameras unplugged takes the game up with the seats' last hands known."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from hardware_sims.generator import generate_game
from hardware_sims.hand_render import STRIP_W, HandEffects, HandView, SeatPose, render_hand
from hardware_sims.pytest_plugin import SimulatedTable, eventually
from hardware_sims.seat_cams import enrollment_frames, seat_state, write_video
from hardware_sims.tile_art import drawn_tile_set
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import Discard
from tablesvc.engine.state import GameState
from tablesvc.formats.record import RecordedGame
from tablesvc.service import TableService
from tablesvc.storage.journal import Journal
from vision.naming.embedding import EmbeddingClassifier
from vision.seat.calibration import SeatCalibration
from vision.seat.reader import enroll_from_rows

POSE = SeatPose(elevation_deg=35.0, distance_mm=420.0, offset_mm=15.0, roll_deg=1.5)


@pytest.fixture(scope="module")
def seat_set(tmp_path_factory):
    """One seat camera's calibration and the drawn set enrolled from it (the four cameras stand alike)."""
    folder = tmp_path_factory.mktemp("seat-set")
    tiles = drawn_tile_set()
    cal = SeatCalibration.of(POSE.strip_quad(), STRIP_W, POSE.image_size)
    cal.save(folder / "seat.json")
    namer = EmbeddingClassifier(half_turn=False)
    enroll_from_rows(namer, cal, enrollment_frames(tiles, POSE, HandEffects(noise_sigma=3, jpeg_quality=85)))
    namer.save(folder / "seat.npz")
    return tiles, folder


def _first_turn(seed: int) -> tuple[RecordedGame, list]:
    """A generated game cut after the dealer's first discard, and each seat's true hand then."""
    game = generate_game(seed)
    cut = next(i for i, e in enumerate(game.events) if isinstance(e, Discard))
    short = dataclasses.replace(game, events=game.events[: cut + 1])
    engine = Engine(GameState(players=game.players))
    for event in short.events:
        engine.apply(event)
    return short, [seat_state(engine.state, seat) for seat in range(4)]


def _listen(port: int, topic: str) -> tuple[mqtt.Client, list]:
    """A subscriber (stopped by the caller) and the list its messages arrive in (a retained one may come at once)."""
    received: list = []
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.on_message = lambda _c, _u, m: received.append(json.loads(m.payload) if m.payload else None)
    client.connect("127.0.0.1", port)
    client.subscribe(topic, qos=1)
    client.loop_start()
    return client, received


def test_seat_cameras_reach_broadcast_hands_only_and_a_restart_resumes_the_hands(
        seat_set, mosquitto, tmp_path, pty_device):
    tiles, folder = seat_set
    game, truth = _first_turn(seed=3)
    rng = np.random.default_rng(5)
    cameras = ""
    for seat in range(4):
        view = HandView(truth[seat].tiles, truth[seat].drawn, start_mm=6 + 2 * seat)
        looks = [render_hand(view, tiles, POSE, HandEffects(noise_sigma=3, jpeg_quality=85, light=0.95 + 0.03 * k),
                             rng)[0] for k in range(4)]  # fmt: skip
        write_video(tmp_path / f"seat-{seat}.avi", looks * 20, fps=5.0)  # 16 s of footage
        cameras += (f'\n[[camera]]\nkind = "hand"\nseat = "{"ESWN"[seat]}"\n'
                    f'source = "{tmp_path / f"seat-{seat}.avi"}"\n'
                    f'calibration = "{folder / "seat.json"}"\nmodel = "{folder / "seat.npz"}"\n')
    table = SimulatedTable(mosquitto, tmp_path, pty_device, extra_config=cameras)
    base = table.base
    hands_client, hands = _listen(mosquitto.port, f"{base}/broadcast/hands")
    states_client, states = _listen(mosquitto.port, f"{base}/state")
    clients = [hands_client, states_client]
    try:
        table.start()
        table.play(game)
        expected = [[*t.tiles, *([t.drawn] if t.drawn else [])] for t in truth]

        def hands_read(messages: list) -> list | None:
            for payload in reversed(messages):
                if payload and all(s["concealed"] is not None for s in payload["seats"]):
                    return [sorted([*s["concealed"], *([s["drawn"]] if s["drawn"] else [])]) for s in payload["seats"]]
            return None

        service = table.service
        try:
            eventually(lambda: hands_read(hands) == [sorted(e) for e in expected], 60,
                       what=f"every seat's hand on broadcast/hands (last: {hands[-1:]})")
        except AssertionError as exc:
            frames = {s: (r.frames, r.errors) for s, r in service.seat_readers.items()}
            raise AssertionError(f"{exc}; the seats read {service.private_hands.hands()} (frames, errors: {frames}), "
                                 f"the truth {expected}") from None
        assert {s: r.complete for s, r in service.private_hands.hands().items()} == dict.fromkeys(range(4), True)
        # the public state: concealed counts only, never a tile of a hand
        table.wait_for(lambda: states and states[-1]["seats"][0]["discards"], what="the state after the discard")
        for payload in states:
            for seat in payload["seats"]:
                assert set(seat) <= {"seat", "name", "wind", "score", "riichi", "discards", "melds", "concealed",
                                     "dead"}, f"a public state carries more than counts: {sorted(seat)}"
        kept = service.journal.private_hands()
        assert sorted(kept) == [0, 1, 2, 3] and all(h == service.private_hands.hands()[0].hand_id
                                                    for h, _ in kept.values())
        assert {e.kind for e in service.journal.entries()}.isdisjoint({"private_hand", "hand_reading"})
        config = table.config
        table.stop()

        # a restart with every seat camera unplugged: the hands come back from the journal
        clear = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
        clear.connect("127.0.0.1", mosquitto.port)
        clear.loop_start()
        clear.publish(f"{base}/broadcast/hands", b"", qos=1, retain=True).wait_for_publish(10)
        clear.disconnect()
        clear.loop_stop()
        client, health = _listen(mosquitto.port, f"{base}/devices/seat-N")
        clients.append(client)
        hands.clear()
        unplugged = tuple(dataclasses.replace(c, source=str(tmp_path / "unplugged.avi")) for c in config.seat_cameras)
        again = TableService(dataclasses.replace(config, seat_cameras=unplugged))
        again.start()
        try:
            eventually(lambda: hands_read(hands) == [sorted(e) for e in expected], 30,
                       what=f"the journalled hands on broadcast/hands after the restart (last: {hands[-1:]})")
            eventually(lambda: any(h and h["connected"] is False and "open failed" in h["state"] for h in health), 30,
                       what=f"seat-N's health saying it cannot be opened (got {health[-1:]})")
            assert again.table.state.hand is not None and again.table.state.hand.seats[0].count == 13
        finally:
            again.stop()
    finally:
        for client in clients:
            client.disconnect()
            client.loop_stop()
    with Journal.for_table(config.table.data_dir, config.table.id) as journal:
        assert len(journal.private_hands()) == 4
