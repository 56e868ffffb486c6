"""Property-based fuzzing of what comes from outside: serial frames and referee commands.

Whatever arrives, nothing raises out of the parser or the validator, every
refusal carries a reason, and what is accepted lies within the ranges a real
game allows.
"""

from __future__ import annotations

import json
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.binding import KIND_MESSAGES, LinkBinding
from drivers.observations import (
    BadReason,
    ButtonPressed,
    DeviceHello,
    DeviceKind,
    DiceRolled,
    Observation,
    TraysRead,
)
from drivers.protocol import DEVICE_MESSAGES, HOST_MESSAGES, SEQ_MODULO, BadFrame, HostProtocol, checksum, decode_frame
from tablesvc.commands import COMMAND_SCHEMA, Commands
from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import EVENT_TYPES, INT_RANGES, MAX_TEXT, Event, GameStart, SetScores

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- serial frames

_NAMES = sorted(DEVICE_MESSAGES | HOST_MESSAGES | {"SHUFFLE", "X"})
_ARG_CHARS = "".join(c for c in string.printable if c.isprintable() and c not in ",$*") or "a"
_numbers = st.one_of(st.integers(-5, 10), st.integers(0, 10**6), st.sampled_from(["007", "1000", "-1", "1.5"]))
_arg = st.one_of(
    _numbers.map(str),
    st.sampled_from(["ron", "undo", "confirm", "table", "panel", "sticks", "tsumo", "RON", "25000", "100", ""]),
    st.text(_ARG_CHARS, max_size=12),
)
_id = st.one_of(st.sampled_from(["T1", "P1", "S1", "X9", "ALL", "t1"]), st.text(string.ascii_letters + "_-", min_size=1,
                                                                          max_size=17))
_seq = st.one_of(st.integers(0, SEQ_MODULO - 1), st.integers(SEQ_MODULO, 10**6), st.sampled_from([-1]))


@st.composite
def frames(draw) -> bytes:
    """A frame with a right checksum (mostly) and anything in its fields: the parser's semantic layer."""
    body = ",".join([draw(_id), str(draw(_seq)), draw(st.sampled_from(_NAMES)), *draw(st.lists(_arg, max_size=5))])
    raw = body.encode("ascii", "replace")
    mark = checksum(raw)
    if draw(st.integers(0, 9)) == 0:
        mark ^= 0x11  # now and then a wrong one
    return b"$" + raw + b"*%02X\r\n" % mark


_bindings = st.one_of(
    st.none(),
    st.builds(lambda seats: LinkBinding(DeviceKind.PANEL, frozenset({"P1"}), frozenset(seats)),
              st.sets(st.integers(0, 3), min_size=1)),
    st.just(LinkBinding(DeviceKind.TABLE, frozenset({"T1", "T2"}))),
    st.just(LinkBinding(DeviceKind.STICKS, frozenset({"S1"}))),
)


def _check_observation(item: Observation, binding: LinkBinding | None) -> None:
    assert 0 <= item.seq < SEQ_MODULO
    if isinstance(item, DiceRolled):
        assert 1 <= item.d1 <= 6 and 1 <= item.d2 <= 6
    if isinstance(item, ButtonPressed):
        assert 0 <= item.seat <= 3
    if isinstance(item, TraysRead):  # never a negative tray, a part of a stick, or an absurd count
        assert all(0 <= t <= 999_900 and t % 100 == 0 for t in item.trays) and 0 <= item.riichi <= 99
    if binding is not None:
        assert item.device in binding.ids
        if isinstance(item, ButtonPressed):
            assert item.seat in binding.seats and binding.kind is DeviceKind.PANEL
        if isinstance(item, DiceRolled):
            assert binding.kind is DeviceKind.TABLE
        if isinstance(item, TraysRead):
            assert binding.kind is DeviceKind.STICKS
        if isinstance(item, DeviceHello):
            assert item.kind is binding.kind


@FUZZ
@given(binding=_bindings, stream=st.lists(st.one_of(frames(), st.binary(max_size=40)), max_size=12),
       cuts=st.lists(st.integers(1, 50), max_size=6))
def test_the_frame_parser_never_raises_and_every_refusal_has_a_reason(binding, stream, cuts):
    protocol = HostProtocol(binding=binding)
    data = b"".join(stream)
    chunks, at = [], 0
    for cut in cuts:  # the stream arrives in arbitrary pieces, as from a UART
        chunks.append(data[at:at + cut])
        at += cut
    chunks.append(data[at:])
    for now, chunk in enumerate(chunks):
        for item in protocol.data_received(chunk, float(now)):
            if isinstance(item, BadFrame):
                assert isinstance(item.reason, BadReason) and item.detail.strip()
                assert len(item.data) <= 128
            else:
                _check_observation(item, binding)
        for line in protocol.data_to_send().split(b"\r\n"):
            if line:  # every reply is a well-formed host frame; a stranger is never answered
                reply = decode_frame(line)
                assert reply.msg in HOST_MESSAGES
                assert binding is None or reply.device in binding.ids | {"ALL"}
                if reply.msg == "NAK":
                    assert reply.args[1] in {r.value for r in BadReason}


