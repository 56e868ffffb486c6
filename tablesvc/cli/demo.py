"""``tablesvc demo``: a whole simulated table tracked by the service and published over MQTT."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tablesvc.cli.arguments import rules_argument
from tablesvc.cli.broadcast_demo import add_options as add_broadcast_options
from tablesvc.cli.broadcast_demo import broadcast_key, print_scenes

if TYPE_CHECKING:
    from collections.abc import Callable

    from hardware_sims.camera_feed import CameraFeed
    from tablesvc.formats.record import RecordedGame

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="a whole simulated table publishing to MQTT",
                       description="Run the whole pipeline on simulators: a generated game played on a "
                       "simulated automatic table and seat panel (real pseudo-terminals read by the serial "
                       "drivers) and a stand-in camera (with --camera, rendered frames read by vision), tracked "
                       "by the engine and published over MQTT. "
                       "Without --broker an embedded MQTT 3.1.1 broker is started.")
    p.add_argument("--broker", metavar="URL", help="publish to this broker (mqtt://host:1883); default: embedded")
    p.add_argument("--speed", type=float, default=8.0,
                   help="1 = real time (about a second per discard), 0 = as fast as possible (default: 8)")
    p.add_argument("--seed", type=int, default=None, help="the generated game's seed (default: random)")
    p.add_argument("--game", metavar="FILE", help="play this recorded game (any file `tablesvc replay` reads) "
                   "instead of a generated one")
    p.add_argument("--rules", default="ema2012", type=rules_argument,
                   help="rule set: a preset, house rules after it as in 'ema2016; kiriage=yes' (default: %(default)s)")
    p.add_argument("--site", default="demo", help="site id in the topics (default: demo)")
    p.add_argument("--table", default="table-1", help="table id in the topics (default: table-1)")
    p.add_argument("--data-dir", type=Path, help="where the journal goes (default: a temporary directory)")
    p.add_argument("--web", default="127.0.0.1:8080", metavar="HOST:PORT",
                   help="serve the overlay, dashboard and referee console here (default: %(default)s, another free "
                   "port if it is taken; 'off' for none)")
    p.add_argument("--stay", action="store_true",
                   help="after the game, keep the broker and the web pages up until Ctrl-C")
    p.add_argument("--camera", action="store_true",
                   help="see the felt through the camera: every change is rendered as 1080p frames and read by "
                   "vision (calibration, detection, a tile model enrolled from the rendered art) before the "
                   "engine hears of it, as at a real table; what the camera reads is printed")
    p.add_argument("--hands", type=int, metavar="N", help="stop after the game's first N hands")
    p.add_argument("--sticks", action="store_true",
                   help="a stick tray reader too (a third pseudo-terminal): the players pay every hand in score "
                   "sticks, and the service compares the trays with the game (the sticks topic; alerts on the "
                   "dashboard, table page and console)")
    p.add_argument("--mispay", type=int, nargs="?", const=2, metavar="HAND",
                   help="with --sticks (implied): hand HAND (default 2) is paid 1,000 short, to show the alert")
    add_broadcast_options(p)
    p.add_argument("--phones", action="store_true",
                   help="a table with no devices instead: two scripted phones play a game through its /play page "
                   "(printed with its token); see docs/phones.md")
    from tablesvc.cli.hand_cams import add_hand_cams

    add_hand_cams(p)
    p.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    if getattr(args, "hand_cams", False):
        from tablesvc.cli.hand_cams import run_hand_cams

        return run_hand_cams(args)
    from tablesvc.mqtt.url import BrokerURL

    record = None
    if args.game:
        from tablesvc.formats.record import RecordError
        from tablesvc.replay import load_record

        try:
            record = load_record(args.game)
        except RecordError as exc:
            print(f"tablesvc demo: {exc}", file=sys.stderr)
            return 1
        args.rules = record.rules or args.rules
    broker = None
    if args.broker:
        try:
            url = str(BrokerURL.parse(args.broker))
        except ValueError as exc:
            print(f"tablesvc demo: {exc}", file=sys.stderr)
            return 2
    else:
        from tablesvc.broker import EmbeddedBroker  # asyncio, for a demo without a broker of its own

        broker = EmbeddedBroker()
        try:
            broker.start()
        except RuntimeError as exc:
            print(f"tablesvc demo: {exc}", file=sys.stderr)
            return 1
        url = broker.url
    from tablesvc.cli.signals import interrupt_on_termination

    interrupt_on_termination()  # kill, docker stop, a closed terminal: the same clean-up as Ctrl-C
    work = Path(tempfile.mkdtemp(prefix="tablesvc-demo-"))
    try:
        if args.phones:
            from tablesvc.cli.phones_demo import run_phones

            return run_phones(args, url, broker, work, _demo_web)
        return _demo(args, record, url, broker, work)
    finally:  # its ptys, and its journal unless --data-dir: removed however the demo ends
        import shutil

        shutil.rmtree(work, ignore_errors=True)
        if broker is not None:
            broker.stop()


def _demo(args: argparse.Namespace, record: RecordedGame | None, url: str, broker: object, work: Path) -> int:
    from hardware_sims.devices import PtyDevice
    from hardware_sims.generator import GeneratorOptions, generate_game
    from hardware_sims.table import DeviceOutputs, TableSimulator
    from tablesvc.config import parse_config
    from tablesvc.mqtt.link import IncomingMessage, MqttLink
    from tablesvc.mqtt.url import BrokerURL
    from tablesvc.service import TableService
    from tablesvc.service.lock import TableLocked
    from tablesvc.storage.journal import JournalError
    from tablesvc.watch import Watcher

    data_dir = args.data_dir or work / "data"
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    table_dev = PtyDevice("TBL1", "table", work / "ttyTABLE")
    panel_dev = PtyDevice("PNL1", "panel", work / "ttyPANEL")
    tray = players = None
    sticks_link = ""
    if args.sticks or args.mispay is not None:
        from hardware_sims.sticks import Mispayment, StickPlayers, StickTray

        tray = StickTray("STK1", work / "ttySTICKS")
        players = StickPlayers(tray, mispay=Mispayment(args.mispay) if args.mispay is not None else None)
        sticks_link = f'\n[[serial]]\nname = "sticks"\nurl = "{work / "ttySTICKS"}"\nkind = "sticks"\nids = ["STK1"]\n'
    config = parse_config(f"""
