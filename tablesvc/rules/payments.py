"""Who pays whom: wins, draws, chombo and the end of the game.

The ``mahjong`` package prices one winner's hand; a table needs more: several
winners on one discard, a pao player liable for a yakuman, noten payments,
chombo, leftover riichi sticks, ties and uma. Every function here is pure and
returns a :class:`Settlement` (or final :class:`Standing` list) whose deltas
sum to the riichi sticks taken off the table, never more or less.

Seats are 0..3 counted from the seat that is East in this hand's frame of
reference as the caller chooses; only ``dealer`` says who is East now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tablesvc.rules.ruleset import ChomboPenalty, Nagashi, PaoLiability, RuleSet
from tablesvc.rules.scoring import HandValue

__all__ = [
    "HONBA_POINTS",
    "NOTEN_POOL",
    "RIICHI_STICK",
    "Payment",
    "RonWin",
    "Settlement",
    "Standing",
    "final_standings",
    "ron_points",
    "settle_chombo",
    "settle_exhaustive_draw",
    "settle_nagashi",
    "settle_ron",
    "settle_tsumo",
    "tsumo_points",
]

RIICHI_STICK = 1000
HONBA_POINTS = 300
"""Per counter on a win: from the discarder on ron, 100 from each on tsumo."""
NOTEN_POOL = 3000


def _ceil100(points: int) -> int:
    return -(-points // 100) * 100


def ron_points(base: int, dealer_wins: bool) -> int:
    """What the discarder pays for a ron, counters aside."""
    return _ceil100(base * (6 if dealer_wins else 4))


def tsumo_points(base: int, winner: int, dealer: int) -> dict[int, int]:
    """What each other seat pays for a tsumo, counters aside."""
    if winner == dealer:
        each = _ceil100(2 * base)
        return {s: each for s in range(4) if s != winner}
    return {s: _ceil100(2 * base) if s == dealer else _ceil100(base) for s in range(4) if s != winner}


@dataclass(frozen=True)
class Payment:
    """One transfer. ``reason`` is 'hand', 'honba', 'pao', 'noten', 'nagashi' or 'chombo'."""

    payer: int
    payee: int
    amount: int
    reason: str


@dataclass(frozen=True)
class Settlement:
    """The outcome of a hand in points. ``deltas`` include the sticks taken."""

    deltas: tuple[int, int, int, int]
    payments: tuple[Payment, ...] = ()
    sticks_to: int | None = None
    sticks_points: int = 0
    final_penalties: tuple[int, int, int, int] = (0, 0, 0, 0)
    """Points to take off final scores later (EMA 2016 chombo), not moved now."""

    def paid_by(self, seat: int) -> int:
        return sum(p.amount for p in self.payments if p.payer == seat)

    def received_by(self, seat: int) -> int:
        return sum(p.amount for p in self.payments if p.payee == seat)


class _Ledger:
    def __init__(self) -> None:
        self.payments: list[Payment] = []
        self.sticks_to: int | None = None
        self.sticks_points = 0

    def pay(self, payer: int, payee: int, amount: int, reason: str) -> None:
        if amount and payer != payee:
            self.payments.append(Payment(payer, payee, amount, reason))

    def take_sticks(self, seat: int, sticks: int) -> None:
        self.sticks_to = seat
        self.sticks_points = RIICHI_STICK * sticks

    def settle(self, penalties: tuple[int, int, int, int] = (0, 0, 0, 0)) -> Settlement:
        deltas = [0, 0, 0, 0]
        for p in self.payments:
            deltas[p.payer] -= p.amount
            deltas[p.payee] += p.amount
        if self.sticks_to is not None:
            deltas[self.sticks_to] += self.sticks_points
        return Settlement(
            deltas=(deltas[0], deltas[1], deltas[2], deltas[3]),
            payments=tuple(self.payments),
            sticks_to=self.sticks_to,
            sticks_points=self.sticks_points,
            final_penalties=penalties,
        )


def _check_seats(*seats: int | None) -> None:
    for s in seats:
        if s is not None and not 0 <= s <= 3:
            raise ValueError(f"seat must be 0..3, not {s}")


def _pao_split(value: HandValue, pao: int | None, liability: PaoLiability) -> tuple[int, int]:
    """(base the pao player is liable for, base paid the ordinary way).

    A hand without a pao yakuman, or with nobody liable, is paid the ordinary way. Otherwise the liable player
    covers the full value of the hand (EMA 3.3.6 "pays the full hand"; Tenhou settles a stacked hand so too)
    or, where a club's rules say so, the pao yakuman alone.
    """
    if pao is None or value.pao_yakuman == 0:
        return 0, value.base_points
    if liability is PaoLiability.HAND:
        return value.base_points, 0
    liable = 8000 * value.pao_yakuman
    return liable, value.base_points - liable


def settle_tsumo(
    value: HandValue,
    winner: int,
    dealer: int,
    *,
    honba: int = 0,
    sticks: int = 0,
    pao: int | None = None,
    pao_liability: PaoLiability = PaoLiability.HAND,
) -> Settlement:
    """A self-drawn win. With ``pao`` set, that seat pays what it is liable for (``pao_liability``: the whole
    hand, or the pao yakuman alone) as a ron would cost, and every counter; what it is not liable for is paid
    by all three as usual."""
    _check_seats(winner, dealer, pao)
    if pao == winner:
        raise ValueError("a player cannot be liable (pao) for their own hand")
    ledger = _Ledger()
    liable, ordinary = _pao_split(value, pao, pao_liability)
    if liable and pao is not None:
        ledger.pay(pao, winner, ron_points(liable, winner == dealer), "pao")
        ledger.pay(pao, winner, HONBA_POINTS * honba, "honba")
        if ordinary:
            for payer, amount in tsumo_points(ordinary, winner, dealer).items():
                ledger.pay(payer, winner, amount, "hand")
    else:
        for payer, amount in tsumo_points(value.base_points, winner, dealer).items():
            ledger.pay(payer, winner, amount, "hand")
            ledger.pay(payer, winner, HONBA_POINTS // 3 * honba, "honba")
    if sticks:
        ledger.take_sticks(winner, sticks)
    return ledger.settle()


@dataclass(frozen=True)
class RonWin:
    """One winner on a discard; ``pao`` is the seat liable for a pao yakuman, if any."""

    winner: int
    value: HandValue
    pao: int | None = None


def settle_ron(
    wins: Sequence[RonWin],
    discarder: int,
    dealer: int,
    rules: RuleSet,
    *,
    honba: int = 0,
    sticks: int = 0,
) -> Settlement:
    """One or more rons on the same discard (or robbed kan).

    The discarder pays each winner in full. The first winner in turn order
    after the discarder takes the riichi sticks; counters go to each winner
    or to that first winner only, by ``rules.multi_ron_honba_to_each``. A pao
    player shares what it is liable for (``rules.pao_liability``) half and
    half with the discarder, who alone pays the counters.
    """
    if not wins:
        raise ValueError("a ron needs at least one winner")
    _check_seats(discarder, dealer, *(w.winner for w in wins), *(w.pao for w in wins))
    winners = [w.winner for w in wins]
    if discarder in winners or len(set(winners)) != len(winners):
        raise ValueError("winners must be distinct and not the discarder")
    if any(w.pao == w.winner for w in wins):
        raise ValueError("a player cannot be liable (pao) for their own hand")
    if not rules.pao and any(w.pao is not None for w in wins):
        raise ValueError(f"pao is not played under {rules.name}")
    if len(wins) > 1 and not rules.multiple_ron:
        raise ValueError(f"{rules.name} allows only one ron on a discard (head bump)")
    ordered = sorted(wins, key=lambda w: (w.winner - discarder) % 4)
    ledger = _Ledger()
    for i, win in enumerate(ordered):
        dealer_wins = win.winner == dealer
        liable, ordinary = _pao_split(win.value, win.pao, rules.pao_liability)
        if liable and win.pao is not None and win.pao != discarder:
            half = ron_points(liable, dealer_wins) // 2
            ledger.pay(win.pao, win.winner, half, "pao")
            ledger.pay(discarder, win.winner, half, "hand")
            ledger.pay(discarder, win.winner, ron_points(ordinary, dealer_wins) if ordinary else 0, "hand")
        else:
            ledger.pay(discarder, win.winner, ron_points(win.value.base_points, dealer_wins), "hand")
        if i == 0 or rules.multi_ron_honba_to_each:
            ledger.pay(discarder, win.winner, HONBA_POINTS * honba, "honba")
    if sticks:
        ledger.take_sticks(ordered[0].winner, sticks)
    return ledger.settle()


def settle_exhaustive_draw(tenpai: Sequence[bool]) -> Settlement:
    """Noten payments: the noten players pay 3000 in all, shared by the tenpai players."""
    if len(tenpai) != 4:
        raise ValueError("tenpai needs one flag per seat")
    ready = [s for s in range(4) if tenpai[s]]
    ledger = _Ledger()
    if 0 < len(ready) < 4:
        noten = [s for s in range(4) if not tenpai[s]]
        each_pays = NOTEN_POOL // len(noten)
        for payer in noten:
            share = each_pays // len(ready)
            for payee in ready:
                ledger.pay(payer, payee, share, "noten")
    return ledger.settle()


def settle_nagashi(
    seats: Sequence[int],
    dealer: int,
    rules: RuleSet,
    *,
    honba: int = 0,
    sticks: int = 0,
) -> Settlement:
    """Nagashi mangan for each seat in ``seats``: a mangan tsumo payment.

    As a win (``Nagashi.WIN``) counters are paid and the riichi sticks go to
    the first such seat from the dealer; as a draw payment (``Nagashi.DRAW``,
    Tenhou) neither is, and it replaces the noten payments.
    """
    if rules.nagashi is Nagashi.NONE:
        raise ValueError(f"nagashi mangan is not played under {rules.name}")
    if not seats:
        raise ValueError("nagashi mangan needs at least one player")
    if len(set(seats)) != len(seats):
        raise ValueError("each nagashi mangan player is listed once")
    _check_seats(dealer, *seats)
    as_win = rules.nagashi is Nagashi.WIN
    ledger = _Ledger()
    for seat in seats:
        for payer, amount in tsumo_points(2000, seat, dealer).items():
            ledger.pay(payer, seat, amount, "nagashi")
            if as_win:
                ledger.pay(payer, seat, HONBA_POINTS // 3 * honba, "honba")
    if as_win and sticks:
        ledger.take_sticks(min(seats, key=lambda s: (s - dealer) % 4), sticks)
    return ledger.settle()


def settle_chombo(offender: int, dealer: int, rules: RuleSet) -> Settlement:
    """A chombo: a reverse mangan tsumo at once, or a final-score penalty, by preset."""
    _check_seats(offender, dealer)
    ledger = _Ledger()
    if rules.chombo is ChomboPenalty.FINAL_PENALTY:
        penalties = [0, 0, 0, 0]
        penalties[offender] = rules.chombo_final_points
        return ledger.settle((penalties[0], penalties[1], penalties[2], penalties[3]))
    for payee in range(4):
        if payee == offender:
            continue
        amount = 4000 if offender == dealer or payee == dealer else 2000
        ledger.pay(offender, payee, amount, "chombo")
    return ledger.settle()


@dataclass(frozen=True)
class Standing:
    """A seat's end of game. ``result`` = points - return points + oka + uma - penalty."""

    seat: int
    points: int
    place: int
    uma: int
    oka: int = 0
    penalty: int = 0
    result: int = field(default=0)


