"""Frame pipeline (classification through detection) and the temporal tracker on rendered, decoded frames."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from hardware_sims.camera_render import CameraPose, Discard, Effects, GroundTruth, MeldView, SeatView, TableView, render
from hardware_sims.tile_art import drawn_tile_set
from tests.test_detection import busy_view, decoded
from vision.naming.classifier import TileClassifier
from vision.photos.finder import TileFinder
from vision.table.calibration import calibrate
from vision.table.observations import DoraIndicatorSeen, HandRevealed, MeldSeen, TileDiscarded, UraIndicatorsSeen
from vision.table.pipeline import FramePipeline
from vision.table.tracking import ZoneTracker


@pytest.fixture(scope="module")
def classifier() -> TileClassifier:
    clf = TileClassifier(augment_per_image=20)
    clf.enroll(drawn_tile_set().faces)
    return clf


#: a camera -> the busy table's frame as it sees it, and the truth
BusyFrames = Callable[[CameraPose], tuple[np.ndarray, GroundTruth]]


@pytest.fixture(scope="module")
def busy_frames() -> BusyFrames:
    """The busy table at seed 11 (light noise and blur, JPEG 85) as a camera sees it, and its truth: rendered once
    per camera for the tests that read it (a caller that alters the frame copies it first)."""
    cache: dict[CameraPose, tuple[np.ndarray, GroundTruth]] = {}

    def frame(camera: CameraPose) -> tuple[np.ndarray, GroundTruth]:
        if camera not in cache:
            image, truth = render(busy_view(), camera=camera, effects=Effects(noise_sigma=3.0, blur_sigma=0.6),
                                  rng=np.random.default_rng(11))  # fmt: skip
            image = decoded(image, 85)
            image.flags.writeable = False
            cache[camera] = (image, truth)
        return cache[camera]

    return frame


@pytest.mark.parametrize("camera", [CameraPose.overhead(), CameraPose.oblique(35.0)], ids=["overhead", "oblique"])
def test_pipeline_names_the_face_up_tiles(classifier: TileClassifier, camera: CameraPose,
                                          busy_frames: BusyFrames) -> None:
    frame, truth = busy_frames(camera)
    pipe = FramePipeline(calibrate(frame), None, classifier, confirm_frames=1)
    readings = pipe.process(frame)
    names = {(t.zone, t.seat, t.index): t.tile for t in truth.tiles if t.face_up}
    got = {(d.zone, d.seat, d.index): d.tile for d in readings.tiles if d.face_up}
    right = sum(got.get(k) == v for k, v in names.items())
    wrong = [(k, v, got.get(k)) for k, v in names.items() if got.get(k) not in (v, None)]
    assert len(names) == 80
    assert right >= 0.9 * len(names)  # measured 73-74 of 78 (the rest unknown, none wrong)
    assert len(wrong) <= 1
    # readings per zone: seat 1's pond in order with its riichi tile, seat 3's hand, the dora
    assert [t.sideways for t in readings.seats[1].pond] == [i == 4 for i in range(10)]
    assert len(readings.seats[3].hand) == 14
    assert [t.apart for t in readings.seats[3].hand] == [False] * 13 + [True]
    assert len(readings.dora) == 2
    # a second identical frame is answered from the cache, but for unsure tiles (tried again on every frame)
    again = pipe.process(frame)
    assert again.classified == sum(1 for d in readings.tiles if d.face_up and d.tile is None)
    assert [d.tile for d in again.tiles] == [d.tile for d in readings.tiles]


def _seats(**by_seat: SeatView) -> tuple[SeatView, SeatView, SeatView, SeatView]:
    return tuple(by_seat.get(f"s{k}", SeatView()) for k in range(4))  # type: ignore[return-value]


def test_tracker_emits_the_scripted_sequence_and_nothing_for_hands_blur_or_drops(classifier: TileClassifier) -> None:
    empty = TableView()
    v1 = TableView(_seats(s0=SeatView((Discard("1m"),))))
    v2 = TableView(_seats(s0=SeatView((Discard("1m"),)), s1=SeatView((Discard("9s", sideways=True),))))
    # seat 2 pons seat 1's 9s: the tile leaves seat 1's pond, laid sideways on the left (from the left player)
    v3 = TableView(_seats(s0=SeatView((Discard("1m"),)), s2=SeatView(melds=(MeldView(("9s", "9s", "9s"), called=0),))))
    v4 = TableView(v3.seats, dora=("7p",))
    v5 = TableView(v3.seats, dora=("7p",), ura=("W",))  # a riichi win: the tile under the indicator turned over
    won = SeatView(melds=v3.seats[2].melds, hand=("2m", "3m", "4m", "6p", "7p", "8p", "E", "E", "N", "N", "N"),
                   win_tile="E")  # seat 2 wins by tsumo: the hand laid down, the drawn E set apart  # fmt: skip
    v6 = TableView((v3.seats[0], v3.seats[1], won, v3.seats[3]), dora=("7p",), ura=("W",))
    noisy = Effects(noise_sigma=3.0, jpeg_quality=85)
    script: list[tuple[TableView | None, Effects]] = []
    for view in (empty, v1, v2, v3, v4, v5, v6):
        script += [(view, noisy)] * 3
        # between stable views: a hand over the table, a blurred frame and a dropped frame
        script += [(view, Effects(hand=True, hand_at_mm=(120.0, 0.0), noise_sigma=3.0)),
                   (view, Effects(blur_sigma=4.0)), (None, noisy)]  # fmt: skip
    rng = np.random.default_rng(21)
    first, _ = render(empty, rng=rng)
    pipe = FramePipeline(calibrate(first), None, classifier, confirm_frames=1)  # the tracker alone decides here
    tracker = ZoneTracker(camera="cam", stable_frames=3)
    events = []
    ms = []
    for i, (view, effects) in enumerate(script):
        if view is None:
            events += tracker.update(None, float(i))
            continue
        frame, _ = render(view, effects=effects, rng=rng)
        readings = pipe.process(frame)
        ms.append(readings.ms)
        events += tracker.update(readings, float(i))
    kinds = [(type(e).__name__, getattr(e, "seat", None)) for e in events]
    assert kinds == [("TileDiscarded", 0), ("TileDiscarded", 1), ("MeldSeen", 2), ("DoraIndicatorSeen", None),
                     ("UraIndicatorsSeen", None), ("HandRevealed", 2)]  # fmt: skip
    d0, d1, meld, dora, ura, hand = events
    assert isinstance(d0, TileDiscarded) and (d0.tile, d0.sideways) == ("1m", False)
    assert isinstance(d1, TileDiscarded) and (d1.tile, d1.sideways) == ("9s", True)
    assert isinstance(meld, MeldSeen)
    assert (meld.tiles, meld.called, meld.from_side) == (("9s", "9s", "9s"), "9s", "left")
    assert isinstance(dora, DoraIndicatorSeen) and (dora.index, dora.tile) == (0, "7p")
    assert isinstance(ura, UraIndicatorsSeen) and ura.tiles == ("W",)
    assert isinstance(hand, HandRevealed) and hand.win_tile == "E"
    assert hand.tiles == ("2m", "3m", "4m", "6p", "7p", "8p", "E", "E", "N", "N", "N", "E")
    # each event is settled by the third stable frame of its view, never by the hand/blur frames
    assert [e.timestamp for e in events] == [8.0, 14.0, 20.0, 26.0, 32.0, 38.0]
    assert all(e.camera == "cam" for e in events)


def test_a_meld_touching_the_next_is_split_by_its_kinds_not_read_as_a_kan(classifier: TileClassifier) -> None:
    """Melds laid with almost no gap: the walk joins a fourth tile to the pon (it could be an open kan) and the
    open kan after it still has three (so the layout alone cannot tell); the kinds differ, so the pipeline
    walks again with a cut there and reads the pon and the kan."""
    from vision.table.geometry import TableGeometry

    melds = (MeldView(("E", "E", "E"), called=1), MeldView(("9p", "9p", "9p", "9p"), called=0))
    view = TableView(_seats(s0=SeatView(melds=melds), s2=SeatView(melds=melds)))
    frame, _truth = render(view, geometry=TableGeometry(meld_gap=1.0), effects=Effects(noise_sigma=2.0),
                           rng=np.random.default_rng(2))  # fmt: skip
    frame = decoded(frame, 90)
    pipe = FramePipeline(calibrate(frame), None, classifier, confirm_frames=1)
    walked = pipe.detector.detect(frame)
    assert any(t.kan_guess for t in walked), "the near-touching melds should have looked joined to the walk"
    readings = pipe.process(frame)
    for seat in (0, 2):
        got = [[(t.tile, t.sideways) for t in m.tiles] for m in readings.seats[seat].melds]
        assert got == [[("E", False), ("E", True), ("E", False)],
                       [("9p", True), ("9p", False), ("9p", False), ("9p", False)]]  # fmt: skip


def test_a_concealed_kan_with_face_down_ends_is_reported_with_four_tiles(classifier: TileClassifier) -> None:
    kans = (MeldView(("N", "N", "N", "N"), face_down=(0, 3)), MeldView(("5p", "5pr", "5p", "5p"), face_down=(0, 3)))
    view = TableView(_seats(s1=SeatView(melds=kans)))
    rng = np.random.default_rng(5)
    frame, _ = render(view, effects=Effects(noise_sigma=3.0), rng=rng)
    pipe = FramePipeline(calibrate(frame), None, classifier)
    tracker = ZoneTracker(stable_frames=3)
    events = []
    for i in range(10):  # a stream: a frame proposes, the next confirms, then three stable frames count
        frame, _ = render(view, effects=Effects(noise_sigma=3.0), rng=rng)
        events += tracker.update(pipe.process(decoded(frame, 90)), float(i))
        if events:
            break
    melds = [(e.seat, e.tiles, e.called, e.from_side) for e in events if isinstance(e, MeldSeen)]
    # face-down ends take the kind of the face-up middle; a red five shown in the middle stays red
    assert melds == [(1, ("N", "N", "N", "N"), None, None), (1, ("5p", "5pr", "5p", "5p"), None, None)]


def test_a_still_table_repeats_the_last_reading_and_any_new_tile_is_read(classifier: TileClassifier) -> None:
    """The motion gate: fresh sensor noise on an unchanged table is not motion; one more discard is."""
    view = TableView(_seats(s0=SeatView((Discard("1m"), Discard("E"))), s2=SeatView((Discard("9s"),))))
    grown = TableView(_seats(s0=SeatView((Discard("1m"), Discard("E"), Discard("7p"))),
                             s2=SeatView((Discard("9s"),))))  # fmt: skip
    rng = np.random.default_rng(9)

    def frame(v: TableView) -> np.ndarray:
        # the same light in every frame (a fixed seed for the gradient), fresh noise each time
        return _with_noise(render(v, effects=Effects(gradient=0.2), rng=np.random.default_rng(1))[0], rng)

    first = frame(view)
    pipe = FramePipeline(calibrate(first), None, classifier)
    assert [t.tile for t in pipe.process(first).seats[0].pond] == [None, None]  # proposed, not yet confirmed
    read = pipe.process(frame(view))
    assert not read.still and [t.tile for t in read.seats[0].pond] == ["1m", "E"]
    again = [pipe.process(frame(view)) for _ in range(3)]
    assert all(r.still and r.classified == 0 for r in again)
    assert all([t.tile for t in r.seats[0].pond] == ["1m", "E"] for r in again)
    moved = pipe.process(frame(grown))
    assert not moved.still and [t.tile for t in moved.seats[0].pond] == ["1m", "E", None]
    moved = pipe.process(frame(grown))
    assert not moved.still and [t.tile for t in moved.seats[0].pond] == ["1m", "E", "7p"]
    pipe.reset_cache()
    assert not pipe.process(frame(grown)).still


def _with_noise(frame: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Fresh Gaussian sensor noise (sigma 5) and JPEG 85 on the same lit scene: what a still camera streams."""
    noise = rng.standard_normal(frame.shape, dtype=np.float32)
    noise *= 5.0
    noise += frame
    noisy = np.clip(noise, 0, 255, out=noise).astype(np.uint8)
    return decoded(noisy, 85)