[table]
site = "{args.site}"
id = "{args.table}"
rules = "{args.rules}"
data_dir = "{data_dir}"

[mqtt]
url = "{url}"
protocol = "{'3.1.1' if broker else 'auto'}"

[[serial]]
name = "table"
url = "{work / 'ttyTABLE'}"
kind = "table"
ids = ["TBL1"]

[[serial]]
name = "panel"
url = "{work / 'ttyPANEL'}"
kind = "panel"
ids = ["PNL1"]
""" + sticks_link, "<demo>")
    base = config.topics.base
    host, port = url.split("//")[1].rsplit("@", 1)[-1].split(":")
    print(f"tablesvc demo: broker {url}{' (embedded, MQTT 3.1.1)' if broker else ''}, table {base}/")
    print(f"  watch it:  tablesvc watch --broker {url}")
    print(f"        or:  mosquitto_sub -h {host} -p {port} -t '{base}/#' -v")
    kept = "" if args.data_dir else " (removed at the end; --data-dir keeps it)"
    print(f"  devices: {work / 'ttyTABLE'}, {work / 'ttyPANEL'}; journal in {data_dir}{kept}", flush=True)

    watcher = Watcher(prefix=config.mqtt.prefix, table=args.table)
    finished = threading.Event()
    results = _Counter()

    def on_message(msg: IncomingMessage) -> None:
        if msg.topic == f"{base}/sticks":
            _print_sticks(msg.payload)
            return
        line = watcher.feed(msg.topic, msg.payload)
        if line:
            print(f"  {line.split('  ', 1)[1]}", flush=True)
            if line.split("  ", 1)[1].startswith("final:"):
                finished.set()
            else:
                results.add()

    viewer = MqttLink(BrokerURL.parse(url), client_id=f"tablesvc-demo-viewer-{seed}", on_connected=lambda: None,
                      on_message=on_message, subscriptions=(f"{base}/results", f"{base}/state", f"{base}/status",
                                                            *((f"{base}/sticks",) if tray is not None else ())),
                      protocol="3.1.1" if broker else "auto")
    try:
        service = TableService(config, new_game=True)  # the demo always plays a game of its own, from the start
    except (TableLocked, JournalError, OSError) as exc:  # --data-dir of a table in use, or unusable
        print(f"tablesvc demo: {exc}", file=sys.stderr)
        return 1
    table_dev.start()
    panel_dev.start()
    if tray is not None:
        tray.start()
        print(f"  stick tray: {work / 'ttySTICKS'}; the trays compared with the game on {base}/sticks"
              + (f" (hand {args.mispay} is paid 1,000 short)" if args.mispay is not None else ""), flush=True)
    service.start()
    viewer.start()
    if not service.link.wait_connected_or_failed(20):
        print(f"tablesvc demo: cannot reach the broker {url}: {service.link.failure or 'no answer in 20 s'}",
              file=sys.stderr)
        _shutdown(service, viewer, table_dev, panel_dev, tray)
        return 1
    viewer.wait_connected(10)
    web = _demo_web(args, url, config.mqtt.prefix, "3.1.1" if broker else "auto")
    if web is not None:
        path = f"{args.site}/{args.table}"
        print(f"  overlay:   {web.url}/overlay/{path}  (OBS browser source, 1920x1080; ?view=scores)")
        print(f"  dashboard: {web.url}/")
        print(f"  console:   {web.url}/referee/{path}  (referee password for this demo: {web.demo_password})",
              flush=True)
        print_scenes(web, args.site, args.table)
    devices = outputs = DeviceOutputs(table_dev, panel_dev, service.observe)
    code = 0
    if record is None:
        record = generate_game(seed, GeneratorOptions(rules=args.rules))
        print(f"game: seed {seed}, {len(record.hands)} hands, rules {args.rules}", flush=True)
    else:
        print(f"game: {args.game}, {len(record.hands)} hands, rules {args.rules}", flush=True)
    whole = args.hands is None or args.hands >= len(record.hands)
    if not whole:
        record = _first_hands(record, args.hands)
        print(f"  playing its first {len(record.hands)} hand(s)", flush=True)
    feed = None
    if args.camera:
        feed = _camera_feed(devices, service.observe, seed)
        snapshots = service.camera_snapshots("camera", feed.pipeline.detector.calibration, feed.geometry)
        feed.on_frame = snapshots.frame
        print(f"  what the camera sees, annotated: {service.topics.camera_snapshot('camera')} (retained, every "
              f"{snapshots.interval:g} s and at each refusal)", flush=True)
        outputs = feed

    def start(_event: object) -> None:  # the referee starts the game, over MQTT like any referee command
        command = {"command": "start_game", "players": list(record.players), "rules": args.rules,
                   "transaction": f"demo-{seed}-{time.time_ns()}"}  # unique: a journal remembers transactions
        service.inbox.put(("cmd", IncomingMessage(f"{base}/cmd", json.dumps(command).encode())))

    try:
        from hardware_sims.hands import hands_feeder  # the simulator knows every hand: broadcast/hands

        TableSimulator(record, outputs, speed=args.speed, start_game=start,
                       after_event=hands_feeder(service.hands, players)).run()
        service.wait_idle(30)
        if whole:
            finished.wait(10)
        else:
            results.wait(len(record.hands), 10)
        if feed is not None:
            exact = sum(c.exact for c in feed.stats.changes)
            ms = sorted(feed.stats.pipeline_ms) or [0.0]
            print(f"camera: {exact} of {len(feed.stats.changes)} table changes read exactly, "
                  f"{feed.stats.frames} frames, {ms[len(ms) // 2]:.1f} ms per frame (median)", flush=True)
        if whole and service.table.state.final is None and (args.game is None or record.final_scores is not None):
            print("tablesvc demo: the game did not reach its end; see the log above", file=sys.stderr)
            code = 1
        elif not whole and results.count < len(record.hands):
            print(f"tablesvc demo: {results.count} of {len(record.hands)} hands ended; see the log above",
                  file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        code = 130
    if devices.unacknowledged:
        log.warning("%d device events were never acknowledged", devices.unacknowledged)
    if args.stay and code == 0:
        print("tablesvc demo: the game is over; the pages stay up until Ctrl-C", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    if web is not None:
        web.stop()
    _shutdown(service, viewer, table_dev, panel_dev, tray)
    return code


def _print_sticks(payload: bytes) -> None:
    """A line for each alert or fault of the stick trays (the demo prints them as they come)."""
    try:
        data = json.loads(payload)
    except ValueError:
        return
    if isinstance(data, dict) and data.get("status") in ("mismatch", "fault") and data.get("text") != _printed[0]:
        _printed[0] = data.get("text")
        print(f"  sticks {data['status']}: {data.get('text')}", flush=True)


_printed: list[object] = [None]  # the stick alert printed last: each is printed once


def _demo_web(args: argparse.Namespace, url: str, prefix: str, protocol: str, secret_key: str | None = None):
    """The web server beside the demo, with a referee password made up for this run (None with --web off);
    ``secret_key``: the key the phone tables' codes are signed with (default: random per start)."""
    if args.web == "off":
        return None
    import secrets

    from tablesvc.cli.web import make_server
    from tablesvc.config import WebConfig
    from tablesvc.mqtt.url import BrokerURL
    from tablesvc.web.auth import hash_password
    from tablesvc.web.server import parse_listen

    password = secrets.token_urlsafe(6)
    key = broadcast_key(args)
    try:
        host, port = parse_listen(args.web)
    except ValueError as exc:
        print(f"tablesvc demo: --web: {exc}", file=sys.stderr)
        return None
    web_config = WebConfig(site=args.site, referee_password=hash_password(password), secret_key=secret_key)
    for listen in ((host, port), (host, 0)):  # the port asked for, else any free one
        server = make_server(BrokerURL.parse(url), web_config, listen=listen, prefix=prefix, protocol=protocol,
                             broadcast_key=key)
        try:
            server.start()
        except (OSError, RuntimeError) as exc:
            log.warning("web server: %s", exc)
            continue
        server.demo_password = password
        return server
    return None


