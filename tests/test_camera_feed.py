"""The camera feed: the table simulator's felt rendered, read by vision and tracked, into fusion and the engine."""

from __future__ import annotations

import pytest

from drivers.observations import ButtonPressed
from hardware_sims.camera_feed import CameraFeed, observation_key
from hardware_sims.camera_render import Effects
from hardware_sims.generator import generate_game
from hardware_sims.table import TableSimulator
from hardware_sims.tile_art import drawn_tile_set
from tablesvc.engine.engine import Engine, Rejected, apply
from tablesvc.engine.events import HandStart
from tablesvc.engine.results import HandResult
from tablesvc.service.fusion import Fusion
from vision.naming.classifier import TileClassifier
from vision.table.observations import CameraObservation, DoraIndicatorSeen, HandRevealed, MeldSeen, TileDiscarded

MILD = Effects(noise_sigma=3.0, blur_sigma=0.6, jpeg_quality=90)


@pytest.fixture(scope="module")
def classifier() -> TileClassifier:
    clf = TileClassifier(augment_per_image=20)
    clf.enroll(drawn_tile_set().faces)
    return clf


def _obs(cls: type[CameraObservation], **kw: object) -> CameraObservation:
    return cls(camera="camera-sim", timestamp=0.0, **kw)  # type: ignore[call-arg]


def test_changes_are_read_in_order_and_an_occluding_hand_creates_no_event(classifier: TileClassifier) -> None:
    got: list[object] = []
    # every change starts with a frame where a hand covers part of the table
    feed = CameraFeed(got.append, classifier, effects=MILD, occlude_every=1, seed=3)
    script = [
        _obs(DoraIndicatorSeen, index=0, tile="7p"),
        _obs(TileDiscarded, seat=0, tile="E", sideways=False),
        _obs(TileDiscarded, seat=1, tile="9s", sideways=True),
        _obs(MeldSeen, seat=2, tiles=("9s", "9s", "9s"), called="9s", from_side="left"),
        _obs(TileDiscarded, seat=2, tile="C", sideways=False),
    ]
    feed.hand_start()
    for o in script:
        feed.camera(o)
    feed.button(3, "tsumo")
    hand = ("1p", "2p", "3p", "4s", "5s", "6s", "7p", "8p", "9p", "P", "P", "N", "N", "N")
    feed.camera(_obs(HandRevealed, seat=3, tiles=hand))
    feed.button(3, "confirm")
    camera = [o for o in got if isinstance(o, CameraObservation)]
    assert [observation_key(o) for o in camera] == [observation_key(o) for o in script] + [("hand", 3, tuple(
        sorted(hand)))]
    assert feed.stats.occluded_frames == len(script) + 1
    assert all(c.exact for c in feed.stats.changes)
    # order: the hand was delivered before the confirm that settles the win
    kinds = [type(o).__name__ if not isinstance(o, ButtonPressed) else o.button.value for o in got]
    assert kinds.index("HandRevealed") < kinds.index("confirm")
    assert kinds[-3:] == ["tsumo", "HandRevealed", "confirm"]


def test_carelessly_laid_tiles_lie_still_and_read_exactly(classifier: TileClassifier) -> None:
    """Tiles put down up to 1.5 mm / 3 degrees off their slots stay where they were put for the hand: the
    motion gate sees still frames between changes (a tile re-jittered in every frame would move in all)."""
    got: list[object] = []
    careless = Effects(noise_sigma=3.0, blur_sigma=0.6, jpeg_quality=90, jitter_mm=1.5, jitter_deg=3.0)
    feed = CameraFeed(got.append, classifier, effects=careless, seed=4)
    script = [
        _obs(DoraIndicatorSeen, index=0, tile="3s"),
        *(_obs(TileDiscarded, seat=s, tile=t, sideways=s == 1) for s, t in enumerate(("W", "2m", "8p", "C"))),
        _obs(MeldSeen, seat=1, tiles=("8p", "8p", "8p"), called="8p", from_side="right"),
        _obs(TileDiscarded, seat=1, tile="F", sideways=False),
    ]
    feed.hand_start()
    for o in script:
        feed.camera(o)
    camera = [o for o in got if isinstance(o, CameraObservation)]
    assert [observation_key(o) for o in camera] == [observation_key(o) for o in script]
    assert all(c.exact for c in feed.stats.changes)
    assert 0 < len(feed.stats.read_ms) < len(feed.stats.pipeline_ms) / 2


def watch_hands(record, classifier: TileClassifier, hands: int):
    engine = Engine()
    results: list[HandResult] = []
    rejected: list[str] = []

    def would_accept(event) -> bool:
        try:
            apply(engine.state, event)
        except Rejected:
            return False
        return True

    fusion = Fusion(lambda: engine.state, would_accept)

    def deliver(observation) -> None:
        for action in fusion.observe(observation):
            try:
                out = engine.apply(action.event)
            except Rejected as exc:
                rejected.append(f"{action.event}: {exc}")
                continue
            ended = [o for o in out if isinstance(o, HandResult)]
            if ended:
                fusion.hand_ended()
            results.extend(ended)

    feed = CameraFeed(deliver, classifier, effects=MILD, occlude_every=5, seed=1)
    sim = TableSimulator(record, feed, start_game=engine.apply)
    started = 0
    for e in record.events:
        if isinstance(e, HandStart):
            started += 1
            if started > hands:
                break
        sim.show(e)
        if rejected:
            break
    return results, rejected, feed


def test_first_hand_of_a_generated_game_through_the_camera_matches_the_record(classifier: TileClassifier) -> None:
    game = generate_game(4)  # a short first hand (39 events) with a riichi, a call and a ron
    results, rejected, feed = watch_hands(game, classifier, hands=1)
    assert rejected == []
    assert feed.stats.first_divergence is None
    assert [r.deltas for r in results] == [h.deltas for h in game.hands[:1]]