def test_a_new_tile_is_named_only_when_two_frames_agree(classifier: TileClassifier, mocker) -> None:
    """A classifier that wavers (one frame's noise) is not believed until two frames in a row agree."""
    view = TableView(_seats(s0=SeatView((Discard("3m"),))))
    rng = np.random.default_rng(4)
    frames = [render(view, effects=Effects(noise_sigma=3.0, gradient=0.3, light_seed=1), rng=rng)[0] for _ in range(4)]
    pipe = FramePipeline(calibrate(frames[0]), None, classifier)
    assert pipe.confirm_frames == 2
    # (kind, similarity, runner-up's): sure answers, so no shifted crops are tried
    wavering = mocker.patch.object(classifier, "scores", side_effect=[("5m", 0.97, 0.4), ("3m", 0.97, 0.4),
                                                                      ("3m", 0.97, 0.4)])  # fmt: skip
    got = [[t.tile for t in pipe.process(f).seats[0].pond] for f in frames]
    assert got == [[None], [None], ["3m"], ["3m"]]  # 5m then 3m disagree; 3m twice is named, then cached
    assert wavering.call_count == 3


def test_a_similar_tile_in_a_slot_that_was_read_before_is_read_again(classifier: TileClassifier) -> None:
    """A call takes a pond's last tile and the next discard lands in the same slot: a 6s where a 5s lay
    (or a 2m where a 9m lay) differs in a few thumbnail pixels only, and must not get the cached answer."""
    rng = np.random.default_rng(6)
    effects = Effects(noise_sigma=3.0, gradient=0.2, light_seed=2)
    pipe = None
    for before, after in (("5s", "6s"), ("9m", "2m"), ("8m", "4m"), ("5s", "5sr"), ("5pr", "5p")):
        reads = []
        for tile in (before, before, after, after):
            frame, _ = render(TableView(_seats(s0=SeatView((Discard("E"), Discard(tile))))), effects=effects, rng=rng)
            pipe = pipe or FramePipeline(calibrate(frame), None, classifier)
            reads.append([t.tile for t in pipe.process(decoded(frame, 90)).seats[0].pond][-1])
        assert reads == [None, before, None, after]  # proposed, confirmed; the new tile read anew


