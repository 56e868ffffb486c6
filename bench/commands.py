"""Referee command round trip beside device frame latency: `python bench/commands.py [--quick]`

    python bench/commands.py [--broker mqtt://host:port] [--commands 200] [--frames 200] [--rate 20] [--quick]

Commands: a referee (paho, MQTT 5) sends ``set_scores`` to a running table,
one at a time, each with a response topic and correlation data, and waits for
its reply; measured from just before the publish to the reply's arrival. Each
command is validated, journalled (``journal_sync=full``: fsync), published
as an event and answered, so it does the work a device frame does plus the
reply.

Frames: a simulated automatic table on a real pseudo-terminal sends dice
frames (``--rate`` per second), measured from the write to the pty to the
event reaching a subscriber (as ``bench/pipeline.py``).

p50 and p99 of both are printed; the target is a command's p50 under 10 ms.
The broker is the given one, else a Mosquitto of its own if installed, else
the embedded amqtt broker (MQTT 3.1.1 only: replies then go to ``cmd/reply``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from bench.pipeline import latency, service_for, start_broker, stop_broker
from tablesvc.mqtt.link import IncomingMessage


class Referee:
    """A referee's client: one command at a time, waiting for its reply."""

    def __init__(self, port: int, table_topic: str, v5: bool) -> None:
        self.cmd = f"{table_topic}/cmd"
        self.v5 = v5
        self.reply_topic = f"{table_topic}/cmd/reply/bench" if v5 else f"{table_topic}/cmd/reply"
        self.replies: dict[str, tuple[float, dict]] = {}
        self.cond = threading.Condition()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, client_id="bench-referee",
                                  protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311)
        self.client.on_message = self._message
        # as the service's own link: without TCP_NODELAY the next command waits behind the PUBACK of the last
        # reply for the broker's delayed ACK (40 ms); docs/mqtt.md tells referee clients the same
        self.client.on_socket_open = lambda _c, _u, sock: sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client.connect("127.0.0.1", port)
        self.client.subscribe(self.reply_topic, qos=1)
        self.client.loop_start()
        time.sleep(0.3)

    def _message(self, _c, _u, msg) -> None:
        now = time.perf_counter()
        payload = json.loads(msg.payload)
        with self.cond:
            self.replies[payload.get("transaction")] = (now, payload)
            self.cond.notify_all()

    def send(self, command: dict, timeout: float = 10.0) -> tuple[float, dict] | None:
        """Seconds from publish to reply, and the reply; None when none came within ``timeout``."""
        transaction = command["transaction"]
        properties = None
        if self.v5:
            properties = Properties(PacketTypes.PUBLISH)
            properties.ResponseTopic = self.reply_topic
            properties.CorrelationData = transaction.encode()
        sent = time.perf_counter()
        self.client.publish(self.cmd, json.dumps(command), qos=1, properties=properties)
        with self.cond:
            if not self.cond.wait_for(lambda: transaction in self.replies, timeout):
                return None
            got, payload = self.replies[transaction]
        return got - sent, payload

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def commands(url: str, port: int, work: Path, count: int, v5: bool) -> tuple[list[float], int]:
    """Round trips in ms of ``count`` set_scores commands, and how many were refused."""
    service = service_for(url, work, "commands", serial=False)
    service.inbox.put(("cmd", IncomingMessage("bench", b'{"command": "start_game"}')))
    service.wait_idle(10)
    referee = Referee(port, "tablesvc/bench/commands", v5)
    samples: list[float] = []
    refused = 0
    try:
        for i in range(count):
            scores = [25000 + 100 * (i % 7), 25000, 25000, 25000 - 100 * (i % 7)]
            got = referee.send({"command": "set_scores", "transaction": f"bench-{i}", "scores": scores,
                                "reason": "bench"})
            if got is None:
                raise SystemExit(f"command {i} had no reply within 10 s")
            seconds, payload = got
            refused += payload.get("status") != "ok"
            samples.append(seconds * 1000)
    finally:
        referee.close()
        service.stop()
    return samples, refused


def describe(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms, max {ordered[-1]:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--broker", help="an MQTT broker URL (default: own Mosquitto, else embedded)")
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20.0, help="dice frames per second (table speed)")
    parser.add_argument("--quick", action="store_true", help="30 commands and 30 frames (what the tests run)")
    args = parser.parse_args()
    if args.quick:
        args.commands, args.frames = 30, 30
    work = Path(tempfile.mkdtemp(prefix="tablesvc-bench-"))
    url, owned = start_broker(args.broker, work)
    port = int(url.rsplit(":", 1)[1])
    v5 = owned is None or owned[0] == "mosquitto"
    try:
        command_ms, refused = commands(url, port, work, args.commands, v5)
        frame_ms = latency(url, port, work, args.frames, args.rate, "full")
    finally:
        stop_broker(owned)
    print(f"broker                    {owned[0] if owned else url}")
    print(f"referee command -> reply  {len(command_ms)} set_scores, one at a time, journal_sync=full, MQTT "
          f"{'5 response topic' if v5 else '3.1.1 cmd/reply'}: {describe(command_ms)} (target p50 < 10 ms); "
          f"{refused} refused")
    print(f"device frame -> subscriber {len(frame_ms)}/{args.frames} frames at {args.rate:g}/s, "
          f"journal_sync=full: {describe(frame_ms)}")


if __name__ == "__main__":
    main()
