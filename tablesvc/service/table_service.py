"""The table service: devices and camera in, engine and journal in the middle, MQTT out.

One worker thread owns the game: every input (device observations, camera
observations, referee commands, device health, broker reconnections) goes
through one queue, so events are applied, journalled and published in one
order, and nothing else ever touches the engine. Drivers and the MQTT
client run their own threads and only put things on that queue.

Start order (Frigate's discipline): the table's lock first (a second
service on the same table refuses to start, naming the first), then journal
and engine (the game is resumed from disk; a damaged journal, or one of
another table, stops the start with a message; an empty one is compared with
what the broker retains, so that a lost journal never overwrites a game the
broker still shows), then the broker connection (the Last Will is set before
anything is published), then the worker, then the devices. Stop in reverse,
ending with a clean ``offline`` status.

Seat cameras (``[[camera]] kind = "hand"``): each has its driver and a
:class:`~tablesvc.service.seat_reader.SeatCameraReader` thread folding its frames with what the
engine knows of the seat (computed by the worker after every entry, handed over as an immutable
:class:`~vision.seat.consensus.SeatKnowledge`). Each changed reading goes to :attr:`private_hands`,
then through the queue to the worker, which keeps it in the journal's private readings and gives the
seats' sure hands to the broadcast (``broadcast/hands``). Nothing of it reaches the public state.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict
from typing import Any

from drivers.observations import CameraHealth, DeviceHealth, DeviceKind, Observation, TraysRead
from tablesvc.config import Config
from tablesvc.engine.clock import Clock
from tablesvc.engine.engine import Rejected, apply
from tablesvc.engine.events import Event, GameStart, TimeUp, to_dict
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.engine.state import Phase
from tablesvc.formats.mjai_live import MjaiStream, capture
from tablesvc.mqtt.link import IncomingMessage, MqttLink
from tablesvc.mqtt.payloads import hand_id, iso_time
from tablesvc.service.broadcast import Broadcast, HandsSeen
from tablesvc.service.bursts import BurstLimiter
from tablesvc.service.clock import ClockTimer
from tablesvc.service.commands import Commands
from tablesvc.service.fusion import UNDO, Fusion
from tablesvc.service.lock import TableLock
from tablesvc.service.publisher import Publisher
from tablesvc.service.red_fives import RedFiveWatch
from tablesvc.service.reply_route import PLAIN, ReplyRoute, reply_route
from tablesvc.service.seat_hands import PrivateHands, knowledge_of
from tablesvc.service.startup import BrokerNotAsked, JournalMissing, check_broker, open_journal
from tablesvc.service.stickwatch import StickWatch
from tablesvc.storage.journal import Entry, Journal, JournalError
from tablesvc.storage.table import Accepted, Table
from tablesvc.text import safe_text as safe
from vision.table.observations import CameraObservation

__all__ = ["JournalMissing", "TableService"]

log = logging.getLogger("tablesvc.service")  # the package's name: the table's own messages, parent of its parts

_STOP = object()
ACK_FLUSH_S = 0.5  # while inputs keep coming, the broker's acknowledgements are journalled at least this often
COMMAND_BURST = 10  # refused commands reported in full per sender and window; the rest are counted
COMMAND_WINDOW = 10.0  # seconds
COMMAND_SENDERS = 32  # senders counted apart in one window; more are counted together as "other senders"


class _Receipt:
    """Whether a device event was kept (journalled, or taken into account) by the worker: the driver
    acknowledges it to the device only then."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.kept = True


def _health_payload(health: DeviceHealth | CameraHealth, now: float, wall: float) -> dict[str, Any]:
    """A driver's health for the ``devices/<name>`` topic: monotonic stamps (``now`` is the monotonic clock at
    ``wall``) become wall-clock times (``last_seen``, retained, stays true when read later) and ages in
    seconds at ``ts``."""
    data = asdict(health)
    data.pop("name", None)
    data.pop("timestamp", None)
    data["ts"] = iso_time(wall)
    for key in ("last_seen", "last_frame"):
        if key in data:
            stamp = data.pop(key)
            data[key] = iso_time(wall - (now - stamp)) if stamp is not None else None
            data[f"{key}_ago"] = round(now - stamp, 3) if stamp is not None else None
    return data