def test_a_slot_emptied_between_hands_forgets_its_tile(classifier: TileClassifier) -> None:
    """The table is cleared for the next hand; a red five then lands where a plain five lay: read anew."""
    rng = np.random.default_rng(12)
    effects = Effects(noise_sigma=3.0, light_seed=4)
    pipe = None
    reads = []
    for hand in (("5s", "E"), ("5s", "E"), (), (), ("5sr", "E"), ("5sr", "E")):
        frame, _ = render(TableView(_seats(s1=SeatView(hand=hand))), effects=effects, rng=rng)
        pipe = pipe or FramePipeline(calibrate(frame), None, classifier)
        reads.append(tuple(t.tile for t in pipe.process(decoded(frame, 90)).seats[1].hand))
    assert reads == [(None, None), ("5s", "E"), (), (), (None, None), ("5sr", "E")]


KINDS = [f"{n}{s}" for s in "mps" for n in range(1, 10)] + list("ESWNPFC")


def test_a_riichi_tile_pushed_against_the_row_before_reads_crosswise(classifier: TileClassifier) -> None:
    """Ponds of 18 tiles with crosswise tiles in the second and third rows, carelessly laid (1.5 mm / 3 degrees),
    seen by the 35-degree camera with the bench's light: in these frames (4 of 240 crosswise tiles) one
    crosswise tile lies against the row before it, both strips that tell crosswise from upright are partly
    covered and it read upright (the rest of its row cut 9 mm off). The strips leave it in doubt; the face
    decides: cut crosswise it reads, cut upright it does not."""
    from tests.test_detection import TileDetector

    geometry_frame = render(TableView(), camera=CameraPose.oblique(35.0), tiles=drawn_tile_set(),
                            rng=np.random.default_rng(0))[0]
    calibration = calibrate(geometry_frame)
    for k, seat in ((15, 2), (21, 0)):
        rng = np.random.default_rng(500 + k)
        seats = []
        for _ in range(4):
            at = {int(rng.integers(6, 12)), int(rng.integers(12, 18))}
            seats.append(SeatView(discards=tuple(Discard(KINDS[int(rng.integers(0, 34))], sideways=i in at)
                                                 for i in range(18))))
        effects = Effects(gradient=0.3, glare=60.0, glare_radius_px=160.0, noise_sigma=5.0, blur_sigma=0.9,
                          jpeg_quality=80, jitter_mm=1.5, jitter_deg=3.0, placement_seed=k)
        frame, truth = render(TableView(seats=tuple(seats)), camera=CameraPose.oblique(35.0), tiles=drawn_tile_set(),
                              effects=effects, rng=rng)
        want = [sorted((t for t in truth.tiles if t.zone == "pond" and t.seat == s), key=lambda t: t.index)
                for s in range(4)]
        strips = [t.sideways for t in TileDetector(calibration).detect(frame) if t.zone == "pond" and t.seat == seat]
        assert strips != [t.sideways for t in want[seat]]  # the strips alone read one crosswise tile upright
        readings = FramePipeline(calibration, None, classifier, confirm_frames=1).process(frame)
        for s in range(4):
            assert [(t.tile, t.sideways) for t in readings.seats[s].pond] == [(t.tile, t.sideways) for t in want[s]]


