"""Legal, plausible games from a seed: endless test data without any data file.

A shuffled wall with a real dead wall, and four simple players: each keeps
the discard that leaves the hand closest to ready (shanten), calls pon on
its valued honours and sometimes on others, declares a concealed kan with
four of a kind, declares riichi when ready with the hand closed, and wins
whenever the rules allow. Every event is checked by the engine as it is
made, so a generated game is legal by construction; the output is a
:class:`~tablesvc.formats.record.RecordedGame` with full information (the
deal and every draw), which the table simulator then shows to the service
the way a real table would (no concealed draws).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tablesvc.analysis.tables import fast_shanten
from tablesvc.engine.engine import Engine, Rejected, apply
from tablesvc.engine.events import (
    AbortiveDraw,
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
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.engine.state import Step
from tablesvc.formats.record import HandRecord, RecordedGame
from tablesvc.rules.ruleset import get_ruleset
from tablesvc.rules.shape import is_complete
from tablesvc.tiles import Tile, tiles_to_34

__all__ = ["GeneratorOptions", "generate_game"]


@dataclass(frozen=True)
class GeneratorOptions:
    rules: str = "ema2012"
    players: tuple[str, str, str, str] = ("Aoi", "Ben", "Chloe", "Dai")
    riichi_rate: float = 0.85
    pon_rate: float = 0.25  # pon of a non-valued tile that keeps the hand as close to ready
    max_hands: int = 40  # a safety stop; a hanchan is usually 8-14 hands


def _shanten(tiles: list[Tile]) -> int:
    """The package's shanten, read from the analysis's per-suit tables: every discard weighs each tile in hand,
    and the package's own search was two thirds of a game's generation (the tables equal it on every hand)."""
    return fast_shanten(tiles_to_34(tiles))


class _Game:
    def __init__(self, seed: int, options: GeneratorOptions) -> None:
        self.rng = random.Random(seed)
        self.options = options
        self.engine = Engine()
        self.events: list[Event] = []
        self.record = RecordedGame(source=f"generated:{seed}", players=options.players, rules=options.rules)
        self.outputs: list = []
        self.red_fives = get_ruleset(options.rules).red_fives

    def emit(self, event: Event) -> list:
        out = self.engine.apply(event)  # raises if the generator ever made an illegal move
        self.events.append(event)
        self.outputs.extend(out)
        for o in out:
            if isinstance(o, HandResult) and self.record.hands:
                self.record.hands[-1].deltas = o.deltas
                self.record.hands[-1].end_event = len(self.events) - 1
            elif isinstance(o, GameResult):
                self.record.final_scores = o.scores
        return out

    def would_accept(self, event: Event) -> bool:
        try:
            apply(self.engine.state, event)
        except Rejected:
            return False
        return True

    # ------------------------------------------------------------ a game

    def play(self) -> RecordedGame:
        self.emit(GameStart(players=self.options.players, rules=self.options.rules))
        for _ in range(self.options.max_hands):
            if self.engine.state.final is not None:
                break
            self.play_hand()
        self.record.events = self.events
        return self.record

    def play_hand(self) -> None:
        st = self.engine.state
        wall = [Tile.from_id(i) for i in range(136)]
        if not self.red_fives:  # a rule set without red fives is dealt a set without them
            wall = [t.plain for t in wall]
        self.rng.shuffle(wall)
        dead = wall[:14]  # dead wall: dora indicators at 4, 6, ...; replacement tiles from the end
        live = wall[14:]
        dice = (self.rng.randint(1, 6), self.rng.randint(1, 6))
        dealer = st.dealer
        hands: list[list[Tile]] = [[] for _ in range(4)]
        for i in range(52):  # 13 each, from the dealer round the table (the order does not change the game)
            hands[(dealer + i // 13) % 4].append(live.pop())
        self.record.hands.append(HandRecord(round=st.round, honba=st.honba, sticks=st.sticks, dealer=dealer,
                                            scores=(st.scores[0], st.scores[1], st.scores[2], st.scores[3])))
        self.emit(DiceRolled(dice=dice))
        deal = tuple(tuple(hands[s]) for s in range(4))
        self.emit(HandStart(hands=(deal[0], deal[1], deal[2], deal[3])))
        indicators = [dead[4], dead[6], dead[8], dead[10], dead[12]]
        ura = [dead[5], dead[7], dead[9], dead[11], dead[13]]
        replacements = [dead[0], dead[1], dead[2], dead[3]]
        self.emit(DoraRevealed(tile=indicators[0]))
        shown_dora = 1
        while self.engine.state.hand is not None:
            h = self.engine.state.hand
            if h.pending_dora and shown_dora < 5 and h.step is not Step.CHANKAN:
                self.emit(DoraRevealed(tile=indicators[shown_dora]))
                shown_dora += 1
                continue
            if h.step is Step.CLAIMS:
                if self.claims(ura[:shown_dora]):
                    continue
                if h.wall == 0:
                    self.exhaustive_draw()
                    continue
            if h.step in (Step.DRAW, Step.CLAIMS, Step.CHANKAN):
                seat = Engine._drawer(h)
                if seat is None:
                    break
                tile = replacements.pop() if h.rinshan or h.step is Step.CHANKAN else live.pop()
                if h.rinshan or h.step is Step.CHANKAN:
                    live.pop(0)  # the dead wall is refilled from the end of the live wall
                self.emit(Draw(seat=seat, tile=tile))
                continue
            self.turn(h.turn, ura[:shown_dora])

    # ------------------------------------------------------------ decisions

    def hand_of(self, seat: int) -> list[Tile]:
        hand = self.engine.state.hand
        assert hand is not None and hand.seats[seat].hand is not None
        return hand.seats[seat].hand  # type: ignore[return-value]

    def turn(self, seat: int, ura: list[Tile]) -> None:
        h = self.engine.state.hand
        assert h is not None
        s = h.seats[seat]
        tiles = self.hand_of(seat)
        if not h.after_call and is_complete(tiles):
            win = Tsumo(seat=seat, hand=tuple(tiles), win_tile=s.drawn, ura=tuple(ura))
            if self.would_accept(win):
                self.emit(win)
                return
        if self.would_accept(AbortiveDraw(kind="four_riichi")) or self.would_accept(AbortiveDraw(kind="four_kans")):
            return
        if not s.riichi and not h.after_call:
            counts = tiles_to_34(tiles)
            quad = next((k for k in range(34) if counts[k] == 4), None)
            if quad is not None and self.rng.random() < 0.6:
                kan = ConcealedKan(seat=seat, tiles=tuple(t for t in tiles if t.kind == quad))
                if self.would_accept(kan):
                    self.emit(kan)
                    return
        if s.riichi:
            self.emit(Discard(seat=seat, tile=s.drawn or tiles[-1], tsumogiri=True))
            return
        choice = self.best_discard(seat, tiles)
        riichi = (not s.is_open and _shanten(_without(tiles, choice)) == 0
                  and self.rng.random() < self.options.riichi_rate)
        event = Discard(seat=seat, tile=choice, riichi=riichi, tsumogiri=choice is s.drawn)
        if riichi and not self.would_accept(event):
            event = Discard(seat=seat, tile=choice, tsumogiri=choice is s.drawn)
        self.emit(event)
        if self.would_accept(AbortiveDraw(kind="four_winds")):
            self.emit(AbortiveDraw(kind="four_winds"))

    def best_discard(self, seat: int, tiles: list[Tile]) -> Tile:
        h = self.engine.state.hand
        assert h is not None
        banned = h.seats[seat].kuikae
        best: list[Tile] = []
        best_score = 99
        seen: set[Tile] = set()
        for t in tiles:
            if t in seen or t.kind in banned:
                continue
            seen.add(t)
            rest = _without(tiles, t)
            score = _shanten(rest) * 10 + (0 if t.is_terminal_or_honor else 1) + (2 if t.red else 0)
            if score < best_score:
                best, best_score = [t], score
            elif score == best_score:
                best.append(t)
        return self.rng.choice(best) if best else tiles[-1]

    def claims(self, ura: list[Tile]) -> bool:
        """Rons first (every seat that can), then a pon; returns whether anything was claimed."""
        h = self.engine.state.hand
        assert h is not None and h.last_discard is not None
        discarder, tile = h.last_discard
        claims = []
        for k in (1, 2, 3):
            seat = (discarder + k) % 4
            hand = self.hand_of(seat)
            if is_complete([*hand, tile]):
                claim = RonClaim(seat=seat, hand=(*hand, tile))
                if self.would_accept(Ron(from_seat=discarder, claims=(claim,), ura=tuple(ura))):
                    claims.append(claim)
        if claims:
            ron = Ron(from_seat=discarder, claims=tuple(claims), ura=tuple(ura))
            if self.would_accept(ron):
                self.emit(ron)
                return True
            self.emit(Ron(from_seat=discarder, claims=(claims[0],), ura=tuple(ura)))
            return True
        if self.would_accept(AbortiveDraw(kind="four_riichi")):
            self.emit(AbortiveDraw(kind="four_riichi"))
            return True
        if self.would_accept(AbortiveDraw(kind="four_kans")):
            self.emit(AbortiveDraw(kind="four_kans"))
            return True
        for k in (1, 2, 3):
            seat = (discarder + k) % 4
            hand = self.hand_of(seat)
            same = [t for t in hand if t.kind == tile.kind]
            if len(same) < 2 or h.seats[seat].riichi:
                continue
            valued = tile.is_dragon or tile.kind in (27 + (seat - h.dealer) % 4, 27 + (h.round // 4) % 4)
            if not valued and self.rng.random() >= self.options.pon_rate:
                continue
            if not valued and _shanten(_without(_without(hand, same[0]), same[1])) >= _shanten(hand):
                continue  # an ordinary pon only when it brings the hand closer to ready
            call = Call(seat=seat, kind="pon", tiles=(same[0], same[1], tile), called=tile, from_seat=discarder)
            if self.would_accept(call):
                self.emit(call)
                return True
        return False

    def exhaustive_draw(self) -> None:
        h = self.engine.state.hand
        assert h is not None
        tenpai = []
        for seat in range(4):
            s = h.seats[seat]
            ready = s.riichi or (not s.dead and _shanten(self.hand_of(seat)) == 0)
            tenpai.append(ready)
        event = ExhaustiveDraw(tenpai=(tenpai[0], tenpai[1], tenpai[2], tenpai[3]))
        if not self.would_accept(event):  # ready only on one's own fourth tile is not tenpai: show riichi only
            riichi = [h.seats[i].riichi for i in range(4)]
            event = ExhaustiveDraw(tenpai=(riichi[0], riichi[1], riichi[2], riichi[3]))
        self.emit(event)


def _without(tiles: list[Tile], tile: Tile) -> list[Tile]:
    rest = list(tiles)
    rest.remove(tile)
    return rest


def generate_game(seed: int, options: GeneratorOptions | None = None) -> RecordedGame:
    """A complete game (to the final ranking) from ``seed``; the same seed gives the same game."""
    return _Game(seed, options or GeneratorOptions()).play()
