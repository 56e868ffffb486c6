"""The game engine: applies table events under a RuleSet, exactly, and explains every refusal.

``apply(state, event) -> (state, outputs)`` is pure: no I/O, no clocks, the
input state untouched. :class:`Engine` is the same logic over a state it
owns, for callers that fold many events (a replay, the service): every
handler checks everything before it changes anything, so a refused event
leaves the state exactly as it was.

What a table reveals shapes the design: a camera never sees concealed draws,
so a discard (or a tsumo, or a kan) by the seat due to draw implies the draw,
and the wall count, haitei/houtei, rinshan, ippatsu and the first go-around
stay exact without them. Where the hands are known (a recorded log, hand
cameras) the engine checks them as well: tiles held, riichi in tenpai,
tenpai shown at the draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tablesvc.engine.clock import Clock, ClockError
from tablesvc.engine.events import (
    AbortEntry,
    AbortiveDraw,
    AddedKan,
    Call,
    Chombo,
    ChomboEntry,
    ClockAddHand,
    ClockExtend,
    ClockStart,
    ConcealedKan,
    DeadHand,
    DiceRolled,
    Discard,
    DoraRevealed,
    Draw,
    DrawEntry,
    EndGame,
    EnteredWin,
    Event,
    ExhaustiveDraw,
    GameStart,
    HandStart,
    Ron,
    ScoreSheet,
    SetScores,
    TimeUp,
    Tsumo,
    WinEntry,
)
from tablesvc.engine.results import (
    GameResult,
    HandResult,
    Output,
    RiichiAccepted,
    ShownMeld,
    WinResult,
    round_index,
    round_name,
)
from tablesvc.engine.state import GameState, HandState, MeldState, Phase, PondTile, SeatState, Step
from tablesvc.rules.game_end import TimeRule, game_ends
from tablesvc.rules.hand import Hand, InvalidHandError, Meld, MeldKind, WinConditions, Wind
from tablesvc.rules.payments import (
    RIICHI_STICK,
    RonWin,
    Settlement,
    final_standings,
    settle_chombo,
    settle_exhaustive_draw,
    settle_nagashi,
    settle_ron,
    settle_tsumo,
)
from tablesvc.rules.ruleset import Nagashi, Renhou, RuleSet, UnknownRuleSetError, get_ruleset
from tablesvc.rules.scoring import HandValue, Limit, base_points, score_hand
from tablesvc.rules.shape import divide_counts, is_tenpai, waits
from tablesvc.tiles import Tile, TileCountError, assign_ids, tiles_to_34

__all__ = ["Engine", "Rejected", "apply", "implied_draw"]


# events that a seat can only make holding a drawn tile: their draw may be inferred
_MAY_FOLLOW_A_DRAW = frozenset({Discard, Tsumo, ConcealedKan, AddedKan, AbortiveDraw})
_TERMINAL_HONOUR_KINDS = frozenset(k for k in range(34) if k >= 27 or k % 9 in (0, 8))
_NO_KINDS: frozenset[int] = frozenset()
_SEAT_OR_NONE = frozenset({None, 0, 1, 2, 3})
# the steps and phase that every draw and discard tests, as plain names: reading an enum member through its
# class is an attribute lookup on the enum's metaclass (about 0.1 us, a tenth of a draw)
_DRAW, _DISCARD, _CLAIMS, _CHANKAN = Step.DRAW, Step.DISCARD, Step.CLAIMS, Step.CHANKAN
_PLAYING = Phase.PLAYING
# an enum member by value or number through its class's call costs 1-3 us; a call and a win ask these
_MELD_KINDS = {k.value: k for k in MeldKind}
_WINDS = tuple(Wind)


class Rejected(ValueError):
    """An event the rules do not allow now. The message is for a referee; the state is unchanged."""


def implied_draw(state: GameState, event: Event) -> int | None:
    """The seat whose unseen draw ``event`` implies (a discard, tsumo or kan by the seat due to draw), else None.

    The one statement of this rule: the engine infers the draw from it, and the exporters write the
    draw the record did not see."""
    h = state.hand
    seat = getattr(event, "seat", None)
    if (
        h is not None
        and h.step is not _DISCARD
        and seat is not None
        and type(event) in _MAY_FOLLOW_A_DRAW
        and state.phase is _PLAYING
        and Engine._drawer(h) == seat
    ):
        return seat
    return None


def apply(state: GameState, event: Event) -> tuple[GameState, list[Output]]:
    """The state after ``event`` and what the engine concluded; ``state`` itself is not changed."""
    engine = Engine(state.clone())
    outputs = engine.apply(event)
    return engine.state, outputs


def _seat_name(seat: int) -> str:
    return f"seat {seat}"


class Engine:
    """Folds events into a :class:`GameState`."""

    def __init__(self, state: GameState | None = None) -> None:
        self.state = state if state is not None else GameState()
        self.rules: RuleSet = get_ruleset(self.state.rules)

    # ------------------------------------------------------------ entry

    def apply(self, event: Event) -> list[Output]:
        """Apply one event; raises :class:`Rejected` (state unchanged) when the rules forbid it."""
        kind = type(event)
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise Rejected(f"unknown event {kind.__name__}")
        seat = getattr(event, "seat", None)
        if seat not in _SEAT_OR_NONE:
            raise Rejected(f"seat must be 0..3, not {seat}")
        # a seat's own move right after its seen draw (the most common event) implies nothing: skip the test
        if (kind in _MAY_FOLLOW_A_DRAW and self.state.hand is not None and self.state.hand.step is not _DISCARD
                and implied_draw(self.state, event) is not None):
            # the draw was not seen: infer it, and undo it if the event is refused after all
            backup = self.state.clone()
            try:
                out = self._do_draw(seat, None)
                return out + handler(self, event)
            except Rejected:
                self.state = backup
                raise
        if kind in _ENTRIES:
            return self._entered(handler, event)
        return handler(self, event)

    # ------------------------------------------------------------ helpers

    def _between_hands(self, what: str) -> None:
        phase = self.state.phase
        if phase is Phase.NOT_STARTED:
            raise Rejected("the game has not started: send start_game first")
        if phase is Phase.GAME_OVER:
            raise Rejected("the game is over")
        if phase is not Phase.BETWEEN_HANDS:
            raise Rejected(f"{what} only between hands")

    def _hand(self) -> HandState:
        if self.state.phase is Phase.NOT_STARTED:
            raise Rejected("the game has not started: send start_game first")
        if self.state.phase is not _PLAYING or self.state.hand is None:
            raise Rejected(f"no hand is being played (the game is {self.state.phase.value.replace('_', ' ')})")
        return self.state.hand

    @staticmethod
    def _drawer(h: HandState) -> int | None:
        """The seat that acquires the next tile, if a draw is what comes next."""
        if h.step is _DRAW:
            return h.turn
        if h.step is _CLAIMS and h.last_discard is not None and h.wall > 0:
            return (h.last_discard[0] + 1) % 4
        if h.step is _CHANKAN and h.kakan is not None:
            return h.kakan[0]
        return None

    def _expect_turn(self, h: HandState, seat: int, what: str) -> None:
        if h.step is not _DISCARD or h.turn != seat:
            raise Rejected(f"{_seat_name(seat)} cannot {what} now: {self._whose_move(h)}")

    def _whose_move(self, h: HandState) -> str:
        if h.step is Step.DISCARD:
            return f"{_seat_name(h.turn)} is to discard"
        if h.step is Step.CLAIMS and h.last_discard is not None:
            seat, tile = h.last_discard
            nxt = self._drawer(h)
            then = f"else {_seat_name(nxt)} draws" if nxt is not None else "else the hand is drawn"
            return f"{tile.mjai} from {_seat_name(seat)} may be claimed, {then}"
        if h.step is Step.CHANKAN and h.kakan is not None:
            return f"the added kan of {_seat_name(h.kakan[0])} may be robbed"
        return f"{_seat_name(h.turn)} is to draw"

    def _pass_claims(self, h: HandState) -> list[Output]:
        """The last discard was not won on: a riichi declared with it is now paid."""
        if h.riichi_pending is None:
            return []
        seat = h.riichi_pending
        h.riichi_pending = None
        self.state.scores[seat] -= RIICHI_STICK
        h.sticks += 1
        h.deposits.append(seat)
        return [RiichiAccepted(seat=seat, scores=_four(self.state.scores))]

    @staticmethod
    def _check_visible(h: HandState, tiles: Sequence[Tile]) -> None:
        """Refuse tiles that would make a fifth of a kind (or a second red five) come out."""
        if len(tiles) == 1:  # a draw, discard or indicator: no count of its own needed
            t = tiles[0]
            if h.visible[t.kind] >= 4:
                raise Rejected(f"a fifth {t.name}: all four are already accounted for on the table")
            if t.red and h.visible_red & (1 << (t.kind // 9)):
                raise Rejected(f"a second red five ({t.mjai}): a set has only one")
            return
        extra = [0] * 34
        red = h.visible_red
        for t in tiles:
            extra[t.kind] += 1
            if h.visible[t.kind] + extra[t.kind] > 4:
                raise Rejected(f"a fifth {t.name}: all four are already accounted for on the table")
            if t.red:
                bit = 1 << (t.kind // 9)
                if red & bit:
                    raise Rejected(f"a second red five ({t.mjai}): a set has only one")
                red |= bit

    @staticmethod
    def _see(h: HandState, tiles: Sequence[Tile]) -> None:
        for t in tiles:
            h.visible[t.kind] += 1
            if t.red:
                h.visible_red |= 1 << (t.kind // 9)

    @staticmethod
    def _remove(hand: list[Tile], tiles: Sequence[Tile], seat: int) -> None:
        """Take tiles out of a known hand, or refuse naming the first one missing."""
        missing = list(hand)
        for t in tiles:
            at = _position(missing, t)
            if at >= 0:
                del missing[at]
            else:
                raise Rejected(f"{_seat_name(seat)} does not hold {t.mjai} (hand {' '.join(x.mjai for x in hand)})")

    # ------------------------------------------------------------ game flow

    def _start_game(self, e: GameStart) -> list[Output]:
        st = self.state
        if st.phase is not Phase.NOT_STARTED:
            raise Rejected("the game has already started")
        try:
            rules = get_ruleset(e.rules)
        except UnknownRuleSetError as exc:
            raise Rejected(str(exc)) from None
        round_, dealer, scores = self._situation(e, rules)
        self.rules = rules
        st.rules = rules.name
        st.players = e.players
        st.scores = scores
        st.round, st.honba, st.sticks, st.dealer = round_, e.honba, e.sticks, dealer
        st.first_dealer = (dealer - round_) % 4
        st.phase = Phase.BETWEEN_HANDS
        return []

    @staticmethod
    def _situation(e: GameStart, rules: RuleSet) -> tuple[int, int, list[int]]:
        """The round index, dealer and scores a game starts with, checked against the rules."""
        try:
            round_ = round_index(e.round)
        except ValueError as exc:
            raise Rejected(str(exc)) from None
        last = 11 if rules.extension_round else 7
        if round_ > last:
            raise Rejected(f"the game cannot start in {e.round}: under {rules.name} it ends after "
                           f"{round_name(last)} at the latest")
        if e.honba < 0 or e.sticks < 0:
            raise Rejected(f"counters and riichi sticks cannot be negative ({e.honba} counters, {e.sticks} sticks)")
        dealer = round_ % 4 if e.dealer is None else e.dealer
        if not 0 <= dealer <= 3:
            raise Rejected(f"the dealer is a seat 0..3, not {dealer}")
        if e.scores is None:
            return round_, dealer, [rules.start_points] * 4
        if rules.busting_ends_game and min(e.scores) < 0:
            raise Rejected(f"scores {list(e.scores)}: a score below zero has already ended the game under "
                           f"{rules.name}")
        return round_, dealer, list(e.scores)

    def _dice(self, e: DiceRolled) -> list[Output]:
        self._between_hands("dice are rolled")
        if not all(1 <= d <= 6 for d in e.dice):
            raise Rejected(f"dice show 1..6, not {e.dice}")
        self.state.dice = e.dice
        return []

    def _hand_start(self, e: HandStart) -> list[Output]:
        st = self.state
        self._between_hands("a new hand starts")
        seats = [SeatState() for _ in range(4)]
        visible = [0] * 34
        visible_red = 0
        if e.hands is not None:
            if any(len(hand) != 13 for hand in e.hands):
                raise Rejected(f"each player is dealt 13 tiles, not {[len(x) for x in e.hands]}")
            possible = True
            for seat, hand in zip(seats, e.hands, strict=True):
                seat.hand = list(hand)
                for t in hand:
                    visible[t.kind] += 1
                    if t.red:
                        bit = 1 << (t.kind // 9)
                        possible = possible and not visible_red & bit
                        visible_red |= bit
            if not possible or max(visible) > 4:
                try:
                    assign_ids([t for hand in e.hands for t in hand])  # names the impossible count
                except TileCountError as exc:
                    raise Rejected(f"impossible deal: {exc}") from None
        st.hand = HandState(
            round=st.round,
            honba=st.honba,
            sticks=st.sticks,
            dealer=st.dealer,
            dice=st.dice,
            seats=seats,
            turn=st.dealer,
            visible=visible,
            visible_red=visible_red,
        )
        st.dice = None
        st.phase = Phase.DEALING
        return []

    def _dora(self, e: DoraRevealed) -> list[Output]:
        st = self.state
        if st.phase is Phase.DEALING and st.hand is not None:
            self._check_visible(st.hand, (e.tile,))
            self._see(st.hand, (e.tile,))
            st.hand.dora = [e.tile]
            st.phase = Phase.PLAYING
            return []
        h = self._hand()
        if h.pending_dora <= 0:
            raise Rejected("no kan is waiting for a new dora indicator")
        self._check_visible(h, (e.tile,))
        self._see(h, (e.tile,))
        h.dora.append(e.tile)
        h.pending_dora -= 1
        return []

    # ------------------------------------------------------------ turns

    def _draw(self, e: Draw) -> list[Output]:
        st = self.state
        h = st.hand
        if h is None or st.phase is not _PLAYING:
            h = self._hand()  # refuses, naming why
        last = h.last_discard
        # the usual draw, the next seat's after a discard, is seen without the general test
        if not (h.step is _CLAIMS and last is not None and (last[0] + 1) % 4 == e.seat and h.wall > 0) and (
                self._drawer(h) != e.seat):
            raise Rejected(f"{_seat_name(e.seat)} cannot draw now: {self._whose_move(h)}")
        return self._do_draw(e.seat, e.tile)

    def _do_draw(self, seat: int, tile: Tile | None) -> list[Output]:
        # the commonest event: checks and changes are written out here rather than through the helpers
        h = self.state.hand
        assert h is not None
        step = h.step
        if h.wall <= 0:
            raise Rejected("the live wall is empty: the hand is over unless someone wins on the last discard")
        s = h.seats[seat]
        hand = s.hand
        if tile is not None and hand is not None:
            kind = tile.kind
            if h.visible[kind] >= 4:
                raise Rejected(f"a fifth {tile.name}: all four are already accounted for on the table")
            if tile.red:
                bit = 1 << (kind // 9)
                if h.visible_red & bit:
                    raise Rejected(f"a second red five ({tile.mjai}): a set has only one")
                h.visible_red |= bit
            h.visible[kind] += 1
        out: list[Output] = []
        if step is _CLAIMS:
            if h.riichi_pending is not None:
                out = self._pass_claims(h)
        elif step is _CHANKAN:  # nobody robbed the added kan: now it breaks ippatsu
            for other in h.seats:
                other.ippatsu = False
        s.count += 1
        if s.passed:
            s.passed.clear()  # temporary furiten ends with one's own draw
        if hand is not None:
            if tile is None:
                s.hand = None  # from here on this seat's hand is not fully known
            else:
                hand.append(tile)
        s.drawn = tile
        s.draws += 1
        h.wall -= 1
        h.turn = seat
        h.step = _DISCARD
        h.rinshan = step is _CHANKAN or (step is _DRAW and h.rinshan)
        h.after_call = False
        h.kakan = None
        return out

    def _discard(self, e: Discard) -> list[Output]:
        st = self.state
        h = st.hand
        if h is None or st.phase is not _PLAYING:
            h = self._hand()  # refuses, naming why
        seat = e.seat
        if h.step is not _DISCARD or h.turn != seat:
            self._expect_turn(h, seat, "discard")  # refuses, naming whose move it is
        s = h.seats[seat]
        tile = e.tile
        hand = s.hand
        at = -1 if hand is None else _position(hand, tile)
        if at < 0 and hand is not None:
            raise Rejected(f"{_seat_name(seat)} does not hold {tile.mjai} (hand {' '.join(x.mjai for x in hand)})")
        if s.kuikae and tile.kind in s.kuikae and self.rules.kuikae_forbidden:
            raise Rejected(f"kuikae: right after that call {_seat_name(seat)} may not discard {tile.mjai}")
        riichi = e.riichi
        if s.riichi and s.drawn is not None and tile is not s.drawn:
            raise Rejected(f"{_seat_name(seat)} is in riichi and must discard the drawn tile {s.drawn.mjai}")
        if riichi:
            self._check_riichi(h, s, e)
        if hand is None:
            self._check_visible(h, (tile,))
        # --- all checks done: change the state
        if hand is not None:
            del hand[at]
        else:
            self._see(h, (tile,))
        for other in h.seats:
            if other is not s:
                other.passed.append(tile)
                if other.riichi:
                    other.riichi_passed.append(tile)
        if s.passed:
            s.passed.clear()
        s.count -= 1
        pond = s.pond
        pond.append(PondTile(tile, riichi, e.tsumogiri))
        if not h.interrupted and len(h.first_discards) < 4:
            h.first_discards.append(tile)
        s.discards += 1
        s.kuikae = _NO_KINDS
        s.drawn = None
        if tile.kind not in _TERMINAL_HONOUR_KINDS:
            s.nagashi = False
        if riichi:
            s.riichi = True
            s.double_riichi = s.discards == 1 and not h.interrupted
            s.ippatsu = True
            s.riichi_discard = len(pond) - 1
            h.riichi_pending = seat
        else:
            s.ippatsu = False
        h.last_discard = (seat, tile)
        h.step = _CLAIMS
        h.rinshan = False
        h.after_call = False
        return []

    def _check_riichi(self, h: HandState, s: SeatState, e: Discard) -> None:
        who = _seat_name(e.seat)
        if s.riichi:
            raise Rejected(f"{who} is already in riichi")
        if s.is_open:
            raise Rejected(f"{who} cannot declare riichi with an open hand")
        if h.wall < 4:
            raise Rejected(f"riichi needs at least four tiles left in the live wall, there are {h.wall}")
        if self.state.scores[e.seat] < RIICHI_STICK:
            raise Rejected(f"{who} has {self.state.scores[e.seat]} points, fewer than the 1000 for a riichi stick")
        if s.hand is not None:
            rest = list(s.hand)
            rest.remove(e.tile)
            if not _tenpai(rest):
                raise Rejected(f"{who} is not tenpai after discarding {e.tile.mjai}: riichi needs a ready hand")

    def _call(self, e: Call) -> list[Output]:
        h = self._hand()
        if h.step is not Step.CLAIMS or h.last_discard is None:
            raise Rejected(f"{_seat_name(e.seat)} cannot call now: {self._whose_move(h)}")
        discarder, tile = h.last_discard
        if e.from_seat != discarder:
            raise Rejected(f"the last discard was {_seat_name(discarder)}'s, not {_seat_name(e.from_seat)}'s")
        if e.called != tile:
            raise Rejected(f"the last discard was {tile.mjai}, not {e.called.mjai}")
        if e.seat == discarder:
            raise Rejected("a player cannot call their own discard")
        if e.kind not in ("chi", "pon", "kan"):
            raise Rejected(f"unknown call {e.kind!r}: chi, pon or kan")
        if e.kind == "chi" and e.seat != (discarder + 1) % 4:
            raise Rejected(f"chi only from the player on the left: {_seat_name(e.seat)} cannot chi from "
                           f"{_seat_name(discarder)}")
        if h.wall <= 0:
            raise Rejected("the last discard can be claimed only to win")
        s = h.seats[e.seat]
        if s.riichi:
            raise Rejected(f"{_seat_name(e.seat)} is in riichi and cannot call")
        if s.dead:
            raise Rejected(f"{_seat_name(e.seat)} has a dead hand and cannot call")
        if e.kind == "kan" and len(h.kans) >= 4:
            raise Rejected("there are already four kans: no fifth")
        try:
            Meld(_MELD_KINDS[e.kind], tuple(e.tiles), e.called)
        except InvalidHandError as exc:
            raise Rejected(str(exc)) from None
        own = list(e.tiles)
        at = _position(own, e.called)
        if at < 0:
            raise Rejected(f"the called tile {e.called.mjai} is not among the meld's tiles "
                           f"{' '.join(t.mjai for t in e.tiles)}")
        del own[at]
        if s.hand is not None:
            self._remove(s.hand, own, e.seat)
        else:
            self._check_visible(h, own)
        # --- change the state
        if s.hand is None:
            self._see(h, own)
        s.passed.clear()
        out = self._pass_claims(h)
        d = h.seats[discarder]
        called = d.pond[-1]  # frozen: copies of the state share their pond tiles
        d.pond[-1] = PondTile(called.tile, called.riichi, called.tsumogiri, True)
        d.nagashi = False
        if s.hand is not None:
            for t in own:
                del s.hand[_position(s.hand, t)]
        s.count -= len(own)
        s.melds.append(MeldState(e.kind, list(e.tiles), e.called, discarder))
        s.kuikae = _kuikae(e.kind, e.tiles, e.called)
        self._interrupt(h)
        h.turn = e.seat
        if e.kind == "kan":
            h.kans.append(e.seat)
            h.pending_dora += 1
            h.step = Step.DRAW
            h.rinshan = True
        else:
            h.step = Step.DISCARD
            h.after_call = True
        self._note_pao(h, e.seat, e.called, discarder)
        return out

    @staticmethod
    def _interrupt(h: HandState) -> None:
        h.interrupted = True
        for seat in h.seats:
            seat.ippatsu = False

    @staticmethod
    def _note_pao(h: HandState, seat: int, tile: Tile, feeder: int) -> None:
        """Liability (3.3.6): the discard that completes a third dragon / fourth wind set."""
        melds = h.seats[seat].melds
        if tile.is_dragon and sum(1 for m in melds if m.tiles[0].is_dragon and m.kind != "chi") == 3:
            h.pao[seat] = ("daisangen", feeder)
        elif tile.is_wind and sum(1 for m in melds if m.tiles[0].is_wind and m.kind != "chi") == 4:
            h.pao[seat] = ("daisuushi", feeder)

    def _check_kan_turn(self, h: HandState, seat: int, what: str) -> SeatState:
        self._expect_turn(h, seat, what)
        if h.after_call:
            raise Rejected(f"{_seat_name(seat)} cannot {what} in the turn of a chi or pon")
        if len(h.kans) >= 4:
            raise Rejected("there are already four kans: no fifth")
        if h.wall <= 0:
            raise Rejected("no kan on the last tile of the wall")
        return h.seats[seat]

    def _added_kan(self, e: AddedKan) -> list[Output]:
        h = self._hand()
        s = self._check_kan_turn(h, e.seat, "add to a kan")
        pon = next((m for m in s.melds if m.kind == "pon" and m.tiles[0].kind == e.tile.kind), None)
        if pon is None:
            raise Rejected(f"{_seat_name(e.seat)} has no pon of {e.tile.mjai} to add to")
        if s.hand is not None and e.tile not in s.hand:
            raise Rejected(f"{_seat_name(e.seat)} does not hold {e.tile.mjai}")
        if s.hand is None:
            self._check_visible(h, (e.tile,))
            self._see(h, (e.tile,))
        else:
            s.hand.remove(e.tile)
        for other in h.seats:  # a kan that may be robbed is a tile let pass, for furiten
            if other is not s:
                other.passed.append(e.tile)
                if other.riichi:
                    other.riichi_passed.append(e.tile)
        s.count -= 1
        pon.kind = "kakan"
        pon.tiles.append(e.tile)
        # a robbed kan never happened, so ippatsu survives until the replacement draw
        h.interrupted = True
        h.kans.append(e.seat)
        h.pending_dora += 1
        h.step = Step.CHANKAN
        h.kakan = (e.seat, e.tile)
        return []

    def _concealed_kan(self, e: ConcealedKan) -> list[Output]:
        h = self._hand()
        s = self._check_kan_turn(h, e.seat, "declare a concealed kan")
        if len(e.tiles) != 4 or len({t.kind for t in e.tiles}) != 1:
            raise Rejected("a concealed kan is four identical tiles")
        if s.hand is not None:
            self._remove(s.hand, e.tiles, e.seat)
        else:
            self._check_visible(h, e.tiles)
        if s.riichi and s.drawn is not None and s.drawn.kind != e.tiles[0].kind:
            raise Rejected(f"{_seat_name(e.seat)} is in riichi: a concealed kan only with the drawn tile")
        if s.riichi and s.hand is not None and s.drawn is not None:
            before = list(s.hand)
            before.remove(s.drawn)
            if not _riichi_kan_keeps_hand(before, e.tiles[0].kind):
                raise Rejected(f"{_seat_name(e.seat)} is in riichi: this concealed kan would change the wait or the "
                               "sets of the hand (3.3.12)")
        if s.hand is not None:
            for t in e.tiles:
                s.hand.remove(t)
        else:
            self._see(h, e.tiles)
        s.count -= 4
        s.melds.append(MeldState("ankan", list(e.tiles), after_riichi=s.riichi))
        self._interrupt(h)
        h.kans.append(e.seat)
        h.pending_dora += 1
        h.step = Step.DRAW
        h.rinshan = True
        return []

    # ------------------------------------------------------------ wins

    def _conditions(self, h: HandState, seat: int, *, tsumo: bool, ura: Sequence[Tile], **flags: bool) -> WinConditions:
        s = h.seats[seat]
        return WinConditions(
            tsumo=tsumo,
            seat=_WINDS[(seat - h.dealer) % 4],
            round=_WINDS[(h.round // 4) % 4],
            riichi=s.riichi,
            double_riichi=s.double_riichi,
            ippatsu=s.ippatsu,
            dora=tuple(h.dora),
            ura=tuple(ura) if s.riichi else (),
            honba=h.honba,
            **flags,
        )

    def _value(self, h: HandState, seat: int, shown: Sequence[Tile] | None, win_tile: Tile,
               cond: WinConditions, *, add_win_tile: bool) -> tuple[HandValue, list[Tile]]:
        """What the hand is worth, and the concealed tiles it was scored with (the winning tile included)."""
        s = h.seats[seat]
        who = _seat_name(seat)
        if s.dead:
            raise Rejected(f"{who} has a dead hand and cannot win")
        if shown is not None:
            concealed = list(shown)
            if s.hand is not None:
                tracked = sorted((*s.hand, win_tile) if add_win_tile else s.hand, key=_sort_key)
                if sorted(concealed, key=_sort_key) != tracked:
                    raise Rejected(f"{who} shows {' '.join(t.mjai for t in concealed)} but holds "
                                   f"{' '.join(t.mjai for t in tracked)}")
        elif s.hand is not None:
            concealed = [*s.hand, win_tile] if add_win_tile else list(s.hand)
        else:
            raise Rejected(f"{who}'s winning hand must be shown to be scored")
        if s.riichi and s.hand is None:
            _check_riichi_kans(s.melds, concealed, win_tile, who)
        melds = tuple(Meld(_MELD_KINDS[m.kind], tuple(m.tiles), m.called) for m in s.melds)
        try:
            return score_hand(Hand(tuple(concealed), win_tile, melds), cond, self.rules), concealed
        except InvalidHandError as exc:
            raise Rejected(f"{who}'s win is not valid ({exc}); a declared win that is not valid is a chombo") from None

    def _check_furiten(self, h: HandState, seat: int, shown: Sequence[Tile] | None, tile: Tile,
                       kokushi_only: bool) -> None:
        """Furiten (3.4.5), wherever the hand is known: own discards, tiles let pass, riichi."""
        s = h.seats[seat]
        if shown is not None:
            before = list(shown)
            before.remove(tile)
        elif s.hand is not None:
            before = list(s.hand)
        else:
            return
        waits = _waits(before)
        who = _seat_name(seat)
        own = next((p.tile for p in s.pond if p.tile.kind in waits), None)
        if own is not None:
            raise Rejected(f"{who} is furiten: they discarded {own.mjai}, one of their waits; "
                           "a declared ron in furiten is a chombo")
        missed = s.riichi_passed if s.riichi else s.passed
        if not kokushi_only:
            missed = missed[:-1]  # the tile being claimed was noted as passing when it was played
        let_pass = next((t for t in missed if t.kind in waits), None)
        if let_pass is not None:
            kind = "riichi furiten" if s.riichi else "temporarily furiten"
            raise Rejected(f"{who} is {kind}: they let {let_pass.mjai} pass, one of their waits; "
                           "a declared ron in furiten is a chombo")

    def _pao_for(self, h: HandState, seat: int, value: HandValue) -> int | None:
        liability = h.pao.get(seat)
        if not self.rules.pao or liability is None or not value.pao_yakuman:
            return None
        key, feeder = liability
        return feeder if any(y.key == key for y in value.yaku) else None

    @staticmethod
    def _win_result(h: HandState, seat: int, from_seat: int | None, value: HandValue, points: int,
                    pao: int | None, concealed: Sequence[Tile], win_tile: Tile) -> WinResult:
        melds = tuple(ShownMeld(m.kind, tuple(m.tiles), m.called, m.from_seat) for m in h.seats[seat].melds)
        return WinResult(seat=seat, from_seat=from_seat, han=value.han, fu=value.fu,
                         yaku=tuple((y.name, y.han) for y in value.yaku), limit=value.limit_name, points=points,
                         pao=pao, hand=tuple(sorted(concealed, key=_sort_key)), win_tile=win_tile, melds=melds)

    def _ron(self, e: Ron) -> list[Output]:
        h = self._hand()
        seats = [c.seat for c in e.claims]
        if not seats:
            raise Rejected("a ron needs at least one winner")
        if len(set(seats)) != len(seats) or e.from_seat in seats or not all(0 <= x <= 3 for x in seats):
            raise Rejected("ron winners must be distinct seats other than the discarder")
        chankan = kokushi_only = False
        if h.step is Step.CLAIMS and h.last_discard is not None and h.last_discard[0] == e.from_seat:
            tile = h.last_discard[1]
        elif h.step is Step.CHANKAN and h.kakan is not None and h.kakan[0] == e.from_seat:
            tile, chankan = h.kakan[1], True
        elif (h.step is Step.DRAW and h.rinshan and h.turn == e.from_seat and h.seats[e.from_seat].melds
              and h.seats[e.from_seat].melds[-1].kind == "ankan" and h.kans and h.kans[-1] == e.from_seat):
            tile, chankan = h.seats[e.from_seat].melds[-1].tiles[0], True
            kokushi_only = True
        else:
            raise Rejected(f"nobody can ron from {_seat_name(e.from_seat)} now: {self._whose_move(h)}")
        if len(seats) > 1 and not self.rules.multiple_ron:
            raise Rejected(f"{self.rules.name} allows one ron on a discard: the first in turn order wins")
        if len(seats) == 3 and self.rules.triple_ron_aborts:
            return self._finish(h, kind="abortive_draw", settlement=Settlement((0, 0, 0, 0)), draw="triple_ron",
                                dealer_continues=True, honba=h.honba + 1, sticks=h.sticks)
        houtei = h.wall == 0 and not chankan
        wins: list[RonWin] = []
        results: list[tuple[int, HandValue, int | None, list[Tile]]] = []
        for claim in e.claims:
            s = h.seats[claim.seat]
            renhou = (self.rules.renhou is not Renhou.NONE and claim.seat != h.dealer and s.draws == 0
                      and not h.interrupted)
            cond = self._conditions(h, claim.seat, tsumo=False, ura=e.ura, houtei=houtei, chankan=chankan,
                                    renhou=renhou)
            value, concealed = self._value(h, claim.seat, claim.hand, tile, cond, add_win_tile=True)
            if kokushi_only and not any(y.key == "kokushi" for y in value.yaku):
                raise Rejected("a concealed kan can be robbed only to win with thirteen orphans")
            self._check_furiten(h, claim.seat, claim.hand, tile, kokushi_only)
            pao = self._pao_for(h, claim.seat, value)
            wins.append(RonWin(claim.seat, value, pao))
            results.append((claim.seat, value, pao, concealed))
        # a riichi declared with the discard that is won on is void: no stick (it was never deposited)
        h.riichi_pending = None
        settlement = settle_ron(wins, e.from_seat, h.dealer, self.rules, honba=h.honba, sticks=h.sticks)
        win_results = tuple(
            self._win_result(h, seat, e.from_seat, value,
                             settlement.received_by(seat) - self._bonus(settlement, seat), pao, concealed, tile)
            for seat, value, pao, concealed in sorted(results, key=lambda r: (r[0] - e.from_seat) % 4)
        )
        dealer_wins = h.dealer in seats
        return self._finish(h, kind="win", settlement=settlement, wins=win_results, dealer_continues=dealer_wins,
                            honba=h.honba + 1 if dealer_wins else 0, sticks=0,
                            ura=e.ura if any(h.seats[s].riichi for s in seats) else ())

    @staticmethod
    def _bonus(settlement: Settlement, seat: int) -> int:
        return sum(p.amount for p in settlement.payments if p.payee == seat and p.reason == "honba")

    def _tsumo(self, e: Tsumo) -> list[Output]:
        h = self._hand()
        self._expect_turn(h, e.seat, "win by tsumo")
        if h.after_call:
            raise Rejected(f"{_seat_name(e.seat)} got the tile by a call: a tsumo needs a drawn tile")
        s = h.seats[e.seat]
        win_tile = e.win_tile or s.drawn
        if win_tile is None:
            raise Rejected("the winning tile of a tsumo must be given when the draw was not seen")
        first = s.draws == 1 and s.discards == 0 and not h.interrupted
        cond = self._conditions(
            h, e.seat, tsumo=True, ura=e.ura, haitei=h.wall == 0 and not h.rinshan, rinshan=h.rinshan,
            tenhou=first and e.seat == h.dealer, chiihou=first and e.seat != h.dealer,
        )
        value, concealed = self._value(h, e.seat, e.hand, win_tile, cond, add_win_tile=False)
        pao = self._pao_for(h, e.seat, value)
        settlement = settle_tsumo(value, e.seat, h.dealer, honba=h.honba, sticks=h.sticks, pao=pao,
                                  pao_liability=self.rules.pao_liability)
        points = settlement.received_by(e.seat) - self._bonus(settlement, e.seat)
        dealer_wins = e.seat == h.dealer
        return self._finish(h, kind="win", settlement=settlement,
                            wins=(self._win_result(h, e.seat, None, value, points, pao, concealed, win_tile),),
                            dealer_continues=dealer_wins, honba=h.honba + 1 if dealer_wins else 0, sticks=0,
                            ura=e.ura if s.riichi else ())

    # ------------------------------------------------------------ draws

    def _exhaustive_draw(self, e: ExhaustiveDraw) -> list[Output]:
        h = self._hand()
        if h.step is not Step.CLAIMS or h.wall > 0:
            raise Rejected(f"the hand is not over: {h.wall} tiles are left in the live wall")
        for seat in range(4):
            s = h.seats[seat]
            if s.riichi and not e.tenpai[seat]:
                raise Rejected(f"{_seat_name(seat)} is in riichi and must show tenpai (riichi while noten is a "
                               "chombo, 3.4.6)")
            if s.dead and e.tenpai[seat]:
                raise Rejected(f"{_seat_name(seat)} has a dead hand and is never tenpai")
            if e.tenpai[seat] and s.hand is not None and not _tenpai(s.hand):
                raise Rejected(f"{_seat_name(seat)} shows tenpai but the hand is not ready (waiting only on a "
                               "tile one holds all four of is not tenpai)")
        out = self._pass_claims(h)
        nagashi = [seat for seat in range(4) if h.seats[seat].nagashi and h.seats[seat].discards > 0]
        if nagashi and self.rules.nagashi is not Nagashi.NONE:
            settlement = settle_nagashi(nagashi, h.dealer, self.rules, honba=h.honba, sticks=h.sticks)
            if self.rules.nagashi is Nagashi.WIN:
                dealer_wins = h.dealer in nagashi
                return out + self._finish(h, kind="win", settlement=settlement, draw="nagashi",
                                          dealer_continues=dealer_wins, honba=h.honba + 1 if dealer_wins else 0,
                                          sticks=0, tenpai=e.tenpai)
            draw = "nagashi"
        else:
            settlement = settle_exhaustive_draw(e.tenpai)
            draw = "exhaustive"
        return out + self._finish(h, kind="exhaustive_draw", settlement=settlement, draw=draw,
                                  dealer_continues=e.tenpai[h.dealer], honba=h.honba + 1, sticks=h.sticks,
                                  tenpai=e.tenpai)

    def _abortive_draw(self, e: AbortiveDraw) -> list[Output]:
        h = self._hand()
        if not self.rules.abortive_draws:
            raise Rejected(f"there are no abortive draws under {self.rules.name}")
        out: list[Output] = []
        if e.kind == "nine_terminals":
            if e.seat is None:
                raise Rejected("nine terminals is declared by a player: give the seat")
            self._expect_turn(h, e.seat, "declare nine terminals")
            s = h.seats[e.seat]
            if s.draws != 1 or s.discards != 0 or h.interrupted:
                raise Rejected("nine terminals only on one's first draw of an uninterrupted first go-around")
            if s.hand is not None and len({t.kind for t in s.hand if t.is_terminal_or_honor}) < 9:
                raise Rejected(f"{_seat_name(e.seat)} has fewer than nine different terminals and honours")
        elif e.kind == "four_winds":
            kinds = {t.kind for t in h.first_discards}
            if (h.step is not Step.CLAIMS or h.interrupted or len(h.first_discards) != 4 or len(kinds) != 1
                    or not h.first_discards[0].is_wind):
                raise Rejected("four winds: the first four discards must be the same wind, with no call")
            out = self._pass_claims(h)  # a riichi declared with the fourth wind stands: its stick stays
        elif e.kind == "four_riichi":
            if h.step is not Step.CLAIMS or h.riichi_count != 4 or h.riichi_pending is None:
                raise Rejected("four riichi: the fourth riichi discard must just have passed")
            out = self._pass_claims(h)
        elif e.kind == "four_kans":
            if h.step is not Step.CLAIMS or len(h.kans) != 4 or len(set(h.kans)) == 1:
                raise Rejected("four kans: four kans by more than one player, and the next discard passed")
            out = self._pass_claims(h)
        else:
            raise Rejected(f"unknown abortive draw {e.kind!r} (triple ron is declared as a ron by three players)")
        return out + self._finish(h, kind="abortive_draw", settlement=Settlement((0, 0, 0, 0)), draw=e.kind,
                                  dealer_continues=True, honba=h.honba + 1, sticks=h.sticks)

    # ------------------------------------------------------------ a hand entered by its result

    def _score_sheet(self, e: ScoreSheet) -> list[Output]:  # noqa: ARG002 - the event has no fields
        self._between_hands("a table turns to entering results")
        self.state.by_results = True
        return []

    def _entered(self, handler: Callable[[Engine, Event], list[Output]], event: Event) -> list[Output]:
        """An entry applied so that a refusal leaves the state as it was (an entry handler checks as it goes)."""
        backup = self.state.clone()
        try:
            return handler(self, event)
        except Rejected:
            self.state = backup
            raise

    def _entry_hand(self, riichi: Sequence[int], what: str, hand_number: int | None) -> HandState:
        """The hand an entry ends, as it stood at its start, with its riichi sticks put down."""
        st = self.state
        self._between_hands(what)
        if hand_number is not None and hand_number != st.hand_number:
            last = st.results[-1].describe(st.players) if st.results else ""
            raise Rejected(f"hand {hand_number + 1} is already entered ({last}); "
                           f"{round_name(st.round)}-{st.honba} is being played now" if hand_number < st.hand_number
                           else f"hand {hand_number + 1} is not being played: hand {st.hand_number + 1} is")
        if len(set(riichi)) != len(riichi):
            raise Rejected(f"riichi seats {list(riichi)}: each seat declares riichi once a hand")
        for seat in riichi:
            if not 0 <= seat <= 3:
                raise Rejected(f"riichi: a seat is 0..3, not {seat}")
            if st.scores[seat] < RIICHI_STICK:
                raise Rejected(f"{_seat_name(seat)} has {st.scores[seat]} points, fewer than the 1000 for a riichi "
                               "stick")
        if not st.by_results and st.hand_number == 0 and st.clock is not None and st.clock.hands_left is not None:
            # time was called before the game's first hand was entered (a game started for a tournament round,
            # with no score_sheet): that hand was being played then, as a hand seen tile by tile would have been
            st.clock = st.clock.hand_in_play_at_time_up()
        st.by_results = True
        h = HandState(round=st.round, honba=st.honba, sticks=st.sticks, dealer=st.dealer, dice=st.dice,
                      turn=st.dealer)
        st.dice = None
        for seat in riichi:
            st.scores[seat] -= RIICHI_STICK
            h.sticks += 1
            h.deposits.append(seat)
            h.seats[seat].riichi = True
        return h

    def _win_entry(self, e: WinEntry) -> list[Output]:
        h = self._entry_hand(e.riichi, "a win is entered", e.hand_number)
        seats = [w.seat for w in e.wins]
        tsumo = e.from_seat is None
        if not seats:
            raise Rejected("a win needs a winner")
        if len(set(seats)) != len(seats) or e.from_seat in seats:
            raise Rejected("winners are distinct seats, and none is the one who dealt in")
        if tsumo and len(seats) > 1:
            raise Rejected("a tsumo has one winner: give the seat that dealt in for a double ron")
        if len(seats) > 1 and not self.rules.multiple_ron:
            raise Rejected(f"{self.rules.name} allows one ron on a discard: the first in turn order wins")
        if len(seats) == 3 and self.rules.triple_ron_aborts:
            return self._finish(h, kind="abortive_draw", settlement=Settlement((0, 0, 0, 0)), draw="triple_ron",
                                dealer_continues=True, honba=h.honba + 1, sticks=h.sticks)
        if len(e.dora) > 5 or len(e.ura) > 5:
            raise Rejected("at most five dora indicators (one plus four kan dora), and as many ura")
        if e.ura and not any(h.seats[w.seat].riichi for w in e.wins):
            raise Rejected("ura dora are turned over only for a winner in riichi")
        h.dora = list(e.dora)
        scored = [(w, *self._entry_value(h, w, e, tsumo)) for w in e.wins]
        if tsumo:
            w, value, pao, concealed, win_tile = scored[0]
            settlement = settle_tsumo(value, w.seat, h.dealer, honba=h.honba, sticks=h.sticks, pao=pao)
            points = settlement.received_by(w.seat) - self._bonus(settlement, w.seat)
            wins = (self._entry_result(w, None, value, points, pao, concealed, win_tile),)
        else:
            assert e.from_seat is not None
            settlement = settle_ron([RonWin(w.seat, value, pao) for w, value, pao, _, _ in scored], e.from_seat,
                                    h.dealer, self.rules, honba=h.honba, sticks=h.sticks)
            wins = tuple(self._entry_result(w, e.from_seat, value,
                                            settlement.received_by(w.seat) - self._bonus(settlement, w.seat), pao,
                                            concealed, win_tile)
                         for w, value, pao, concealed, win_tile in sorted(scored,
                                                                          key=lambda r: (r[0].seat - e.from_seat) % 4))
        dealer_wins = h.dealer in seats
        return self._finish(h, kind="win", settlement=settlement, wins=wins, dealer_continues=dealer_wins,
                            honba=h.honba + 1 if dealer_wins else 0, sticks=0,
                            ura=e.ura if any(h.seats[s].riichi for s in seats) else ())

    def _entry_value(self, h: HandState, w: EnteredWin, e: WinEntry, tsumo: bool
                     ) -> tuple[HandValue, int | None, tuple[Tile, ...], Tile | None]:
        """What an entered win is worth, the seat liable for it, and the hand it was scored with."""
        who = _seat_name(w.seat)
        riichi = h.seats[w.seat].riichi
        if w.double_riichi and not riichi:
            raise Rejected(f"{who} won with double riichi but put no riichi stick down: add the seat to riichi")
        if w.pao is not None and (w.pao == w.seat or not self.rules.pao):
            raise Rejected(f"{who} cannot be liable for their own hand" if w.pao == w.seat
                           else f"pao is not played under {self.rules.name}")
        if w.hand is not None:
            if w.han is not None or w.fu is not None or w.yakuman:
                raise Rejected(f"{who}: give the hand or its value (han and fu, or yakuman), not both")
            if w.win_tile is None:
                raise Rejected(f"{who}: the winning tile of the hand shown is missing")
            cond = WinConditions(
                tsumo=tsumo, seat=Wind((w.seat - h.dealer) % 4), round=Wind((h.round // 4) % 4), riichi=riichi,
                double_riichi=w.double_riichi, ippatsu=w.ippatsu, haitei=w.haitei, houtei=w.houtei,
                rinshan=w.rinshan, chankan=w.chankan, tenhou=w.tenhou, chiihou=w.chiihou, renhou=w.renhou,
                dora=tuple(e.dora), ura=tuple(e.ura) if riichi else (), honba=h.honba)
            try:
                melds = tuple(Meld.parse(m) for m in w.melds)
                value = score_hand(Hand(tuple(w.hand), w.win_tile, melds), cond, self.rules)
            except (InvalidHandError, ValueError) as exc:
                raise Rejected(f"{who}'s win is not valid ({exc}); a declared win that is not valid is a "
                               "chombo") from None
            pao = None
            if w.pao is not None:
                if not value.pao_yakuman:
                    raise Rejected(f"{who}: pao is for Big Three Dragons or Big Four Winds, which this hand is not")
                pao = w.pao
            return value, pao, tuple(sorted(w.hand, key=_sort_key)), w.win_tile
        if w.win_tile is not None or w.melds:
            raise Rejected(f"{who}: a winning tile or melds without the hand: give the whole hand, or han and fu")
        return self._counted_value(w, tsumo), w.pao, (), None

    def _counted_value(self, w: EnteredWin, tsumo: bool) -> HandValue:
        """A win's value as counted at the table (han and fu, or yakuman), checked against what a hand can be."""
        who = _seat_name(w.seat)
        if w.yakuman:
            if w.han is not None or w.fu is not None:
                raise Rejected(f"{who}: a yakuman is counted in multiples, without han and fu")
            return HandValue(han=13 * w.yakuman, fu=0, yaku=(), limit=Limit.YAKUMAN, base_points=8000 * w.yakuman,
                             yakuman=w.yakuman, pao_yakuman=1 if w.pao is not None else 0)
        if w.pao is not None:
            raise Rejected(f"{who}: pao is for a yakuman (Big Three Dragons or Big Four Winds): count it in "
                           "yakuman")
        if w.han is None:
            raise Rejected(f"{who}: give the winning hand, or its han (and fu below mangan)")
        fu = w.fu
        if w.han < 5:
            if fu is None:
                raise Rejected(f"{who}: {w.han} han needs its fu (20 to 110)")
            if fu != 25 and fu % 10:
                raise Rejected(f"{who}: fu are 25 or a multiple of 10 from 20 to 110, not {fu}")
            if fu == 25 and w.han < 2:
                raise Rejected(f"{who}: 25 fu is seven pairs, which is at least 2 han")
            if fu == 20 and not tsumo:
                raise Rejected(f"{who}: a ron is never 20 fu (a closed ron has 30 at least, an open one is rounded "
                               "to 30)")
            if fu == 20 and w.han < 2:
                raise Rejected(f"{who}: a 20 fu tsumo is pinfu and menzen tsumo, at least 2 han")
        base, limit, kiriage = base_points(w.han, fu or 30, self.rules)
        kazoe = w.han >= 13
        return HandValue(han=w.han, fu=fu or 0, yaku=(), limit=limit, base_points=base,
                         yakuman=1 if limit is Limit.YAKUMAN else 0, kazoe=kazoe, kiriage=kiriage)

    def _entry_result(self, w: EnteredWin, from_seat: int | None, value: HandValue, points: int, pao: int | None,
                      concealed: Sequence[Tile], win_tile: Tile | None) -> WinResult:
        melds = tuple(ShownMeld(m.kind.value, m.tiles) for m in (Meld.parse(x) for x in w.melds))
        return WinResult(seat=w.seat, from_seat=from_seat, han=value.han, fu=value.fu,
                         yaku=tuple((y.name, y.han) for y in value.yaku), limit=value.limit_name, points=points,
                         pao=pao, hand=tuple(concealed), win_tile=win_tile, melds=melds)

    def _draw_entry(self, e: DrawEntry) -> list[Output]:
        h = self._entry_hand(e.riichi, "a drawn hand is entered", e.hand_number)
        for seat in e.riichi:
            if not e.tenpai[seat]:
                raise Rejected(f"{_seat_name(seat)} is in riichi and must show tenpai (riichi while noten is a "
                               "chombo, 3.4.6)")
        nagashi = list(e.nagashi)
        if len(set(nagashi)) != len(nagashi) or not all(0 <= s <= 3 for s in nagashi):
            raise Rejected(f"nagashi mangan seats {nagashi}: distinct seats 0..3")
        if nagashi and self.rules.nagashi is Nagashi.NONE:
            raise Rejected(f"nagashi mangan is not played under {self.rules.name}")
        if nagashi:
            settlement = settle_nagashi(nagashi, h.dealer, self.rules, honba=h.honba, sticks=h.sticks)
            if self.rules.nagashi is Nagashi.WIN:
                dealer_wins = h.dealer in nagashi
                return self._finish(h, kind="win", settlement=settlement, draw="nagashi",
                                    dealer_continues=dealer_wins, honba=h.honba + 1 if dealer_wins else 0,
                                    sticks=0, tenpai=e.tenpai)
            draw = "nagashi"
        else:
            settlement = settle_exhaustive_draw(e.tenpai)
            draw = "exhaustive"
        return self._finish(h, kind="exhaustive_draw", settlement=settlement, draw=draw,
                            dealer_continues=e.tenpai[h.dealer], honba=h.honba + 1, sticks=h.sticks, tenpai=e.tenpai)

    def _abort_entry(self, e: AbortEntry) -> list[Output]:
        h = self._entry_hand(e.riichi, "an abortive draw is entered", e.hand_number)
        if not self.rules.abortive_draws:
            raise Rejected(f"there are no abortive draws under {self.rules.name}")
        if e.kind == "nine_terminals":
            if e.seat is None:
                raise Rejected("nine terminals is declared by a player: give the seat")
            if e.seat in e.riichi:
                raise Rejected("nine terminals is declared on one's first draw, before any riichi of one's own")
        elif e.kind == "four_riichi":
            if len(e.riichi) != 4:
                raise Rejected(f"four riichi: all four players declare riichi, not {len(e.riichi)}")
        elif e.kind not in ("four_winds", "four_kans"):
            raise Rejected(f"unknown abortive draw {e.kind!r}: nine_terminals, four_winds, four_riichi or four_kans "
                           "(triple ron is a win by three)")
        if e.kind != "nine_terminals" and e.seat is not None:
            raise Rejected(f"{e.kind.replace('_', ' ')} is declared by nobody in particular: give no seat")
        return self._finish(h, kind="abortive_draw", settlement=Settlement((0, 0, 0, 0)), draw=e.kind,
                            dealer_continues=True, honba=h.honba + 1, sticks=h.sticks)

    def _chombo_entry(self, e: ChomboEntry) -> list[Output]:
        h = self._entry_hand((), "a chombo is entered", e.hand_number)
        settlement = settle_chombo(e.seat, h.dealer, self.rules)
        for seat, amount in enumerate(settlement.final_penalties):
            self.state.penalties[seat] += amount
        return self._finish(h, kind="chombo", settlement=settlement, chombo=e.seat, dealer_continues=True,
                            honba=h.honba, sticks=h.sticks, replay=True)

    # ------------------------------------------------------------ rulings

    def _chombo(self, e: Chombo) -> list[Output]:
        st = self.state
        if st.phase not in (Phase.PLAYING, Phase.DEALING) or st.hand is None:
            raise Rejected("a chombo is ruled during a hand")
        h = st.hand
        for seat in h.deposits:  # riichi sticks of the replayed hand go back
            st.scores[seat] += RIICHI_STICK
        settlement = settle_chombo(e.seat, h.dealer, self.rules)
        for seat, amount in enumerate(settlement.final_penalties):
            st.penalties[seat] += amount
        return self._finish(h, kind="chombo", settlement=settlement, chombo=e.seat, dealer_continues=True,
                            honba=h.honba, sticks=h.sticks - len(h.deposits), replay=True)

    def _dead_hand(self, e: DeadHand) -> list[Output]:
        h = self._hand()
        h.seats[e.seat].dead = True
        return []

    def _set_scores(self, e: SetScores) -> list[Output]:
        if self.state.phase is Phase.NOT_STARTED:
            raise Rejected("the game has not started")
        self.state.scores = list(e.scores)
        return []

    def _end_game(self, e: EndGame) -> list[Output]:  # noqa: ARG002 - the reason is kept in the journal
        st = self.state
        if st.phase is Phase.NOT_STARTED:
            raise Rejected("the game has not started: send start_game first")
        if st.phase is Phase.GAME_OVER:
            raise Rejected("the game is over")
        if st.hand is not None:
            st.sticks = st.hand.sticks
            st.hand = None
        return [self._game_over("referee")]

    # ------------------------------------------------------------ the tournament clock

    def _clock(self, what: str) -> Clock | None:
        """The clock a clock event changes; refused before and after the game."""
        phase = self.state.phase
        if phase is Phase.NOT_STARTED:
            raise Rejected(f"the game has not started: send start_game before {what}")
        if phase is Phase.GAME_OVER:
            ended = getattr(self.state.final, "ended", "rules")
            how = {"time": "on time", "referee": "by the referee"}.get(ended, "by its last hand")
            raise Rejected(f"the game is over (ended {how}): its clock cannot change ({what})")
        return self.state.clock

    def _clock_start(self, e: ClockStart) -> list[Output]:
        if self._clock("starting the clock") is not None:
            raise Rejected("this game's clock is already set: extend it or add a hand")
        try:
            self.state.clock = Clock.start(e.minutes, e.deadline, e.rule, e.more_hands)
        except ClockError as exc:
            raise Rejected(str(exc)) from None
        return []

    def _running_clock(self, what: str) -> Clock:
        clock = self._clock(what)
        if clock is None:
            raise Rejected(f"this game has no clock ({what}): start one with the clock command, action start")
        return clock

    def _clock_extend(self, e: ClockExtend) -> list[Output]:
        try:
            self.state.clock = self._running_clock("extending the time").extend(e.minutes)
        except ClockError as exc:
            raise Rejected(str(exc)) from None
        return []

    def _clock_add_hand(self, e: ClockAddHand) -> list[Output]:  # noqa: ARG002 - the reason is kept in the journal
        try:
            self.state.clock = self._running_clock("adding a hand").add_hand()
        except ClockError as exc:
            raise Rejected(str(exc)) from None
        return []

    def _time_up(self, e: TimeUp) -> list[Output]:
        st = self.state
        clock = self._clock("calling time")
        if clock is None:  # a referee calls time on a game played without a clock
            try:
                rule = TimeRule.named(e.rule or TimeRule.EMA.value)
            except ValueError as exc:
                raise Rejected(str(exc)) from None
            if rule is TimeRule.MORE_HANDS:
                raise Rejected("the rule more_hands needs its number of hands: start a clock with it instead")
            clock = Clock(deadline=None, minutes=0, rule=rule)
        elif e.rule is not None and e.rule != clock.rule.value:
            raise Rejected(f"this game's clock plays by the rule {clock.rule.value}, not {e.rule}")
        try:
            # a table entering results is always playing the hand it will enter next
            in_play = st.phase in (Phase.DEALING, Phase.PLAYING) or (st.by_results and st.phase is Phase.BETWEEN_HANDS)
            st.clock = clock.expire(hand_in_play=in_play)
        except ClockError as exc:
            raise Rejected(str(exc)) from None
        if st.clock.over:  # between hands, and no hand follows: the game ends now
            return [self._game_over("time")]
        return []

    # ------------------------------------------------------------ end of a hand

    def _finish(self, h: HandState, *, kind: str, settlement: Settlement, dealer_continues: bool, honba: int,
                sticks: int, wins: tuple[WinResult, ...] = (), draw: str | None = None,
                tenpai: tuple[bool, bool, bool, bool] | None = None, chombo: int | None = None,
                replay: bool = False, ura: Sequence[Tile] = ()) -> list[Output]:
        st = self.state
        if dealer_continues and not replay and not self.rules.dealer_keeps_deal:
            dealer_continues = False  # the deal passes after every hand; a win clears the counters as usual
            honba = 0 if kind == "win" else honba
        for seat in range(4):
            st.scores[seat] += settlement.deltas[seat]
        result = HandResult(
            hand_number=st.hand_number, round=h.round, honba=h.honba, sticks=st.sticks, dealer=h.dealer, kind=kind,
            deltas=settlement.deltas, scores=_four(st.scores), deposits=tuple(h.deposits), wins=wins, draw=draw,
            tenpai=tenpai, chombo=chombo, dealer_continues=dealer_continues, dora=tuple(h.dora), ura=tuple(ura),
            opened=tuple(s.is_open for s in h.seats),
        )
        st.results.append(result)
        st.hand = None
        st.hand_number += 1
        st.honba = honba
        st.sticks = sticks
        st.phase = Phase.BETWEEN_HANDS
        if replay:
            return [result]
        previous = st.round
        if not dealer_continues:
            st.round += 1
            st.dealer = (st.dealer + 1) % 4
        if self._game_ends(previous, dealer_continues):
            return [result, self._game_over("rules")]
        if st.clock is not None:
            st.clock = st.clock.hand_played()
            if st.clock.over:
                return [result, self._game_over("time")]
        return [result]

    def _game_ends(self, previous: int, dealer_continues: bool) -> bool:
        dealer = self.state.dealer if dealer_continues else (self.state.dealer - 1) % 4
        return game_ends(self.rules, previous, self.state.scores, dealer, dealer_continues,
                         first_dealer=self.state.first_dealer)

    def _game_over(self, ended: str) -> GameResult:
        st = self.state
        standings = final_standings(st.scores, self.rules, leftover_sticks=st.sticks, penalties=st.penalties,
                                    first_dealer=st.first_dealer)
        for standing in standings:  # leftover riichi sticks go to first place
            st.scores[standing.seat] = standing.points
        result = GameResult(standings=tuple(standings), scores=_four(st.scores), leftover_sticks=st.sticks,
                            ended=ended)
        st.sticks = 0
        st.final = result
        st.phase = Phase.GAME_OVER
        return result

    @property
    def round_name(self) -> str:
        return round_name(self.state.round)