def test_only_unsure_tiles_are_read_again_from_shifted_crops(classifier: TileClassifier, mocker,
                                                            busy_frames: BusyFrames) -> None:
    """A cold frame's cost was mostly the shifted crops: every tile under 0.95 similarity (most of them) was
    read nine times. Now a tile is searched around only when its similarity is under 0.8 or its lead over the
    runner-up under 0.1 (the gates of FramePipeline, set on the bench's frames): a clean frame searches
    around few tiles, a tile lying off its slot is still searched and read right."""
    view = busy_view()
    frame, truth = busy_frames(CameraPose.overhead())
    pipe = FramePipeline(calibrate(frame), None, classifier, confirm_frames=1)
    spy = mocker.spy(classifier, "scores_many")
    readings = pipe.process(frame)
    face_up = [d for d in readings.tiles if d.face_up]

    def searches() -> int:  # the eight shifted crops of a tile go in one call (a tile alone: one crop)
        return sum(len(call.args[0]) == 8 for call in spy.call_args_list)

    searched = searches()
    assert searched <= 0.1 * len(face_up), (searched, len(face_up))
    # the same view with every tile laid up to 1.5 mm / 3 degrees off its slot: more tiles are searched,
    # and what is named is named right
    effects = Effects(noise_sigma=3.0, blur_sigma=0.6, jitter_mm=1.5, jitter_deg=3.0, placement_seed=4)
    frame, truth = render(view, effects=effects, rng=np.random.default_rng(12))
    spy.reset_mock()
    pipe.reset_cache()
    readings = pipe.process(decoded(frame, 85))
    assert searches() > searched
    names = {(t.zone, t.seat, t.index): t.tile for t in truth.tiles if t.face_up}
    got = {(d.zone, d.seat, d.index): d.tile for d in readings.tiles if d.face_up}
    assert [(k, v, got.get(k)) for k, v in names.items() if got.get(k) not in (v, None)] == []
    assert sum(got.get(k) == v for k, v in names.items()) >= 0.9 * len(names)


