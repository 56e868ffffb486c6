"""``tablesvc run``: the table service from a configuration file."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tablesvc.config import CameraConfig, SeatCameraConfig

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the table service from a configuration file",
                       description="Run the table service: devices and cameras in, the game out over MQTT. "
                       "Seat cameras ([[camera]] kind = \"hand\") read each player's standing hand: private, "
                       "kept in the journal and given only to broadcast/hands. "
                       "With a [web] section in its configuration it also serves the stream overlay, club "
                       "dashboard and referee console (as `tablesvc web` does; needs the web extra). "
                       "A bad configuration fails at once with the file, line and key.")
    p.add_argument("--config", required=True, metavar="FILE", help="the table's TOML configuration ([web]: serve "
                   "the pages too)")
    p.add_argument("--check", action="store_true",
                   help="only check the configuration (and read the cameras' calibrations and tile models) and exit")
    p.add_argument("--new-game", action="store_true",
                   help="start a new game even though the journal is damaged (it is kept beside as "
                   "<id>.damaged-<time>.sqlite3) or missing while the broker still shows this table's game")
    p.set_defaults(run=run_service)


def run_service(args: argparse.Namespace) -> int:
    from tablesvc.config import ConfigError, load_config
    from tablesvc.service import TableService
    from tablesvc.service.lock import TableLocked
    from tablesvc.storage.journal import JournalError

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"tablesvc run: {exc}", file=sys.stderr)
        return 2
    if args.check:
        try:
            camera = _check_camera(config.camera) + _check_seat_cameras(config.seat_cameras)
        except (ValueError, OSError) as exc:
            print(f"tablesvc run: {exc}", file=sys.stderr)
            return 2
        print(f"{args.config}: configuration is valid (table {config.table.site}/{config.table.id}, "
              f"broker {config.mqtt.url}, {len(config.serial)} serial device(s){camera})")
        return 0
    if config.web is not None:  # [web] without the web extra: say so before the table starts, not a traceback
        try:
            import tablesvc.web.server  # noqa: F401  (uvicorn, and Starlette through the app)
        except ImportError as exc:
            from tablesvc.cli.web import missing_extra

            print(f"tablesvc run: [web]: {missing_extra(exc).removeprefix('tablesvc web: ')}", file=sys.stderr)
            return 2
    try:
        service = TableService(config, new_game=args.new_game)
    except (JournalError, TableLocked, ValueError, OSError) as exc:
        log.error("%s", exc)
        print(f"tablesvc run: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        service.start(stop=stop)  # an empty journal waits for the broker to say whether it holds this table's game
    except (JournalError, ValueError, OSError) as exc:  # a lost journal; [camera] model is no tile model
        service.stop()
        print(f"tablesvc run: {exc}", file=sys.stderr)
        return 1
    print(f"tablesvc: table {config.table.site}/{config.table.id} publishing to {config.mqtt.url} under "
          f"{config.topics.base}/", flush=True)
    web = None
    if config.web is not None:  # [web]: the pages served beside the table, still a consumer of the feed
        from tablesvc.cli.web import make_server
        from tablesvc.web.server import parse_listen

        camera_model = config.camera.model if config.camera is not None else None
        web = make_server(config.mqtt.url, config.web, listen=parse_listen(config.web.listen),
                          site=config.web.site or config.table.site, prefix=config.mqtt.prefix,
                          protocol=config.mqtt.protocol, rules=config.table.rules,
                          photo_model=str(camera_model) if camera_model else None)
        try:
            web.start()
            print(f"tablesvc: pages on {web.url}/ (overlay {web.url}/overlay/{config.table.site}/{config.table.id})",
                  flush=True)
        except (OSError, RuntimeError) as exc:
            print(f"tablesvc run: [web]: {exc}", file=sys.stderr)
            web = None
    try:
        while not stop.wait(0.5) and not service.failed.is_set():
            pass
    except KeyboardInterrupt:
        pass
    if web is not None:
        web.stop()
    service.stop()
    if service.failure is not None:
        print(f"tablesvc run: {service.failure}", file=sys.stderr)
        return 1
    return 0


def _check_seat_cameras(cameras: tuple[SeatCameraConfig, ...]) -> str:
    """``--check``: read each seat camera's strip and tile set as the service will."""
    if not cameras:
        return ""
    from vision.naming.classifier import TileClassifier
    from vision.seat.calibration import SeatCalibration

    parts = []
    for cam in cameras:
        SeatCalibration.load(cam.calibration)
        try:
            kinds = len(TileClassifier.from_files(cam.model, cam.tiles).tiles)
        except (OSError, ValueError) as exc:
            raise ValueError(f"seat camera {cam.name}: cannot read its tile set: {exc}") from None
        parts.append(f"{'ESWN'[cam.seat]} ({cam.name}, {kinds} kinds)")
    return f", seat cameras {', '.join(parts)}"


def _check_camera(cam: CameraConfig | None) -> str:
    """``--check``: read the camera's calibration and tile model as the service will (a file that exists
    but is no calibration or model is found now, not at the next start)."""
    if cam is None or cam.calibration is None:
        return ""
    from vision.naming.classifier import TileClassifier
    from vision.table.calibration import Calibration

    calibration = Calibration.load(cam.calibration)
    text = f", camera {cam.name}: calibrated to {calibration.error_mm:.2f} mm"
    if cam.model is not None or cam.tiles is not None:
        classifier = TileClassifier.from_files(cam.model, cam.tiles)
        text += f", {len(classifier.tiles)} tile kinds enrolled"
    return text
