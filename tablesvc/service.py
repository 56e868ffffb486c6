"""The table service: devices and camera in, engine and journal in the middle, MQTT out.

One worker thread owns the game: every input (device observations, camera
observations, referee commands, device health, broker reconnections) goes
through one queue, so events are applied, journalled and published in one
order, and nothing else ever touches the engine. Drivers and the MQTT
client run their own threads and only put things on that queue.

Start order (Frigate's discipline): journal and engine first (the game is
resumed from disk), then the broker connection (the Last Will is set before
anything is published), then the worker, then the devices. Stop in reverse,
ending with a clean ``offline`` status.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from drivers.observations import CameraHealth, DeviceHealth, Observation
from tablesvc.commands import Commands
from tablesvc.config import Config
from tablesvc.engine.engine import Rejected, apply
from tablesvc.engine.events import Event, GameStart, to_dict
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.engine.state import Phase
from tablesvc.formats.mjai_live import MjaiStream, capture
from tablesvc.fusion import UNDO, Fusion
from tablesvc.journal import Entry, Journal
from tablesvc.mqtt.link import IncomingMessage, MqttLink
from tablesvc.publisher import Publisher
from tablesvc.table import Accepted, Table
from vision.observations import CameraObservation

__all__ = ["TableService"]

log = logging.getLogger(__name__)

_STOP = object()


def _health_payload(health: DeviceHealth | CameraHealth, now: float) -> dict[str, Any]:
    """A driver's health for the ``devices/<name>`` topic: monotonic stamps become ages in seconds."""
    data = asdict(health)
    data.pop("name", None)
    data.pop("timestamp", None)
    for key in ("last_seen", "last_frame"):
        if key in data:
            stamp = data.pop(key)
            data[f"{key}_ago"] = round(now - stamp, 3) if stamp is not None else None
    return data


