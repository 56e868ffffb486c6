"""Events per second through the whole pipeline, and device-frame-to-subscriber latency.

    python bench/pipeline.py [--broker mqtt://host:port] [--frames 300] [--rate 20] [--games 2] [--quick]

Latency: a simulated automatic table on a real pseudo-terminal sends dice
frames at table speed (``--rate`` per second); each goes through the pyserial
driver, fusion, the engine, the journal (SQLite, fsync per event), the
publisher and the broker to a subscriber. Measured from the moment the frame
is written to the pty to the moment the subscriber has the event; p50 and
p99 printed. The target is p99 under 20 ms on loopback.

Throughput: generated games fed as fast as the service takes them (camera
and panel observations in-process), until the subscriber has every event.

The broker is the given one, else a Mosquitto of its own if installed, else
the embedded amqtt broker.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from hardware_sims.devices import PtyDevice
from hardware_sims.generator import generate_game
from hardware_sims.table import DirectOutputs, TableSimulator
from tablesvc.broker import EmbeddedBroker, free_port
from tablesvc.config import parse_config
from tablesvc.mqtt.link import IncomingMessage
from tablesvc.service import TableService


class Counter:
    def __init__(self, port: int, topic: str) -> None:
        self.times: dict[int, float] = {}
        self.cond = threading.Condition()
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe(topic, qos=1)
        self.client.loop_start()
        time.sleep(0.3)

    def _message(self, _c, _u, msg) -> None:
        now = time.perf_counter()
        seq = int(msg.payload.split(b'"seq":', 1)[1].split(b",", 1)[0])
        with self.cond:
            self.times.setdefault(seq, now)
            self.cond.notify_all()

    def wait(self, seq: int, timeout: float = 10.0) -> float | None:
        with self.cond:
            self.cond.wait_for(lambda: seq in self.times, timeout)
            return self.times.get(seq)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def start_broker(url: str | None, work: Path):
    if url:
        return url, None
    binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)
    if binary:
        import getpass

        port = free_port()
        conf = work / "mosquitto.conf"
        # set_tcp_nodelay as deploy/mosquitto.conf recommends (a reply right after a PUBACK waits 40 ms without)
        conf.write_text(f"user {getpass.getuser()}\nlistener {port} 127.0.0.1\nallow_anonymous true\n"
                        "max_queued_messages 0\nset_tcp_nodelay true\n")
        proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        return f"mqtt://127.0.0.1:{port}", ("mosquitto", proc)
    broker = EmbeddedBroker()
    broker.start()
    return broker.url, ("amqtt", broker)


def stop_broker(owned) -> None:
    if owned is not None:
        kind, thing = owned
        if kind == "mosquitto":
            thing.terminate()
            thing.wait(10)
        else:
            thing.stop()


def service_for(url: str, work: Path, table: str, serial: bool, sync: str = "full") -> TableService:
    extra = f'[[serial]]\nname = "table"\nurl = "{work / "ttyBENCH"}"\nkind = "table"\nids = ["TB"]\n' if serial else ""
    config = parse_config(f'[table]\nsite = "bench"\nid = "{table}"\ndata_dir = "{work / "data"}"\n'
                          f'journal_sync = "{sync}"\n[mqtt]\nurl = "{url}"\n{extra}')
    service = TableService(config)
    service.start()
    if not service.link.wait_connected(20):
        raise SystemExit(f"cannot reach the broker {url}")
    return service


def latency(url: str, port: int, work: Path, frames: int, rate: float, sync: str) -> list[float]:
    device = PtyDevice("TB", "table", work / "ttyBENCH")
    device.start()
    service = service_for(url, work, f"latency-{sync}", serial=True, sync=sync)
    counter = Counter(port, f"tablesvc/bench/latency-{sync}/events")
    service.inbox.put(("cmd", IncomingMessage("bench", b'{"command": "start_game"}')))
    seq = 1
    if counter.wait(seq) is None:
        raise SystemExit("the game did not start")
    samples: list[float] = []
    time.sleep(1.0)  # the driver has connected
    for i in range(frames):
        sent = time.perf_counter()
        device.roll_dice(1 + i % 6, 1 + (i // 6) % 6)
        got = counter.wait(seq + 1 + i)
        if got is not None:
            samples.append((got - sent) * 1000)
        time.sleep(max(0.0, 1 / rate - (time.perf_counter() - sent)))
    counter.close()
    service.stop()
    device.stop()
    return samples


def throughput(url: str, port: int, work: Path, games: int) -> tuple[int, float]:
    events = 0
    elapsed = 0.0
    for g in range(games):
        record = generate_game(100 + g)
        service = service_for(url, work, f"throughput-{g}", serial=False)
        counter = Counter(port, f"tablesvc/bench/throughput-{g}/events")
        def start_game(_event, s=service) -> None:
            s.inbox.put(("cmd", IncomingMessage("bench", b'{"command": "start_game"}')))

        start = time.perf_counter()
        sim = TableSimulator(record, DirectOutputs(service.observe), start_game=start_game)
        sim.run()
        service.wait_idle(60)
        last = service.journal.last_seq
        counter.wait(last, 60)
        elapsed += time.perf_counter() - start
        events += last
        counter.close()
        service.stop()
    return events, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--broker", help="an MQTT broker URL (default: own Mosquitto, else embedded)")
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20.0, help="dice frames per second (table speed)")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="20 frames and 1 game (what the tests run)")
    args = parser.parse_args()
    if args.quick:
        args.frames, args.games = 20, 1
    work = Path(tempfile.mkdtemp(prefix="tablesvc-bench-"))
    url, owned = start_broker(args.broker, work)
    port = int(url.rsplit(":", 1)[1])
    try:
        samples = {sync: latency(url, port, work, args.frames, args.rate, sync) for sync in ("full", "normal")}
        events, elapsed = throughput(url, port, work, args.games)
    finally:
        stop_broker(owned)
    broker = owned[0] if owned else url
    print(f"broker                    {broker}")
    for sync, got in samples.items():
        got.sort()
        p99 = got[min(len(got) - 1, int(len(got) * 0.99))] if got else float("nan")
        print(f"device frame -> subscriber, journal_sync={sync:<6} {len(got)}/{args.frames} frames at {args.rate:g}/s: "
              f"p50 {statistics.median(got):.1f} ms, p99 {p99:.1f} ms, max {got[-1]:.1f} ms (target p99 < 20 ms)")
    print(f"pipeline throughput       {events / elapsed:8.0f} events/s ({events} events of {args.games} games in "
          f"{elapsed:.1f} s, journal fsync per event, every event received by a subscriber)")


if __name__ == "__main__":
    main()
