"""The tile model and every notation: exact both ways, errors that point at the character."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mahjong.tile import TilesConverter

from tablesvc.tiles import (
    Suit,
    Tile,
    TileCountError,
    TileParseError,
    assign_ids,
    format_tiles,
    parse_tile,
    parse_tiles,
    tiles_from_34,
    tiles_from_ids,
    tiles_to_34,
)

ALL_TILES = [Tile.of(k) for k in range(34)] + [Tile.of(k, True) for k in (4, 13, 22)]


def test_there_are_34_kinds_and_three_red_fives():
    assert len({t.mjai for t in ALL_TILES}) == 37
    assert [t.mjai for t in ALL_TILES if t.red] == ["5mr", "5pr", "5sr"]
    with pytest.raises(ValueError, match="only a five"):
        Tile(3, red=True)
    with pytest.raises(ValueError, match=r"0\.\.33"):
        Tile(34)


def test_kinds_follow_tenhou_order():
    assert [Tile.of(k).mjai for k in (0, 8, 9, 17, 18, 26)] == ["1m", "9m", "1p", "9p", "1s", "9s"]
    assert "".join(Tile.of(k).mjai for k in range(27, 34)) == "ESWNPFC"
    assert Tile.of(31).name == "White dragon" and Tile.of(33).name == "Red dragon"


def test_tiles_are_interned():
    assert parse_tile("5mr") is parse_tile("0m") is Tile.of(4, True)
    assert parse_tile("1z") is parse_tile("E")


@pytest.mark.parametrize(
    ("tile", "suit", "number", "terminal", "honor"),
    [("1m", Suit.MAN, 1, True, False), ("5p", Suit.PIN, 5, False, False), ("9s", Suit.SOU, 9, True, False),
     ("N", Suit.HONOR, 4, False, True), ("C", Suit.HONOR, 7, False, True)],
)
def test_tile_properties(tile, suit, number, terminal, honor):
    t = parse_tile(tile)
    assert (t.suit, t.number, t.is_terminal, t.is_honor) == (suit, number, terminal, honor)
    assert t.is_terminal_or_honor == (terminal or honor)
    assert t.is_simple == (not terminal and not honor)


@pytest.mark.parametrize(
    ("indicator", "dora"),
    [("1m", "2m"), ("9m", "1m"), ("9p", "1p"), ("5sr", "6s"), ("E", "S"), ("N", "E"), ("P", "F"), ("F", "C"),
     ("C", "P")],
)
def test_dora_follows_the_indicator(indicator, dora):
    # RULES 2.7: 9 -> 1, winds E->S->W->N->E, dragons red -> white -> green -> red (C -> P -> F -> C)
    assert parse_tile(indicator).dora == parse_tile(dora)


def test_mjai_round_trip_for_every_tile():
    for t in ALL_TILES:
        assert parse_tile(t.mjai) is t
        assert parse_tile(t.compact) is t


def test_compact_strings_parse_in_order_and_format_back():
    tiles = parse_tiles("123m406p789s1122z")
    assert [t.mjai for t in tiles] == ["1m", "2m", "3m", "4p", "5pr", "6p", "7s", "8s", "9s", "E", "E", "S", "S"]
    assert format_tiles(tiles) == "123m406p789s1122z"


def test_mixed_notations_and_separators():
    assert parse_tiles("5mr 6m, E PPP 1z") == [Tile.of(4, True), Tile.of(5), Tile.of(27), *[Tile.of(31)] * 3,
                                                Tile.of(27)]


def test_format_sorts_red_five_among_fives_and_can_keep_order():
    tiles = parse_tiles("5m0m5m1z9p")
    assert format_tiles(tiles) == "055m9p1z"
    assert format_tiles(tiles, sort=False) == "505m1z9p"


@given(st.lists(st.sampled_from(ALL_TILES), max_size=20))
def test_format_then_parse_is_the_same_multiset(tiles):
    back = parse_tiles(format_tiles(tiles))
    assert sorted(back, key=lambda t: (t.kind, t.red)) == sorted(tiles, key=lambda t: (t.kind, t.red))


@pytest.mark.parametrize(
    ("text", "position", "reason"),
    [("123x", 3, "unknown character"), ("12m3", 3, "without a suit"), ("m12", 0, "no numbers before"),
     ("8z", 0, "1z..7z"), ("123m0z", 4, "1z..7z"), ("55mr", 3, "single five"), ("4mr", 2, "single five"),
     ("12 3m", 0, "without a suit"), ("12E", 0, "without a suit")],
)
def test_parse_errors_name_character_and_position(text, position, reason):
    with pytest.raises(TileParseError) as err:
        parse_tiles(text)
    assert err.value.position == position
    assert reason in str(err.value)
    assert f"position {position}" in str(err.value)


def test_parse_tile_wants_exactly_one():
    with pytest.raises(TileParseError, match="expected one tile, found 2"):
        parse_tile("12m")


def test_tenhou_ids_red_fives_are_copy_zero():
    assert [t.mjai for t in tiles_from_ids([16, 17, 52, 88, 89, 135, 0])] == ["5mr", "5m", "5pr", "5sr", "5s", "C",
                                                                               "1m"]
    with pytest.raises(ValueError, match=r"0\.\.135"):
        Tile.from_id(136)


def test_assign_ids_are_distinct_and_round_trip():
    tiles = parse_tiles("0555m1111z")
    ids = assign_ids(tiles)
    assert len(set(ids)) == 8
    assert ids[0] == 16  # the red five is copy 0
    assert tiles_from_ids(ids) == tiles


def test_assign_ids_without_red_uses_copy_zero_last():
    ids = assign_ids(parse_tiles("5555p"))
    assert sorted(ids) == [52, 53, 54, 55]
    assert [t.red for t in tiles_from_ids(ids)].count(True) == 1  # id 52 *is* the red one: callers check rules


@pytest.mark.parametrize(
    ("text", "message"), [("11111m", "5 x 1 man"), ("0m0m", r"2 x 5 man \(red\)"), ("05555m", "5 x 5 man")]
)
def test_assign_ids_refuses_impossible_counts(text, message):
    with pytest.raises(TileCountError, match=message):
        assign_ids(parse_tiles(text))


def test_34_arrays_match_the_mahjong_package():
    tiles = parse_tiles("123m406p789s1122z")
    assert tiles_to_34(tiles) == TilesConverter.string_to_34_array(man="123", pin="456", sou="789", honors="1122")
    assert format_tiles(tiles_from_34(tiles_to_34(tiles))) == "123m456p789s1122z"
    with pytest.raises(ValueError, match="34 counts"):
        tiles_from_34([1, 2])


def test_136_ids_match_the_mahjong_package_reading():
    tiles = parse_tiles("406p")
    ids = assign_ids(tiles)
    assert TilesConverter.to_one_line_string(ids, print_aka_dora=True) == "406p"