def _kuikae(kind: str, tiles: Sequence[Tile], called: Tile) -> frozenset[int]:
    """Kinds that may not be discarded right after this call (3.3.2-3.3.4)."""
    if kind == "pon":
        return frozenset({called.kind})
    if kind != "chi":
        return frozenset()
    kinds = sorted(t.kind for t in tiles)
    banned = {called.kind}
    if called.kind == kinds[0] and kinds[2] % 9 != 8:
        banned.add(kinds[2] + 1)
    elif called.kind == kinds[2] and kinds[0] % 9 != 0:
        banned.add(kinds[0] - 1)
    return frozenset(banned)


def _check_riichi_kans(melds: Sequence[MeldState], concealed: Sequence[Tile], win_tile: Tile, who: str) -> None:
    """Where a riichi hand was hidden until its win, its concealed kans after riichi are checked on the hand
    shown (3.4.6): the hand cannot change after riichi, so before the last such kan it held the tiles shown
    (less the winning tile) and three of the kan's kind; before the one ahead of it, three more."""
    held = list(concealed)
    held.remove(win_tile)
    for meld in reversed([m for m in melds if m.after_riichi]):
        held += meld.tiles[:3]
        if not _riichi_kan_keeps_hand(held, meld.tiles[0].kind):
            raise Rejected(f"{who}'s concealed kan of {meld.tiles[0].mjai} after riichi changed the wait or the "
                           "sets of the hand (3.3.12): the win does not stand, it is a chombo (3.4.6)")


