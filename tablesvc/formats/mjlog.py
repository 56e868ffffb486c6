"""Tenhou mjlog XML: the online server's own game records.

Tags: ``INIT`` (round, counters, sticks, dice, first dora indicator, scores,
dealer, the four dealt hands), draws ``T U V W`` and discards ``D E F G``
followed by a 136 tile id, ``N`` (a call, bit-packed), ``REACH`` (step 1 =
declared, step 2 = stick placed), ``DORA`` (kan dora), ``AGARI`` and
``RYUUKYOKU`` with the points moved (``sc``, in hundreds), ``owari`` with the
final scores. There is no public specification; the meld bit layout below is
the one every open Tenhou log reader uses.

A file cut at the front is taken up where its first ``INIT`` stands. An
attribute that is no number, a tile id outside 0..135 or a seat outside 0..3
is refused as :class:`RecordError` naming the element (``element 12
<AGARI>: who must be a seat 0..3, not 7``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from urllib.parse import unquote

from tablesvc.engine.events import (
    AbortiveDraw,
    AddedKan,
    Call,
    ConcealedKan,
    DiceRolled,
    Discard,
    DoraRevealed,
    Draw,
    Event,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    RonClaim,
    Tsumo,
)
from tablesvc.formats.record import HandRecord, RecordedGame, RecordError, take_up_at_first_hand
from tablesvc.text import require_text
from tablesvc.tiles import Tile

__all__ = ["decode_meld", "parse_mjlog"]

_DRAW = "TUVW"
_DISCARD = "DEFG"
_ABORTS = {"yao9": "nine_terminals", "kaze4": "four_winds", "reach4": "four_riichi", "kan4": "four_kans"}


def _number(text: str | None, what: str) -> int:
    try:
        return int(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a whole number, not {text!r}") from None


def _numbers(text: str | None, what: str, count: int | None = None) -> list[int]:
    """Comma-separated whole numbers (``sc`` and ``owari`` may write them with a decimal point)."""
    try:
        values = [int(float(x)) for x in text.split(",")] if text else []
    except ValueError:
        raise ValueError(f"{what} must be numbers separated by commas, not {text!r}") from None
    if count is not None and len(values) < count:
        raise ValueError(f"{what} must be {count} numbers, not {text!r}")
    return values


def _seat(el: ET.Element, name: str = "who") -> int:
    seat = _number(el.get(name, "0"), name)
    if not 0 <= seat <= 3:
        raise ValueError(f"{name} must be a seat 0..3, not {seat}")
    return seat


def _ids(text: str | None) -> list[int]:
    return _numbers(text, "tile ids")


def _tiles(ids: list[int]) -> tuple[Tile, ...]:
    return tuple(Tile.from_id(i) for i in ids)


def decode_meld(who: int, m: int) -> Event:
    """The event a Tenhou ``N`` tag stands for."""
    from_seat = (who + (m & 3)) % 4
    if m & 0x4:  # chi: base tile and which of the three was called, plus each tile's copy
        t = m >> 10
        called_index = t % 3
        t //= 3
        base = (t // 7) * 9 + t % 7
        ids = [(base + i) * 4 + ((m >> (3 + 2 * i)) & 3) for i in range(3)]
        return Call(seat=who, kind="chi", tiles=_tiles(ids), called=Tile.from_id(ids[called_index]),
                    from_seat=from_seat)
    if m & 0x18:  # pon (0x8) or added kan (0x10): kind, the unused copy, which one was called
        t = m >> 9
        called_index = t % 3
        kind = t // 3
        unused = (m >> 5) & 3
        ids = [kind * 4 + c for c in range(4) if c != unused]
        if m & 0x10:
            return AddedKan(seat=who, tile=Tile.from_id(kind * 4 + unused))
        return Call(seat=who, kind="pon", tiles=_tiles(ids), called=Tile.from_id(ids[called_index]),
                    from_seat=from_seat)
    if m & 0x20:
        raise RecordError("a north-wind extraction (3-player mahjong) is not a 4-player game")
    called_id = m >> 8
    kind = called_id // 4
    ids = [kind * 4 + c for c in range(4)]
    if from_seat == who:
        return ConcealedKan(seat=who, tiles=_tiles(ids))
    return Call(seat=who, kind="kan", tiles=_tiles(ids), called=Tile.from_id(called_id), from_seat=from_seat)


def _scores(text: str) -> tuple[int, int, int, int]:
    v = [x * 100 for x in _numbers(text, "ten", 4)]
    return (v[0], v[1], v[2], v[3])


def _sc(text: str) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """(scores before, deltas) from an ``sc`` attribute (pairs in hundreds)."""
    v = [x * 100 for x in _numbers(text, "sc", 8)]
    return (v[0], v[2], v[4], v[6]), (v[1], v[3], v[5], v[7])


def _name(el: ET.Element, seat: int) -> str:
    """A player's name: UTF-8 behind %-escapes, decoded strictly (a name that is no text is refused, not
    turned into replacement characters nobody typed)."""
    raw = el.get(f"n{seat}", "")
    try:
        return require_text(unquote(raw, errors="strict"), f"n{seat}")
    except UnicodeDecodeError:
        raise ValueError(f"n{seat} {raw!r:.80} is not UTF-8 text once its %-escapes are decoded") from None


def parse_mjlog(text: str, source: str = "<mjlog>") -> RecordedGame:
    """Read an mjlog document. A file cut short gives the hands up to where it stops."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise RecordError(f"{source}: not Tenhou mjlog XML ({exc})") from None
    except UnicodeEncodeError:
        raise RecordError(f"{source}: not valid Unicode text (it holds a lone surrogate)") from None
    if root.tag != "mjloggm":
        raise RecordError(f"{source}: not Tenhou mjlog XML (root tag {root.tag!r})")
    game = RecordedGame(source=source, rules="tenhou")
    events = game.events
    riichi_next = [False] * 4
    last_draw: list[int | None] = [None] * 4
    pending_wins: list[ET.Element] = []
    started = False

    def flush_wins() -> None:
        if not pending_wins:
            return
        first = pending_wins[0]
        who, from_who = _seat(first), _seat(first, "fromWho")
        deltas = [0, 0, 0, 0]
        for agari in pending_wins:
            _, d = _sc(agari.get("sc", "0,0,0,0,0,0,0,0"))
            deltas = [a + b for a, b in zip(deltas, d, strict=True)]
        ura = _tiles(_ids(first.get("doraHaiUra")))
        if who == from_who:
            events.append(Tsumo(seat=who, hand=_tiles(_ids(first.get("hai"))),
                                win_tile=Tile.from_id(_number(first.get("machi", "0"), "machi")), ura=ura))
        else:
            claims = tuple(RonClaim(seat=_seat(a), hand=_tiles(_ids(a.get("hai")))) for a in pending_wins)
            events.append(Ron(from_seat=from_who, claims=claims, ura=ura))
        _close_hand(game, (deltas[0], deltas[1], deltas[2], deltas[3]))
        pending_wins.clear()

    def read(el: ET.Element) -> None:
        nonlocal started, riichi_next, last_draw
        tag = el.tag
        if tag == "UN" and el.get("n0") is not None:
            names = tuple(_name(el, i) or f"Player {i + 1}" for i in range(4))
            game.players = (names[0], names[1], names[2], names[3])
        elif tag == "INIT":
            seed = _numbers(el.get("seed"), "seed")
            if len(seed) != 6:
                raise ValueError(f"seed {el.get('seed')!r} is not 6 numbers (round, counters, sticks, dice, dora)")
            round_, honba, sticks, d1, d2, dora = seed
            hands = tuple(_tiles(_ids(el.get(f"hai{i}"))) for i in range(4))
            hand = HandRecord(round=round_, honba=honba, sticks=sticks, dealer=_seat(el, "oya"),
                              scores=_scores(el.get("ten", "0,0,0,0")))
            first_dora = Tile.from_id(dora)
            if not started:
                events.append(GameStart(players=game.players, rules="tenhou"))
                started = True
            game.hands.append(hand)
            events.append(DiceRolled(dice=(d1 + 1, d2 + 1)))
            events.append(HandStart(hands=(hands[0], hands[1], hands[2], hands[3])))
            events.append(DoraRevealed(tile=first_dora))
            riichi_next = [False] * 4
            last_draw = [None] * 4
        elif tag[:1] in _DRAW and tag[1:].isdigit():
            seat = _DRAW.index(tag[0])
            tile = Tile.from_id(int(tag[1:]))
            last_draw[seat] = int(tag[1:])
            events.append(Draw(seat=seat, tile=tile))
        elif tag[:1] in _DISCARD and tag[1:].isdigit():
            seat = _DISCARD.index(tag[0])
            tile_id = int(tag[1:])
            events.append(Discard(seat=seat, tile=Tile.from_id(tile_id), riichi=riichi_next[seat],
                                  tsumogiri=tile_id == last_draw[seat]))
            riichi_next[seat] = False
            last_draw[seat] = None
        elif tag == "N":
            events.append(decode_meld(_seat(el), _number(el.get("m", "0"), "m")))
        elif tag == "REACH" and el.get("step") == "1":
            riichi_next[_seat(el)] = True
        elif tag == "DORA":
            events.append(DoraRevealed(tile=Tile.from_id(_number(el.get("hai", "0"), "hai"))))
        elif tag == "AGARI":
            pending_wins.append(el)
            if game.hands:
                game.hands[-1].dora_at_win = tuple(Tile.from_id(i).mjai for i in _ids(el.get("doraHai")))
        elif tag == "RYUUKYOKU":
            kind = el.get("type")
            _, deltas = _sc(el.get("sc", "0,0,0,0,0,0,0,0"))
            if kind is None or kind == "nm":
                tenpai = tuple(el.get(f"hai{i}") is not None for i in range(4))
                events.append(ExhaustiveDraw(tenpai=(tenpai[0], tenpai[1], tenpai[2], tenpai[3])))
            elif kind == "ron3":
                events.append(Ron(from_seat=_last_discarder(events), claims=tuple(
                    RonClaim(seat=i, hand=_tiles(_ids(el.get(f"hai{i}")))) for i in range(4)
                    if el.get(f"hai{i}") is not None)))
            elif kind in _ABORTS:
                seat = next((i for i in range(4) if el.get(f"hai{i}") is not None), None)
                events.append(AbortiveDraw(kind=_ABORTS[kind], seat=seat if kind == "yao9" else None))
            else:
                raise ValueError(f"unknown draw type {kind!r}")
            _close_hand(game, deltas)

    def flush(where: str) -> None:
        try:
            flush_wins()
        except ValueError as exc:  # RecordError included
            pending_wins.clear()
            raise RecordError(f"{source}: {where}: {str(exc).removeprefix(source + ': ')}") from None

    agari_at = ""
    for index, el in enumerate(root, 1):
        if el.tag != "AGARI":
            flush(agari_at)
        elif not pending_wins:
            agari_at = f"element {index} <AGARI>"
        try:
            read(el)
            if (owari := el.get("owari")) is not None:
                flush(agari_at)
                v = _numbers(owari, "owari", 8)
                game.final_scores = (v[0] * 100, v[2] * 100, v[4] * 100, v[6] * 100)
        except ValueError as exc:  # RecordError included: a number that is none, a tile id out of range
            raise RecordError(f"{source}: element {index} <{el.tag}>: {str(exc).removeprefix(source + ': ')}"
                              ) from None
    flush(agari_at)
    take_up_at_first_hand(game)
    return game


def _last_discarder(events: list[Event]) -> int:
    for e in reversed(events):
        if isinstance(e, Discard):
            return e.seat
    return 0


def _close_hand(game: RecordedGame, deltas: tuple[int, int, int, int]) -> None:
    if game.hands and game.hands[-1].deltas is None:
        game.hands[-1].deltas = deltas
        game.hands[-1].end_event = len(game.events) - 1
