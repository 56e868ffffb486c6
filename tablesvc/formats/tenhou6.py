"""tenhou.net/6 JSON: the game log Tenhou's viewer and editor read (and mjai-reviewer converts).

One JSON object: ``title``, ``name`` (the four players), ``rule``
(``disp`` like "般南喰赤", ``aka``), ``log`` (one entry per hand) and, for a
finished game, ``sc`` (final score and result of each seat, in turn). A hand::

    [[round, honba, sticks], start_scores, dora_indicators, ura_indicators,
     hai0, take0, discard0, hai1, take1, discard1, hai2, ..., discard3, result]

Tiles are numbers: 11-19 man, 21-29 pin, 31-39 sou, 41-47 E S W N P F C,
51 52 53 the red fives. ``take`` lists every tile a seat acquired: draws as
numbers, calls as strings with the called tile after the letter, whose place
says where it came from (left at 0, across at 2, right at 4; at 6 for an
open kan): ``c275226`` chi of 27 with 52 26, ``p474747`` / ``12p1212`` /
``3737p37`` pon, ``m39393939`` / ``26m262626`` / ``131313m13`` open kan.
``discard`` lists what left the hand: numbers, 60 for the tile just drawn,
``r`` before a riichi discard (``r60`` too), ``0`` after an open kan (no
discard), added kans as the pon string with ``k`` + the added tile where the
``p`` was (``k16161616``, ``41k414141``, ``4646k4646``), concealed kans as
``161616a16`` (written with the ``a`` at 6; read wherever it stands). These
are the positions Tenhou's viewer and mjai-reviewer's convlog read; one
player may make any mix of them in a hand (tests/test_tenhou6_calls.py).
``result`` is
``["和了", deltas, [winner, from, pao, "30符1飜1000点", "立直(1飜)", ...], ...]``
(one pair per winner), ``["流局", deltas]``, ``["流し満貫", deltas]``, or the
name alone: 全員聴牌 全員不聴 九種九牌 四風連打 四家立直 四槓散了 三家和了.

The per-seat lists do not say in which order the seats moved: the reader
replays the hand turn by turn, a call answering the discard it names, and
backtracks where two identical discards leave a call ambiguous (the way
mjai-reviewer's converter does), keeping every turn order that consumes the
lists (at most :data:`MAX_READINGS`). Where more than one does, each is
played through the engine from the hand's start and the one that gives the
recorded deltas is kept (:func:`_choose`); none is an error naming the hand,
the seat and the tile. On real games one order always fits
(docs/engine.md, tests/test_tenhou6_readings.py): the tie-break is for a
file that shows otherwise. Kan dora are placed where Tenhou reveals
them (a concealed kan's at once, an open or added kan's before that player's
next discard); the riichi stick is the engine's business.

Choices where the format is silent:

* Rules: "tenhou" when ``rule.disp`` is a 4-player hanchan with open tanyao
  and red fives (南, 喰, 赤, no 三); a preset name there (our own exports of
  other rules) is that preset; otherwise the record's rules stay None.
* The game is taken up where the first hand in ``log`` stands (round,
  counters, sticks, scores; the dealer is the round's), so a log of any hand
  or hands of a game replays from there.
* Tenpai at ``流局``: the seats paid noten money; with no money moved, all
  four if a riichi player or four ready hands say so, else none. At
  ``流し満貫`` (the payments are the nagashi, not noten money): riichi players
  and the hands that are ready (every tile is known in this format).
* A hand's deltas are its result's (summed over winners); zero for the
  draws written without them. Final scores come from ``sc``.
* Writing: ``title`` is empty; ``rule.disp`` is 般南喰赤 under the tenhou
  preset, else the preset's name; a multiple ron is split as in
  :func:`tablesvc.formats.walk.split_win_deltas`; a hand the record stops in
  is written with an empty result. The format has every tile face up: a
  record with unseen tiles, or with a referee's ruling (chombo, dead hand,
  score correction, game ended early), cannot be written. Nor can a game
  taken up with a dealer other than the round's (``start_game`` with
  ``dealer``): a hand writes only [round, honba, sticks] and the dealer is
  implied by the round (E1 seat 0, E2 seat 1 ...); mjai names it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import (
    AbortiveDraw,
    AddedKan,
    Call,
    Chombo,
    ConcealedKan,
    DeadHand,
    DiceRolled,
    Discard,
    DoraRevealed,
    Draw,
    EndGame,
    Event,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    RonClaim,
    SetScores,
    Tsumo,
)
from tablesvc.engine.results import HandResult, WinResult, round_name
from tablesvc.formats.record import HandRecord, RecordedGame, RecordError, ReplayReport, take_up_at_first_hand
from tablesvc.formats.tracker import HandTracker, guess_tenpai, noten_payment_tenpai
from tablesvc.formats.walk import Before, HandResults, split_win_deltas, tenhou_order, walk
from tablesvc.rules.ruleset import UnknownRuleSetError, get_ruleset
from tablesvc.text import find_invalid_text
from tablesvc.tiles import Tile

__all__ = ["export_tenhou6", "parse_tenhou6", "tile_code", "tile_from_code"]

TSUMOGIRI = 60
MAX_READINGS = 64  # turn orders tried per hand where identical discards leave a call ambiguous
_WIN = "和了"
_DRAWS = ("流局", "全員聴牌", "全員不聴", "流し満貫")
_ABORTS = {"九種九牌": "nine_terminals", "四風連打": "four_winds", "四家立直": "four_riichi", "四槓散了": "four_kans"}
_TRIPLE_RON = "三家和了"
_ABORT_NAMES = {**{v: k for k, v in _ABORTS.items()}, "triple_ron": _TRIPLE_RON}
_TENHOU_DISP = "般南喰赤"
# the seat a call takes from, by where its letter stands in the call string: caller + 3 (left), + 2, + 1 (right)
_LEFT, _ACROSS, _RIGHT = 3, 2, 1
_PON_POS = {0: _LEFT, 2: _ACROSS, 4: _RIGHT}
_KAN_POS = {0: _LEFT, 2: _ACROSS, 6: _RIGHT}

_YAKU_JA = {
    "Menzen Tsumo": "門前清自摸和", "Riichi": "立直", "Open Riichi": "開立直", "Ippatsu": "一発", "Chankan": "槍槓",
    "Rinshan Kaihou": "嶺上開花", "Haitei Raoyue": "海底摸月", "Houtei Raoyui": "河底撈魚",
    "Double Riichi": "両立直", "Double Open Riichi": "両開立直", "Nagashi Mangan": "流し満貫", "Renhou": "人和",
    "Pinfu": "平和", "Tanyao": "断幺九", "Iipeiko": "一盃口", "Yakuhai (haku)": "役牌 白",
    "Yakuhai (hatsu)": "役牌 發", "Yakuhai (chun)": "役牌 中", "Yakuhai (seat wind east)": "自風 東",
    "Yakuhai (seat wind south)": "自風 南", "Yakuhai (seat wind west)": "自風 西",
    "Yakuhai (seat wind north)": "自風 北", "Yakuhai (round wind east)": "場風 東",
    "Yakuhai (round wind south)": "場風 南", "Yakuhai (round wind west)": "場風 西",
    "Yakuhai (round wind north)": "場風 北", "Sanshoku Doujun": "三色同順", "Ittsu": "一気通貫",
    "Chantai": "混全帯幺九", "Honroutou": "混老頭", "Toitoi": "対々和", "San Ankou": "三暗刻",
    "San Kantsu": "三槓子", "Sanshoku Doukou": "三色同刻", "Chiitoitsu": "七対子", "Shou Sangen": "小三元",
    "Honitsu": "混一色", "Junchan": "純全帯幺九", "Ryanpeikou": "二盃口", "Chinitsu": "清一色",
    "Kokushi Musou": "国士無双", "Chuuren Poutou": "九蓮宝燈", "Suu Ankou": "四暗刻", "Daisangen": "大三元",
    "Shousuushii": "小四喜", "Ryuuiisou": "緑一色", "Suu Kantsu": "四槓子", "Tsuu Iisou": "字一色",
    "Chinroutou": "清老頭", "Dai Suushii": "大四喜", "Kokushi Musou Juusanmen Matchi": "国士無双１３面",
    "Suu Ankou Tanki": "四暗刻単騎", "Daburu Chuuren Poutou": "純正九蓮宝燈", "Tenhou": "天和",
    "Chiihou": "地和", "Renhou (yakuman)": "人和", "Dora": "ドラ", "Aka Dora": "赤ドラ", "Ura Dora": "裏ドラ",
}
_LIMIT_JA = {"mangan": "満貫", "haneman": "跳満", "baiman": "倍満", "sanbaiman": "三倍満", "yakuman": "役満"}


# ====================================================================== tiles


def tile_code(tile: Tile) -> int:
    """The tenhou.net/6 number of a tile: 11-19 man, 21-29 pin, 31-39 sou, 41-47 honours, 51-53 red fives."""
    if tile.red:
        return 51 + tile.kind // 9
    if tile.kind >= 27:
        return 41 + tile.kind - 27
    return (tile.kind // 9 + 1) * 10 + tile.kind % 9 + 1


_BY_CODE = {tile_code(t): t for t in (*(Tile.of(k) for k in range(34)), *(Tile.of(k, True) for k in (4, 13, 22)))}


def tile_from_code(code: Any) -> Tile | None:
    """The tile of a tenhou.net/6 number, or None when it is not one."""
    if isinstance(code, bool) or not isinstance(code, int):
        return None
    return _BY_CODE.get(code)


# ====================================================================== reading


class _Inconsistent(Exception):
    """The per-seat lists cannot be put in turn order this way."""


@dataclass(frozen=True)
class _Take:
    kind: str  # draw chi pon kan
    tile: Tile  # the drawn or called tile
    tiles: tuple[Tile, ...] = ()
    target: int = 0


@dataclass(frozen=True)
class _Reading:
    """One turn order of a hand: its events, how it ended, and where a call could have taken another discard
    (the discarding seat, the tile, the calling seat)."""

    events: list[Event]
    ended: tuple[str, int] | None
    points: tuple[tuple[int, Tile, int], ...]


@dataclass(frozen=True)
class _Out:
    kind: str  # discard placeholder kakan ankan
    tile: Tile | None = None  # None: the tile just drawn (60)
    riichi: bool = False
    tiles: tuple[Tile, ...] = ()


class _HandReader:
    """One hand of a tenhou.net/6 log."""

    def __init__(self, source: str, index: int, kyoku: Any) -> None:
        self.source = source
        self.where = f"log[{index}]"
        self.kyoku = kyoku

    def fail(self, message: str) -> RecordError:
        return RecordError(f"{self.source}: {self.where}: {message}")

    def tile(self, code: Any, what: str) -> Tile:
        t = tile_from_code(code)
        if t is None:
            raise self.fail(f"{what}: {code!r} is not a tile (11-19, 21-29, 31-39, 41-47, 51-53)")
        return t

    def tiles(self, value: Any, what: str, size: int | None = None) -> list[Tile]:
        if not isinstance(value, list) or (size is not None and len(value) != size):
            want = f"{size} tiles" if size is not None else "a list of tiles"
            raise self.fail(f"{what} must be {want}, not {value!r}")
        return [self.tile(c, f"{what}[{i}]") for i, c in enumerate(value)]

    def meld(self, text: str, what: str, letters: str, expected: str) -> tuple[str, int, list[Tile]]:
        """(letter, its position, the tiles in writing order) of a call string."""
        found = [(i, c) for i, c in enumerate(text) if not c.isdigit()]
        if len(found) != 1 or found[0][1] not in letters:
            raise self.fail(f"{what}: {text!r} is not {expected}")
        pos, letter = found[0]
        digits = text[:pos] + text[pos + 1:]
        if len(digits) % 2 or pos % 2:
            raise self.fail(f"{what}: {text!r} is not a call string")
        return letter, pos, [self.tile(int(digits[i:i + 2]), f"{what} {text!r}") for i in range(0, len(digits), 2)]

    def take(self, item: Any, seat: int, what: str) -> _Take:
        if isinstance(item, int) and not isinstance(item, bool):
            return _Take("draw", self.tile(item, what))
        if not isinstance(item, str):
            raise self.fail(f"{what}: {item!r} is neither a tile nor a call")
        letter, pos, tiles = self.meld(item, what, "cpm", "a chi, pon or open kan string (c, p, m)")
        if letter == "c" and pos == 0 and len(tiles) == 3:
            return _Take("chi", tiles[0], tuple(sorted(tiles, key=tenhou_order)), (seat + 3) % 4)
        if letter == "p" and pos in _PON_POS and len(tiles) == 3:
            return _Take("pon", tiles[pos // 2], tuple(sorted(tiles, key=tenhou_order)), (seat + _PON_POS[pos]) % 4)
        if letter == "m" and pos in _KAN_POS and len(tiles) == 4:
            return _Take("kan", tiles[pos // 2], tuple(sorted(tiles, key=tenhou_order)), (seat + _KAN_POS[pos]) % 4)
        raise self.fail(f"{what}: {item!r} is not a chi, pon or open kan string")

    def out(self, item: Any, what: str) -> _Out:
        if item == 0 and not isinstance(item, bool):
            return _Out("placeholder")
        if item == TSUMOGIRI and not isinstance(item, bool):
            return _Out("discard")
        if isinstance(item, int) and not isinstance(item, bool):
            return _Out("discard", self.tile(item, what))
        if not isinstance(item, str):
            raise self.fail(f"{what}: {item!r} is neither a tile nor a riichi or kan string")
        if item.startswith("r") and len(item) == 3 and item[1:].isdigit():
            code = int(item[1:])
            return _Out("discard", None if code == TSUMOGIRI else self.tile(code, what), riichi=True)
        letter, pos, tiles = self.meld(item, what, "ka", "a riichi discard (r + tile) or a kan string (k, a)")
        if letter == "k" and pos in _PON_POS and len(tiles) == 4:
            return _Out("kakan", tiles[pos // 2])
        if letter == "a" and len(tiles) == 4:
            return _Out("ankan", tiles=tuple(sorted(tiles, key=tenhou_order)))
        raise self.fail(f"{what}: {item!r} is not an added or concealed kan string")

    # ------------------------------------------------------------ the hand

    def read(self) -> tuple[HandRecord, list[Event]]:
        k = self.kyoku
        if not isinstance(k, list) or len(k) != 17:
            raise self.fail("a hand is a list of 17 items: [round, honba, sticks], scores, dora, ura, "
                            "then hand, takes and discards of each seat, then the result")
        meta = k[0]
        if (not isinstance(meta, list) or len(meta) != 3
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in meta)):
            raise self.fail(f"[round, honba, sticks] expected, not {meta!r}")
        round_, honba, sticks = meta
        scores = k[1]
        if not isinstance(scores, list) or len(scores) != 4 or not all(isinstance(x, int) for x in scores):
            raise self.fail(f"the start scores must be four numbers, not {scores!r}")
        doras = self.tiles(k[2], "dora indicators")
        if not doras:
            raise self.fail("no dora indicator")
        ura = self.tiles(k[3], "ura indicators")
        hands = [self.tiles(k[4 + 3 * s], f"hand of seat {s}", 13) for s in range(4)]
        takes, outs = [], []
        for s in range(4):
            t, d = k[5 + 3 * s], k[6 + 3 * s]
            if not isinstance(t, list) or not isinstance(d, list):
                raise self.fail(f"takes and discards of seat {s} must be lists")
            takes.append([self.take(x, s, f"take {i} of seat {s}") for i, x in enumerate(t)])
            outs.append([self.out(x, f"discard {i} of seat {s}") for i, x in enumerate(d)])
        result = k[16]
        if not isinstance(result, list):
            raise self.fail(f"the result must be a list, not {result!r}")
        if result and result[0] not in (_WIN, *_DRAWS, *_ABORTS, _TRIPLE_RON):
            raise self.fail(f"unknown result {result[0]!r}")
        dealer = round_ % 4
        record = HandRecord(round=round_, honba=honba, sticks=sticks, dealer=dealer,
                            scores=(scores[0], scores[1], scores[2], scores[3]))
        head: list[Event] = [HandStart(hands=tuple(tuple(h) for h in hands)),  # type: ignore[arg-type]
                             DoraRevealed(tile=doras[0])]
        readings = []
        for reading in self._readings(dealer, takes, outs, doras, result):
            events = head + reading.events
            end, record.deltas = self._result(result, reading.ended, ura, hands, events)
            readings.append(_Reading(events + end, reading.ended, reading.points))
        return record, readings

    def _readings(self, dealer: int, takes: list[list[_Take]], outs: list[list[_Out]], doras: list[Tile],
                  result: list[Any]) -> list[_Reading]:
        """Every turn order the per-seat lists allow (at most :data:`MAX_READINGS`), in the order tried.

        Where a seat discarded one tile twice and a call took one of them, both orders may fit the lists;
        each that does is a reading, told apart later by what it scores."""
        choices: list[int] = []
        first: _Inconsistent | None = None
        found: dict[tuple[Event, ...], _Reading] = {}
        for _ in range(4096):
            trace: list[tuple[int, int]] = []
            points: list[tuple[int, Tile, int]] = []
            try:
                events, ended = self._play(dealer, takes, outs, doras, result, choices, trace, points)
                found.setdefault(tuple(events), _Reading(events, ended, tuple(points)))
                if len(found) >= MAX_READINGS:
                    break
            except _Inconsistent as exc:
                first = first or exc
            while trace and trace[-1][0] + 1 >= trace[-1][1]:
                trace.pop()
            if not trace:
                break
            choices = [c for c, _ in trace[:-1]] + [trace[-1][0] + 1]
        if not found:
            raise self.fail(f"the seats' takes and discards do not make a hand: {first}")
        return list(found.values())

    def _play(self, dealer: int, takes: list[list[_Take]], outs: list[list[_Out]], doras: list[Tile],
              result: list[Any], choices: list[int], trace: list[tuple[int, int]],
              points: list[tuple[int, Tile, int]]) -> tuple[list[Event], tuple[str, int] | None]:
        ev: list[Event] = []
        ti, di = [0] * 4, [0] * 4
        owed: list[str] = []  # kan dora to reveal, oldest first, with Tenhou's moment: tsumo or discard
        dora_i = 1
        last_discard: tuple[int, Tile] | None = None
        drawn: list[Tile | None] = [None] * 4
        actor = dealer

        def reveal() -> None:
            nonlocal dora_i
            if owed:
                owed.pop(0)
            if dora_i < len(doras):
                ev.append(DoraRevealed(tile=doras[dora_i]))
                dora_i += 1

        def open_kan() -> None:
            if owed and owed[-1] == "discard":
                owed[-1] = "tsumo"
            owed.append("discard")

        # takes not yet played, all seats together: every seat has taken its last tile when none is left (a seat
        # never takes past its list), asked after every discard
        left = sum(len(t) for t in takes)

        ended: tuple[str, int] | None = None
        while True:
            if ti[actor] >= len(takes[actor]):
                if not result and not left:  # a hand the record stops in
                    break
                raise _Inconsistent(f"seat {actor} has no tile left to take")
            take = takes[actor][ti[actor]]
            ti[actor] += 1
            left -= 1
            if take.kind == "draw":
                if owed and owed[0] == "tsumo":
                    reveal()
                ev.append(Draw(seat=actor, tile=take.tile))
                drawn[actor] = take.tile
            else:
                if last_discard != (take.target, take.tile):
                    raise _Inconsistent(f"seat {actor} calls {take.tile.mjai} from seat {take.target}, "
                                        f"which did not just discard it")
                ev.append(Call(seat=actor, kind=take.kind, tiles=take.tiles, called=take.tile, from_seat=take.target))
                drawn[actor] = None
                last_discard = None
                if take.kind == "kan":
                    if di[actor] >= len(outs[actor]) or outs[actor][di[actor]].kind != "placeholder":
                        raise _Inconsistent(f"an open kan of seat {actor} without the 0 among its discards")
                    di[actor] += 1
                    open_kan()
                    continue
            if di[actor] >= len(outs[actor]):
                ended = ("take", actor)
                break
            out = outs[actor][di[actor]]
            di[actor] += 1
            if out.kind == "placeholder":
                raise _Inconsistent(f"a 0 among the discards of seat {actor} where no open kan was made")
            if out.kind == "kakan":
                assert out.tile is not None
                ev.append(AddedKan(seat=actor, tile=out.tile))
                open_kan()
                last_discard = (actor, out.tile)
                if not left:
                    ended = ("kakan", actor)
                    break
                continue
            if out.kind == "ankan":
                while owed:
                    reveal()
                ev.append(ConcealedKan(seat=actor, tiles=out.tiles))
                owed.append("now")
                reveal()
                if not left:
                    ended = ("ankan", actor)
                    break
                continue
            tile = out.tile
            if tile is None:
                tile = drawn[actor]
                if tile is None:
                    raise _Inconsistent(f"seat {actor} discards the tile just drawn (60) after a call")
            while owed:
                reveal()
            ev.append(Discard(seat=actor, tile=tile, riichi=out.riichi, tsumogiri=out.tile is None))
            drawn[actor] = None
            last_discard = (actor, tile)
            if not left:
                ended = ("discard", actor)
                break
            callers = [s for s in range(4) if s != actor and ti[s] < len(takes[s])
                       and takes[s][ti[s]].kind != "draw" and takes[s][ti[s]].target == actor
                       and takes[s][ti[s]].tile == tile]
            callers.sort(key=lambda s: takes[s][ti[s]].kind == "chi")  # pon and kan before chi
            options: list[int | None] = list(callers)
            # the discard may also pass uncalled when the seat discards the tile again later (looked for only
            # where someone could call it: most discards nobody can)
            if not callers or any(o.kind == "discard" and (o.tile is None or o.tile == tile)
                                  for o in outs[actor][di[actor]:]):
                options.append(None)
            k = len(trace)
            pick = choices[k] if k < len(choices) and choices[k] < len(options) else 0
            trace.append((pick, len(options)))
            chosen = options[pick]
            if len(options) > 1 and callers:
                points.append((actor, tile, callers[0]))
            actor = chosen if chosen is not None else (actor + 1) % 4
        for s in range(4):
            if ti[s] < len(takes[s]) or di[s] < len(outs[s]):
                raise _Inconsistent(f"seat {s} has takes or discards left after the hand ended")
        self._check_end(result, ended)
        while dora_i < len(doras) and ended is not None:  # revealed before the end, after the last moment above
            ev.append(DoraRevealed(tile=doras[dora_i]))
            dora_i += 1
        return ev, ended

    def _check_end(self, result: list[Any], ended: tuple[str, int] | None) -> None:
        if not result:
            return
        name = result[0]
        how = ended[0] if ended else None
        if name == _WIN:
            detail = result[2] if len(result) > 2 and isinstance(result[2], list) else None
            if not detail or len(detail) < 2:
                return  # reported with the result
            who, source = detail[0], detail[1]
            if who == source and (how != "take" or ended[1] != who):  # type: ignore[index]
                raise _Inconsistent(f"seat {who} wins by tsumo but the hand does not end on its draw")
            if who != source and (how not in ("discard", "kakan", "ankan") or ended[1] != source):  # type: ignore[index]
                raise _Inconsistent(f"seat {who} wins on seat {source}'s tile but the hand does not end on it")
        elif name == "九種九牌":
            if how != "take":
                raise _Inconsistent("nine terminals are declared on a draw")
        elif how == "take":
            raise _Inconsistent(f"{name} does not end a hand on a draw")

    def _result(self, result: list[Any], ended: tuple[str, int] | None, ura: list[Tile], hands: list[list[Tile]],
                events: list[Event]) -> tuple[list[Event], tuple[int, int, int, int] | None]:
        if not result:
            return [], None
        name = result[0]
        if name == _WIN:
            rows = result[1:]
            if len(rows) < 2 or len(rows) % 2:
                raise self.fail(f"a win is written as deltas and details, one pair per winner: {result!r}")
            winners: list[int] = []
            total = [0, 0, 0, 0]
            source = -1
            for i in range(0, len(rows), 2):
                deltas, detail = self._deltas(rows[i]), rows[i + 1]
                if (not isinstance(detail, list) or len(detail) < 2
                        or not all(isinstance(x, int) and 0 <= x <= 3 for x in detail[:2])):
                    raise self.fail(f"win details start with the winner and the seat won from: {detail!r}")
                winners.append(detail[0])
                source = detail[1]
                total = [a + b for a, b in zip(total, deltas, strict=True)]
            if winners[0] == source:
                win_tile = next(e.tile for e in reversed(events) if isinstance(e, Draw))
                end: Event = Tsumo(seat=source, win_tile=win_tile, ura=tuple(ura))
            else:
                end = Ron(from_seat=source, claims=tuple(RonClaim(seat=w) for w in winners), ura=tuple(ura))
            return [end], (total[0], total[1], total[2], total[3])
        deltas = self._deltas(result[1]) if len(result) > 1 else (0, 0, 0, 0)
        if name in _DRAWS:
            tracker = _track(hands, events)
            if name == "全員聴牌":
                tenpai = (True, True, True, True)
            elif name == "全員不聴":
                tenpai = (False, False, False, False)
            elif name == "流局":
                tenpai = noten_payment_tenpai(deltas) or guess_tenpai(tracker.riichi, tracker.hands,
                                                                      all_or_none=not any(deltas))
            else:
                tenpai = guess_tenpai(tracker.riichi, tracker.hands, all_or_none=False)
            return [ExhaustiveDraw(tenpai=tenpai)], deltas
        seat = ended[1] if ended else None
        if name in _ABORTS:
            kind = _ABORTS[name]
            return [AbortiveDraw(kind=kind, seat=seat if kind == "nine_terminals" else None)], deltas
        if name == _TRIPLE_RON and seat is not None:
            return [Ron(from_seat=seat, claims=tuple(RonClaim(seat=s) for s in range(4) if s != seat))], deltas
        raise self.fail(f"unknown result {name!r}")

    def _deltas(self, value: Any) -> tuple[int, int, int, int]:
        if (not isinstance(value, list) or len(value) != 4
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)):
            raise self.fail(f"deltas must be four whole numbers, not {value!r}")
        return (value[0], value[1], value[2], value[3])


def _track(hands: list[list[Tile]], events: list[Event]) -> HandTracker:
    tracker = HandTracker(hands)
    for e in events:
        if isinstance(e, Draw):
            tracker.draw(e.seat, e.tile)
        elif isinstance(e, Discard):
            tracker.discard(e.seat, e.tile, e.riichi)
        elif isinstance(e, Call):
            own = list(e.tiles)
            own.remove(e.called)
            tracker.call(e.seat, own, e.kind == "kan")
        elif isinstance(e, AddedKan):
            tracker.kan(e.seat, [e.tile])
        elif isinstance(e, ConcealedKan):
            tracker.kan(e.seat, e.tiles)
    return tracker


def _scored(start: GameStart, hand: HandRecord, events: list[Event]) -> tuple[int, int, int, int] | str:
    """The deltas the engine gives a hand played from where the record says it starts, or why it refuses it."""
    engine = Engine()
    try:
        engine.apply(replace(start, round=round_name(hand.round), honba=hand.honba, sticks=hand.sticks,
                             scores=hand.scores, dealer=hand.dealer))
        for event in events:
            for out in engine.apply(event):
                if isinstance(out, HandResult):
                    return out.deltas
    except Rejected as exc:
        return f"refused: {exc}"
    return "no result"


def _choose(game: RecordedGame, index: int, hand: HandRecord, readings: list[_Reading]) -> list[Event]:
    """The reading of an ambiguous hand that the engine plays to the deltas the log records.

    Two identical discards of one seat, one of them called: the log does not say which, and the turn
    orders differ (who drew in between, whose riichi was still uninterrupted, what was furiten). Each
    reading is played from the hand's start; the first whose deltas are the recorded ones is kept. A hand
    the log stops in (no result) keeps the first reading the engine accepts."""
    start = next(e for e in game.events if isinstance(e, GameStart))
    if not 0 <= hand.round <= 15:
        return readings[0].events  # no such round to play it in: the replay says so
    outcomes = [_scored(start, hand, r.events) for r in readings]
    for reading, outcome in zip(readings, outcomes, strict=True):
        if isinstance(outcome, tuple) and (hand.deltas is None or outcome == hand.deltas):
            return reading.events
        if hand.deltas is None and outcome == "no result":
            return reading.events
    where = f"{game.source}: log[{index}] ({round_name(hand.round)}-{hand.honba})"
    seen = {(seat, tile, caller) for r in readings for seat, tile, caller in r.points}
    which = "; ".join(f"seat {seat} discarded {tile.mjai} twice and seat {caller} called one of them"
                      for seat, tile, caller in sorted(seen, key=lambda x: (x[0], x[1].mjai, x[2])))
    got = ", ".join(str(list(o)) if isinstance(o, tuple) else o for o in outcomes)
    raise RecordError(f"{where}: {which}, and the log does not say which: no reading of it plays to the recorded "
                      f"deltas {list(hand.deltas or ())} (the {len(readings)} readings give {got})")


def _rules_of(rule: Any) -> str | None:
    if not isinstance(rule, dict):
        return None
    disp = rule.get("disp")
    if not isinstance(disp, str):
        return None
    try:
        return get_ruleset(disp).name  # ours: a preset, house rules after it
    except UnknownRuleSetError:
        pass
    aka = any(isinstance(rule.get(k), int) and rule[k] > 0 for k in ("aka", "aka51", "aka52", "aka53"))
    if "三" not in disp and "南" in disp and "喰" in disp and ("赤" in disp or aka):
        return "tenhou"
    return None


def parse_tenhou6(text: str, source: str = "<tenhou6>") -> RecordedGame:
    """Read a tenhou.net/6 JSON log. A log cut short gives the hands up to where it stops."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{source}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("log"), list):
        raise RecordError(f"{source}: not a tenhou.net/6 log (a JSON object with a \"log\" list)")
    bad = find_invalid_text(data)
    if bad:  # a name kept from here would fail every later export, publish and listing
        raise RecordError(f"{source}: {bad} is not valid Unicode text (it holds a lone surrogate)")
    game = RecordedGame(source=source, rules=_rules_of(data.get("rule")))
    names = data.get("name")
    if names is not None:
        if not isinstance(names, list) or len(names) != 4 or not all(isinstance(n, str) for n in names):
            raise RecordError(f"{source}: name must be four strings, not {names!r}")
        game.players = tuple(n or f"Player {i + 1}" for i, n in enumerate(names))  # type: ignore[assignment]
    game.events.append(GameStart(players=game.players, rules=game.rules) if game.rules
                       else GameStart(players=game.players))
    for index, kyoku in enumerate(data["log"]):
        hand, readings = _HandReader(source, index, kyoku).read()
        events = readings[0].events if len(readings) == 1 else _choose(game, index, hand, readings)
        game.hands.append(hand)
        game.events += events
        if hand.deltas is not None:
            hand.end_event = len(game.events) - 1
    sc = data.get("sc")
    if isinstance(sc, list) and len(sc) == 8 and all(isinstance(x, int | float) for x in sc):
        game.final_scores = (int(sc[0]), int(sc[2]), int(sc[4]), int(sc[6]))
    take_up_at_first_hand(game)
    return game