def _riichi_kan_keeps_hand(before: Sequence[Tile], kind: int) -> bool:
    """3.3.12: after riichi a concealed kan of ``kind`` may change neither the wait nor the sets. ``before``
    holds the concealed tiles before the fourth was drawn (three of ``kind`` among them). The kan keeps the
    hand when its tile is no wait and every winning reading of every wait uses the three as one set (then
    the waits after the kan are exactly those before). A hand with no wait is left to the draw's check."""
    waits = _waits(before)
    if kind in waits:
        return False  # holding all four, that wait is gone
    counts = tiles_to_34(before)
    for wait in waits:
        counts[wait] += 1
        readings = divide_counts(counts)
        counts[wait] -= 1
        if not readings or any([kind, kind, kind] not in reading for reading in readings):
            return False
    return True


def _position(tiles: list[Tile], tile: Tile) -> int:
    """Where ``tile`` first is in ``tiles``, or -1: ``list.index`` and ``in`` by identity, which is equality for
    the interned tiles, without the per-element call of the class's comparison slot (a discard does this on
    every event: about a third of its cost through ``in`` and ``remove``)."""
    for i, t in enumerate(tiles):
        if t is tile:
            return i
    return -1


_waits = waits
_tenpai = is_tenpai


def _sort_key(t: Tile) -> tuple[int, bool]:
    return (t.kind, t.red)