class TableService:
    """One table: give it a :class:`~tablesvc.config.Config`, then :meth:`start` and :meth:`stop`."""

    def __init__(self, config: Config, *, wall_clock: Callable[[], float] = time.time,
                 link_factory: Callable[..., MqttLink] = MqttLink) -> None:
        self.config = config
        self.clock = wall_clock
        self.journal = Journal.for_table(config.table.data_dir, config.table.id, sync=config.table.journal_sync)
        self.table = Table(self.journal)
        self.fusion = Fusion(lambda: self.table.state, self._would_accept)
        self.inbox: queue.Queue[Any] = queue.Queue()
        topics = config.topics
        self.topics = topics
        self.link = link_factory(
            config.mqtt.url,
            client_id=config.mqtt.client_id or f"tablesvc-{config.table.site}-{config.table.id}",
            on_connected=lambda: self.inbox.put(("resync",)),
            on_message=lambda msg: self.inbox.put(("cmd", msg)),
            on_refused=lambda mid, reason: self.inbox.put(("refused", mid, reason)),
            on_disconnected=lambda: self.inbox.put(("disconnected",)),
            subscriptions=(topics.cmd,),
            protocol=config.mqtt.protocol,
            ca_file=config.mqtt.ca_file,
        )
        self.publisher = Publisher(self.link, topics, self.journal, site=config.table.site, table=config.table.id)
        self.link.set_will(*self.publisher.status(False))  # the Last Will: 'offline', retained
        self.commands = Commands(submit=self._submit_command, undo=self._undo, amend=self._amend,
                                 tokens=config.command_tokens, default_rules=config.table.rules,
                                 default_players=config.table.players)
        self.mjai = MjaiStream()
        self.drivers: list[Any] = []
        self.reader: Any = None
        self.snapshots: dict[str, Any] = {}  # camera name -> tablesvc.snapshots.Snapshots
        self._worker: threading.Thread | None = None
        self.processed = threading.Condition()
        self.inputs_done = 0

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Connect, start the worker and the drivers. The tile model is read first: a file that is no
        model raises ``ValueError`` before anything runs (the caller calls :meth:`stop` and reports it)."""
        state = self.table.state
        log.info("table %s/%s: %d journal entries, game %s", self.config.table.site, self.config.table.id,
                 self.journal.last_seq, state.phase.value)
        if self.config.camera is not None:
            self.reader = self._camera_reader(self.config.camera)
        self.link.start()
        self._worker = threading.Thread(target=self._run, name="table-worker", daemon=True)
        self._worker.start()
        for serial in self.config.serial:
            from drivers.serial_driver import SerialDriver

            driver = SerialDriver(serial.name, serial.url, on_observation=self.observe,
                                  on_health=self._health, heartbeat_timeout=serial.heartbeat_timeout)
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

    def stop(self) -> None:
        for driver in self.drivers:
            driver.stop()
        if self.reader is not None:
            self.reader.stop()
        self.inbox.put(("stopped",))  # retained device health would say 'connected' for ever otherwise
        self.inbox.put(_STOP)
        if self._worker is not None:
            self._worker.join(10)
        if self.link.connected.is_set() and not self.publisher.drain(3.0):
            log.info("stopping with events the broker has not acknowledged; they are sent at the next start")
        self.link.stop(final=self.publisher.status(False))
        self.journal.close()

    # ------------------------------------------------------------ inputs (any thread)

    def observe(self, observation: Observation | CameraObservation) -> None:
        self.inbox.put(("obs", observation))

    def _frame(self, frame: object) -> None:
        """A camera frame with no calibration or tile set configured: it only keeps the camera's health."""

    def _camera_reader(self, cam: Any) -> Any:
        """Frames to observations, when the camera is calibrated and a tile set enrolled."""
        if cam.calibration is None or (cam.tiles is None and cam.model is None):
            log.warning("camera %s: no calibration and tile set configured; its frames are not read", cam.name)
            return None
        from tablesvc.camera_reader import CameraReader
        from vision.calibration import Calibration
        from vision.classifier import TileClassifier
        from vision.pipeline import FramePipeline
        from vision.tracking import ZoneTracker

        classifier = TileClassifier.from_files(cam.model, cam.tiles)
        calibration = Calibration.load(cam.calibration)
        pipeline = FramePipeline(calibration, None, classifier)
        snapshots = self.camera_snapshots(cam.name, calibration, pipeline.geometry, cam.snapshot_interval)
        return CameraReader(pipeline, ZoneTracker(cam.name), self.observe,
                            on_read=snapshots.frame if snapshots is not None else None)

    def camera_snapshots(self, name: str, calibration: Any, geometry: Any = None, interval: float = 5.0) -> Any:
        """The annotated snapshots of camera ``name`` (``interval`` seconds apart, 0: none), published retained
        on ``camera/<name>/snapshot``; also at once when the engine refuses what this camera reported."""
        if interval <= 0:
            return None
        from tablesvc.snapshots import Snapshots

        topic = self.topics.camera_snapshot(name)
        snapshots = Snapshots(name, calibration, geometry, lambda payload: self.inbox.put(("snapshot", topic, payload)),
                              interval=interval)
        self.snapshots[name] = snapshots
        return snapshots

    def _health(self, health: DeviceHealth | CameraHealth) -> None:
        self.inbox.put(("health", health))

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until every input queued so far has been handled (for the demo and tests)."""
        deadline = time.monotonic() + timeout
        while self.inbox.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    # ------------------------------------------------------------ the worker

    def _run(self) -> None:
        while True:
            try:
                item = self.inbox.get(timeout=0.2)
            except queue.Empty:
                self._flush()
                continue
            try:
                if item is _STOP:
                    self._flush()
                    return
                self._dispatch(item)
            except Exception:  # the worker must survive anything a single input does
                log.exception("error while handling %r", item[0] if isinstance(item, tuple) else item)
            finally:
                self._flush()
                self.inbox.task_done()

    def _flush(self) -> None:
        try:
            self.publisher.flush_acks()
        except Exception:
            log.exception("cannot record the broker's acknowledgements in the journal")

    def _dispatch(self, item: tuple) -> None:
        kind = item[0]
        if kind == "obs":
            obs = item[1]
            source = getattr(obs, "device", None) or getattr(obs, "camera", "?")
            for action in self.fusion.observe(obs):
                if action.event == UNDO:
                    self._safe(lambda src=action.source: self._panel_undo(src), action.source)
                else:
                    self._safe(lambda a=action: self._submit(a.event, a.source), source)
        elif kind == "cmd":
            msg: IncomingMessage = item[1]
            reply = self.commands.handle(msg.payload, source="referee")
            if not reply.ok:
                log.warning("command refused: %s", reply.payload["error"])
            self.publisher.reply(reply.payload, msg.response_topic, msg.correlation_data)
        elif kind == "health":
            self.publisher.device(item[1].name, _health_payload(item[1], time.monotonic()))
        elif kind == "stopped":
            self.publisher.devices_stopped()
        elif kind == "resync":
            self.publisher.resync(self.table.state)
        elif kind == "disconnected":
            self.publisher.disconnected()
        elif kind == "refused":
            self.publisher.refused(item[1], item[2], self.clock())
        elif kind == "snapshot":
            self.publisher.snapshot(item[1], item[2])

    def _safe(self, action: Callable[[], int], source: str) -> None:
        try:
            action()
        except Rejected as exc:
            log.warning("refused from %s: %s", source, exc)
            self.publisher.error(source, str(exc), self.clock())
            if source in self.snapshots:  # what the camera saw when its report was refused
                self.snapshots[source].refused(str(exc))

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
        accepted = self.table.submit(event, source=source, ts=ts)
        if any(isinstance(o, HandResult | GameResult) for o in accepted.outputs):
            self.fusion.hand_ended()
        try:
            mjai = self.mjai.messages(event, before, accepted.outputs)
        except Exception:  # the event is journalled: it must be published even if its mjai form fails
            log.exception("cannot write event %d as mjai", accepted.seq)
            mjai = []
        self._published(accepted, event.type, to_dict(event), source, ts, mjai)
        return accepted.seq

    def _submit_command(self, event: Event, source: str) -> int:
        if isinstance(event, GameStart) and self.table.state.phase is Phase.GAME_OVER:
            self._new_game()
        return self._submit(event, source)

    def _new_game(self) -> None:
        """The table's last game is over: keep its journal as an archive and start a fresh one."""
        archived = self.journal.archive()
        log.info("game over: journal archived as %s", archived)
        self.journal = Journal.for_table(self.config.table.data_dir, self.config.table.id,
                                         sync=self.config.table.journal_sync)
        self.table = Table(self.journal)
        self.publisher.journal = self.journal
        self.publisher.reset_tracking()
        self.fusion.hand_ended()
        self.mjai = MjaiStream()

    def _panel_undo(self, source: str) -> int:
        """A seat panel's undo takes back the table's last move, never a referee's ruling."""
        last = next(iter(reversed(list(self.journal.entries(max(0, self.journal.last_seq - 1))))), None)
        if last is not None and last.source == "referee":
            raise Rejected("a seat panel cannot undo a referee's ruling: the referee corrects it")
        return self._undo(1, source)

    def _undo(self, count: int, source: str) -> int:
        ts = self.clock()
        accepted = self.table.undo(count, source=source, ts=ts)
        self._published(accepted, "undo", {"count": count}, source, ts)
        return accepted.seq

    def _amend(self, seq: int, event: Event, source: str) -> int:
        ts = self.clock()
        accepted = self.table.amend(seq, event, source=source, ts=ts)
        self._published(accepted, "amend", {"seq": seq, "event": to_dict(event)}, source, ts)
        return accepted.seq

    def _published(self, accepted: Accepted, kind: str, body: dict, source: str, ts: float,
                   mjai: list[dict] | None = None) -> None:
        entry = Entry(accepted.seq, ts, source, kind, body)
        self.publisher.accepted(entry, accepted.outputs, self.table.state, mjai)
        if kind in ("undo", "amend"):
            self.publisher.corrected(self.table.state, accepted.seq)
