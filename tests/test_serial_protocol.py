"""The open serial protocol as pure code: framing, checksums, parsing, acknowledgements, duplicates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.observations import (
    BadReason,
    Button,
    ButtonPressed,
    DeviceError,
    DeviceHello,
    DeviceKind,
    DiceRolled,
    HandStarted,
    Heartbeat,
    Observation,
    WallReady,
)
from drivers.protocol import (
    MAX_LINE,
    BadFrame,
    Frame,
    FrameError,
    HostProtocol,
    LineFramer,
    checksum,
    decode_frame,
    encode,
)


def feed(protocol: HostProtocol, data: bytes, now: float = 1.0) -> list[Observation | BadFrame]:
    return protocol.data_received(data, now)


def good(items: list[Observation | BadFrame]) -> list[Observation]:
    return [item for item in items if not isinstance(item, BadFrame)]


def bad(items: list[Observation | BadFrame]) -> list[BadReason]:
    return [item.reason for item in items if isinstance(item, BadFrame)]


def replies(protocol: HostProtocol) -> list[Frame]:
    out = protocol.data_to_send()
    return [decode_frame(line) for line in out.split(b"\r\n") if line]


# -- the wire format ---------------------------------------------------------------------------


def test_checksum_is_the_xor_of_the_body_as_in_nmea():
    # The classic NMEA example sentence and its published checksum.
    assert checksum(b"GPGLL,5300.97914,N,00259.98174,E,125926,A") == 0x28


def test_encode_writes_the_documented_examples():
    # These exact lines are in docs/serial-protocol.md; the checksums were computed apart from the code.
    assert encode("T1", 0, "HELLO", "table", "AT-300", "1.4.2") == b"$T1,0,HELLO,table,AT-300,1.4.2*79\r\n"
    assert encode("T1", 1, "HB") == b"$T1,1,HB*5E\r\n"
    assert encode("T1", 2, "DICE", 3, 5) == b"$T1,2,DICE,3,5*5A\r\n"
    assert encode("P1", 7, "BTN", 2, Button.RON) == b"$P1,7,BTN,2,ron*4F\r\n"
    assert encode("T1", 5, "ACK", 2) == b"$T1,5,ACK,2*07\r\n"
    assert encode("P1", 3, "NAK", 8, "arguments") == b"$P1,3,NAK,8,arguments*4E\r\n"


@pytest.mark.parametrize(
    ("device", "seq", "msg", "args"),
    [
        ("", 0, "HB", ()),
        ("has space", 0, "HB", ()),
        ("T1", -1, "HB", ()),
        ("T1", 65536, "HB", ()),
        ("T1", 0, "hb", ()),
        ("T1", 0, "ERR", ("E1", "a,b")),
        ("T1", 0, "ERR", ("E1", "a*b")),
        ("T1", 0, "ERR", ("E1", "caf\u00e9")),
        ("T1", 0, "ERR", ("E1", "x" * 120)),
    ],
)
def test_encode_refuses_what_a_receiver_would_reject(device, seq, msg, args):
    with pytest.raises(ValueError):  # noqa: PT011 - each case has its own message
        encode(device, seq, msg, *args)


def test_every_device_message_decodes_to_its_observation():
    protocol = HostProtocol()
    stream = b"".join(
        [
            encode("T1", 0, "HELLO", "table", "AT-300", "1.4.2"),
            encode("T1", 1, "HB"),
            encode("T1", 2, "DICE", 3, 5),
            encode("T1", 3, "WALL"),
            encode("T1", 4, "HAND"),
            encode("P1", 5, "BTN", 3, "nine_terminals"),
            encode("T1", 6, "ERR", "JAM", "wall motor stalled"),
        ]
    )
    items = feed(protocol, stream, now=42.5)
    assert items == [
        DeviceHello(device="T1", seq=0, timestamp=42.5, kind=DeviceKind.TABLE, model="AT-300", firmware="1.4.2"),
        Heartbeat(device="T1", seq=1, timestamp=42.5),
        DiceRolled(device="T1", seq=2, timestamp=42.5, d1=3, d2=5),
        WallReady(device="T1", seq=3, timestamp=42.5),
        HandStarted(device="T1", seq=4, timestamp=42.5),
        ButtonPressed(device="P1", seq=5, timestamp=42.5, seat=3, button=Button.NINE_TERMINALS),
        DeviceError(device="T1", seq=6, timestamp=42.5, code="JAM", text="wall motor stalled"),
    ]
    assert items[2].total == 8


def test_bare_lf_lower_case_checksum_and_extra_arguments_are_accepted():
    protocol = HostProtocol()
    line = encode("T1", 9, "DICE", 6, 6, "future-field").replace(b"\r\n", b"\n")
    star = line.index(b"*")
    line = line[: star + 1] + line[star + 1 : star + 3].lower() + b"\n"
    assert good(feed(protocol, line)) == [DiceRolled(device="T1", seq=9, timestamp=1.0, d1=6, d2=6)]


def test_error_text_keeps_its_commas():
    body = b"T1,4,ERR,E7,left,right"
    line = b"$" + body + b"*%02X\r\n" % checksum(body)
    (error,) = feed(HostProtocol(), line)
    assert error == DeviceError(device="T1", seq=4, timestamp=1.0, code="E7", text="left,right")


# -- acknowledgements and duplicates -------------------------------------------------------------


def test_events_are_acknowledged_other_frames_are_not():
    protocol = HostProtocol()
    feed(protocol, encode("T1", 0, "HELLO", "table", "m", "f") + encode("T1", 1, "HB") + encode("T1", 2, "WALL"))
    assert [(f.device, f.msg, f.args) for f in replies(protocol)] == [("T1", "ACK", ("2",))]
    assert protocol.data_to_send() == b""  # drained


def test_a_repeated_event_is_acknowledged_again_but_delivered_once():
    protocol = HostProtocol()
    first = feed(protocol, encode("P1", 10, "BTN", 0, "pon"), now=1.0)
    repeat = feed(protocol, encode("P1", 10, "BTN", 0, "pon"), now=1.5)
    assert good(first) == [ButtonPressed(device="P1", seq=10, timestamp=1.0, seat=0, button=Button.PON)]
    assert good(repeat) == []
    assert bad(repeat) == [BadReason.DUPLICATE]
    assert [(f.msg, f.args) for f in replies(protocol)] == [("ACK", ("10",)), ("ACK", ("10",))]


def test_duplicates_are_per_device_and_expire_after_the_window():
    protocol = HostProtocol(duplicate_window=10.0)
    feed(protocol, encode("P1", 3, "BTN", 0, "chi"), now=0.0)
    # Another device may use the same seq.
    assert len(good(feed(protocol, encode("P2", 3, "BTN", 0, "chi"), now=1.0))) == 1
    # The same seq long after: the device's counter wrapped, it is a new press.
    assert len(good(feed(protocol, encode("P1", 3, "BTN", 0, "chi"), now=60.0))) == 1


def test_duplicate_memory_survives_a_reconnect():
    protocol = HostProtocol()
    feed(protocol, encode("T1", 4, "HAND"), now=1.0)
    protocol.connection_lost()
    protocol.connection_made()
    assert bad(feed(protocol, encode("T1", 4, "HAND"), now=2.0)) == [BadReason.DUPLICATE]


def test_events_kept_before_the_protocol_existed_are_duplicates_within_their_window():
    """What a restarted host learns from its journal: a repeat of an event kept 5 s ago is acknowledged again,
    not delivered; one kept 20 s ago (beyond the window) is a new event, and so is the first after 10 s."""
    protocol = HostProtocol(duplicate_window=10.0)
    protocol.remember_event("T1", 9, 80.0)
    protocol.remember_event("T1", 4, 95.0)
    repeat = feed(protocol, encode("T1", 4, "HAND"), now=100.0)
    assert good(repeat) == [] and bad(repeat) == [BadReason.DUPLICATE]
    assert [(f.device, f.msg, f.args) for f in replies(protocol)] == [("T1", "ACK", ("4",))]
    assert len(good(feed(protocol, encode("T1", 9, "WALL"), now=100.5))) == 1
    assert len(good(feed(protocol, encode("P1", 4, "BTN", 0, "ron"), now=101.0))) == 1  # another device's 4
    assert len(good(feed(protocol, encode("T1", 4, "HAND"), now=105.5))) == 1  # 10.5 s after it was kept


def test_unknown_messages_and_bad_arguments_are_refused_with_nak():
    protocol = HostProtocol()
    items = feed(
        protocol,
        encode("T1", 1, "DICE", 7, 1)
        + encode("T1", 2, "DICE", 1)
        + encode("P1", 3, "BTN", 4, "ron")
        + encode("P1", 4, "BTN", 0, "dance")
        + encode("T1", 5, "HELLO", "toaster", "m", "f")
        + encode("T1", 6, "SHUFFLE"),
    )
    assert bad(items) == [BadReason.ARGUMENTS] * 5 + [BadReason.UNKNOWN]
    assert [(f.msg, f.args) for f in replies(protocol)] == [
        ("NAK", ("1", "arguments")),
        ("NAK", ("2", "arguments")),
        ("NAK", ("3", "arguments")),
        ("NAK", ("4", "arguments")),
        ("NAK", ("5", "arguments")),
        ("NAK", ("6", "unknown")),
    ]


def test_a_refused_event_is_not_remembered_as_seen():
    protocol = HostProtocol()
    feed(protocol, encode("T1", 1, "DICE", 0, 1))
    # Same seq, now valid (a corrected repeat is not a duplicate of a refusal).
    assert len(good(feed(protocol, encode("T1", 1, "DICE", 2, 1)))) == 1


def test_connection_made_and_probe_ping_whoever_is_on_the_link():
    protocol = HostProtocol()
    first = decode_frame(protocol.connection_made().rstrip(b"\r\n"))
    assert (first.device, first.msg) == ("ALL", "PING")
    feed(protocol, encode("P3", 0, "HB"))
    assert protocol.device_id == "P3"
    probe = decode_frame(protocol.probe().rstrip(b"\r\n"))
    assert (probe.device, probe.msg) == ("ALL", "PING")
    assert probe.seq == first.seq + 1


# -- rejections --------------------------------------------------------------------------------


def test_a_wrong_checksum_is_rejected_and_not_answered():
    protocol = HostProtocol()
    line = encode("T1", 1, "DICE", 2, 2)
    corrupted = line.replace(b"DICE,2,2", b"DICE,2,3")
    items = feed(protocol, corrupted)
    assert bad(items) == [BadReason.CHECKSUM]
    assert protocol.data_to_send() == b""  # the device will repeat it; no NAK for bytes we cannot trust


@pytest.mark.parametrize(
    "line",
    [b"$T1,1,HB\r\n", b"$T1,1,HB*\r\n", b"$T1,1,HB*0\r\n", b"$T1,1,HB*0G\r\n", b"$T1,1,HB*0F0\r\n"],
)
def test_missing_or_malformed_checksums_are_checksum_errors(line):
    assert bad(feed(HostProtocol(), line)) == [BadReason.CHECKSUM]


@pytest.mark.parametrize("body", [b"T1,1", b"T 1,1,HB", b"T1,x,HB", b"T1,70000,HB", b"T1,1,hb", b"T1,1,HB\x01"])
def test_frames_with_a_bad_header_are_malformed(body):
    line = b"$" + body + b"*%02X\r\n" % checksum(body)
    assert bad(feed(HostProtocol(), line)) == [BadReason.MALFORMED]


def test_noise_glued_before_a_frame_is_garbage_and_the_frame_still_counts():
    protocol = HostProtocol()
    items = feed(protocol, b"\x00\xff\x13zz" + encode("T1", 1, "WALL") + b"line noise\r\n" + encode("T1", 2, "HAND"))
    assert bad(items) == [BadReason.GARBAGE, BadReason.GARBAGE]
    assert [type(item) for item in good(items)] == [WallReady, HandStarted]


def test_a_frame_starts_at_the_last_dollar_of_its_line():
    # Noise that itself holds '$' (a half frame cut by a reconnect) glued before a good frame.
    items = feed(HostProtocol(), b"$T1,4,DI$$*" + encode("T1", 5, "WALL"))
    assert bad(items) == [BadReason.GARBAGE]
    assert good(items) == [WallReady(device="T1", seq=5, timestamp=1.0)]


def test_an_overlong_line_is_dropped_up_to_the_next_newline_only():
    protocol = HostProtocol()
    overlong = b"$T1,1,ERR,X," + b"A" * 300 + b"*00\r\n"
    # Fed in small pieces so the framer meets the overflow before the newline.
    stream = encode("T1", 0, "WALL") + overlong + encode("T1", 2, "HAND")
    items: list[Observation | BadFrame] = []
    for start in range(0, len(stream), 7):
        items += feed(protocol, stream[start : start + 7])
        assert protocol.framer.buffered < MAX_LINE
    assert bad(items) == [BadReason.OVERLONG]
    assert [type(item) for item in good(items)] == [WallReady, HandStarted]


def test_a_line_of_exactly_the_maximum_is_accepted_and_one_more_byte_is_not():
    def line_of(length: int) -> bytes:
        text = "x" * (length - len(encode("T1", 1, "ERR", "E", "")))
        return encode("T1", 1, "ERR", "E", text)

    assert len(line_of(MAX_LINE)) == MAX_LINE
    assert len(good(feed(HostProtocol(), line_of(MAX_LINE)))) == 1
    body = line_of(MAX_LINE)[1:-5] + b"y"
    too_long = b"$" + body + b"*%02X\r\n" % checksum(body)
    assert len(too_long) == MAX_LINE + 1
    assert bad(feed(HostProtocol(), too_long)) == [BadReason.OVERLONG]


def test_a_long_run_of_noise_without_newline_does_not_hide_the_next_frame():
    protocol = HostProtocol()
    items = feed(protocol, b"\xaa" * 1000)
    items += feed(protocol, encode("T1", 3, "WALL"))
    assert bad(items) == [BadReason.GARBAGE]
    assert [type(item) for item in good(items)] == [WallReady]


def test_a_partial_line_from_a_previous_connection_is_forgotten():
    protocol = HostProtocol()
    feed(protocol, encode("T1", 1, "WALL")[:9])
    protocol.connection_lost()
    protocol.connection_made()
    assert [type(item) for item in feed(protocol, encode("T1", 2, "HAND"))] == [HandStarted]


def test_host_messages_heard_by_the_host_are_unknown():
    # An echoing line (a misconfigured adapter) must not look like a device.
    assert bad(feed(HostProtocol(), encode("T1", 0, "ACK", 3))) == [BadReason.UNKNOWN]


def test_decode_frame_reports_the_header_it_could_read():
    body = b"P1,12,BTN,9,ron"
    frame = decode_frame(b"$" + body + b"*%02X" % checksum(body))
    assert frame == Frame("P1", 12, "BTN", ("9", "ron"))
    with pytest.raises(FrameError) as caught:
        decode_frame(b"$P1,12,btn*%02X" % checksum(b"P1,12,btn"))
    assert (caught.value.reason, caught.value.device, caught.value.seq) == (BadReason.MALFORMED, "P1", 12)


# -- properties --------------------------------------------------------------------------------

_ARG = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters=",$*"), max_size=8)

valid_frames = st.one_of(
    st.tuples(st.just("HB")),
    st.tuples(st.just("DICE"), st.integers(1, 6), st.integers(1, 6)),
    st.tuples(st.just("WALL")),
    st.tuples(st.just("HAND")),
    st.tuples(st.just("BTN"), st.integers(0, 3), st.sampled_from(list(Button))),
    st.tuples(st.just("HELLO"), st.sampled_from(["table", "panel"]), st.just("m1"), st.just("f1")),
    st.tuples(st.just("ERR"), st.sampled_from(["E1", "JAM"]), _ARG),
)


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.one_of(valid_frames, st.binary(max_size=300)), max_size=25),
    cuts=st.lists(st.integers(1, 64), min_size=1, max_size=50),
)
def test_garbage_between_newline_delimited_frames_never_loses_one(parts, cuts):
    stream = bytearray()
    expected: list[tuple[int, str]] = []
    for index, part in enumerate(parts):
        if isinstance(part, bytes):
            stream += part
        else:
            msg, *args = part
            stream += b"\n" + encode("VALID", index, msg, *args)
            expected.append((index, msg))
    protocol = HostProtocol()
    items: list[Observation | BadFrame] = []
    position, turn = 0, 0
    while position < len(stream):
        size = cuts[turn % len(cuts)]
        items += protocol.data_received(bytes(stream[position : position + size]), float(turn))
        assert protocol.framer.buffered < MAX_LINE
        position, turn = position + size, turn + 1
    got = [(item.seq, type(item).__name__) for item in good(items) if item.device == "VALID"]
    names = {
        "HB": "Heartbeat",
        "DICE": "DiceRolled",
        "WALL": "WallReady",
        "HAND": "HandStarted",
        "BTN": "ButtonPressed",
        "HELLO": "DeviceHello",
        "ERR": "DeviceError",
    }
    assert got == [(seq, names[msg]) for seq, msg in expected]


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.binary(max_size=100).filter(lambda b: b"\n" not in b), valid_frames), max_size=10),
    size=st.integers(1, 64),
)
def test_a_frame_glued_to_short_noise_without_a_newline_is_still_found(pairs, size):
    stream = b"".join(b"\n" + noise + encode("VALID", index, *frame) for index, (noise, frame) in enumerate(pairs))
    protocol = HostProtocol()
    items: list[Observation | BadFrame] = []
    for start in range(0, len(stream), size):
        items += protocol.data_received(stream[start : start + size], 0.0)
    assert [item.seq for item in good(items) if item.device == "VALID"] == list(range(len(pairs)))


@settings(max_examples=300, deadline=None)
@given(chunks=st.lists(st.binary(max_size=200), max_size=30))
def test_arbitrary_bytes_never_raise_and_memory_stays_bounded(chunks):
    protocol = HostProtocol()
    for now, chunk in enumerate(chunks):
        items = protocol.data_received(chunk, float(now))
        assert all(isinstance(item, (Observation, BadFrame)) for item in items)
        assert protocol.framer.buffered < MAX_LINE
        protocol.data_to_send()


@settings(max_examples=200, deadline=None)
@given(
    device=st.from_regex(r"[A-Za-z0-9_-]{1,16}", fullmatch=True),
    seq=st.integers(0, 65535),
    args=st.lists(_ARG, max_size=4),
)
def test_encode_then_decode_round_trips(device, seq, args):
    try:
        line = encode(device, seq, "ERR", *args)
    except ValueError:
        return  # too long for one line: encode refuses rather than sending it
    assert line.endswith(b"\r\n")
    assert len(line) <= MAX_LINE
    assert decode_frame(line[:-2]) == Frame(device, seq, "ERR", tuple(args))


def test_the_framer_reports_lines_and_candidates_in_order():
    framer = LineFramer()
    out = framer.feed(b"junk\n$A,1,HB*00\r\n\r\n")
    assert out == [(BadReason.GARBAGE, b"junk"), (None, b"$A,1,HB*00")]
    assert framer.lines == 2


def test_every_example_frame_in_the_protocol_document_is_valid():
    document = (Path(__file__).resolve().parents[1] / "docs" / "serial-protocol.md").read_text()
    examples = [
        match.group(1).encode()
        for block in document.split("```")[1::2]  # inside fenced blocks
        for match in re.finditer(r"^[<>] (\$.*?\*[0-9A-F]{2})(?:\s|$)", block, re.MULTILINE)
    ]
    assert len(examples) >= 25
    for line in examples:
        frame = decode_frame(line)
        assert encode(frame.device, frame.seq, frame.msg, *frame.args).rstrip(b"\r\n") == line
