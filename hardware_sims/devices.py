"""Serial devices simulated on real pseudo-terminals: an automatic table and seat button panels (the stick
tray reader, :class:`~hardware_sims.sticks.StickTray`, builds on the same class).

A :class:`PtyDevice` opens a pty pair with ``os.openpty`` and speaks the
open protocol (``docs/serial-protocol.md``) from the master side, exactly as
firmware would on a USB serial adapter: HELLO at power-up, after a replug and
in answer to PING; a heartbeat every ``heartbeat_interval``; events repeated
every ``resend_interval`` until acknowledged, at most ``max_resends`` times,
with the same seq; one event in flight at a time, so they arrive in order.

The host side opens ``link_path``, a symlink to the pty's slave end that the
device keeps pointing at its current pty, like a udev ``/dev/serial/by-id``
link: a driver configured with that path survives an unplug and replug.
pyserial opens it as it would open hardware; nothing in the driver knows it is
talking to a simulator.

Faults on demand: :meth:`noise`, :meth:`bad_checksum_next`,
:meth:`overlong_line`, :meth:`stall`, :meth:`unplug` / :meth:`replug` and
:meth:`drop_acks` (ACKs lost on the way back).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
import tty
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from drivers.observations import Button, DeviceKind
from drivers.protocol import (
    BROADCAST,
    SEQ_MODULO,
    Frame,
    FrameError,
    LineFramer,
    decode_frame,
    encode,
)

__all__ = ["PtyDevice"]

log = logging.getLogger(__name__)

_KIND_EVENTS = {
    DeviceKind.TABLE: frozenset({"DICE", "WALL", "HAND"}),
    DeviceKind.PANEL: frozenset({"BTN"}),
    DeviceKind.STICKS: frozenset({"TRAYS"}),
}
_ALL_EVENTS = frozenset().union(*_KIND_EVENTS.values())


@dataclass
class _Pending:
    """An event the host has not acknowledged yet."""

    seq: int
    line: bytes
    sends: int = 0
    sent_at: float | None = None


class PtyDevice:
    """An automatic table (``kind="table"``: dice, walls, hand start) or a seat panel (``"panel"``: buttons).

    Use as a context manager, or :meth:`start` / :meth:`stop`. The event
    methods return the seq of the event, which :meth:`wait_acked` and the
    observations on the host side carry too.
    """

    def __init__(
        self,
        device_id: str,
        kind: DeviceKind | str,
        link_path: str | os.PathLike[str],
        *,
        model: str = "sim",
        firmware: str = "1.0",
        heartbeat_interval: float = 1.0,
        resend_interval: float = 0.5,
        max_resends: int = 3,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        encode(device_id, 0, "HB")  # validates the id early, with the protocol's own rule
        self.device_id = device_id
        self.kind = DeviceKind(kind)
        self.link_path = Path(link_path)
        self.model = model
        self.firmware = firmware
        self.heartbeat_interval = heartbeat_interval
        self.resend_interval = resend_interval
        self.max_resends = max_resends
        self._clock = clock

        self._lock = threading.Condition()  # guards everything below; notified when an ACK/NAK arrives
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._master: int | None = None
        self._slave: int | None = None
        self._slave_path: str | None = None
        self._framer = LineFramer()
        self._seq = 0
        self._queue: deque[_Pending] = deque()  # events in order; the head is in flight
        self._next_heartbeat = 0.0
        self._stalled_until = 0.0
        self._corrupt_next = False
        self._acks_to_drop = 0
        self._flooding = False  # flood() is putting bytes on the line: the device's own frames wait

        #: seqs of events the host acknowledged / refused (seq -> reason) / that were given up
        self.acked: set[int] = set()
        self.naked: dict[int, str] = {}
        self.given_up: set[int] = set()
        #: transmissions of an event beyond its first
        self.resends = 0
        #: frames received from the host (ACK, NAK, PING), most recent last
        self.received: deque[Frame] = deque(maxlen=256)

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        """Power up: create the pty and the link, say HELLO, start heartbeats."""
        if self._thread is not None:
            raise RuntimeError(f"device {self.device_id} already started")
        with self._lock:
            self._plug()
        self._thread = threading.Thread(target=self._run, name=f"pty-{self.device_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Power down: stop the thread, close the pty, remove the link."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        with self._lock:
            self._unplug()

    def __enter__(self) -> PtyDevice:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def slave_path(self) -> str | None:
        """The current pty slave (``/dev/pts/N``), or None while unplugged."""
        return self._slave_path

    @property
    def plugged(self) -> bool:
        """True while the pty exists."""
        return self._master is not None

    # -- events ----------------------------------------------------------------------------------

    def roll_dice(self, d1: int, d2: int) -> int:
        """The table rolled its dice."""
        return self.send_event("DICE", d1, d2)

    def wall_ready(self) -> int:
        """The walls are built and pushed up."""
        return self.send_event("WALL")

    def hand_started(self) -> int:
        """The dealer may take tiles."""
        return self.send_event("HAND")

    def press(self, seat: int, button: Button | str) -> int:
        """A player pressed ``button`` on the panel at ``seat`` (0..3)."""
        return self.send_event("BTN", seat, Button(button))

    def send_event(self, msg: str, *args: object) -> int:
        """Queue an event (any message, for protocol tests) and send it as soon as the link allows.

        The wire allows one event in flight: this one goes out when those
        before it are acknowledged, refused or given up.
        """
        if msg in _ALL_EVENTS - _KIND_EVENTS[self.kind]:
            raise ValueError(f"a {self.kind.value} does not send {msg}")
        with self._lock:
            seq = self._next_seq()
            self._queue.append(_Pending(seq, encode(self.device_id, seq, msg, *args)))
            self._pump(self._clock())
            return seq

    def send_error(self, code: str, text: str = "") -> int:
        """Report a device fault (not an event: sent once, not acknowledged)."""
        with self._lock:
            return self._frame("ERR", code, text)

    # -- faults ----------------------------------------------------------------------------------

    def noise(self, data: bytes) -> None:
        """Put raw bytes on the line (a glitch, a partial line, a wrong baud rate)."""
        with self._lock:
            self._write(data)

    def flood(self, data: bytes, timeout: float = 60.0) -> None:
        """Put all of ``data`` on the line as fast as the host reads it, as a UART with hardware flow control
        would: nothing is lost however slow the host is. The lock is let go while the line is full, so the
        device's own thread keeps reading the host's ACKs meanwhile (held, the host would block writing them
        and stop reading); the device sends no frame of its own until the flood is on the line (one written
        while the kernel has taken half a flooded frame would cut both). Raises ``TimeoutError`` if the host
        has not read it all within ``timeout`` seconds."""
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        with self._lock:
            self._flooding = True
        try:
            while view:
                with self._lock:
                    master = self._master
                    if master is None:
                        raise RuntimeError(f"device {self.device_id} is unplugged: nothing can be put on its line")
                    try:
                        written = os.write(master, view)
                    except BlockingIOError:
                        written = 0
                view = view[written:]
                if view:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"device {self.device_id}: the host left {len(view)} bytes unread "
                                           f"for {timeout:g} s")
                    with contextlib.suppress(OSError, ValueError):  # unplugged meanwhile: the loop says so
                        select.select([], [master], [], 0.1)
        finally:
            with self._lock:
                self._flooding = False

    def bad_checksum_next(self) -> None:
        """The next frame sent (heartbeat or event) carries a wrong checksum."""
        with self._lock:
            self._corrupt_next = True

    def overlong_line(self) -> None:
        """Send a frame-looking line longer than the protocol's maximum."""
        with self._lock:
            self._write(b"$" + self.device_id.encode() + b",0,ERR,X," + b"A" * 200 + b"*00\r\n")

    def stall(self, seconds: float) -> None:
        """Hang for ``seconds`` from now: no bytes at all (no heartbeats, no replies, events held)."""
        with self._lock:
            self._stalled_until = self._clock() + seconds

    def drop_acks(self, count: int = 1) -> None:
        """The next ``count`` ACKs are lost on the way: the device repeats the event."""
        with self._lock:
            self._acks_to_drop += count

    def unplug(self) -> None:
        """Pull the cable: close the pty (the host's reads fail) and remove the link."""
        with self._lock:
            self._unplug()

    def replug(self) -> None:
        """Plug back in: a new pty, the link moved to it, HELLO again. Queued events follow."""
        with self._lock:
            self._unplug()
            self._plug()

    # -- observing the device from a test ---------------------------------------------------------

    def pending(self) -> list[int]:
        """Seqs of the events not yet acknowledged, in order (the first is in flight)."""
        with self._lock:
            return [p.seq for p in self._queue]

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` (evaluated under the device's lock) holds; False on timeout."""
        with self._lock:
            return self._lock.wait_for(predicate, timeout)

    def wait_acked(self, seq: int, timeout: float = 5.0) -> bool:
        """Wait until the host acknowledged event ``seq``."""
        return self.wait_for(lambda: seq in self.acked, timeout)

    # -- internals (called with the lock held) ---------------------------------------------------

    def _next_seq(self) -> int:
        seq, self._seq = self._seq, (self._seq + 1) % SEQ_MODULO
        return seq

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no CR/LF translation: a pty in cooked mode would echo our frames back
        os.set_blocking(master, False)  # a full pty buffer drops bytes, as a UART nobody reads would
        self._master, self._slave, self._slave_path = master, slave, os.ttyname(slave)
        self.link_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.link_path.with_name(f".{self.link_path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        temporary.symlink_to(self._slave_path)
        os.replace(temporary, self.link_path)  # atomic: the link is never missing while plugged
        self._framer.reset()
        log.info("device %s plugged at %s -> %s", self.device_id, self.link_path, self._slave_path)
        self._hello()

    def _unplug(self) -> None:
        if self._master is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.link_path.unlink()
        for fd in (self._master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._master = self._slave = self._slave_path = None
        log.info("device %s unplugged", self.device_id)

    def _can_send(self, now: float) -> bool:
        return self._master is not None and now >= self._stalled_until and not self._flooding

    def _write(self, data: bytes) -> None:
        if self._master is None:
            return
        try:
            os.write(self._master, data)
        except OSError as error:  # full buffer or hung up: the bytes are lost, as on a real wire
            log.debug("device %s: write lost (%s)", self.device_id, error)

    def _send_line(self, line: bytes) -> None:
        if self._corrupt_next:
            self._corrupt_next = False
            star = line.rindex(b"*")
            wrong = int(line[star + 1 : star + 3], 16) ^ 0x5A
            line = line[: star + 1] + b"%02X\r\n" % wrong
        self._write(line)

    def _frame(self, msg: str, *args: object) -> int:
        seq = self._next_seq()
        if self._can_send(self._clock()):
            self._send_line(encode(self.device_id, seq, msg, *args))
        return seq

    def _hello(self) -> None:
        self._frame("HELLO", self.kind.value, self.model, self.firmware)

    def _pump(self, now: float) -> None:
        """Send the head event if it is due: first send, or a repeat; give up after the last repeat."""
        while self._queue and self._can_send(now):
            head = self._queue[0]
            if head.sent_at is not None and now - head.sent_at < self.resend_interval:
                return
            if head.sends > self.max_resends:
                self._queue.popleft()
                self.given_up.add(head.seq)
                log.warning("device %s: event seq %d never acknowledged; given up", self.device_id, head.seq)
                self._lock.notify_all()
                continue
            if head.sends:
                self.resends += 1
                self._lock.notify_all()  # a test waiting for the repeat (wait_for on resends) wakes now
            head.sends += 1
            head.sent_at = now
            self._send_line(head.line)
            return

    def _settle(self, seq: int) -> bool:
        if self._queue and self._queue[0].seq == seq:
            self._queue.popleft()
            return True
        return False

    def _host_frame(self, frame: Frame, now: float) -> None:
        if frame.device not in (self.device_id, BROADCAST):
            return
        self.received.append(frame)
        if frame.msg == "PING":
            if self._can_send(now):
                self._hello()
        elif frame.msg == "ACK" and frame.args and frame.args[0].isdigit():
            if self._acks_to_drop > 0:
                self._acks_to_drop -= 1
                return
            seq = int(frame.args[0])
            if self._settle(seq):
                self.acked.add(seq)
        elif frame.msg == "NAK" and frame.args and frame.args[0].isdigit():
            seq = int(frame.args[0])
            if self._settle(seq):
                self.naked[seq] = frame.args[1] if len(frame.args) > 1 else ""
                log.warning("device %s: host refused seq %d: %s", self.device_id, seq, self.naked[seq])
        self._lock.notify_all()
        self._pump(now)

    def _received(self, data: bytes, now: float) -> None:
        for reason, candidate in self._framer.feed(data):
            if reason is not None:
                continue
            try:
                self._host_frame(decode_frame(candidate), now)
            except FrameError as error:
                log.debug("device %s: bad host frame: %s", self.device_id, error)

    # -- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            master = self._master
            if master is None:
                self._stop.wait(0.02)
            else:
                try:
                    readable, _, _ = select.select([master], [], [], 0.02)
                except (OSError, ValueError):  # closed by unplug() meanwhile
                    readable = []
                if readable:
                    with self._lock:
                        if self._master == master:  # still our pty (not unplugged since select)
                            try:
                                data = os.read(master, 4096)
                            except OSError:
                                data = b""
                            if data:
                                self._received(data, self._clock())
            with self._lock:
                now = self._clock()
                if self._can_send(now):
                    if now >= self._next_heartbeat:
                        self._next_heartbeat = now + self.heartbeat_interval
                        self._frame("HB")
                    self._pump(now)
