"""The open serial protocol of automatic tables and seat panels, as pure code (no I/O, no clock).

The wire format is specified in ``docs/serial-protocol.md``; in short, one
ASCII line per frame::

    $<device-id>,<seq>,<MSG>[,<arg>...]*<XX>\\r\\n

with ``XX`` the XOR of the bytes between ``$`` and ``*`` in two hex digits.

The shape follows pyserial's ``serial.threaded.Protocol``: the driver's
thread owns the port and feeds bytes in; :class:`HostProtocol` frames and
parses them into typed observations and queues the replies (ACK, NAK) that
the driver writes back. Nothing here blocks, reads a clock or raises on bad
input, so the same code serves the driver, the device simulators and the
property tests. Timestamps are passed in as ``now`` (monotonic seconds).

Layers, each usable alone:

- :class:`LineFramer` cuts a byte stream into frame candidates and rejected
  bytes (garbage between frames, overlong lines), with bounded memory;
- :func:`decode_frame` checks one candidate (checksum, header) into a
  :class:`Frame`; :func:`to_observation` turns a device frame into an
  :class:`~drivers.observations.Observation`; :func:`encode` is the inverse;
- :class:`HostProtocol` is the host end: all of the above plus duplicate
  detection by (device, seq), acknowledgements, and (given a
  :class:`~drivers.binding.LinkBinding`) the refusal of every frame from an
  id, or of a message or seat, that the link is not configured for.

A vendor whose hardware speaks something else writes an adapter with the
same four methods (:class:`ProtocolAdapter`) and hands its factory to the
serial driver.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

from drivers.binding import LinkBinding
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
    TraysRead,
    WallReady,
)

__all__ = [
    "BROADCAST",
    "DEVICE_MESSAGES",
    "DUPLICATE_WINDOW",
    "EVENT_MESSAGES",
    "HOST_MESSAGES",
    "MAX_LINE",
    "MAX_RIICHI",
    "MAX_TRAY",
    "NAKS_PER_SECOND",
    "SEQ_MODULO",
    "BadFrame",
    "Frame",
    "FrameError",
    "HostProtocol",
    "LineFramer",
    "ProtocolAdapter",
    "checksum",
    "decode_frame",
    "encode",
    "to_observation",
]

log = logging.getLogger(__name__)

#: The longest line, from ``$`` to ``\n`` inclusive.
MAX_LINE = 128
#: Sequence numbers run 0..65535 and wrap.
SEQ_MODULO = 65536
#: A repeated (device, seq) is a duplicate only this many seconds after the first; later it is a new
#: event (the device's seq has wrapped, or the device restarted). Repeats come within ~2 s.
DUPLICATE_WINDOW = 10.0
#: Device id that addresses every device on the link (host -> device frames only).
BROADCAST = "ALL"

#: Device -> host messages.
DEVICE_MESSAGES = frozenset({"HELLO", "HB", "DICE", "WALL", "HAND", "BTN", "TRAYS", "ERR"})
#: Device -> host messages that are events: acknowledged, repeated until acknowledged, deduplicated.
EVENT_MESSAGES = frozenset({"DICE", "WALL", "HAND", "BTN", "TRAYS"})
#: The most points one tray may report (a whole table's points many times over), and riichi sticks on the table.
MAX_TRAY = 999_900
MAX_RIICHI = 99
#: Host -> device messages.
HOST_MESSAGES = frozenset({"ACK", "NAK", "PING"})
NAKS_PER_SECOND = 10.0  # the most NAKs the host sends on one link per second (a burst of as many, then this rate)

_DEVICE_ID = re.compile(r"[A-Za-z0-9_-]{1,16}")
_SEQ = re.compile(r"[0-9]{1,5}")
_MSG = re.compile(r"[A-Z][A-Z0-9_]{0,15}")
_HEX2 = re.compile(rb"[0-9A-Fa-f]{2}")
_SMALL_INT = re.compile(r"[0-9]{1,3}")
_POINTS = re.compile(r"[0-9]{1,6}")
_TOKEN = re.compile(r"[A-Za-z0-9_.-]{1,32}")
_FORBIDDEN_IN_ARG = frozenset(",$*")


def checksum(body: bytes) -> int:
    """XOR of every byte of ``body`` (the bytes between ``$`` and ``*``), as in NMEA 0183."""
    value = 0
    for byte in body:
        value ^= byte
    return value


def _valid_arg(text: str) -> bool:
    return text.isascii() and text.isprintable() and not (_FORBIDDEN_IN_ARG & set(text))


def encode(device: str, seq: int, msg: str, *args: object) -> bytes:
    """One complete frame, ``$...*XX\\r\\n``, for hosts and simulators.

    Arguments are turned into text with ``str`` (a :class:`Button` gives its
    wire name). Raises ``ValueError`` for anything the grammar forbids, so a
    program can never put a frame on the wire that a receiver must reject.
    """
    if not _DEVICE_ID.fullmatch(device):
        raise ValueError(f"device id {device!r}: 1 to 16 of A-Z a-z 0-9 _ -")
    if not (isinstance(seq, int) and 0 <= seq < SEQ_MODULO):
        raise ValueError(f"seq {seq!r}: an integer 0..{SEQ_MODULO - 1}")
    if not _MSG.fullmatch(msg):
        raise ValueError(f"message {msg!r}: an upper-case name")
    texts = [str(arg) for arg in args]
    for text in texts:
        if not _valid_arg(text):
            raise ValueError(f"argument {text!r}: printable ASCII without ',' '$' '*'")
    body = ",".join([device, str(seq), msg, *texts]).encode("ascii")
    line = b"$" + body + b"*%02X\r\n" % checksum(body)
    if len(line) > MAX_LINE:
        raise ValueError(f"frame of {len(line)} bytes exceeds {MAX_LINE}")
    return line


@dataclass(frozen=True)
class Frame:
    """A frame whose checksum and header are valid; ``args`` are still text."""

    device: str
    seq: int
    msg: str
    args: tuple[str, ...] = ()


class FrameError(ValueError):
    """A frame candidate was rejected; ``device`` and ``seq`` are set when the header was readable."""

    def __init__(self, reason: BadReason, detail: str, device: str | None = None, seq: int | None = None) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail
        self.device = device
        self.seq = seq


@dataclass(frozen=True)
class BadFrame:
    """Bytes that were rejected, and why. ``data`` is at most :data:`MAX_LINE` bytes of them."""

    reason: BadReason
    detail: str
    data: bytes
    timestamp: float
    device: str | None = None
    seq: int | None = None


def decode_frame(candidate: bytes) -> Frame:
    """Check one frame candidate (``$`` up to the checksum, without CR/LF) into a :class:`Frame`.

    Raises :class:`FrameError` with :attr:`BadReason.CHECKSUM` or
    :attr:`BadReason.MALFORMED`. Does not look at the message's arguments.
    """
    if not candidate.startswith(b"$"):
        raise FrameError(BadReason.GARBAGE, "frame does not start with '$'")
    star = candidate.find(b"*")
    if star < 0:
        raise FrameError(BadReason.CHECKSUM, "no '*' before the checksum")
    body, given = candidate[1:star], candidate[star + 1 :]
    if not _HEX2.fullmatch(given):
        raise FrameError(BadReason.CHECKSUM, f"checksum field {given[:8]!r} is not two hex digits")
    expected = checksum(body)
    if int(given, 16) != expected:
        raise FrameError(BadReason.CHECKSUM, f"checksum {given.decode()} but the body gives {expected:02X}")
    if not all(0x20 <= byte <= 0x7E for byte in body):
        raise FrameError(BadReason.MALFORMED, "non-printable or non-ASCII byte in the frame")
    fields = body.decode("ascii").split(",")
    if len(fields) < 3:
        raise FrameError(BadReason.MALFORMED, "fewer than three fields (device id, seq, message)")
    device, seq_text, msg, *args = fields
    if not _DEVICE_ID.fullmatch(device):
        raise FrameError(BadReason.MALFORMED, f"device id {device!r} is not valid")
    if not _SEQ.fullmatch(seq_text) or int(seq_text) >= SEQ_MODULO:
        raise FrameError(BadReason.MALFORMED, f"seq {seq_text!r} is not 0..{SEQ_MODULO - 1}", device=device)
    seq = int(seq_text)
    if not _MSG.fullmatch(msg):
        raise FrameError(BadReason.MALFORMED, f"message name {msg!r} is not valid", device=device, seq=seq)
    return Frame(device, seq, msg, tuple(args))


def _need(frame: Frame, count: int) -> tuple[str, ...]:
    # Extra trailing arguments are ignored on purpose: a newer firmware may append fields.
    if len(frame.args) < count:
        raise FrameError(
            BadReason.ARGUMENTS,
            f"{frame.msg} needs {count} argument(s), got {len(frame.args)}",
            frame.device,
            frame.seq,
        )
    return frame.args[:count]


def _int_in(frame: Frame, text: str, low: int, high: int, what: str) -> int:
    if not _SMALL_INT.fullmatch(text) or not low <= int(text) <= high:
        raise FrameError(BadReason.ARGUMENTS, f"{what} {text!r} is not {low}..{high}", frame.device, frame.seq)
    return int(text)


def _points(frame: Frame, text: str, seat: int) -> int:
    """A tray total: whole hundreds (the smallest stick is 100 points) from 0 to :data:`MAX_TRAY`."""
    if not _POINTS.fullmatch(text) or int(text) > MAX_TRAY or int(text) % 100:
        raise FrameError(BadReason.ARGUMENTS, f"tray {seat} holds {text!r}: points are whole hundreds 0..{MAX_TRAY}",
                         frame.device, frame.seq)
    return int(text)


def to_observation(frame: Frame, now: float) -> Observation:
    """The observation a device -> host frame carries, stamped ``now``.

    Raises :class:`FrameError` with :attr:`BadReason.UNKNOWN` for a message
    this host does not know (host messages included: a host hearing ACK is
    hearing an echo) and :attr:`BadReason.ARGUMENTS` for bad arguments.
    """
    common = {"device": frame.device, "seq": frame.seq, "timestamp": now}
    msg = frame.msg
    if msg == "HB":
        return Heartbeat(**common)
    if msg == "DICE":
        d1, d2 = _need(frame, 2)
        return DiceRolled(**common, d1=_int_in(frame, d1, 1, 6, "die"), d2=_int_in(frame, d2, 1, 6, "die"))
    if msg == "WALL":
        return WallReady(**common)
    if msg == "HAND":
        return HandStarted(**common)
    if msg == "BTN":
        seat, button = _need(frame, 2)
        try:
            parsed = Button(button)
        except ValueError:
            raise FrameError(BadReason.ARGUMENTS, f"unknown button {button!r}", frame.device, frame.seq) from None
        return ButtonPressed(**common, seat=_int_in(frame, seat, 0, 3, "seat"), button=parsed)
    if msg == "TRAYS":
        *totals, riichi = _need(frame, 5)
        trays = tuple(_points(frame, text, seat) for seat, text in enumerate(totals))
        return TraysRead(**common, trays=trays, riichi=_int_in(frame, riichi, 0, MAX_RIICHI, "riichi sticks"))
    if msg == "HELLO":
        kind, model, firmware = _need(frame, 3)
        try:
            parsed_kind = DeviceKind(kind)
        except ValueError:
            raise FrameError(BadReason.ARGUMENTS, f"unknown device kind {kind!r}", frame.device, frame.seq) from None
        if not model or not firmware:
            raise FrameError(BadReason.ARGUMENTS, "HELLO needs a model and a firmware", frame.device, frame.seq)
        return DeviceHello(**common, kind=parsed_kind, model=model, firmware=firmware)
    if msg == "ERR":
        (code,) = _need(frame, 1)
        if not _TOKEN.fullmatch(code):
            raise FrameError(BadReason.ARGUMENTS, f"error code {code!r} is not a token", frame.device, frame.seq)
        # The text is the rest of the frame: commas in it are kept.
        return DeviceError(**common, code=code, text=",".join(frame.args[1:]))
    raise FrameError(BadReason.UNKNOWN, f"unknown message {msg!r}", frame.device, frame.seq)


class LineFramer:
    """Cuts a byte stream into frame candidates, with memory bounded by ``max_line``.

    :meth:`feed` returns ``(None, candidate)`` for each line that holds a
    frame candidate (from its last ``$``, CR and LF removed), and
    ``(reason, data)`` for rejected bytes: :attr:`BadReason.GARBAGE` for
    bytes before the ``$`` of a line (or a line without one; counted once
    per line), :attr:`BadReason.OVERLONG` for a frame longer than
    ``max_line`` (the rest of that line is dropped, up to the next LF).
    A ``$`` starts a frame wherever it appears, so a frame glued to noise
    without a newline in between still gets through.
    """

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self.lines = 0  # lines completed (LF seen), good or bad, blank ones excepted
        self._buf = bytearray()
        self._discarding = False  # inside an overlong line: drop until LF
        self._garbage_counted = False  # garbage of the current line already reported

    @property
    def buffered(self) -> int:
        """Bytes of the current, incomplete line held in memory (always below ``max_line``)."""
        return len(self._buf)

    def reset(self) -> None:
        """Forget the partial line (a new connection starts clean)."""
        self._buf.clear()
        self._discarding = False
        self._garbage_counted = False

    def feed(self, data: bytes) -> list[tuple[BadReason | None, bytes]]:
        """Add received bytes; return what the completed lines (and an overflowing tail) hold."""
        out: list[tuple[BadReason | None, bytes]] = []
        self._buf += data
        start = 0
        while (newline := self._buf.find(b"\n", start)) >= 0:
            self._line(bytes(self._buf[start:newline]), out)
            start = newline + 1
        del self._buf[:start]
        if len(self._buf) >= self.max_line:
            self._overflow(out)
        return out

    def _line(self, line: bytes, out: list[tuple[BadReason | None, bytes]]) -> None:
        garbage_counted, self._garbage_counted = self._garbage_counted, False
        if self._discarding:  # the end of an overlong line, already reported
            self._discarding = False
            self.lines += 1
            return
        length_with_lf = len(line) + 1
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line:
            if garbage_counted:
                self.lines += 1
            return
        self.lines += 1
        dollar = line.rfind(b"$")
        if dollar < 0:
            if not garbage_counted:
                out.append((BadReason.GARBAGE, line[: self.max_line]))
            return
        if dollar > 0 and not garbage_counted:
            out.append((BadReason.GARBAGE, line[:dollar][: self.max_line]))
        if length_with_lf - dollar > self.max_line:
            out.append((BadReason.OVERLONG, line[dollar:][: self.max_line]))
            return
        out.append((None, line[dollar:]))

    def _overflow(self, out: list[tuple[BadReason | None, bytes]]) -> None:
        # No LF in the buffer and it can no longer end as a valid line.
        buf = self._buf
        if self._discarding:
            buf.clear()
            return
        dollar = buf.rfind(b"$")
        if dollar != 0:
            if not self._garbage_counted:
                end = dollar if dollar > 0 else len(buf)
                out.append((BadReason.GARBAGE, bytes(buf[:end][: self.max_line])))
                self._garbage_counted = True
            if dollar < 0:
                buf.clear()
                return
            del buf[:dollar]
        if len(buf) >= self.max_line:
            out.append((BadReason.OVERLONG, bytes(buf[: self.max_line])))
            buf.clear()
            self._discarding = True


class ProtocolAdapter(Protocol):
    """What the serial driver needs from a protocol: the open one, or a vendor's.

    The driver calls :meth:`connection_made` after opening the port (and
    writes the bytes it returns, e.g. a probe), :meth:`data_received` with
    every chunk read, writes :meth:`data_to_send` after each chunk, calls
    :meth:`probe` when the device has been quiet for half the heartbeat
    timeout, and :meth:`connection_lost` after closing. ``lines`` counts
    the units received (lines, packets) for the health rate. None of these
    may block or do I/O.
    """

    lines: int

    def connection_made(self) -> bytes: ...

    def data_received(self, data: bytes, now: float) -> list[Observation | BadFrame]: ...

    def data_to_send(self) -> bytes: ...

    def probe(self) -> bytes: ...

    def connection_lost(self) -> None: ...


class HostProtocol:
    """The host end of the open protocol (see the module docstring).

    Acknowledges every good event frame, repeats included (a repeat means
    our ACK was lost), and reports a repeat within :data:`DUPLICATE_WINDOW`
    seconds as a :attr:`BadReason.DUPLICATE` bad frame instead of delivering
    it twice. NAKs a frame whose header is readable but whose message is
    unknown or whose arguments are bad, so the device stops repeating it.
    The duplicate memory survives reconnects: a device repeats an event
    after a replug with the same seq. It starts empty; a host that journals
    events hands it those kept before it started (:meth:`remember_event`),
    so that it survives a restart of the host too.

    With a ``binding``, a frame from an id the link is not configured for is
    refused as :attr:`BadReason.IDENTITY` and not answered (it is nobody
    this host talks to, and answering an echo would feed it), and a
    configured device's message, seat or kind that it may not send is
    refused as :attr:`BadReason.FORBIDDEN` (NAKed when it is an event).
    Without one (a bare driver in a test or a tool) every id is heard.
    """

    def __init__(self, *, max_line: int = MAX_LINE, duplicate_window: float = DUPLICATE_WINDOW,
                 binding: LinkBinding | None = None, naks_per_second: float = NAKS_PER_SECOND) -> None:
        self.framer = LineFramer(max_line)
        self.duplicate_window = duplicate_window
        self.binding = binding
        self.naks_per_second = naks_per_second
        self._nak_budget = naks_per_second  # a token bucket: a burst of that many, then that many a second
        self._nak_time: float | None = None
        self.naks_withheld = 0  # NAKs not sent because the bucket was empty
        self.device_id: str | None = None  # the last (configured) device id heard on this link
        self._seen: dict[str, OrderedDict[int, float]] = {}
        self._out: list[tuple[tuple[str, int] | None, bytes]] = []  # (event acknowledged, frame) to send
        self._tx_seq = 0

    @property
    def lines(self) -> int:
        """Lines received so far (for the health rate)."""
        return self.framer.lines

    # -- the ProtocolAdapter interface ---------------------------------------------------------

    def connection_made(self) -> bytes:
        """Start a new connection clean and ask the device who it is (it answers PING with HELLO).

        The port's open flushes whatever the device said before, HELLO
        included, so the host asks instead of waiting for the next power-up.
        """
        self.framer.reset()
        self._out.clear()
        return self.probe()

    def probe(self) -> bytes:
        """A PING frame to whoever is on the link (the device may have been swapped since we last heard it)."""
        return self._host_frame(BROADCAST, "PING")

    def connection_lost(self) -> None:
        """Drop the partial line and unsent replies; keep the duplicate memory."""
        self.framer.reset()
        self._out.clear()

    def data_to_send(self) -> bytes:
        """The ACK and NAK frames produced since the last call (empty when none)."""
        out = b"".join(frame for _, frame in self._out)
        self._out.clear()
        return out

    def withdraw(self, observation: Observation) -> None:
        """The host could not keep this event (its journal failed): take back its ACK, not yet sent, and
        forget its seq, so the device repeats it and the repeat is delivered, not dropped as a duplicate."""
        key = (observation.device, observation.seq)
        self._out = [(acked, frame) for acked, frame in self._out if acked != key]
        seen = self._seen.get(observation.device)
        if seen is not None:
            seen.pop(observation.seq, None)

    def remember_event(self, device: str, seq: int, received: float) -> None:
        """An event frame ``seq`` of ``device`` that the host kept at time ``received`` (in the clock of ``now``)
        before this protocol existed (journalled by a service that then stopped): a repeat of it within
        :attr:`duplicate_window` of ``received`` is acknowledged again and not delivered. Call it before the
        first :meth:`data_received`, oldest first."""
        self._remember(device, seq, received)

    def data_received(self, data: bytes, now: float) -> list[Observation | BadFrame]:
        """Parse received bytes; never raises. Good observations and rejections come in stream order."""
        out: list[Observation | BadFrame] = []
        for reason, chunk in self.framer.feed(data):
            if reason is not None:
                out.append(self._bad(BadFrame(reason, f"{reason.value} bytes", chunk, now)))
                continue
            out.append(self._frame(chunk, now))
        return out

    # -- internals -----------------------------------------------------------------------------

    def _frame(self, chunk: bytes, now: float) -> Observation | BadFrame:
        try:
            frame = decode_frame(chunk)
        except FrameError as error:
            return self._bad(BadFrame(error.reason, error.detail, chunk, now, error.device, error.seq))
        binding = self.binding
        if binding is not None:
            why = binding.refuse_id(frame.device)
            if why is not None:
                return self._bad(BadFrame(BadReason.IDENTITY, why, chunk, now, frame.device, frame.seq))
            why = binding.refuse_message(frame.device, frame.msg)
            if why is not None:
                return self._forbidden(frame, why, chunk, now, frame.msg in EVENT_MESSAGES)
        self.device_id = frame.device
        if frame.msg in EVENT_MESSAGES and self._is_duplicate(frame, now):
            self._reply(frame.device, "ACK", frame.seq, acked=(frame.device, frame.seq))
            return self._bad(
                BadFrame(BadReason.DUPLICATE, f"repeat of seq {frame.seq}", chunk, now, frame.device, frame.seq)
            )
        try:
            observation = to_observation(frame, now)
        except FrameError as error:
            # Never answer a host message (ACK, NAK, PING): on a line that echoes it is our own frame coming
            # back, and a NAK to it would come back too, for ever, as fast as the line goes. Other refusals
            # are NAKed at most naks_per_second: a device repeats what it was not answered.
            if frame.msg not in HOST_MESSAGES and self._may_nak(now):
                self._reply(frame.device, "NAK", frame.seq, error.reason.value)
            return self._bad(BadFrame(error.reason, error.detail, chunk, now, frame.device, frame.seq))
        if binding is not None:
            why = binding.refuse(observation)
            if why is not None:
                return self._forbidden(frame, why, chunk, now, observation.is_event)
        if observation.is_event:
            self._remember(frame.device, frame.seq, now)
            self._reply(frame.device, "ACK", frame.seq, acked=(frame.device, frame.seq))
        return observation

    def _forbidden(self, frame: Frame, why: str, chunk: bytes, now: float, is_event: bool) -> BadFrame:
        if is_event and self._may_nak(now):  # refused for good: the device must not repeat it
            self._reply(frame.device, "NAK", frame.seq, BadReason.FORBIDDEN.value)
        return self._bad(BadFrame(BadReason.FORBIDDEN, why, chunk, now, frame.device, frame.seq))

    def _may_nak(self, now: float) -> bool:
        if self._nak_time is not None:
            elapsed = max(0.0, now - self._nak_time)
            self._nak_budget = min(self.naks_per_second, self._nak_budget + elapsed * self.naks_per_second)
        self._nak_time = now
        if self._nak_budget >= 1:
            self._nak_budget -= 1
            return True
        self.naks_withheld += 1
        return False

    def _bad(self, bad: BadFrame) -> BadFrame:
        log.debug("bad frame (%s): %s %r", bad.reason.value, bad.detail, bad.data[:64])
        return bad

    def _is_duplicate(self, frame: Frame, now: float) -> bool:
        seen = self._seen.get(frame.device)
        if not seen:
            return False
        while seen:  # forget what is older than the window (entries are in arrival order)
            seq, first = next(iter(seen.items()))
            if now - first <= self.duplicate_window:
                break
            del seen[seq]
        first = seen.get(frame.seq)
        return first is not None and now - first <= self.duplicate_window

    def _remember(self, device: str, seq: int, now: float) -> None:
        seen = self._seen.setdefault(device, OrderedDict())
        seen.pop(seq, None)
        seen[seq] = now
        while len(seen) > 1024:  # bound memory against a device that floods events
            seen.popitem(last=False)

    def _reply(self, device: str, msg: str, *args: object, acked: tuple[str, int] | None = None) -> None:
        self._out.append((acked, self._host_frame(device, msg, *args)))

    def _host_frame(self, device: str, msg: str, *args: object) -> bytes:
        seq, self._tx_seq = self._tx_seq, (self._tx_seq + 1) % SEQ_MODULO
        return encode(device, seq, msg, *args)
