"""What a flood of refused commands leaves behind: `python bench/refusals.py [--quick]`

    python bench/refusals.py [--broker mqtt://host:port] [--commands 2000] [--quick]

One sender (MQTT 5, response topic ``cmd/reply/referee-flood``) sends
``--commands`` commands as fast as the broker takes them, each with its own
transaction, each refused by the engine (an ``undo`` with no game). Every one
is answered; the service reports the first few of the window in full and
counts the rest into one summary per sender and window (10 s). Printed:
replies, log lines, journal rows (remembered refusals and summaries) and
``errors`` messages, and the refusals they account for (the full reports plus
the summaries' counts: every refusal, none dropped). ``--quick``: 300 commands.
The broker is the given one, else a Mosquitto of its own (see bench/pipeline.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import json
import logging
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from bench.pipeline import start_broker, stop_broker
from tablesvc.config import parse_config
from tablesvc.service.table_service import COMMAND_WINDOW, TableService

SENDER = "referee-flood"


@dataclass
class Figures:
    commands: int
    replies: int
    log_lines: int
    journal_rows: int
    error_messages: int
    summaries: int
    counted: int  # refusals accounted for: reported in full, plus every summary's count
    seconds: float

    def line(self) -> str:
        return (f"{self.commands:,} refused commands in {self.seconds:.1f} s: {self.replies:,} replies, "
                f"{self.log_lines} log lines, {self.journal_rows} journal rows, {self.error_messages} errors "
                f"messages ({self.summaries} of them summaries); {self.counted:,} refusals accounted for")


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "tablesvc.service":
            self.count += 1


def flood(url: str, port: int, work: Path, commands: int = 2000) -> Figures:
    """Send ``commands`` refused commands to a table of its own in ``work``; what each channel got."""
    config = parse_config(f'[table]\nsite = "bench"\nid = "flood"\ndata_dir = "{work / "data"}"\n'
                          f'[mqtt]\nurl = "{url}"\n')
    base = config.topics.base
    lines = _Lines()
    logging.getLogger("tablesvc.service").addHandler(lines)
    service = TableService(config, new_game=True)
    service.start()
    got: dict[str, list[dict]] = {"reply": [], "errors": []}
    lock = threading.Lock()

    def message(_c, _u, msg) -> None:
        kind = "errors" if msg.topic.endswith("/errors") else "reply"
        with lock:
            got[kind].append(json.loads(msg.payload))

    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                         client_id=f"bench-flood-{time.monotonic_ns()}")
    client.on_message = message
    client.max_inflight_messages_set(1000)
    try:
        if not service.link.wait_ready(20):
            raise SystemExit(f"cannot reach the broker {url}")
        client.connect("127.0.0.1", port)
        client.subscribe([(f"{base}/cmd/reply/{SENDER}", 1), (f"{base}/errors", 1)])
        client.loop_start()
        time.sleep(0.3)
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = f"{base}/cmd/reply/{SENDER}"
        started = time.monotonic()
        for n in range(commands):
            client.publish(f"{base}/cmd", json.dumps({"command": "undo", "transaction": f"flood-{n}"}), qos=1,
                           properties=props)
        deadline = time.monotonic() + 60
        while len(got["reply"]) < commands and time.monotonic() < deadline:
            time.sleep(0.05)
        seconds = time.monotonic() - started

        def counted() -> int:
            with lock:
                return sum((e.get("detail") or {}).get("suppressed", 1) for e in got["errors"])

        deadline = time.monotonic() + COMMAND_WINDOW + 10  # the window's summary comes when it ends
        while counted() < commands and time.monotonic() < deadline:
            time.sleep(0.1)
        service.wait_idle(10)
    finally:
        client.loop_stop()
        client.disconnect()
        service.stop()
        logging.getLogger("tablesvc.service").removeHandler(lines)
    db = sqlite3.connect(work / "data" / "flood.sqlite3")
    rows = db.execute("SELECT (SELECT count(*) FROM commands) + (SELECT count(*) FROM refusals) + "
                      "(SELECT count(*) FROM entries)").fetchone()[0]
    db.close()
    return Figures(commands, len(got["reply"]), lines.count, rows, len(got["errors"]),
                   sum(1 for e in got["errors"] if (e.get("detail") or {}).get("suppressed")), counted(), seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--broker", help="mqtt://host:port (default: a Mosquitto of its own)")
    parser.add_argument("--commands", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="300 commands")
    args = parser.parse_args()
    commands = 300 if args.quick else args.commands
    with tempfile.TemporaryDirectory(prefix="tablesvc-bench-") as tmp:
        work = Path(tmp)
        url, owned = start_broker(args.broker, work)
        try:
            port = int(url.rsplit(":", 1)[1])
            print(flood(url, port, work, commands).line())
        finally:
            stop_broker(owned)
    return 0


if __name__ == "__main__":
    sys.exit(main())