def _split(total: int, seats: Sequence[int]) -> dict[int, int]:
    """Share ``total`` equally in whole hundreds; the remainder goes to the first seat listed."""
    share = total // len(seats) // 100 * 100
    shares = dict.fromkeys(seats, share)
    shares[seats[0]] += total - share * len(seats)
    return shares


def final_standings(
    scores: Sequence[int],
    rules: RuleSet,
    *,
    leftover_sticks: int = 0,
    penalties: Sequence[int] = (0, 0, 0, 0),
    first_dealer: int = 0,
) -> list[Standing]:
    """Rank the table at the end of the game, best first.

    Riichi sticks still on the table go to first place. Where
    ``rules.ties_share_uma`` (EMA), tied players share the place, the uma of
    the places they cover, and any sticks or oka; otherwise the tie is broken
    by seat order from the first dealer (Tenhou). Shares are whole hundreds,
    the remainder going to the tied seat nearest the first dealer.
    """
    if len(scores) != 4 or len(penalties) != 4:
        raise ValueError("final standings need four scores and four penalties")
    seat_order = sorted(range(4), key=lambda s: (-scores[s], (s - first_dealer) % 4))
    groups: list[list[int]] = []
    for s in seat_order:
        if rules.ties_share_uma and groups and scores[groups[-1][0]] == scores[s]:
            groups[-1].append(s)
        else:
            groups.append([s])
    points = list(scores)
    uma = [0, 0, 0, 0]
    oka = [0, 0, 0, 0]
    place = [0, 0, 0, 0]
    next_place = 0
    for group in groups:
        covered = range(next_place, next_place + len(group))
        for seat, amount in _split(sum(rules.uma[p] for p in covered), group).items():
            uma[seat] = amount
        for seat in group:
            place[seat] = next_place + 1
        if next_place == 0:
            if leftover_sticks:
                for seat, amount in _split(RIICHI_STICK * leftover_sticks, group).items():
                    points[seat] += amount
            if rules.oka:
                for seat, amount in _split(rules.oka, group).items():
                    oka[seat] = amount
        next_place += len(group)
    return [
        Standing(
            seat=s,
            points=points[s],
            place=place[s],
            uma=uma[s],
            oka=oka[s],
            penalty=penalties[s],
            result=points[s] - rules.return_points + oka[s] + uma[s] - penalties[s],
        )
        for s in seat_order
    ]
