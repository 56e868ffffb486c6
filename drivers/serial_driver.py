"""The serial driver: one device behind a pyserial URL, supervised in its own thread.

The URL picks the transport exactly as in pyserial (``/dev/ttyUSB0``, a
symlink such as ``/dev/serial/by-id/...``, ``socket://host:port``,
``rfc2217://host:port``, ``loop://``), so hardware, a network serial server
and a simulator on a pseudo-terminal all take the same code path.

The thread opens the port, feeds what it reads to a protocol (by default
the open :class:`~drivers.protocol.HostProtocol`; a vendor adapter plugs in
through ``protocol_factory``), writes the protocol's replies (ACKs) back,
and hands every good observation to ``on_observation``. When the device
falls silent (no valid frame for ``heartbeat_timeout`` seconds; it is
probed with PING after half of that) or the port fails, the thread closes
it and reopens it with exponential backoff, forever, until :meth:`stop`.
Nothing escapes the thread: port errors become health states, a callback
that raises is logged.

Callbacks run in the driver's thread: keep them short (put the observation
on a queue). ``on_health`` is called when ``connected`` or ``state``
change, and every ``health_interval`` seconds.

With a ``binding`` (:class:`~drivers.binding.LinkBinding`) the link hears
only the ids configured for it, and only what their kind may send; each
refusal is counted in health and handed to ``on_refused`` (the first of a
kind at once, then at most one report per ``refusal_interval`` seconds per
reason (and per device for ``forbidden``; strangers share one), with the
count of those not reported, so a flood of spoofed frames cannot become a
flood of reports).

``on_observation`` may return ``False`` for an event the host could not
keep (its journal failed): the event's ACK is then withheld, so the device
repeats it, rather than acknowledged and lost.

``known_events`` are the events the host kept before this driver started
(journalled by a service that stopped, or died, before the device received
their ACK): ``(device id, seq, age in seconds)``. A protocol with
``remember_event`` (the open one) acknowledges a repeat of one of them
within its duplicate window again, without delivering it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import serial

from drivers.binding import LinkBinding
from drivers.observations import BadReason, DeviceHealth, Observation
from drivers.protocol import BadFrame, HostProtocol, ProtocolAdapter
from drivers.supervision import Backoff, DriverThreads, HealthReporter, RateMeter, call_guarded

__all__ = ["SerialDriver"]

log = logging.getLogger(__name__)


class SerialDriver(DriverThreads):
    """Reads one serial device and keeps reading it through silences, unplugs and errors.

    ``name`` names the driver in health and logs (the device's own id is in
    each observation). ``backoff`` is ``(first, longest)`` reconnect delay in
    seconds. ``poll_interval`` bounds how long a read blocks, hence how fast
    :meth:`stop` and silence detection react. ``serial_factory`` is
    ``serial.serial_for_url`` unless a test wants to inject a fault there.
    """

    def __init__(
        self,
        name: str,
        url: str,
        *,
        on_observation: Callable[[Observation], object],
        on_health: Callable[[DeviceHealth], object] | None = None,
        heartbeat_timeout: float = 3.0,
        backoff: tuple[float, float] = (0.2, 5.0),
        health_interval: float = 5.0,
        baudrate: int = 115200,
        protocol_factory: Callable[[], ProtocolAdapter] | None = None,
        binding: LinkBinding | None = None,
        on_refused: Callable[[BadFrame, int], object] | None = None,
        refusal_interval: float = 5.0,
        poll_interval: float = 0.1,
        write_timeout: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        serial_factory: Callable[..., Any] = serial.serial_for_url,
        known_events: Iterable[tuple[str, int, float]] = (),
    ) -> None:
        super().__init__("serial driver", log)
        if heartbeat_timeout <= 0 or health_interval <= 0 or poll_interval <= 0:
            raise ValueError("heartbeat_timeout, health_interval and poll_interval must be positive")
        self.name = name
        self.url = url
        self.heartbeat_timeout = heartbeat_timeout
        self.health_interval = health_interval
        self.baudrate = baudrate
        self.poll_interval = poll_interval
        self.write_timeout = write_timeout
        self._on_observation = on_observation
        self._protocol = protocol_factory() if protocol_factory is not None else HostProtocol(binding=binding)
        self._on_refused = on_refused
        self.refusal_interval = refusal_interval
        self._refusals: dict[tuple[str, str | None], tuple[float, int]] = {}  # (reason, id) -> (reported, held)
        self._backoff = Backoff(*backoff)
        self._clock = clock
        self._serial_factory = serial_factory
        remember = getattr(self._protocol, "remember_event", None)
        if remember is not None:
            now = clock()
            for device, seq, age in sorted(known_events, key=lambda known: -known[2]):  # oldest first
                remember(device, seq, now - max(0.0, age))

        self._lock = threading.Lock()  # guards the health fields below, read by health() from any thread
        self._frames_ok = 0
        self._frames_bad = {reason.value: 0 for reason in BadReason}
        self._last_seen: float | None = None
        self._reconnects = 0
        self._rate = RateMeter()
        self._reporter = HealthReporter(
            f"serial driver {self.name}", self.url, lock=self._lock, snapshot=self.health, on_health=on_health,
            interval=health_interval, clock=clock, logger=log,
            calm=frozenset({"stopped", "connecting", "opened, waiting for the device"}))

    # -- lifecycle -------------------------------------------------------------------------------

    def _thread_targets(self) -> list[tuple[str, Callable[[], None]]]:
        return [(f"serial-{self.name}", self._run)]

    # -- health ----------------------------------------------------------------------------------

    def health(self) -> DeviceHealth:
        """A snapshot of the driver's health, safe to call from any thread."""
        with self._lock:
            now = self._clock()
            return DeviceHealth(
                name=self.name,
                connected=self._reporter.connected,
                state=self._reporter.state,
                frames_ok=self._frames_ok,
                frames_bad=dict(self._frames_bad),
                lines_per_second=round(self._rate.rate(now, self._lines()), 3),
                last_seen=self._last_seen,
                reconnects=self._reconnects,
                timestamp=now,
            )

    def _lines(self) -> int:
        # An adapter without a line counter still gets a rate: frames good and bad.
        lines = getattr(self._protocol, "lines", None)
        return lines if isinstance(lines, int) else self._frames_ok + sum(self._frames_bad.values())

    # -- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._supervise()
        except Exception:  # never out of the thread; the loop below already catches per session
            log.exception("serial driver %s: supervisor failed", self.name)
        finally:
            with contextlib.suppress(Exception):
                self._reporter.set_state(False, "stopped")

    def _supervise(self) -> None:
        opened_before = False
        self._reporter.set_state(False, "connecting")
        while not self._stop.is_set():
            try:
                port = self._open()
                if port is not None:
                    if opened_before:
                        with self._lock:
                            self._reconnects += 1
                    opened_before = True
                    try:
                        if self._session(port):
                            self._backoff.reset()
                    finally:
                        self._close(port)
            except Exception:  # a bug somewhere below must not end the supervision
                log.exception("serial driver %s: unexpected error; reconnecting", self.name)
                self._reporter.set_state(False, "internal error (see log)")
            if not self._stop.is_set():
                self._wait(self._backoff.next_delay())

    def _wait(self, delay: float) -> None:
        deadline = self._clock() + delay
        while not self._stop.is_set():
            left = deadline - self._clock()
            if left <= 0:
                return
            self._stop.wait(min(left, self.poll_interval))
            self._reporter.report_if_due()

    def _open(self) -> Any | None:
        try:
            return self._serial_factory(
                self.url, baudrate=self.baudrate, timeout=self.poll_interval, write_timeout=self.write_timeout
            )
        except Exception as error:  # SerialException, OSError, ValueError (bad URL) alike: report, retry
            self._reporter.set_state(False, f"open failed: {error}")
            return None

    def _close(self, port: Any) -> None:
        with contextlib.suppress(Exception):
            port.close()
        with contextlib.suppress(Exception):
            self._protocol.connection_lost()

    def _session(self, port: Any) -> bool:
        """Read one open port until it fails, falls silent or the driver stops; True if it ever worked."""
        protocol = self._protocol
        worked = False
        try:
            self._reporter.set_state(False, "opened, waiting for the device")
            self._write(port, protocol.connection_made())
            last_good = self._clock()
            probed = False
            while not self._stop.is_set():
                data = port.read(port.in_waiting or 1)
                now = self._clock()
                if data and self._handle(port, protocol, data, now):
                    last_good, probed = now, False
                    if not worked:
                        worked = True
                        self._reporter.set_state(True, "connected")
                quiet = now - last_good
                if quiet >= self.heartbeat_timeout:
                    self._reporter.set_state(False, f"silent for {quiet:.1f} s")
                    return worked
                if quiet >= self.heartbeat_timeout / 2 and not probed:
                    self._write(port, protocol.probe())
                    probed = True
                self._reporter.report_if_due()
        except (serial.SerialException, OSError) as error:  # unplugged, hung up, write timeout
            self._reporter.set_state(False, f"port error: {error}")
        except Exception as error:  # a protocol adapter bug: log it, reopen, go on
            log.exception("serial driver %s: protocol failed", self.name)
            self._reporter.set_state(False, f"protocol error: {error}")
        return worked

    def _handle(self, port: Any, protocol: ProtocolAdapter, data: bytes, now: float) -> bool:
        """Parse, deliver, then acknowledge. True if a frame was good.

        Delivering first makes an ACK mean "the host has it": a device (or a
        simulator) that waits for the ACK before its next signal knows that
        signal cannot overtake this one on another channel (another device,
        the camera). Delivery is a queue put, so the device waits no longer.
        """
        items = protocol.data_received(data, now)
        good = False
        with self._lock:
            for item in items:
                if isinstance(item, BadFrame):
                    key = item.reason.value
                    self._frames_bad[key] = self._frames_bad.get(key, 0) + 1
                else:
                    self._frames_ok += 1
                    self._last_seen = now
                    good = True
        for item in items:
            if isinstance(item, BadFrame):
                if item.reason in (BadReason.IDENTITY, BadReason.FORBIDDEN):
                    self._refused(item, now)
                continue
            kept = call_guarded(log, f"serial driver {self.name}: on_observation", self._on_observation, item)
            if kept is False and item.is_event:
                withdraw = getattr(protocol, "withdraw", None)
                if withdraw is not None:
                    withdraw(item)
                log.warning("serial driver %s: %s seq %d not kept by the host; not acknowledged, the device "
                            "repeats it", self.name, type(item).__name__, item.seq)
        self._write(port, protocol.data_to_send())
        return good

    def _refused(self, bad: BadFrame, now: float) -> None:
        """Report a refused frame: the first of its (reason, device) at once, then one per interval."""
        level = logging.INFO  # the receiver of on_refused reports it; held-back ones only at DEBUG
        # strangers share one key: a stream of made-up ids must not become a stream of reports
        key = (bad.reason.value, None if bad.reason is BadReason.IDENTITY else bad.device)
        reported, held = self._refusals.get(key, (float("-inf"), 0))
        if now - reported < self.refusal_interval:
            self._refusals[key] = (reported, held + 1)
            level = logging.DEBUG
        else:
            self._refusals[key] = (now, 0)
            if self._on_refused is not None:
                call_guarded(log, f"serial driver {self.name}: on_refused", self._on_refused, bad, held)
        while len(self._refusals) > 256:  # bounded against a stream of made-up ids
            del self._refusals[next(iter(self._refusals))]
        log.log(level, "serial driver %s: refused (%s): %s", self.name, bad.reason.value, bad.detail)

    @staticmethod
    def _write(port: Any, data: bytes) -> None:
        if data:
            port.write(data)
