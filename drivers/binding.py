"""Who may speak on a serial link, and what they may say: the link's binding, as pure code.

A serial link is wired to one kind of device. Anything on the wire can put
any device id in a frame (a second device on a shared bus, a miswired
cable, a test tool, an attacker with a USB adapter), so the host does not
take a frame's word for who sent it: each link is configured with the ids
that may speak on it, the kind of device they are, and (for a seat panel)
the seats it serves. A frame from another id is refused as
:attr:`~drivers.observations.BadReason.IDENTITY` (not answered: it is
nobody we talk to); a configured device that sends what its kind may not
(an automatic table pressing seat buttons, a panel rolling dice or pressing
for a seat it does not serve, a HELLO claiming another kind) is refused as
:attr:`~drivers.observations.BadReason.FORBIDDEN` (an event is NAKed so the
device does not repeat it). Neither ever reaches the game.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drivers.observations import ButtonPressed, DeviceHello, DeviceKind, Observation

__all__ = ["KIND_MESSAGES", "LinkBinding"]

#: The device -> host messages each kind of device may send.
KIND_MESSAGES: dict[DeviceKind, frozenset[str]] = {
    DeviceKind.TABLE: frozenset({"HELLO", "HB", "ERR", "DICE", "WALL", "HAND"}),
    DeviceKind.PANEL: frozenset({"HELLO", "HB", "ERR", "BTN"}),
    DeviceKind.STICKS: frozenset({"HELLO", "HB", "ERR", "TRAYS"}),
}


@dataclass(frozen=True)
class LinkBinding:
    """The ids configured for one link, their kind, and the seats a panel serves (0..3)."""

    kind: DeviceKind
    ids: frozenset[str]
    seats: frozenset[int] = field(default=frozenset({0, 1, 2, 3}))

    def __post_init__(self) -> None:
        if not self.ids:
            raise ValueError("a link needs at least one device id")
        if not self.seats or not self.seats <= {0, 1, 2, 3}:
            raise ValueError(f"seats {sorted(self.seats)}: one or more of 0, 1, 2, 3")

    def refuse_id(self, device: str) -> str | None:
        """Why a frame with this device id is refused on this link, or None when the id is configured."""
        if device in self.ids:
            return None
        return f"device id {device!r} is not configured for this link (allowed: {', '.join(sorted(self.ids))})"

    def refuse_message(self, device: str, msg: str) -> str | None:
        """Why a configured device may not send ``msg`` (checked before its arguments), or None."""
        allowed = KIND_MESSAGES[self.kind]
        if msg in allowed or msg not in set().union(*KIND_MESSAGES.values()):
            return None  # allowed, or a message no device sends: the protocol refuses it as unknown
        return (f"{device} is configured as a {self.kind.value}, which does not send {msg} "
                f"(a {self.kind.value} sends {', '.join(sorted(allowed))})")

    def refuse(self, observation: Observation) -> str | None:
        """Why a parsed observation of a configured device is refused (wrong seat, wrong kind), or None."""
        if isinstance(observation, ButtonPressed) and observation.seat not in self.seats:
            seats = ", ".join(str(s) for s in sorted(self.seats))
            return f"{observation.device} pressed for seat {observation.seat}, but this panel serves seat(s) {seats}"
        if isinstance(observation, DeviceHello) and observation.kind is not self.kind:
            return (f"{observation.device} says it is a {observation.kind.value}, but this link is configured for "
                    f"a {self.kind.value}")
        return None