class _Counter:
    """Hand results seen over MQTT, waited for by the demo's main thread."""

    def __init__(self) -> None:
        self.count = 0
        self._cond = threading.Condition()

    def add(self) -> None:
        with self._cond:
            self.count += 1
            self._cond.notify_all()

    def wait(self, count: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.count >= count, timeout)


def _first_hands(record: RecordedGame, hands: int) -> RecordedGame:
    """The record cut after its first ``hands`` hands (their results kept, no final)."""
    from dataclasses import replace

    kept = record.hands[:max(1, hands)]
    end = kept[-1].end_event
    events = record.events if end is None else record.events[:end + 1]
    return replace(record, events=list(events), hands=list(kept), final_scores=None)


def _camera_feed(device: object, observe: Callable[[object], None], seed: int) -> CameraFeed:
    """The demo's camera: the felt rendered (1080p, overhead, a little noise, blur and JPEG), calibrated from
    the markers in its first frame and read by vision with a tile model enrolled from the rendered tile art;
    what it reads goes to the service as a real camera's observations do (and is printed)."""
    from hardware_sims.camera_feed import CameraFeed
    from hardware_sims.camera_render import Effects
    from hardware_sims.tile_art import drawn_tile_set
    from vision.naming.classifier import TileClassifier

    t0 = time.perf_counter()
    tiles = drawn_tile_set()
    classifier = TileClassifier(augment_per_image=20)
    classifier.enroll(tiles.faces)

    def deliver(observation: object) -> None:
        print(f"  camera: {describe_observation(observation)}", flush=True)
        observe(observation)

    feed = CameraFeed(deliver, classifier, tiles=tiles, seed=seed, camera_name="camera", device=device,
                      effects=Effects(noise_sigma=3.0, blur_sigma=0.6, jpeg_quality=90))
    print(f"camera: 1920x1080 frames calibrated to {feed.pipeline.detector.calibration.error_mm:.2f} mm from "
          f"the table's markers; {len(classifier.tiles)} tile kinds enrolled from the tile art "
          f"({time.perf_counter() - t0:.1f} s)", flush=True)
    return feed