@pytest.fixture(scope="module")
def finder() -> TileFinder:
    return TileFinder.load()


@pytest.mark.parametrize(("seat", "pushed_mm", "pushed_deg", "size"),
                         [(0, (13.0, 8.0), 8.0, (1920, 1080)), (2, (0.0, 17.0), -6.0, (1920, 1080)),
                          (0, (13.0, 8.0), 8.0, (1280, 720)), (2, (0.0, 17.0), -6.0, (3840, 2160))])  # fmt: skip
def test_a_discard_pushed_off_its_slot_is_found_by_the_finder(classifier: TileClassifier, finder: TileFinder,
                                                              seat: int, pushed_mm: tuple[float, float],
                                                              pushed_deg: float,
                                                              size: tuple[int, int]) -> None:  # fmt: skip
    """A discard put down half a tile beside its slot, a little turned: the slot walk stops before it (the
    tracker would wait for it); the finder, run only there, finds it and it is read as the next discard, from
    a 720p, 1080p or 4K camera alike."""
    names = ("1m", "9p", "E", "3s", "2m", "4p")
    pond = (*(Discard(t) for t in names), Discard("7m", pushed_mm=pushed_mm, pushed_deg=pushed_deg))
    seats = [SeatView((Discard("2p"),))] * 4
    seats[seat] = SeatView(pond)
    frame, _ = render(TableView(tuple(seats)), camera=CameraPose.overhead(image_size=size),
                      effects=Effects(noise_sigma=3.0, blur_sigma=0.6), rng=np.random.default_rng(5))  # fmt: skip
    frame = decoded(frame, 85)
    alone = FramePipeline(calibrate(frame), None, classifier, confirm_frames=1).process(frame)
    assert [t.tile for t in alone.seats[seat].pond] == list(names)  # the pushed tile is not placed
    pipe = FramePipeline(calibrate(frame), None, classifier, finder=finder)  # a stream: two frames agree
    first = pipe.process(frame)
    assert len(first.seats[seat].pond) == 7  # found; named, as every new tile, when the next frame agrees
    second = pipe.process(_with_noise(frame, np.random.default_rng(1)))
    assert [t.tile for t in second.seats[seat].pond] == [*names, "7m"]
    assert pipe.finder_calls == 2
    assert [[t.tile for t in s.pond] for k, s in enumerate(second.seats) if k != seat] == [["2p"]] * 3


def test_an_ordinary_frame_never_runs_the_finder(classifier: TileClassifier, finder: TileFinder, mocker) -> None:
    """Tiles in their slots (carelessly laid, a hand over the table, a still table): the finder is not run."""
    view = busy_view()
    spy = mocker.spy(finder, "find")
    pipe = FramePipeline(calibrate(render(view)[0]), None, classifier, finder=finder)
    rng = np.random.default_rng(3)
    for effects in (Effects.realistic(), replace(Effects.realistic(), hand=True), Effects(noise_sigma=3.0)):
        frame, _ = render(view, effects=replace(effects, placement_seed=4), rng=rng)
        for _ in range(2):
            readings = pipe.process(decoded(frame, 85))
    assert sum(1 for d in readings.tiles if d.face_up) >= 70
    assert spy.call_count == 0 and pipe.finder_calls == 0