class TableService:
    """One table: give it a :class:`~tablesvc.config.Config`, then :meth:`start` and :meth:`stop`."""

    def __init__(self, config: Config, *, wall_clock: Callable[[], float] = time.time,
                 link_factory: Callable[..., MqttLink] = MqttLink, new_game: bool = False,
                 ack_timeout: float = 10.0) -> None:
        """``new_game``: the operator's word (``tablesvc run --new-game``) that a damaged journal is set aside
        and a missing one started afresh even though the broker still shows a game of this table.
        ``ack_timeout``: how long a device event's acknowledgement waits for the worker at most."""
        self.config = config
        self.clock = wall_clock
        self.new_game = new_game
        self.ack_timeout = ack_timeout
        self.check_timeout = 10.0  # how long an empty journal's start waits for the broker to say what it holds
        self.lock = TableLock(config.table.data_dir, config.table.id)
        self.lock.acquire()  # raises TableLocked naming the service that holds the table
        try:
            self.journal, self.table = open_journal(config.table, new_game=new_game)
        except BaseException:
            self.lock.release()
            raise
        self.fusion = Fusion(lambda: self.table.state, self._would_accept)
        self.inbox: queue.Queue[Any] = queue.Queue()
        topics = config.topics
        self.topics = topics
        self._client_id = config.mqtt.client_id or f"tablesvc-{config.table.site}-{config.table.id}"
        self.link = link_factory(
            config.mqtt.url,
            client_id=self._client_id,
            on_connected=lambda: self.inbox.put(("resync",)),
            on_message=lambda msg: self.inbox.put(("cmd", msg)),
            on_refused=lambda mid, reason: self.inbox.put(("refused", mid, reason)),
            on_disconnected=lambda: self.inbox.put(("disconnected",)),
            subscriptions=(topics.cmd,),
            protocol=config.mqtt.protocol,
            ca_file=config.mqtt.ca_file,
            retain_as_published=True,  # a retained command is known as one when it is sent, too
            on_writes_refused=self._writes_refused,
        )
        self.publisher = Publisher(self.link, topics, self.journal, site=config.table.site, table=config.table.id)
        self.link.set_will(*self.publisher.status(False))  # the Last Will: 'offline', retained
        # the score sticks as a second witness, where a stick tray reader is wired (one per table)
        readers = [s.name for s in config.serial if s.binding.kind is DeviceKind.STICKS]
        self.sticks = StickWatch(readers[0], self.publisher.sticks, wall_clock=wall_clock) if readers else None
        if self.sticks is not None:
            self.sticks.resume(self.table.state)
            self.publisher.sticks_state = self.sticks.payload()
        self.commands = Commands(submit=self._submit_command, undo=self._undo, amend=self._amend,
                                 trays=self.sticks.trays if self.sticks else None,
                                 sticks=self.sticks.command if self.sticks else None,
                                 tokens=config.command_tokens, default_rules=config.table.rules,
                                 default_players=config.table.players, default_start=config.start,
                                 recall=lambda key: self.journal.recall(key),
                                 remember=self._remember_reply, now=self.clock)
        # the tournament clock's deadline is watched here; time-up is recorded by the worker like any input
        self.clock_timer = ClockTimer(self._running_clock, self.clock, lambda: self.inbox.put(("time_up",)))
        self.mjai = MjaiStream()
        # every hand on broadcast/hands, where the table knows them all (held back by the organiser's delay)
        self.broadcast = Broadcast(self._publish_hands, delay_s=config.broadcast_delay, clock=self.clock,
                                   store=config.table.data_dir / f"{config.table.id}.broadcast.sqlite3")
        self.drivers: list[Any] = []
        self.reader: Any = None
        # the seat cameras' readings: private (the journal and broadcast/hands only), kept per seat
        self.private_hands = PrivateHands()
        self.seat_readers: dict[int, Any] = {}  # seat -> tablesvc.service.seat_reader.SeatCameraReader
        self._seat_knowledge = self._knowledge() if config.seat_cameras else ()  # read by seat cameras only
        self._kept_hands: dict[int, tuple[str, dict[str, Any]]] = {}  # seat -> the last reading journalled
        self.snapshots: dict[str, Any] = {}  # camera name -> tablesvc.service.snapshots.Snapshots
        self._worker: threading.Thread | None = None
        self.processed = threading.Condition()
        self.failed = threading.Event()  # the service cannot go on (the broker refuses its writes): see failure
        self.failure: str | None = None
        self.inputs_done = 0
        self.red_fives = RedFiveWatch()  # a red five under a rule set without them: one alert a game
        self.red_fives.resume(self.journal.entries(), self.table.state.rules)  # warned before a restart: not again
        self.refusals = BurstLimiter()  # errors from the table: a few in full per source and second, then counted
        # refused commands: a few in full per sender and window, then counted (never each journalled and logged)
        self.command_refusals = BurstLimiter(burst=COMMAND_BURST, window=COMMAND_WINDOW, max_sources=COMMAND_SENDERS)
        self._sender = PLAIN  # who sent the command being carried out

    # ------------------------------------------------------------ lifecycle

    def start(self, stop: threading.Event | None = None) -> None:
        """Connect, start the worker and the drivers. The tile model is read first: a file that is no
        model raises ``ValueError`` before anything runs (the caller calls :meth:`stop` and reports it).
        With an empty journal the broker is asked first whether it still shows this table's game; given a
        ``stop`` event (``tablesvc run``), a broker that cannot be reached is asked again with backoff until it
        answers or ``stop`` is set, else :class:`~tablesvc.service.startup.BrokerNotAsked` is raised at once."""
        state = self.table.state
        log.info("table %s/%s: %d journal entries, game %s", self.config.table.site, self.config.table.id,
                 self.journal.last_seq, state.phase.value)
        if self.config.camera is not None:
            self.reader = self._camera_reader(self.config.camera)
        for seat_camera in self.config.seat_cameras:
            self.seat_readers[seat_camera.seat] = self._seat_reader(seat_camera)
        if not self.new_game:  # raises JournalMissing before anything is published
            self._check_broker(stop)
        self.link.start()
        self._worker = threading.Thread(target=self._run, name="table-worker", daemon=True)
        self._worker.start()
        self.clock_timer.start()
        known = self._known_device_events() if self.config.serial else []
        for serial in self.config.serial:
            from drivers.serial_driver import SerialDriver

            driver = SerialDriver(serial.name, serial.url, on_observation=self._device_observation,
                                  on_health=self._health, heartbeat_timeout=serial.heartbeat_timeout,
                                  binding=serial.binding, known_events=known,
                                  on_refused=lambda bad, held, link=serial.name: self.inbox.put(
                                      ("refused_frame", link, bad, held)))
            driver.start()
            self.drivers.append(driver)
        if self.config.camera is not None:
            from drivers.camera import CameraDriver

            on_frame = self._frame
            if self.reader is not None:
                self.reader.start()
                on_frame = self.reader.frame
            camera = CameraDriver(self.config.camera.name, self.config.camera.source, on_frame=on_frame,
                                  on_health=self._health)
            camera.start()
            self.drivers.append(camera)
        self._start_seat_cameras()

    def _known_device_events(self) -> list[tuple[str, int, float]]:
        """The device events journalled within the duplicate window before now, as (device, seq, age in s): a
        service that died after journalling one but before the device received its ACK is followed by this
        one, which must acknowledge the device's repeat again, not journal it twice. The window's rule is the
        protocol's (a seq seen again after it is a new event); the age is measured on the wall clock, the only
        one a restart keeps."""
        from drivers.protocol import DUPLICATE_WINDOW

        wall = self.clock()
        return [(device, seq, wall - ts) for device, seq, ts in
                self.journal.device_events(wall - DUPLICATE_WINDOW, wall + DUPLICATE_WINDOW)]

    def stop(self) -> None:
        self.clock_timer.stop()
        for driver in self.drivers:
            driver.stop()
        if self.reader is not None:
            self.reader.stop()
        for seat_reader in self.seat_readers.values():
            seat_reader.stop()
        self.inbox.put(("stopped",))  # retained device health would say 'connected' for ever otherwise
        self.inbox.put(_STOP)
        if self._worker is not None:
            self._worker.join(10)
        if self.link.connected.is_set() and not self.publisher.drain(3.0):
            log.info("stopping with events the broker has not acknowledged; they are sent at the next start")
        self.link.stop(final=self.publisher.status(False))
        self.journal.close()
        self.broadcast.close()
        self.lock.release()

    def _writes_refused(self, message: str) -> None:
        """The broker refuses this account's writes (another table's account): nothing can be published, so
        the service says so and ``tablesvc run`` stops."""
        self.failure = message
        self.failed.set()

    # ------------------------------------------------------------ inputs (any thread)

    def observe(self, observation: Observation | CameraObservation) -> None:
        self.inbox.put(("obs", observation))

    def _device_observation(self, observation: Observation) -> bool:
        """From a serial driver: an event is acknowledged to the device only once the worker has kept it
        (journalled it, or taken it into account); False when the journal could not take it, so that the
        device repeats it instead of believing it delivered."""
        if not observation.is_event:
            self.inbox.put(("obs", observation))
            return True
        receipt = _Receipt()
        self.inbox.put(("obs", observation, receipt))
        if not receipt.done.wait(self.ack_timeout):
            log.warning("device %s seq %d: not handled within %.0f s; acknowledged (it is queued)",
                        observation.device, observation.seq, self.ack_timeout)
            return True
        return receipt.kept

    def _frame(self, frame: object) -> None:
        """A camera frame with no calibration or tile set configured: it only keeps the camera's health."""

    def _camera_reader(self, cam: Any) -> Any:
        """Frames to observations, when the camera is calibrated and a tile set enrolled."""
        if cam.calibration is None or (cam.tiles is None and cam.model is None):
            log.warning("camera %s: no calibration and tile set configured; its frames are not read", cam.name)
            return None
        from tablesvc.service.camera_reader import CameraReader
        from vision.naming.classifier import TileClassifier
        from vision.photos.finder import finder_or_none
        from vision.table.calibration import Calibration
        from vision.table.pipeline import FramePipeline
        from vision.table.tracking import ZoneTracker

        classifier = TileClassifier.from_files(cam.model, cam.tiles)
        calibration = Calibration.load(cam.calibration)
        pipeline = FramePipeline(calibration, None, classifier, finder=finder_or_none())
        snapshots = self.camera_snapshots(cam.name, calibration, pipeline.geometry, cam.snapshot_interval)
        return CameraReader(pipeline, ZoneTracker(cam.name), self.observe,
                            on_read=snapshots.frame if snapshots is not None else None)

    def _seat_reader(self, cam: Any) -> Any:
        """A seat camera's reader thread (not started): its calibration and the club's set read now, so that a
        file that is no calibration or model stops the start with a message (``ValueError``)."""
        from tablesvc.service.seat_reader import SeatCameraReader
        from vision.naming.classifier import TileClassifier
        from vision.seat.calibration import SeatCalibration
        from vision.seat.reader import SeatReader

        calibration = SeatCalibration.load(cam.calibration)
        try:
            namer = TileClassifier.from_files(cam.model, cam.tiles)
        except (OSError, ValueError) as exc:
            raise ValueError(f"seat camera {cam.name}: cannot read its tile set: {exc}") from None
        return SeatCameraReader(cam.seat, SeatReader(namer, calibration),
                                lambda seat=cam.seat: self._seat_knowledge[seat], self.private_hands.update)

    def _start_seat_cameras(self) -> None:
        """Each seat camera: its reader takes up the seat's last reading kept in the journal (a restart in the
        middle of a hand), then its thread and its driver start. A camera that cannot be opened is a health
        error on ``devices/<name>``; the game goes on without it."""
        if not self.seat_readers:
            return
        from drivers.camera import CameraDriver
        from vision.seat.consensus import HandReading

        self.private_hands.subscribe(lambda reading: self.inbox.put(("private_hand", reading)))
        self._kept_hands = self.journal.private_hands()
        for cam in self.config.seat_cameras:
            reader = self.seat_readers[cam.seat]
            kept = self._kept_hands.get(cam.seat)
            if kept is not None:
                try:
                    reader.resume(HandReading.from_dict(kept[1], hand_id=kept[0]))
                except ValueError as exc:
                    log.warning("seat camera %s: the kept reading cannot be read (%s); reading afresh", cam.name, exc)
            reader.start()
            driver = CameraDriver(cam.name, cam.source, on_frame=reader.frame, on_health=self._health)
            driver.start()
            self.drivers.append(driver)

    def _knowledge(self) -> tuple[Any, ...]:
        """What the engine knows of each seat for the seat cameras (worker thread; each is immutable)."""
        state = self.table.state
        hand = hand_id(state) if state.hand is not None else ""
        return tuple(knowledge_of(state, seat, hand) for seat in range(4))

    def _private_hand(self, reading: Any) -> None:
        """A seat camera's changed reading (worker thread): kept in the journal's private readings, and every
        seat's sure hand given to the broadcast."""
        kept = (reading.hand_id, reading.as_dict())
        if reading.hand_id and self._kept_hands.get(reading.seat) != kept:
            try:
                self.journal.note_private_hand(reading.seat, reading.hand_id, kept[1], self.clock())
                self._kept_hands[reading.seat] = kept
            except JournalError as exc:  # a reading is no move of the game: the game goes on
                log.error("cannot keep seat %s's hand reading in the journal: %s", "ESWN"[reading.seat], exc)
        self.broadcast.hands(self.private_hands.seen())
        self.broadcast.changed(self.table.state, self.journal.last_seq, self.clock())

    def camera_snapshots(self, name: str, calibration: Any, geometry: Any = None, interval: float = 5.0) -> Any:
        """The annotated snapshots of camera ``name`` (``interval`` seconds apart, 0: none), published retained
        on ``camera/<name>/snapshot``; also at once when the engine refuses what this camera reported."""
        if interval <= 0:
            return None
        from tablesvc.service.snapshots import Snapshots

        topic = self.topics.camera_snapshot(name)
        snapshots = Snapshots(name, calibration, geometry, lambda payload: self.inbox.put(("snapshot", topic, payload)),
                              interval=interval)
        self.snapshots[name] = snapshots
        return snapshots

    def _health(self, health: DeviceHealth | CameraHealth) -> None:
        self.inbox.put(("health", health))

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until every input queued so far has been handled (for the demo and tests): woken by the worker's
        last ``task_done``, as ``Queue.join`` is, but with a timeout."""
        done = self.inbox.all_tasks_done
        with done:
            return done.wait_for(lambda: not self.inbox.unfinished_tasks, timeout)

    # ------------------------------------------------------------ the worker

    def _run(self) -> None:
        # Acknowledgements are written to the journal when the worker is idle, or at least every
        # ACK_FLUSH_S while it is busy, not after every input: each write is an fsync, and one after every
        # command delayed the next (a referee sending commands one by one) by that fsync.
        last_flush = time.monotonic()
        while True:
            try:
                item = self.inbox.get(timeout=0.05)
            except queue.Empty:
                self._flush()
                last_flush = time.monotonic()
                continue
            try:
                if item is _STOP:
                    self._flush()
                    return
                self._dispatch(item)
            except Exception:  # the worker must survive anything a single input does
                log.exception("error while handling %r", item[0] if isinstance(item, tuple) else item)
            finally:
                if time.monotonic() - last_flush >= ACK_FLUSH_S:
                    self._flush()
                    last_flush = time.monotonic()
                self.inbox.task_done()

    def submit(self, event: Event, source: str) -> None:
        """An event from a source that is neither a device nor a referee (``tablesvc replay --feed``), handled
        by the worker like any input (any thread; a refusal is published on ``errors``)."""
        self.inbox.put(("event", event, source))

    def broadcast_drained(self, timeout: float, stop: threading.Event | None = None) -> bool:
        """Wait until the broadcast holds nothing back (at most ``timeout`` seconds, or until ``stop``)."""
        deadline = time.monotonic() + timeout
        while self.broadcast.waiting:
            if time.monotonic() > deadline or (stop is not None and stop.wait(0.05)):
                return False
            if stop is None:
                time.sleep(0.05)
        return True

    def hands(self, seen: HandsSeen) -> None:
        """A full-information source's view of every hand (any thread): the one way hands come in for the
        broadcast, besides those the engine knows itself."""
        self.inbox.put(("hands", seen))

    def _publish_hands(self, payload: dict[str, Any]) -> bool:
        return self.link.publish(self.topics.broadcast_hands, json.dumps(payload, separators=(",", ":")).encode(),
                                 qos=1, retain=True) is not None

    def _flush(self) -> None:
        try:
            self.broadcast.due()
        except Exception:
            log.exception("cannot publish the broadcast's hands")
        if self.sticks is not None:
            self.sticks.tick()  # a difference held still for the grace is raised
        try:
            self.publisher.flush_acks()
        except Exception:
            log.exception("cannot record the broker's acknowledgements in the journal")
        for summary in self.refusals.due():
            text = (f"{summary.count} more refused from {summary.source} in {summary.seconds:.1f} s "
                    f"(the last: {summary.last})")
            log.warning("%s", text)
            self.publisher.error(summary.source, text, self.clock(), {"suppressed": summary.count})
        for summary in self.command_refusals.due():
            text = (f"{summary.count} more refusals from {summary.source} in the last {summary.seconds:.0f} s "
                    f"(the last: {summary.last})")
            log.warning("commands: %s", safe(text))
            self.publisher.error(f"cmd:{summary.source}", text, self.clock(), {"suppressed": summary.count})
            try:
                self.journal.note_refusals(summary.source, summary.count, summary.last, self.clock())
            except JournalError as exc:
                log.error("cannot journal the summary of refused commands: %s", exc)

    def _dispatch(self, item: tuple) -> None:
        kind = item[0]
        if kind == "obs":
            obs = item[1]
            receipt: _Receipt | None = item[2] if len(item) > 2 else None
            if isinstance(obs, TraysRead):  # a witness of the scores, not a move of the game: never journalled
                try:
                    if self.sticks is not None:
                        self.sticks.reading(obs)
                finally:
                    if receipt is not None:
                        receipt.done.set()
                return
            source = getattr(obs, "device", None) or getattr(obs, "camera", "?")
            kept = True
            # an event a device is acknowledged for: its (device, seq) goes into the journal with what it made,
            # so that a service started after this one knows the device's repeat of it
            frame = self.journal.from_device(obs.device, obs.seq) if receipt is not None else nullcontext()
            try:
                with frame:
                    for action in self.fusion.observe(obs):
                        if action.event == UNDO:
                            kept &= self._safe(lambda src=action.source: self._panel_undo(src), action.source)
                        else:
                            kept &= self._safe(lambda a=action: self._submit(a.event, a.source), source)
            finally:
                if receipt is not None:
                    receipt.kept = kept
                    receipt.done.set()
        elif kind == "event":
            self._safe(lambda: self._submit(item[1], item[2]), item[2])
        elif kind == "private_hand":
            self._private_hand(item[1])
        elif kind == "hands":
            self.broadcast.hands(item[1])
            self.broadcast.changed(self.table.state, self.journal.last_seq, self.clock())
        elif kind == "cmd":
            self._command(item[1])
        elif kind == "health":
            self.publisher.device(item[1].name, _health_payload(item[1], time.monotonic(), self.clock()))
            if self.sticks is not None and isinstance(item[1], DeviceHealth):
                self.sticks.health(item[1])
        elif kind == "stopped":
            self.publisher.devices_stopped()
        elif kind == "resync":
            self.publisher.resync(self.table.state, self.table.result_seqs)
        elif kind == "disconnected":
            self.publisher.disconnected()
        elif kind == "refused":
            self.publisher.refused(item[1], item[2], self.clock())
        elif kind == "refused_frame":
            _, link, bad, held = item
            more = f" ({held} more like it not reported since the last)" if held else ""
            log.warning("serial link %s refused a frame (%s): %s%s", link, bad.reason.value, bad.detail, more)
            self.publisher.error(link, f"refused a frame on the {link} link: {bad.detail}{more}", self.clock(),
                                 {"device": bad.device, "seq": bad.seq, "reason": bad.reason.value,
                                  "not_reported": held})
        elif kind == "snapshot":
            self.publisher.snapshot(item[1], item[2])
        elif kind == "time_up":
            clock = self._running_clock()
            if clock is not None and clock.due(self.clock()):  # not extended nor ended since the timer looked
                self._safe(lambda: self._submit(TimeUp(reason="the guaranteed time is over"), "clock"), "clock")

    def _running_clock(self) -> Clock | None:
        """The clock of the game in play (any thread may read it: the state's clock is replaced, never changed)."""
        state = self.table.state
        return state.clock if state.phase in (Phase.BETWEEN_HANDS, Phase.DEALING, Phase.PLAYING) else None

    def _command(self, msg: IncomingMessage) -> None:
        """One referee command. Where its reply goes, and so who sent it, is settled first: a response topic
        outside the table's own ``cmd/reply`` is refused before the command is read (an answer there could
        overwrite ``state`` or ``status``, or get the service disconnected by the broker's ACL)."""
        route = reply_route(self.topics.cmd_reply, msg.response_topic)
        if route.refusal is not None:
            refusal = Commands.refusal(msg.payload, route.refusal)
            self._refused_command(route.sender, route.refusal, refusal.payload, reply_topic=route.topic,
                                  correlation=msg.correlation_data)
            return
        if msg.retain:
            self._retained_command(msg, route)
            return
        self._sender = route.sender
        try:
            reply = self.commands.handle(msg.payload, source="referee")
        finally:
            self._sender = PLAIN
        if reply.ok:
            self.publisher.reply(reply.payload, route.topic, msg.correlation_data)
        else:
            self._refused_command(route.sender, reply.payload["error"], reply.payload, reply_topic=route.topic,
                                  correlation=msg.correlation_data)

    def _refused_command(self, sender: str, error: str, payload: dict[str, Any], *, reply_topic: str,
                         correlation: bytes | None) -> None:
        """Answer a refused command (always), and report it: in full for the first few of a sender in each
        window, then counted into one summary per sender and window (logged, on ``errors``, in the journal)."""
        self.publisher.reply(payload, reply_topic, correlation)
        if self.command_refusals.admit(sender, error):
            log.warning("command from %s refused: %s", sender, safe(error))
            self.publisher.error(f"cmd:{sender}", error, self.clock(),
                                 {"command": payload.get("command"), "transaction": payload.get("transaction")})

    def _remember_reply(self, key: str, digest: str, reply: dict[str, Any]) -> None:
        """Keep a command's reply in the journal (exactly once); a refusal beyond its sender's burst is only
        counted, so that a flood of refused commands cannot fill the disk."""
        if reply.get("status") != "ok" and not self.command_refusals.would_admit(self._sender):
            return
        self.journal.remember(key, digest, reply)

    def _retained_command(self, msg: IncomingMessage, route: ReplyRoute) -> None:
        """A command the broker keeps (published with retain) would be carried out again at every restart:
        refused, with a reply saying so. An empty one is someone clearing it: nothing to answer."""
        if not msg.payload:
            return
        error = ("refused: this command was published with the retain flag, so the broker would deliver it again "
                 f"at every restart; publish commands without retain, and clear this one (an empty retained message "
                 f"on {msg.topic})")
        refusal = Commands.refusal(msg.payload, error)
        self._refused_command(route.sender, error, refusal.payload, reply_topic=route.topic,
                              correlation=msg.correlation_data)

    def _safe(self, action: Callable[[], int], source: str) -> bool:
        """Carry out one action of an observation; False when the journal could not take it (disk full):
        then nothing changed, the failure is on ``errors``, and a device is not sent its acknowledgement."""
        try:
            action()
        except Rejected as exc:
            self.report_refusal(source, str(exc))
            if source in self.snapshots:  # what the camera saw when its report was refused
                self.snapshots[source].refused(str(exc))
        except JournalError as exc:
            log.error("could not journal what %s reported: %s", source, exc)
            self.publisher.error(source, f"could not journal what {source} reported, so it is not acknowledged "
                                 f"(a device sends it again): {exc}", self.clock(), {"reason": "journal"})
            return False
        return True

    def report_refusal(self, source: str, message: str, detail: dict[str, Any] | None = None) -> None:
        """Log and publish on ``errors`` something from the table that was refused (worker thread). A source
        that keeps being refused is reported in bursts: a few in full, then one summary a second with counts."""
        if self.refusals.admit(source, message):
            log.warning("refused from %s: %s", source, message)
            self.publisher.error(source, message, self.clock(), detail)

    def _check_broker(self, stop: threading.Event | None) -> None:
        delay = 1.0
        while True:
            try:
                check_broker(self.config, self.journal, client_id=f"{self._client_id}-check",
                             timeout=self.check_timeout, stop=stop)
                return
            except BrokerNotAsked as exc:
                if stop is None or stop.is_set():
                    raise
                log.warning("%s -- asking the broker again in %.0f s", exc, delay)
                if stop.wait(delay):
                    raise
                delay = min(30.0, 2 * delay)

    # ------------------------------------------------------------ game operations (worker thread)

    def _would_accept(self, event: Event) -> bool:
        try:
            apply(self.table.state, event)
        except Rejected:
            return False
        return True

    def _submit(self, event: Event, source: str) -> int:
        ts = self.clock()
        before = capture(self.table.state, event)
        accepted = self.table.submit(event, source=source, ts=ts, command=self.commands.current)
        if any(isinstance(o, HandResult | GameResult) for o in accepted.outputs):
            self.fusion.hand_ended()
        try:
            mjai = self.mjai.messages(event, before, accepted.outputs)
        except Exception:  # the event is journalled: it must be published even if its mjai form fails
            log.exception("cannot write event %d as mjai", accepted.seq)
            mjai = []
        self._published(accepted, event.type, to_dict(event), source, ts, mjai)
        self._red_five(event, source, ts)
        return accepted.seq

    def _red_five(self, event: Event, source: str, ts: float) -> None:
        """The game's first red five under a rule set without them goes on ``errors`` (the engine took it)."""
        alert = self.red_fives.check(event, self.table.state.rules)
        if alert is not None:
            log.warning("%s: %s", source, alert[0])
            self.publisher.error(source, alert[0], ts, alert[1])

    def _submit_command(self, event: Event, source: str) -> int:
        if isinstance(event, GameStart) and self.table.state.phase is Phase.GAME_OVER:
            self._new_game()
        return self._submit(event, source)

    def _new_game(self) -> None:
        """The table's last game is over: keep its journal as an archive and start a fresh one."""
        carried = self.journal.transactions()  # a transaction of the last game must not run in this one
        archived = self.journal.archive()
        log.info("game over: journal archived as %s", archived)
        self.journal = Journal.for_table(self.config.table.data_dir, self.config.table.id,
                                         sync=self.config.table.journal_sync, site=self.config.table.site)
        self.journal.carry_transactions(carried)
        self.table = Table(self.journal)
        self.publisher.journal = self.journal
        self.publisher.reset_tracking()
        self._kept_hands = {}  # the seats' readings are kept in the new game's journal
        self.fusion.hand_ended()
        self.mjai = MjaiStream()
        self.red_fives.new_game()

    def _panel_undo(self, source: str) -> int:
        """A seat panel's undo takes back the table's last move, never a referee's ruling."""
        last = next(iter(reversed(list(self.journal.entries(max(0, self.journal.last_seq - 1))))), None)
        if last is not None and (last.source == "referee" or last.source.startswith("referee:")):
            raise Rejected("a seat panel cannot undo a referee's ruling: the referee corrects it")
        if last is not None and last.source == "clock":
            raise Rejected("a seat panel cannot undo the clock's time-up: the referee corrects what came before it")
        return self._undo(1, source)

    def _undo(self, count: int, source: str) -> int:
        ts = self.clock()
        accepted = self.table.undo(count, source=source, ts=ts, command=self.commands.current)
        self._published(accepted, "undo", {"count": count}, source, ts)
        return accepted.seq

    def _amend(self, seq: int, event: Event, source: str) -> int:
        ts = self.clock()
        accepted = self.table.amend(seq, event, source=source, ts=ts, command=self.commands.current)
        self._published(accepted, "amend", {"seq": seq, "event": to_dict(event)}, source, ts)
        self._red_five(event, source, ts)
        return accepted.seq

    def _published(self, accepted: Accepted, kind: str, body: dict, source: str, ts: float,
                   mjai: list[dict] | None = None) -> None:
        entry = Entry(accepted.seq, ts, source, kind, body)
        self.publisher.accepted(entry, accepted.outputs, self.table.state, mjai, self.table.result_seqs)
        if self.seat_readers:  # the seat cameras fold the change at once (a discard leaves the hand)
            self._seat_knowledge = self._knowledge()
            for seat_reader in self.seat_readers.values():
                seat_reader.knowledge_changed()
        try:
            self.broadcast.changed(self.table.state, accepted.seq, ts)
        except Exception:  # the entry is journalled and published: the broadcast must not undo that
            log.exception("cannot build the broadcast's hands after entry %d", accepted.seq)
        if self.sticks is not None:
            try:
                self.sticks.after(kind, accepted.outputs, self.table.state)
            except Exception:  # the entry is journalled and published: the comparison must not undo that
                log.exception("the stick watch failed after entry %d; the game goes on", accepted.seq)
        if kind in ("undo", "amend"):
            self.publisher.corrected(self.table.state, accepted.seq, self.table.result_seqs)