def describe_observation(o: object) -> str:
    """One line for what the camera reported (the demo prints every one)."""
    from vision.table.observations import (
        DoraIndicatorSeen,
        HandRevealed,
        KanAdded,
        MeldSeen,
        TileDiscarded,
        UraIndicatorsSeen,
    )

    if isinstance(o, TileDiscarded):
        return f"seat {o.seat} discards {o.tile}{' crosswise (riichi)' if o.sideways else ''}"
    if isinstance(o, MeldSeen):
        source = f"called from the {o.from_side}" if o.from_side else "concealed kan"
        return f"seat {o.seat} melds {' '.join(o.tiles)} ({source})"
    if isinstance(o, KanAdded):
        return f"seat {o.seat} adds {o.tile} to its pon"
    if isinstance(o, DoraIndicatorSeen):
        return f"dora indicator {o.index + 1}: {o.tile}"
    if isinstance(o, UraIndicatorsSeen):
        return f"ura indicators: {' '.join(o.tiles)}"
    if isinstance(o, HandRevealed):
        win = f" + {o.win_tile} apart" if o.win_tile else ""
        return f"seat {o.seat} lays down {' '.join(o.tiles)}{win}"
    return type(o).__name__


def _shutdown(service, viewer, *others) -> None:
    service.stop()
    viewer.stop()
    for thing in others:
        if thing is not None:
            thing.stop()
