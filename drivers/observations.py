"""What the drivers tell the rest of the service: typed observations and device health.

An *observation* is one fact a device reported (dice rolled, a seat button
pressed ...), stamped with the monotonic time at which the bytes arrived and
with the device id the device gave itself on the wire. Parsers never read a
clock: the caller passes ``now`` in, so parsing is deterministic and testable.

*Health* is what a dashboard needs to see that a table went offline, a cable
is flaky (bad frames climbing) or a camera froze. It is published on change
and periodically, separately from the observations.

These are plain frozen dataclasses with no dependency on the engine: the
service maps them onto engine events (``DiceRolled`` here is what the table
*said*; the engine decides what it *means*).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar

__all__ = [
    "BadReason",
    "Button",
    "ButtonPressed",
    "CameraHealth",
    "DeviceError",
    "DeviceHealth",
    "DeviceHello",
    "DeviceKind",
    "DiceRolled",
    "HandStarted",
    "Heartbeat",
    "Observation",
    "TraysRead",
    "WallReady",
]


class DeviceKind(StrEnum):
    """What a serial device is; it says so in its HELLO."""

    TABLE = "table"  # automatic table: dice, walls, hand start
    PANEL = "panel"  # seat button panel (one per table, four seats)
    STICKS = "sticks"  # score stick tray reader: each seat's tray total and the riichi sticks on the table


class Button(StrEnum):
    """A seat panel button. The wire name is the enum value."""

    RON = "ron"
    TSUMO = "tsumo"
    RIICHI = "riichi"
    CHI = "chi"
    PON = "pon"
    KAN = "kan"
    TENPAI = "tenpai"
    NOTEN = "noten"
    NINE_TERMINALS = "nine_terminals"
    CONFIRM = "confirm"
    UNDO = "undo"


class BadReason(StrEnum):
    """Why a received line (or part of one) was rejected; health counts each reason."""

    CHECKSUM = "checksum"  # missing, malformed or wrong checksum: the bytes cannot be trusted
    GARBAGE = "garbage"  # bytes outside any frame (line noise, a partial line at connect)
    OVERLONG = "overlong"  # a frame longer than the maximum line; dropped up to the next newline
    MALFORMED = "malformed"  # checksum good but the header (device id, seq, message name) is not valid
    UNKNOWN = "unknown"  # a well-formed frame with a message this host does not know
    ARGUMENTS = "arguments"  # a known message with missing or invalid arguments
    DUPLICATE = "duplicate"  # a repeated event (same device and seq): acknowledged again, not delivered twice
    IDENTITY = "identity"  # a good frame from a device id not configured for this link: not answered, not delivered
    FORBIDDEN = "forbidden"  # a configured device sent what its kind may not (a table's BTN, a panel's other seat)


@dataclass(frozen=True, kw_only=True)
class Observation:
    """Base of every observation.

    ``device`` is the id the device sent in its frames, ``seq`` the frame's
    sequence number (0..65535, wrapping) and ``timestamp`` the monotonic
    time in seconds at which the host received it.
    """

    device: str
    seq: int
    timestamp: float

    #: Events are acknowledged by the host and repeated by the device until they are.
    is_event: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class DeviceHello(Observation):
    """The device identified itself (at power-up, after a replug, or in answer to PING)."""

    kind: DeviceKind
    model: str
    firmware: str


@dataclass(frozen=True, kw_only=True)
class Heartbeat(Observation):
    """The device is alive (sent every second); carries no information otherwise."""


@dataclass(frozen=True, kw_only=True)
class DiceRolled(Observation):
    """The automatic table rolled its dice."""

    d1: int
    d2: int
    is_event: ClassVar[bool] = True

    @property
    def total(self) -> int:
        """The sum that fixes the wall break."""
        return self.d1 + self.d2


@dataclass(frozen=True, kw_only=True)
class WallReady(Observation):
    """The walls are built and pushed up."""

    is_event: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class HandStarted(Observation):
    """Hand start: the dealer may take tiles."""

    is_event: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class ButtonPressed(Observation):
    """A player pressed a button on the seat panel (seat 0..3 as wired on the panel)."""

    seat: int
    button: Button
    is_event: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class TraysRead(Observation):
    """The score sticks settled: each seat's tray total in points (seat 0..3 as wired on the reader) and the
    riichi sticks (1,000 points each) lying on the table. An event: a reading the host missed would leave it
    comparing the game with trays that are no longer there."""

    trays: tuple[int, int, int, int]
    riichi: int
    is_event: ClassVar[bool] = True

    @property
    def total(self) -> int:
        """Every point on the table: the trays and the riichi sticks."""
        return sum(self.trays) + 1000 * self.riichi


@dataclass(frozen=True, kw_only=True)
class DeviceError(Observation):
    """The device reports a fault of its own (a jammed shuffler, a stuck button)."""

    code: str
    text: str


def _no_bad_frames() -> dict[str, int]:
    return {reason.value: 0 for reason in BadReason}


@dataclass(frozen=True, kw_only=True)
class DeviceHealth:
    """A snapshot of one serial driver's view of its device.

    ``connected`` is true while the port is open and the device has sent a
    valid frame within the heartbeat timeout; ``state`` says in words what
    is going on ("connected", "silent for 3.0 s", "open failed: ...").
    ``frames_bad`` has one counter per :class:`BadReason` value.
    ``last_seen`` and ``timestamp`` are monotonic seconds.
    """

    name: str
    connected: bool
    state: str
    frames_ok: int = 0
    frames_bad: dict[str, int] = field(default_factory=_no_bad_frames)
    lines_per_second: float = 0.0
    last_seen: float | None = None
    reconnects: int = 0
    timestamp: float = 0.0

    @property
    def bad_total(self) -> int:
        """All rejected frames, whatever the reason."""
        return sum(self.frames_bad.values())


@dataclass(frozen=True, kw_only=True)
class CameraHealth:
    """A snapshot of one camera driver.

    ``frames`` counts frames decoded, ``dropped`` those replaced by a newer
    frame before the consumer took them (latest-frame semantics), ``errors``
    failed opens and failed reads, ``fps`` the decode rate over the last
    seconds. ``last_frame`` and ``timestamp`` are monotonic seconds.
    """

    name: str
    source: str
    connected: bool
    state: str
    fps: float = 0.0
    frames: int = 0
    dropped: int = 0
    errors: int = 0
    reconnects: int = 0
    last_frame: float | None = None
    timestamp: float = 0.0
