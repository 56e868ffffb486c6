"""The seat camera: rendered standing rows read by vision.seat, and the consensus that publishes a hand only
where frames agree and the game allows it (a tile not yet sure stays unknown)."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hardware_sims.hand_render import STRIP_W, HandEffects, HandView, SeatPose, render_hand
from hardware_sims.seat_cams import ENROLL_ROWS
from hardware_sims.tile_art import digits_tile_set, drawn_tile_set, mirrored_tile_set
from tablesvc.service.seat_hands import PrivateHands
from tablesvc.service.seat_reader import SeatCameraReader
from vision.naming.embedding import EmbeddingClassifier
from vision.seat.calibration import MIN_FACE_PX, SeatCalibration, SeatCalibrationError
from vision.seat.consensus import HandConsensus, HandReading, SeatKnowledge, kind_of
from vision.seat.reader import SeatFrame, SeatReader, SeenTile, enroll_from_rows

HAND = ("1m", "2m", "3m", "5pr", "6p", "7p", "9s", "9s", "E", "E", "C", "C", "F")


def frame_of(tiles: list[str | None], drawn: str | None = None, whole: bool = True, holds_drawn: bool = False,
             guesses: dict[int, str] | None = None, weak: frozenset[int] = frozenset()) -> SeatFrame:
    guesses = guesses or {}
    row = tuple(SeenTile(t, 0.6 if i in weak else 0.95, (26.0 * i, 26.0 * i + 26), guesses.get(i))
                for i, t in enumerate(tiles))
    d = SeenTile(drawn, 0.95, (370.0, 396.0)) if drawn is not None or holds_drawn else None
    return SeatFrame(row, d, whole)


# ---------------------------------------------------------------- consensus and decoding (pure)
def test_a_tile_is_sure_only_when_enough_frames_agree_and_none_in_the_window_names_it_otherwise():
    c = HandConsensus(0, agree=3, window=6)
    know = SeatKnowledge(holds=13, hand_id="h1")
    assert c.feed(None, know).unknown == 13  # a new hand: every tile unknown
    c.feed(frame_of(list(HAND)), know)
    c.feed(frame_of(list(HAND)), know)
    assert c.reading.unknown == 13, "two frames are not enough"
    flicker = list(HAND)
    flicker[6] = "1p"  # one frame misreads a tile
    reading = c.feed(frame_of(flicker), know)
    assert reading.unknown == 1 and sorted(reading.tiles) == sorted(t for i, t in enumerate(HAND) if i != 6)
    fed = 0
    while not c.reading.complete and fed < 10:
        c.feed(frame_of(list(HAND)), know)
        fed += 1
    assert fed == 6, "the misreading frame keeps its tile unknown until it leaves the window of six frames"
    assert sorted(c.reading.tiles) == sorted(HAND)


def test_a_frame_unsure_of_a_tile_does_not_count_against_it():
    c = HandConsensus(0, agree=3, window=6)
    know = SeatKnowledge(holds=13, hand_id="h1")
    c.feed(None, know)
    unsure = list(HAND)
    unsure[6] = None
    for tiles in (unsure, list(HAND), unsure, list(HAND)):
        c.feed(frame_of(tiles), know)
    assert c.reading.unknown == 1, "two frames name it: not yet"
    assert c.feed(frame_of(list(HAND)), know).complete, "three name it, none otherwise"


def test_a_best_kind_every_frame_gives_becomes_sure_after_five_frames_and_one_rival_stops_it():
    unsure = list(HAND)
    unsure[6] = None  # the reader is never sure of this 9s: near its kind, short of the lead gate
    know = SeatKnowledge(holds=13, hand_id="h1")
    c = HandConsensus(0, agree=3, window=6, guesses=5)
    c.feed(None, know)
    for _ in range(4):
        c.feed(frame_of(unsure, guesses={6: "9s"}), know)
    assert c.reading.unknown == 1, "four frames' guesses are not enough"
    assert c.feed(frame_of(unsure, guesses={6: "9s"}), know).complete
    c = HandConsensus(0, agree=3, window=6, guesses=5)
    c.feed(None, know)
    for k in range(6):
        c.feed(frame_of(unsure, guesses={6: "8s" if k == 2 else "9s"}), know)
    assert c.reading.unknown == 1 and "8s" not in c.reading.tiles, "frames that guess two kinds publish neither"


def test_a_weak_name_neither_agrees_nor_contradicts():
    c = HandConsensus(0, agree=3, window=6, trust=0.8)
    know = SeatKnowledge(holds=13, hand_id="h1")
    c.feed(None, know)
    glare = list(HAND)
    glare[6] = "P"  # a hand over the faces: a weak white dragon where the 9s stands
    c.feed(frame_of(list(HAND)), know)
    c.feed(frame_of(glare, weak=frozenset({6})), know)
    c.feed(frame_of(list(HAND)), know)
    assert c.reading.unknown == 1, "two strong names of the 9s: not yet"
    assert c.feed(frame_of(list(HAND)), know).complete, "the weak P did not count against the 9s"
    c = HandConsensus(0, agree=3, window=6, trust=0.8)
    c.feed(None, know)
    for _ in range(4):
        c.feed(frame_of(list(HAND), weak=frozenset({6})), know)
    assert c.reading.unknown == 1, "weak names alone, four of them, do not make a tile sure"


def test_a_tile_sure_before_stays_sure_when_new_frames_do_not_place_it():
    c = HandConsensus(0, agree=3, window=6)
    know = SeatKnowledge(holds=13, hand_id="h1")
    c.feed(None, know)
    for _ in range(3):
        c.feed(frame_of(list(HAND)), know)
    assert c.reading.complete
    know = SeatKnowledge(holds=14, hand_id="h1")
    c.feed(None, know)  # a draw: the row is read anew, frames cleared
    unsure = list(HAND)
    unsure[0] = None  # the new frames never place the 1m
    for _ in range(3):
        reading = c.feed(frame_of(unsure, drawn="4p"), know)
    assert reading.complete and sorted(reading.tiles) == sorted(HAND) and reading.drawn == "4p", reading
    other = list(unsure)
    other[1] = "8m"  # frames that disagree with the published hand: only what they agree on
    c = HandConsensus(0, agree=3, window=6)
    c.feed(None, SeatKnowledge(holds=13, hand_id="h1"))
    for _ in range(3):
        c.feed(frame_of(list(HAND)), SeatKnowledge(holds=13, hand_id="h1"))
    c.feed(None, know)
    for _ in range(3):
        reading = c.feed(frame_of(other, drawn="4p"), know)
    assert "1m" not in reading.tiles and reading.unknown == 1, reading


def test_frames_not_whole_or_of_another_count_are_not_counted():
    c = HandConsensus(0, agree=2)
    know = SeatKnowledge(holds=13, hand_id="h1")
    c.feed(frame_of(list(HAND), whole=False), know)
    c.feed(frame_of(list(HAND)[:12]), know)  # a tile lifted: 12 of 13
    c.feed(frame_of(list(HAND)), know)
    assert c.reading.unknown == 13
    assert c.feed(frame_of(list(HAND)), know).complete


def test_no_kind_more_than_four_counting_every_visible_tile():
    c = HandConsensus(0, agree=1)
    visible = [0] * 34
    visible[27] = 3  # three East winds already out on the table: the hand cannot hold two
    know = SeatKnowledge(holds=13, visible=tuple(visible), red_out=frozenset({"p"}), hand_id="h1")
    c.feed(None, know)
    reading = c.feed(frame_of(list(HAND)), know)
    assert "E" not in reading.tiles and "5pr" not in reading.tiles, "impossible tiles are unknown, not published"
    assert reading.unknown == 3


def test_the_discard_and_a_call_leave_the_hand_at_once_and_a_draw_adds_an_unknown():
    c = HandConsensus(0, agree=1)
    know = SeatKnowledge(holds=13, hand_id="h1")
    c.feed(None, know)
    c.feed(frame_of(list(HAND)), know)
    know = SeatKnowledge(holds=14, hand_id="h1")
    reading = c.feed(None, know)  # a draw: the engine knows one more tile, not yet seen
    assert reading.unknown == 1 and len(reading.tiles) == 13
    reading = c.feed(frame_of(list(HAND), drawn="4p"), know)
    assert reading.drawn == "4p" and reading.complete
    know = SeatKnowledge(holds=13, gone=("9s",), hand_id="h1")
    reading = c.feed(None, know)  # the discard leaves before any frame shows it; the drawn tile goes in
    assert reading.complete and reading.tiles.count("9s") == 1 and "4p" in reading.tiles and reading.drawn is None
    know = SeatKnowledge(holds=11, gone=("9s", "C", "C"), hand_id="h1")  # a pon of C: its two tiles leave
    reading = c.feed(None, know)
    assert "C" not in reading.tiles and len(reading.tiles) == 11 and reading.complete
    know = SeatKnowledge(holds=10, gone=("9s", "C", "C", "N"), hand_id="h1")  # a tile it never read as held
    reading = c.feed(None, know)
    assert reading.tiles == () and reading.unknown == 10, "a hand that contradicts the game is all unknown"
    assert c.feed(None, SeatKnowledge(holds=13, hand_id="h2")).unknown == 13


# ---------------------------------------------------------------- the reader on rendered frames
@pytest.fixture(scope="module")
def enrolled():
    tiles = drawn_tile_set()
    pose = SeatPose(elevation_deg=35.0, distance_mm=420.0, offset_mm=15.0, roll_deg=1.5)
    cal = SeatCalibration.of(pose.strip_quad(), STRIP_W, pose.image_size)
    rng = np.random.default_rng(4)
    rows = [(render_hand(HandView(tuple(r)), tiles, pose, HandEffects(noise_sigma=3, jpeg_quality=85), rng)[0],
             list(r)) for r in ENROLL_ROWS]  # fmt: skip
    namer = EmbeddingClassifier(half_turn=False)
    got = enroll_from_rows(namer, cal, rows)
    assert sum(got.values()) == 37 and len(got) == 37
    return tiles, pose, cal, namer


def test_a_rendered_row_is_read_tile_for_tile_with_the_drawn_tile_apart(enrolled):
    tiles, pose, cal, namer = enrolled
    reader = SeatReader(namer, cal)
    rng = np.random.default_rng(9)
    effects = HandEffects(felt="blue", light=0.8, tint=(1.08, 1.0, 0.93), noise_sigma=4, blur_sigma=0.6,
                          jpeg_quality=75, lean_deg=4)  # fmt: skip
    image, truth = render_hand(HandView(HAND, "4p", start_mm=7), tiles, pose, effects, rng)
    first = reader.read(image)
    assert first.whole and first.count == 14
    named = [t.tile for t in first.row]
    assert [t for t in named if t is not None] == [t for t, n in zip(HAND, named, strict=True) if n is not None]
    assert sum(t is None for t in named) <= 1 and first.drawn is not None and first.drawn.tile == "4p"
    image, _ = render_hand(HandView(HAND, "4p", start_mm=7), tiles, pose, effects, rng)
    again = reader.read(image)
    assert again.read < first.read, "an unchanged row is not read again by the network"
    covered, truth = render_hand(HandView(HAND, "4p", start_mm=7), tiles, pose,
                                 HandEffects(felt="blue", hand_over=150.0), rng)  # fmt: skip
    assert any(truth.covered)
    assert not reader.read(covered).whole, "a hand over the row makes the frame not whole"


def test_a_steep_seat_camera_at_1280x720_reads_the_hand_exactly_and_never_wrong():
    """68 degrees above the table: a 640x480 picture shows the faces too few pixels high (the reader says so);
    the 1280x720 mode the product advises for such a mount, enrolled from itself, reads the hand exactly."""
    tiles = drawn_tile_set()
    pose = SeatPose(elevation_deg=68.0, distance_mm=450.0, offset_mm=-10.0, roll_deg=1.0, image_size=(1280, 720))
    cal = SeatCalibration.of(pose.strip_quad(), STRIP_W, pose.image_size)
    rng = np.random.default_rng(68)
    rows = [(render_hand(HandView(tuple(r)), tiles, pose, HandEffects(noise_sigma=3, jpeg_quality=85, lean_deg=lean),
                         rng)[0], list(r)) for lean in (0.0, 4.0) for r in ENROLL_ROWS]  # fmt: skip
    namer = EmbeddingClassifier(half_turn=False, augment_per_image=4)
    enroll_from_rows(namer, cal, rows)
    reader = SeatReader(namer, cal)
    c = HandConsensus(0)
    know = SeatKnowledge(holds=14, hand_id="h1")
    c.feed(None, know)
    for k in range(8):
        effects = HandEffects(felt="green", light=0.85 + 0.03 * k, noise_sigma=4, blur_sigma=0.6, jpeg_quality=75,
                              lean_deg=3.0)  # fmt: skip
        image, _ = render_hand(HandView(HAND, "4p", start_mm=6), tiles, pose, effects, rng)
        reading = c.feed(reader.read(image), know)
        published = [*reading.tiles, *([reading.drawn] if reading.drawn else [])]
        assert not (Counter(published) - Counter([*HAND, "4p"])), f"frame {k}: a tile published wrong: {reading}"
    assert reading.complete and sorted(reading.tiles) == sorted(HAND) and reading.drawn == "4p", reading


def test_a_seat_camera_showing_the_faces_too_small_says_what_to_do(caplog):
    pose = SeatPose(elevation_deg=68.0, distance_mm=450.0)  # 640x480
    cal = SeatCalibration.of(pose.strip_quad(), STRIP_W, pose.image_size)
    assert cal.face_px < MIN_FACE_PX
    with caplog.at_level(logging.WARNING, logger="vision.seat.reader"):
        SeatReader(EmbeddingClassifier(), cal)
    assert "1280x720" in caplog.text and "mount it lower" in caplog.text
    assert not SeatReader(EmbeddingClassifier(), cal).guesses, "no best kinds from faces this small"
    caplog.clear()
    hd = replace(pose, image_size=(1280, 720))
    with caplog.at_level(logging.WARNING, logger="vision.seat.reader"):
        reader = SeatReader(EmbeddingClassifier(), SeatCalibration.of(hd.strip_quad(), STRIP_W, hd.image_size))
    assert "1280x720" not in caplog.text and reader.guesses


def test_a_red_five_is_never_taken_for_the_last_frame_s_plain_five(enrolled):
    """The next frame names a tile that matches the last frame's without the network; a red five and its plain
    five differ in colour only, so the match looks at colour too (else a red five the network was once unsure of
    takes the plain five's name, sure, from the frame before)."""
    tiles, pose, cal, namer = enrolled
    reader = SeatReader(namer, cal)
    rng = np.random.default_rng(5)
    plain = ("1s", "2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s", "E", "E", "E", "C")
    image, _ = render_hand(HandView(plain), tiles, pose, HandEffects(noise_sigma=3, jpeg_quality=85), rng)
    assert reader.read(image).row[4].tile == "5s"
    red = tuple("5sr" if t == "5s" else t for t in plain)  # the same place, now the red five
    image, _ = render_hand(HandView(red), tiles, pose, HandEffects(noise_sigma=3, jpeg_quality=85), rng)
    seen = reader.read(image)
    assert seen.row[4].tile in ("5sr", None), [t.tile for t in seen.row]
    assert seen.read < len(red), "the unchanged tiles were matched, not read again"


def test_enrollment_refuses_a_row_that_does_not_hold_the_named_tiles(enrolled):
    tiles, pose, cal, _ = enrolled
    image, _ = render_hand(HandView(HAND[:5]), tiles, pose)
    with pytest.raises(ValueError, match="5 tiles stand in the row but 6 are named"):
        enroll_from_rows(EmbeddingClassifier(), cal, [(image, list(HAND[:6]))])


# ---------------------------------------------------------------- enrollment rows checked by the packaged sets
ROWS = [list(r) for r in ENROLL_ROWS]


def rows_shown(tiles, pose: SeatPose, shown: list[list[str]], seed: int = 6) -> list[tuple[np.ndarray, list[str]]]:
    """Frames of the rows ``shown``, each given as the enrollment row of its place (what a player who stands the
    rows otherwise hands seat-enroll)."""
    rng = np.random.default_rng(seed)
    return [(render_hand(HandView(tuple(r)), tiles, pose, HandEffects(noise_sigma=3, jpeg_quality=85), rng)[0],
             ROWS[i]) for i, r in enumerate(shown)]  # fmt: skip


ENROLL_POSE = SeatPose(elevation_deg=45.0, distance_mm=400.0, offset_mm=-20.0, roll_deg=-2.0)


def test_enrollment_refuses_rows_stood_in_the_wrong_order_saying_which_frame_looks_like_which_row():
    from vision.seat.enrollment import RowOrderError

    cal = SeatCalibration.of(ENROLL_POSE.strip_quad(), STRIP_W, ENROLL_POSE.image_size)
    namer = EmbeddingClassifier(half_turn=False, augment_per_image=2)
    with pytest.raises(RowOrderError) as refused:
        enroll_from_rows(namer, cal, rows_shown(drawn_tile_set(), ENROLL_POSE, [ROWS[1], ROWS[0], ROWS[2]]))
    text = str(refused.value)
    assert "enrollment frame 1 is given as row 1 (1m..4p) but looks like row 2 (5p..8s)" in text
    assert "enrollment frame 2 is given as row 2 (5p..8s) but looks like row 1 (1m..4p)" in text
    assert "frame 3" not in text, "the third row was stood where it belongs"
    assert "give one frame per row in this order (row 1: 1m 2m 3m" in text
    assert namer.tiles == [], "nothing is enrolled from a refused set of frames"


def test_enrollment_refuses_a_row_stood_right_to_left_or_one_place_on():
    from vision.seat.enrollment import RowOrderError

    cal = SeatCalibration.of(ENROLL_POSE.strip_quad(), STRIP_W, ENROLL_POSE.image_size)
    tiles = drawn_tile_set()
    with pytest.raises(RowOrderError, match=r"frame 2 is given as row 2 \(5p..8s\) but looks like row 2 \(5p..8s\) "
                       "stood right to left"):
        enroll_from_rows(EmbeddingClassifier(), cal, rows_shown(tiles, ENROLL_POSE, [ROWS[0], ROWS[1][::-1], ROWS[2]]))
    every = [t for r in ROWS for t in r]
    with pytest.raises(RowOrderError, match=r"frame 1 is given as row 1 \(1m..4p\) but looks like row 1 one place on "
                       r"\(2m..5p\)"):
        enroll_from_rows(EmbeddingClassifier(), cal, rows_shown(tiles, ENROLL_POSE, [every[1:14], ROWS[1], ROWS[2]]))


def test_a_set_the_packaged_sets_name_partly_wrong_still_enrolls_and_is_still_checked(caplog):
    from vision.seat.enrollment import RowOrderError, check_rows, packaged_namer

    cal = SeatCalibration.of(ENROLL_POSE.strip_quad(), STRIP_W, ENROLL_POSE.image_size)
    reader = SeatReader(EmbeddingClassifier(), cal)
    mirrored = mirrored_tile_set(drawn_tile_set())
    frames = rows_shown(mirrored, ENROLL_POSE, ROWS)
    crops = [reader.crops(f, drawn_apart=False) for f, _ in frames]
    named = [g[0] for c in crops for g in packaged_namer().scores_many(c)]
    wrong = sum(kind_of(a) != kind_of(b) for a, b in zip(named, [t for r in ROWS for t in r], strict=True))
    assert wrong >= 5, f"the packaged sets name only {wrong} of the mirrored set's 37 tiles wrong: no test"
    namer = EmbeddingClassifier(half_turn=False, augment_per_image=2)
    with caplog.at_level(logging.WARNING, logger="vision.seat.reader"):
        got = enroll_from_rows(namer, cal, frames)
    assert len(got) == 37 and caplog.text == "", "enrolled in the right order, without a word"
    unchecked = EmbeddingClassifier(half_turn=False, augment_per_image=2)
    enroll_from_rows(unchecked, cal, frames, check=False)
    assert np.array_equal(namer._emb, unchecked._emb), "the check's network pass enrolls what enrolling alone would"
    with pytest.raises(RowOrderError, match=r"frame 1 is given as row 1 .* but looks like row 2"):
        enroll_from_rows(EmbeddingClassifier(), cal, rows_shown(mirrored, ENROLL_POSE, [ROWS[1], ROWS[0], ROWS[2]]))
    digits = rows_shown(digits_tile_set(), ENROLL_POSE, ROWS)
    checks = check_rows([reader.crops(f, drawn_apart=False) for f, _ in digits], ROWS)
    assert [c.frame for c in checks if not c.refused] == [1, 2, 3] and not any(c.refused for c in checks)
    said: list[str] = []
    got = enroll_from_rows(EmbeddingClassifier(half_turn=False, augment_per_image=2), cal, digits, warn=said.append)
    assert len(got) == 37, "a set the packaged sets cannot name is enrolled as given"
    assert len(said) == 3 and said[0].startswith("enrollment frame 1: the packaged tile sets name only")
    assert "if the frame does not show 1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 2p 3p 4p left to right" in said[0]


def test_a_bad_calibration_file_says_what_is_wrong(tmp_path):
    bad = tmp_path / "seat.json"
    bad.write_text('{"quad_px": [[0, 0], [1, 0]], "strip_mm": 390, "image_size": [640, 480]}')
    with pytest.raises(SeatCalibrationError, match="four"):
        SeatCalibration.load(bad)
    with pytest.raises(SeatCalibrationError, match="cannot read"):
        SeatCalibration.load(tmp_path / "missing.json")
    good = SeatCalibration.of(np.array([[10, 10], [600, 20], [600, 80], [10, 70]]), 390, (640, 480))
    good.save(bad)
    assert SeatCalibration.load(bad) == good
    assert np.allclose(good.quad_for((640, 640))[1], [600, 20 * 640 / 480])


# ---------------------------------------------------------------- the service's reader thread
def test_the_seat_camera_thread_publishes_the_private_hand_and_folds_a_discard_at_once(enrolled):
    tiles, pose, cal, namer = enrolled
    hands = PrivateHands()
    changed = threading.Condition()
    seen: list = []

    def on_change(reading) -> None:
        with changed:
            seen.append(reading)
            changed.notify_all()

    def wait_reading(predicate, what: str) -> None:
        with changed:
            assert changed.wait_for(lambda: any(predicate(r) for r in seen), timeout=60), \
                f"no reading {what}; got {seen[-1:] or 'none'}"

    hands.subscribe(on_change)
    know = [SeatKnowledge(holds=14, hand_id="h1")]
    def deliver(reading) -> None:  # every reading wakes the test, changed or not (a frame was folded)
        hands.update(reading)
        with changed:
            changed.notify_all()

    thread = SeatCameraReader(0, SeatReader(namer, cal), lambda: know[0], deliver, agree=2)
    thread.start()
    try:
        rng = np.random.default_rng(12)
        for _ in range(3):
            image, _ = render_hand(HandView(HAND, "4p"), tiles, pose, HandEffects(noise_sigma=3), rng)
            before = thread.frames
            thread.frame(SimpleNamespace(image=image))
            with changed:
                changed.wait_for(lambda b=before: thread.frames > b, timeout=60)
        wait_reading(lambda r: r.drawn == "4p" and len(r.tiles) + r.unknown == 13, "with the drawn 4p apart")
        know[0] = SeatKnowledge(holds=13, gone=("9s",), hand_id="h1")
        thread.knowledge_changed()
        wait_reading(lambda r: r.drawn is None and r.holds == 13, "after the 9s was discarded")
        final = hands.hands()[0]
        assert final.tiles.count("9s") <= 1 and thread.errors == 0
    finally:
        thread.stop()


def test_private_hands_reach_the_broadcast_only_when_every_tile_is_sure():
    hands = PrivateHands()
    given: list = []
    hands.forward_to(given.append)
    sure = HandReading(0, tiles=tuple(sorted(HAND)), drawn="4p")
    assert hands.update(sure) and not hands.update(sure), "an unchanged reading is no change"
    hands.update(HandReading(1, tiles=HAND[:12], unknown=1))
    seen = given[-1]
    assert [t.mjai for t in seen.hands[0]] == [*sorted(HAND), "4p"] and seen.drawn[0].mjai == "4p"
    assert seen.hands[1] is None, "a seat with a tile not yet sure is not given to the broadcast"
    assert seen.hands[2] is None and seen.hands[3] is None and len(given) == 2


def test_a_kept_reading_is_taken_up_only_for_the_hand_in_play():
    kept = HandReading(0, tiles=tuple(sorted(HAND)), hand_id="E1-0#1")
    assert HandReading.from_dict(kept.as_dict(), hand_id="E1-0#1") == kept
    c = HandConsensus(0, agree=1)
    assert not c.resume(kept, SeatKnowledge(holds=13, hand_id="E2-0#2")), "a reading of another hand"
    assert not c.resume(kept, SeatKnowledge(holds=14, hand_id="E1-0#1")), "the seat has drawn since"
    assert c.resume(kept, SeatKnowledge(holds=13, hand_id="E1-0#1"))
    reading = c.feed(None, SeatKnowledge(holds=13, gone=("9s",), hand_id="E1-0#1"))  # drew, then let a 9s go
    assert reading.tiles.count("9s") == 1 and len(reading.tiles) == 12 and reading.unknown == 1, \
        "a discard after the restart leaves the kept hand; the tile drawn is not yet seen"
    with pytest.raises(ValueError, match="not a seat's hand reading"):
        HandReading.from_dict({"seat": 0, "tiles": "1m"})


FLUFFY = Path(__file__).resolve().parents[2] / "shared" / "data" / "tiles-fluffystuff"


@pytest.fixture(scope="module")
def fluffy():
    """The shared FluffyStuff artwork, read once for the tests of its faces (reading decodes every face)."""
    if not FLUFFY.is_dir():
        pytest.skip("the shared FluffyStuff artwork is not here (../shared/data/tiles-fluffystuff)")
    from hardware_sims.tile_art import load_tile_set

    return load_tile_set(FLUFFY)


@pytest.mark.parametrize("lean", [0.0, 4.0, 6.0])
def test_an_artwork_whose_glyphs_reach_the_faces_edges_is_cut_into_all_its_tiles(lean, fluffy):
    """The shared FluffyStuff honours and red fives: a red five's sticks cross the face's whole height, which
    leaves columns with no tile body at all; the row's last face is still one tile, not cut off."""
    tiles = fluffy
    pose = SeatPose(elevation_deg=67.5, distance_mm=450.0, offset_mm=10.0, roll_deg=1.0)
    cal = SeatCalibration.of(pose.strip_quad(), STRIP_W, pose.image_size)
    reader = SeatReader(EmbeddingClassifier(), cal)
    effects = HandEffects(felt="blue", light=0.9, noise_sigma=3, blur_sigma=0.7, jpeg_quality=80, lean_deg=lean)
    for row in ENROLL_ROWS:
        image, _ = render_hand(HandView(tuple(row)), tiles, pose, effects, np.random.default_rng(2))
        assert len(reader.crops(image, drawn_apart=False)) == len(row), f"the row {' '.join(row)}"
    image, _ = render_hand(HandView(ENROLL_ROWS[2][:-1], "5sr"), tiles, pose, effects, np.random.default_rng(3))
    seen = reader.places(reader.runs(reader.strip(image)))
    assert seen[1] is not None and seen[2] and len(seen[0]) == len(ENROLL_ROWS[2]), "the drawn 5sr stays apart"


def test_a_row_ending_in_dense_faces_keeps_its_last_tiles_on_a_squeezed_stream(fluffy):
    """FluffyStuff's 8p: two columns of pins cover its face's height over 0.62 of its width, leaving only its
    margins, a pixel or two of body per column (none in some), on a blurred 640x480 stream squeezed to 640x640.
    At the row's right end such faces were cut off (the row one or two tiles short and still whole, so the frame
    did not count): each of these 12 frames, where a faint stretch closed only under a third of a tile."""
    import itertools

    tiles = fluffy
    pose = SeatPose(elevation_deg=41.2, distance_mm=553.0, offset_mm=-7.0, roll_deg=0.3)  # the bench's 41 degrees
    cal = SeatCalibration.of(pose.strip_quad(), STRIP_W, pose.image_size)
    reader = SeatReader(EmbeddingClassifier(), cal)
    third = SeatReader(EmbeddingClassifier(), cal, glyph_w=1 / 3, faint_reach=0.0)
    row = ("2m", "2m", "7m", "7m", "8m", "2p", "4p", "4p", "5p", "6p", "6p", "8p", "8p")
    cut = 0
    for light, lean, felt in itertools.product((0.7, 0.85, 1.0), (3.0, 6.0), ("blue", "green")):
        effects = HandEffects(felt=felt, light=light, noise_sigma=3, blur_sigma=0.9, jpeg_quality=75,
                              squeeze_to=(640, 640), lean_deg=lean)
        image, _ = render_hand(HandView(row, "S", start_mm=6), tiles, pose, effects, np.random.default_rng(1))
        places, drawn, whole = reader.places(reader.runs(reader.strip(image)))
        assert whole and drawn is not None and len(places) == 14, (light, lean, felt, len(places))
        old, _, old_whole = third.places(third.runs(third.strip(image)))
        cut += not (old_whole and len(old) == 14)
    assert cut >= 6, f"only {cut} of these frames lose a tile when faint stretches close under a third of a tile"