# ====================================================================== writing


def _code_text(tiles: Sequence[Tile]) -> str:
    return "".join(str(tile_code(t)) for t in tiles)


def _call_text(e: Call) -> str:
    own = list(e.tiles)
    own.remove(e.called)
    called = str(tile_code(e.called))
    rest = [str(tile_code(t)) for t in own]
    side = (e.seat - e.from_seat) % 4  # 1: from the left, 2: across, 3: from the right
    if e.kind == "chi":
        return "c" + called + "".join(rest)
    letter = "p" if e.kind == "pon" else "m"
    if side == 1:
        return letter + called + "".join(rest)
    if side == 2:
        return rest[0] + letter + called + "".join(rest[1:])
    return "".join(rest) + letter + called


def _kakan_text(added: Tile, b: Before, seat: int) -> str:
    pon = b.pon
    if pon is None or pon.called is None or pon.from_seat is None:
        return _code_text([added] * 3) + "k" + str(tile_code(added))  # pragma: no cover - the engine has the pon
    own = list(pon.tiles)
    own.remove(pon.called)
    rest = [str(tile_code(t)) for t in own]
    mid = "k" + str(tile_code(added)) + str(tile_code(pon.called))
    side = (seat - pon.from_seat) % 4
    if side == 1:
        return mid + "".join(rest)
    if side == 2:
        return rest[0] + mid + rest[1]
    return "".join(rest) + mid