def test_kinds_send_disjoint_events():
    """What makes 'forbidden' meaningful: a table, a panel and a stick tray reader have no event in common."""
    table, panel = KIND_MESSAGES[DeviceKind.TABLE], KIND_MESSAGES[DeviceKind.PANEL]
    sticks = KIND_MESSAGES[DeviceKind.STICKS]
    common = {"HELLO", "HB", "ERR"}
    assert (table & panel) == (table & sticks) == (panel & sticks) == common
    assert (table | panel | sticks) == DEVICE_MESSAGES


# ---------------------------------------------------------------- referee commands

_json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(10**400), 10**400), st.floats(allow_nan=False),
    st.text(max_size=20), st.sampled_from(["ron", "5m", "123m456p789s1122z", "ema2016; kiriage=yes", "x" * 600]),
)
_json = st.recursive(_json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=5)),
                     max_leaves=20)
_FIELDS = sorted({f for spec in COMMAND_SCHEMA["allOf"] for f in spec["then"]["properties"]} | {"type", "tile"})
_int_fields = sorted(INT_RANGES)


@st.composite
def events(draw) -> dict:
    """An event object of a real type with fields real and made up, values in and out of range."""
    kind = draw(st.sampled_from(sorted(EVENT_TYPES)))
    body: dict = {"type": kind}
    for name in draw(st.lists(st.sampled_from([*_int_fields, "tile", "tiles", "hand", "claims", "riichi", "kind",
                                               "reason", "players", "rules", "called", "hands", "tenpai", "ura",
                                               "win_tile"]), max_size=4)):
        body[name] = draw(st.one_of(_json, st.integers(-3, 8), st.lists(st.integers(-1, 7), min_size=2, max_size=4)))
    return body


@st.composite
def commands(draw) -> dict:
    command: dict = {"command": draw(st.sampled_from([*COMMAND_SCHEMA["properties"]["command"]["enum"], "boom"]))}
    for name in draw(st.lists(st.sampled_from(_FIELDS), max_size=4)):
        command[name] = draw(st.one_of(_json, st.integers(-2, 5), st.lists(st.integers(-(10**7), 10**7), min_size=4,
                                                                          max_size=4), events()))
    if draw(st.booleans()):
        command["event"] = draw(events())
    if draw(st.booleans()):
        command["transaction"] = draw(_json_leaf)
    return command


class _Game:
    """The operations a command reaches, on a real engine (a game under way), recording what it accepted."""

    def __init__(self) -> None:
        self.engine = Engine()
        self.engine.apply(GameStart())
        self.accepted: list[Event] = []

    def submit(self, event: Event, source: str) -> int:
        self.engine.apply(event)  # Rejected when the engine refuses it
        self.accepted.append(event)
        return len(self.accepted)

    def undo(self, count: int, source: str) -> int:
        assert 1 <= count <= 100
        return 1

    def amend(self, seq: int, event: Event, source: str) -> int:
        raise Rejected(f"there is no event {seq} in the game as it stands")


def _check_reply(game: _Game, payload: dict) -> None:
    assert set(payload) == {"schema", "status", "command", "transaction", "data", "error"}
    json.dumps(payload)  # the reply can be sent
    if payload["status"] == "error":
        assert isinstance(payload["error"], str) and payload["error"].strip()
        assert len(payload["error"]) <= 600  # a refusal never echoes a huge value
        assert not payload["error"].startswith("the service could not carry it out"), payload["error"]
    for event in game.accepted:
        if isinstance(event, SetScores):
            assert all(abs(s) <= INT_RANGES["scores"][1] for s in event.scores)
        for field in ("reason", "rules"):
            assert len(getattr(event, field, "")) <= MAX_TEXT


@FUZZ
@given(command=commands())
def test_commands_shaped_like_real_ones_are_carried_out_or_refused_with_a_reason(command):
    game = _Game()
    cmds = Commands(submit=game.submit, undo=game.undo, amend=game.amend)
    _check_reply(game, cmds.handle(json.dumps(command, default=str).encode()).payload)


@FUZZ
@given(value=_json)
def test_any_json_is_answered_with_a_reason(value):
    game = _Game()
    cmds = Commands(submit=game.submit, undo=game.undo, amend=game.amend)
    reply = cmds.handle(json.dumps(value).encode()).payload
    _check_reply(game, reply)
    assert reply["status"] == "error" or (isinstance(value, dict) and value.get("command") in COMMAND_SCHEMA[
        "properties"]["command"]["enum"])


@FUZZ
@given(raw=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode),
                     st.sampled_from([b"NaN", b'{"command": "undo", "count": Infinity}', b"[" * 5000,
                                      b'{"command": "undo", "count": 1' + b"0" * 5000 + b"}"])))
def test_any_bytes_are_answered_with_a_reason(raw):
    game = _Game()
    cmds = Commands(submit=game.submit, undo=game.undo, amend=game.amend)
    _check_reply(game, cmds.handle(raw).payload)
