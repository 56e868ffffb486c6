"""Table geometry: seat rotations, pond/meld/hand/wall slots, zones, TOML round trip."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from vision.table.geometry import (
    MELD_SIDEWAYS,
    MELD_STACKED,
    MELD_UPRIGHT,
    SEATS,
    ZONES,
    TableGeometry,
    TileRect,
    load_geometry,
    local_to_table,
    save_geometry,
    table_to_local,
)

G = TableGeometry()


def test_seat_frames_turn_counter_clockwise_from_east_at_the_bottom() -> None:
    # "towards the player" (v) points down for seat 0, right for 1, up for 2, left for 3
    toward = [local_to_table(s, [[0, 1]])[0] for s in SEATS]
    assert [tuple(v) for v in toward] == [(0, 1), (1, 0), (0, -1), (-1, 0)]
    # the player's right (u) for seat 0 is +x; for seat 1 (on the right side, facing left) it is up
    assert tuple(local_to_table(1, [[1, 0]])[0]) == (0, -1)
    pts = np.array([[12.5, -40.0], [300.0, 7.0]])
    for s in SEATS:
        assert np.allclose(table_to_local(s, local_to_table(s, pts)), pts)


@pytest.mark.parametrize("seat", SEATS)
def test_upright_tiles_of_a_seat_point_their_top_to_the_centre(seat: int) -> None:
    r = G.pond_slot(seat, 0)
    assert r.angle == 90 * seat
    top_mid = r.corners()[:2].mean(axis=0)
    bottom_mid = r.corners()[2:].mean(axis=0)
    assert np.linalg.norm(top_mid) < np.linalg.norm(bottom_mid)  # the top is nearer the table centre


def test_tile_rect_corners_are_the_face_corners_in_order() -> None:
    r = TileRect(0, 0, 26, 35, 90)  # turned a quarter counter-clockwise: its top points left
    tl, tr, br, bl = r.corners()
    assert np.allclose(tl, [-17.5, 13]) and np.allclose(tr, [-17.5, -13])
    assert np.allclose(br, [17.5, -13]) and np.allclose(bl, [17.5, 13])
    assert r.sideways and not TileRect(0, 0, 26, 35, 180).sideways


def test_pond_rows_of_six_and_a_sideways_tile_takes_35_mm() -> None:
    flags = [False] * 8 + [True] + [False] * 13  # riichi on the 9th discard, 22 discards
    rects = G.pond_layout(0, flags)
    xs = [r.cx for r in rects]
    ys = [r.cy for r in rects]
    assert len(set(ys[:6])) == 1 and ys[6] > ys[0] and ys[12] > ys[6]
    assert np.allclose(np.diff(xs[:6]), 26)
    assert xs[9] - xs[8] == pytest.approx(35 / 2 + 26 / 2)  # the row continues after the wider sideways tile
    assert xs[8] - xs[7] == pytest.approx(26 / 2 + 35 / 2)
    assert rects[8].sideways and rects[8].angle == 90
    assert len({round(y, 3) for y in ys[12:]}) == 1 and xs[21] > xs[17]  # the third row grows past six
    assert G.pond_slot(0, 9, flags) == rects[9]
    # tiles do not overlap within the pond
    for a, b in itertools.pairwise(rects):
        if a.cy == b.cy:
            assert b.cx - a.cx >= (35 if b.sideways or a.sideways else 26) / 2 + 26 / 2 - 1e-9


def test_meld_layout_called_and_added_tiles() -> None:
    (pon, kan), = [G.meld_layout(0, [[MELD_SIDEWAYS, MELD_UPRIGHT, MELD_UPRIGHT],
                                      [MELD_UPRIGHT, MELD_SIDEWAYS, MELD_STACKED, MELD_UPRIGHT]])]  # fmt: skip
    assert pon[-1].cx + 13 == pytest.approx(G.meld_right)  # the first meld starts at the right
    assert kan[-1].cx < pon[0].cx  # the next one lies to its left
    assert pon[0].sideways and not pon[1].sideways
    assert kan[2].cx == kan[1].cx and kan[2].cy == pytest.approx(kan[1].cy - 26)  # added tile beyond the called one
    # all meld tiles touch the player-side edge except the stacked one
    for r in [*pon, kan[0], kan[1], kan[3]]:
        assert r.corners()[:, 1].max() == pytest.approx(G.meld_edge)
    with pytest.raises(ValueError, match="stacked"):
        G.meld_layout(0, [[MELD_STACKED]])


@pytest.mark.parametrize("seat", SEATS)
def test_every_slot_is_inside_its_zone_and_only_there(seat: int) -> None:
    slots = {
        "pond": [*G.pond_layout(seat, [False] * 5 + [True] + [False] * 16)],
        "hand": [G.hand_slot(seat, i) for i in range(14)],
        "wall": [G.wall_slot(seat, i) for i in range(G.wall_stacks)],
        "meld": [r for m in G.meld_layout(seat, [[MELD_SIDEWAYS, MELD_UPRIGHT, MELD_UPRIGHT]] * 4) for r in m],
    }
    for zone, rects in slots.items():
        for r in rects:
            assert G.zone_of(r.cx, r.cy) == (seat, zone)
            for x, y in r.corners():
                assert abs(x) < G.surface_mm / 2 and abs(y) < G.surface_mm / 2


def test_zones_do_not_cover_the_markers_or_each_other() -> None:
    for mid in G.marker_ids:
        for x, y in G.marker_corners(mid):
            assert G.zone_of(x, y) is None
    grid = np.mgrid[-410:411:10, -410:411:10].reshape(2, -1).T
    hits = np.zeros(len(grid), int)  # zones each grid point lies strictly inside
    for s in SEATS:
        u, v = table_to_local(s, grid).T
        for z in ZONES:
            poly = table_to_local(s, G.zone_polygon(s, z))
            hits += (poly[:, 0].min() < u) & (u < poly[:, 0].max()) & (poly[:, 1].min() < v) & (v < poly[:, 1].max())
    assert hits.max() <= 1, [tuple(p) for p in grid[hits > 1]]


def test_markers_in_the_corners_id_k_right_of_seat_k() -> None:
    assert G.marker_centre(0) == (385.0, 385.0)  # bottom right: East's right hand
    assert G.marker_centre(1) == (385.0, -385.0)
    assert G.marker_centre(2) == (-385.0, -385.0)
    c = G.marker_corners(3)
    assert np.allclose(c[2] - c[0], [50, 50])


def test_toml_round_trip_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "table.toml"
    save_geometry(G, p)
    assert load_geometry(p) == G
    assert load_geometry(None) == G
    text = p.read_text().replace("surface_mm = 840.0", "surface_mm = 900")
    p.write_text(text)
    g2 = load_geometry(p)
    assert g2.surface_mm == 900.0 and isinstance(g2.surface_mm, float)
    assert g2.marker_ids == (0, 1, 2, 3)
    p.write_text("[pond]\npond_colums = 6\n")
    with pytest.raises(ValueError, match=r"pond\.pond_colums"):
        load_geometry(p)