def _ceil100(x: int) -> int:
    return -(-x // 100) * 100


def _value_text(win: WinResult, dealer: int) -> str:
    limit = win.limit.removeprefix("kazoe ").removeprefix("kiriage ")
    if "yakuman" in limit:
        head = "役満"
    elif limit:
        head = _LIMIT_JA.get(limit, limit)
    else:
        head = f"{win.fu}符{win.han}飜"
    if win.from_seat is not None:
        return f"{head}{win.points}点"
    if win.seat == dealer:
        return f"{head}{win.points // 3}点∀"
    if limit:
        ko, oya = win.points // 4, win.points // 2
    else:
        base = win.fu * 2 ** (win.han + 2)
        ko, oya = _ceil100(base), _ceil100(2 * base)
    if 2 * ko + oya != win.points:
        return f"{head}{win.points}点"
    return f"{head}{ko}-{oya}点"


def _yaku_text(name: str, han: int) -> str:
    ja = _YAKU_JA.get(name, name)
    return f"{ja}(役満)" if han >= 13 else f"{ja}({han}飜)"


def _win_result(result: HandResult, e: Ron | Tsumo) -> list[Any]:
    from_seat = e.from_seat if isinstance(e, Ron) else None
    row: list[Any] = [_WIN]
    for win, deltas in zip(result.wins, split_win_deltas(result, from_seat), strict=True):
        source = win.from_seat if win.from_seat is not None else win.seat
        detail = [win.seat, source, win.pao if win.pao is not None else win.seat, _value_text(win, result.dealer)]
        detail += [_yaku_text(name, han) for name, han in win.yaku]
        row += [list(deltas), detail]
    return row


def _draw_result(result: HandResult) -> list[Any]:
    if result.draw == "nagashi":
        return ["流し満貫", list(result.deltas)]
    if result.kind == "abortive_draw":
        return [_ABORT_NAMES.get(result.draw or "", result.draw)]
    tenpai = result.tenpai or (False, False, False, False)
    if all(tenpai):
        return ["全員聴牌"]
    if not any(tenpai):
        return ["全員不聴"]
    return ["流局", list(result.deltas)]


def _result_number(points: int) -> int | float:
    value = round(points / 1000, 1)
    return int(value) if value == int(value) else value


def export_tenhou6(record: RecordedGame, report: ReplayReport) -> str:
    """The game as a tenhou.net/6 JSON log (compact, one line, a newline at the end)."""
    players = list(record.players)
    log: list[list[Any]] = []
    results = HandResults(report)
    hand: list[Any] | None = None

    def fail(index: int, message: str) -> RecordError:
        return RecordError(f"{record.source}: cannot write tenhou.net/6: event {index}: {message}")

    def need(tile: Tile | None, index: int, what: str) -> int:
        if tile is None:
            raise fail(index, f"{what} was not seen, and tenhou.net/6 writes every tile")
        return tile_code(tile)

    for step in walk(record, report):
        e, b, i = step.event, step.before, step.index
        if isinstance(e, GameStart):
            players = list(e.players)
            continue
        if isinstance(e, DiceRolled):
            continue
        if isinstance(e, Chombo | DeadHand | SetScores | EndGame):
            raise fail(i, f"tenhou.net/6 has no place for a referee's {e.type.replace('_', ' ')}")
        if isinstance(e, HandStart):
            if b.dealer != b.round % 4:
                where = f"{round_name(b.round)}-{b.honba}"
                raise fail(i, f"hand {where} is dealt by seat {b.dealer} (the game was taken up with that dealer), "
                              f"but tenhou.net/6 does not write the dealer: a reader takes the dealer of "
                              f"{round_name(b.round)} to be seat {b.round % 4}. Write it as mjai, which names each "
                              "hand's dealer (tablesvc replay --export mjai, tablesvc games export --format mjai)")
            if e.hands is None:
                raise fail(i, "the deal was not seen, and tenhou.net/6 writes every tile")
            hand = [[b.round, b.honba, b.sticks], list(b.scores), [], []]
            for s in range(4):
                hand += [[tile_code(t) for t in e.hands[s]], [], []]
            hand.append([])
            log.append(hand)
            continue
        if hand is None:  # pragma: no cover - the engine refuses moves before a deal
            continue
        if isinstance(e, DoraRevealed):
            hand[2].append(tile_code(e.tile))
            continue
        if b.implied_draw is not None:
            guess = e.tile if isinstance(e, Discard) and e.tsumogiri else (
                e.win_tile if isinstance(e, Tsumo) else None)
            hand[5 + 3 * b.implied_draw].append(need(guess, i, f"the draw of seat {b.implied_draw}"))
        if isinstance(e, Draw):
            hand[5 + 3 * e.seat].append(need(e.tile, i, f"the draw of seat {e.seat}"))
        elif isinstance(e, Discard):
            code = TSUMOGIRI if e.tsumogiri else tile_code(e.tile)
            hand[6 + 3 * e.seat].append(f"r{code}" if e.riichi else code)
        elif isinstance(e, Call):
            hand[5 + 3 * e.seat].append(_call_text(e))
            if e.kind == "kan":
                hand[6 + 3 * e.seat].append(0)
        elif isinstance(e, AddedKan):
            hand[6 + 3 * e.seat].append(_kakan_text(e.tile, b, e.seat))
        elif isinstance(e, ConcealedKan):
            tiles = [str(tile_code(t)) for t in e.tiles]
            hand[6 + 3 * e.seat].append("".join(tiles[:3]) + "a" + tiles[3])
        elif isinstance(e, Ron | Tsumo | ExhaustiveDraw | AbortiveDraw):
            result = results.next(step.outputs)
            if result is None:  # pragma: no cover - these always end the hand
                continue
            if isinstance(e, Ron | Tsumo) and result.kind == "win":
                if any(b.riichi[w.seat] for w in result.wins):
                    hand[3] = [tile_code(t) for t in e.ura]
                hand[16] = _win_result(result, e)
            else:
                hand[16] = _draw_result(result)
    rules = report.state.rules if report.state is not None else (record.rules or "ema2012")
    doc: dict[str, Any] = {
        "title": ["", ""],
        "name": players,
        "rule": {"disp": _TENHOU_DISP if rules == "tenhou" else rules, "aka": int(get_ruleset(rules).red_fives)},
        "log": log,
    }
    if report.final is not None:
        by_seat = {s.seat: s for s in report.final.standings}
        doc["sc"] = [x for seat in range(4)
                     for x in (report.final.scores[seat], _result_number(by_seat[seat].result))]
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"