def _four(v: Sequence[int]) -> tuple[int, int, int, int]:
    return (v[0], v[1], v[2], v[3])


#: the handler of each kind of event, one table for every engine (an engine is made for every event a table
#: checks before it journals it)
_HANDLERS: dict[type, Callable[[Engine, Event], list[Output]]] = {  # type: ignore[dict-item]
    GameStart: Engine._start_game,
    DiceRolled: Engine._dice,
    HandStart: Engine._hand_start,
    DoraRevealed: Engine._dora,
    Draw: Engine._draw,
    Discard: Engine._discard,
    Call: Engine._call,
    AddedKan: Engine._added_kan,
    ConcealedKan: Engine._concealed_kan,
    Ron: Engine._ron,
    Tsumo: Engine._tsumo,
    ExhaustiveDraw: Engine._exhaustive_draw,
    AbortiveDraw: Engine._abortive_draw,
    Chombo: Engine._chombo,
    DeadHand: Engine._dead_hand,
    SetScores: Engine._set_scores,
    EndGame: Engine._end_game,
    ClockStart: Engine._clock_start,
    ClockExtend: Engine._clock_extend,
    ClockAddHand: Engine._clock_add_hand,
    TimeUp: Engine._time_up,
    ScoreSheet: Engine._score_sheet,
    WinEntry: Engine._win_entry,
    DrawEntry: Engine._draw_entry,
    AbortEntry: Engine._abort_entry,
    ChomboEntry: Engine._chombo_entry,
}
#: entries check as they go: a refused one leaves the state as it was
_ENTRIES = frozenset({WinEntry, DrawEntry, AbortEntry, ChomboEntry})
