"""Failures speak: an unreachable broker, a certificate problem and a line that echoes
are said plainly, within seconds, and a device that keeps being refused is reported in bursts, not a
message per frame. Against a real Mosquitto (TLS listener included), real subprocesses and pyserial."""

from __future__ import annotations

import json
import logging
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import serial

from drivers.observations import DiceRolled
from drivers.protocol import HostProtocol, encode
from drivers.serial_driver import SerialDriver
from hardware_sims.pytest_plugin import Recorder, eventually
from tablesvc.config import parse_config
from tablesvc.mqtt.link import MqttLink
from tablesvc.mqtt.url import BrokerURL
from tablesvc.service import TableService
from tests.conftest import Mosquitto
from tests.test_service_mqtt import Subscriber, config_text, run_logged

CLI = [sys.executable, "-m", "tablesvc"]


# ---------------------------------------------------------------- an unreachable broker


def test_watch_once_keeps_its_deadline_and_says_why(refusing_port):
    port = refusing_port
    start = time.monotonic()
    proc = subprocess.run([*CLI, "watch", "--broker", f"mqtt://127.0.0.1:{port}", "--once", "3"],
                          capture_output=True, text=True, timeout=30)
    elapsed = time.monotonic() - start
    assert proc.returncode == 1
    assert f"connection refused at 127.0.0.1:{port}" in proc.stderr
    assert "WARNING" in proc.stderr  # logged as well as printed
    # its 3 s and the interpreter's start, even on a busy machine; a deadline not kept is paho retrying until the
    # 30 s of subprocess.run
    assert elapsed < 3 + 12, elapsed


def test_demo_with_an_unreachable_broker_exits_saying_why(refusing_port):
    port = refusing_port
    start = time.monotonic()
    proc = subprocess.run([*CLI, "demo", "--broker", f"mqtt://127.0.0.1:{port}", "--seed", "1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"cannot reach the broker mqtt://127.0.0.1:{port}: connection refused" in proc.stderr
    assert time.monotonic() - start < 15
    # its service and its viewer both fail to connect: said once, and as what happens (it gives up), not as
    # 'retrying with backoff' just before it exits
    said = [line for line in proc.stderr.splitlines() if "WARNING tablesvc.mqtt.link: cannot connect" in line]
    assert len(said) == 1 and "; giving up after " in said[0], proc.stderr
    assert "retrying" not in proc.stderr


def test_run_says_why_and_keeps_retrying_until_the_broker_comes(tmp_path):
    broker = Mosquitto(tmp_path)  # its port is chosen but it is not started yet
    proc, log = run_logged(broker.url, tmp_path)
    try:
        eventually(lambda: f"connection refused at 127.0.0.1:{broker.port}" in log.read_text(), 10,
                   what="the refusal in the log")
        assert "WARNING tablesvc.mqtt.link: cannot connect to the broker" in log.read_text()
        assert "retrying with backoff (1 to 30 s)" in log.read_text() and "giving up" not in log.read_text()
        assert proc.poll() is None  # still there, retrying
        broker.start()
        sub = Subscriber(broker.port)
        try:
            assert sub.wait_for(lambda: any(p["status"] == "online" for p in sub.of("status")), 40), log.read_text()
        finally:
            sub.close()
        assert "connected to the broker" in log.read_text()  # and says so after the failures
    finally:
        proc.terminate()
        proc.wait(15)
        broker.stop()


def test_run_told_to_stop_while_it_waits_for_its_broker_stops_then(tmp_path, refusing_port):
    """An empty journal makes ``tablesvc run`` ask the broker first whether it still shows the table's game; a
    service stopped (SIGTERM, as systemd stops it) while that question waits for an unreachable broker stops at
    once, saying the broker was never asked, instead of at the end of the question's 10 s."""
    proc, log = run_logged(f"mqtt://127.0.0.1:{refusing_port}", tmp_path)
    try:
        eventually(lambda: f"connection refused at 127.0.0.1:{refusing_port}" in log.read_text(), 10,
                   what="the refusal in the log")
        proc.terminate()
        assert proc.wait(5) == 1, log.read_text()  # within the question's 10 s
        said = log.read_text()
        assert "the broker could not be asked" in said and "stopped before the broker" in said, said
        assert "asking the broker again" not in said, said  # stopping, not retrying
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


@pytest.mark.parametrize("waited", [False, True])
def test_links_to_one_unreachable_broker_say_it_once_as_what_follows(caplog, waited, refusing_port):
    """Two links of one process fail alike (the demo's service and viewer; tablesvc run's service and web
    server): one warning, worded as what happens next: a caller waiting with a deadline gives up, else paho
    keeps retrying."""
    url = BrokerURL.parse(f"mqtt://127.0.0.1:{refusing_port}")  # nothing listens there
    links = [MqttLink(url, client_id=f"said-once-{n}-{time.monotonic_ns()}", on_connected=lambda: None)
             for n in range(2)]
    with caplog.at_level(logging.DEBUG, logger="tablesvc.mqtt.link"):
        for link in links:
            link.start()
        try:
            if waited:
                assert not links[0].wait_connected_or_failed(10)
            # both have failed, and the later one's failure went unsaid
            eventually(lambda: all(link.failed.is_set() for link in links) and any(
                "(said already)" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG), 15,
                what="both links failed, the second's failure said already")
        finally:
            for link in links:
                link.stop()
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1, said
    assert f"cannot connect to the broker {url}: connection refused at 127.0.0.1:{url.port}" in said[0]
    then = r"; giving up after \d+ attempts?" if waited else r"; retrying with backoff \(1 to 30 s\)"
    assert re.search(then + "$", said[0]), said[0]
    assert any("(said already)" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)


# ---------------------------------------------------------------- certificates


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(d: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             cwd=d)


def _server_cert(d: Path, ca: str, name: str, san: str) -> None:
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
             f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
    (d / f"{name}.ext").write_text(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\n"
                                   "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
             "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=d)


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory):
    """A Mosquitto with a TLS listener whose certificate names only 'broker.club.example', signed by 'club-ca';
    another CA, 'stranger-ca', signed nothing the broker shows."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    d = tmp_path_factory.mktemp("tls")
    _ca(d, "club-ca")
    _ca(d, "stranger-ca")
    _server_cert(d, "club-ca", "broker", "DNS:broker.club.example")
    broker = Mosquitto(d)
    broker.conf.write_text(broker.conf.read_text().replace(
        "allow_anonymous true\n",
        f"allow_anonymous true\ncafile {d}/club-ca.crt\ncertfile {d}/broker.crt\nkeyfile {d}/broker.key\n"))
    broker.start()
    yield broker, d
    broker.stop()


def _link(url: str, ca_file: str | None) -> MqttLink:
    return MqttLink(BrokerURL.parse(url), client_id=f"tls-test-{time.monotonic_ns()}", on_connected=lambda: None,
                    ca_file=ca_file)


@pytest.mark.parametrize(("ca", "host", "named"), [
    ("stranger-ca", "127.0.0.1", "not signed by the CA in [mqtt] ca_file"),
    (None, "127.0.0.1", "not signed by a CA this system trusts: set [mqtt] ca_file"),
    ("club-ca", "127.0.0.1", "the broker's certificate is for another host"),
])
def test_a_certificate_problem_is_named_at_error(tls_broker, caplog, monkeypatch, ca, host, named):
    import tablesvc.mqtt.link as link_module

    broker, d = tls_broker
    probed = Recorder()  # what the link found out, and on which thread
    real_probe = link_module.probe

    def probe(*args, **kwargs):
        found = real_probe(*args, **kwargs)
        probed((threading.current_thread().name, found))
        return found

    monkeypatch.setattr(link_module, "probe", probe)
    link = _link(f"mqtts://{host}:{broker.port}", str(d / f"{ca}.crt") if ca else None)
    with caplog.at_level(logging.INFO, logger="tablesvc.mqtt.link"):
        link.start()
        try:
            assert not link.wait_connected_or_failed(10)
            # past the window after which a silent broker is taken for a 3.1.1-only one, the handshake's watch
            # probes: it names the certificate (None, a silent broker, would have been the fall back to 3.1.1)
            found = probed.wait_for(lambda seen: [f for thread, f in seen if thread == "mqtt-handshake"], 15,
                                    what="the probe after the handshake window")
            assert found[0] is not None and named in found[0][1], found
        finally:
            link.stop()
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("TLS certificate rejected" in m and named in m for m in errors), caplog.text
    assert named in (link.failure or "")
    assert "does not speak MQTT 5" not in caplog.text


def test_the_right_ca_and_host_connect(tls_broker, monkeypatch):
    """The same broker with the club's CA and its own name: the TLS setup of the tests above is sound."""
    broker, d = tls_broker
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: real(
        "127.0.0.1" if host == "broker.club.example" else host, *a, **k))
    link = _link(f"mqtts://broker.club.example:{broker.port}", str(d / "club-ca.crt"))
    link.start()
    try:
        assert link.wait_connected(10), link.failure
    finally:
        link.stop()


def test_a_missing_ca_file_is_named(tmp_path):
    missing = tmp_path / "nowhere" / "ca.crt"
    with pytest.raises(ValueError, match=f"the broker's CA file {missing} does not exist"):
        _link("mqtts://127.0.0.1:8883", str(missing))


def test_the_broker_connection_sends_at_once(mosquitto):
    """TCP_NODELAY on the service's connection (without it Nagle holds a command's reply about 40 ms)."""
    link = _link(mosquitto.url, None)
    link.start()
    try:
        assert link.wait_connected(10)
        sock = link._client.socket()
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        link.stop()


# ---------------------------------------------------------------- a line that echoes, a device refused


def test_a_line_that_echoes_is_not_answered():
    """On pyserial's loop:// every frame the host writes comes back; answering it made 5,500 frames/s."""
    writes: list[bytes] = []

    class Counting:
        def __init__(self, port):
            self.port = port

        def __getattr__(self, name):
            return getattr(self.port, name)

        def write(self, data):
            writes.append(data)
            return self.port.write(data)

    driver = SerialDriver("table", "loop://", on_observation=lambda _o: None, heartbeat_timeout=1.0,
                          serial_factory=lambda url, **kw: Counting(serial.serial_for_url(url, **kw)))
    driver.start()
    try:
        # the echo of two PINGs heard and refused: the second was written after the heartbeat timeout (1 s),
        # in which answering the echo would have written thousands of frames
        eventually(lambda: driver.health().frames_bad["unknown"] >= 2, 15, what="two echoes refused")
    finally:
        driver.stop()
    assert len(writes) <= 10, writes  # a PING per (re)connection and probe, nothing answering the echo


def test_naks_are_rate_limited():
    protocol = HostProtocol(naks_per_second=10)
    bad = b"".join(encode("PNL1", i, "BTN", "9", "ron") for i in range(1000))  # seat 9: refused, NAKed
    protocol.data_received(bad, now=100.0)
    first = protocol.data_to_send().count(b",NAK,")
    protocol.data_received(bad, now=101.0)  # a second later: the bucket refilled
    second = protocol.data_to_send().count(b",NAK,")
    assert first == 10 and second == 10
    assert protocol.naks_withheld == 1980


def test_ten_thousand_refusals_make_a_bounded_report_that_counts_them_all(mosquitto, tmp_path, caplog):
    service = TableService(parse_config(config_text(mosquitto.url, tmp_path / "data")))
    service.start()
    sub = Subscriber(mosquitto.port)
    try:
        assert service.link.wait_connected(15)
        with caplog.at_level(logging.WARNING, logger="tablesvc.service"):
            started = time.monotonic()
            for i in range(10_000):  # dice with no game started: every one refused by the engine
                service.observe(DiceRolled(device="TBL1", seq=i % 10000, timestamp=0.0, d1=3, d2=4))
            assert service.wait_idle(120)
            elapsed = time.monotonic() - started

            def counted() -> int:
                return sum((e.get("detail") or {}).get("suppressed", 1) for e in sub.of("errors"))

            assert sub.wait_for(lambda: counted() == 10_000, 10), counted()
        messages = sub.of("errors")
        windows = elapsed + 2  # one window a second, the last closed after the inputs stopped
        assert len(messages) <= 6 * windows, (len(messages), elapsed)
        refusals = [r for r in caplog.records if r.name == "tablesvc.service"]
        assert len(refusals) <= 6 * windows
        summaries = [e for e in messages if (e.get("detail") or {}).get("suppressed")]
        assert summaries and all("more refused from TBL1" in e["error"] for e in summaries)
        assert all(e["source"] == "TBL1" for e in messages)
    finally:
        sub.close()
        service.stop()
    assert json.dumps(messages)  # plain JSON, as consumers read it


def test_ten_thousand_refused_frames_on_a_serial_line(mosquitto, pty_device, tmp_path, caplog):
    """End to end: 10,000 good frames on the automatic table's line that the game refuses
    (dice with no game started) give a bounded number of `errors` messages and warnings, which count them all."""
    device = pty_device("table", "TBL1")
    config = parse_config(config_text(mosquitto.url, tmp_path / "data")
                          + f'[[serial]]\nname = "table"\nurl = "{device.link_path}"\nkind = "table"\nids = ["TBL1"]\n')
    service = TableService(config)
    service.start()
    sub = Subscriber(mosquitto.port)
    try:
        assert service.link.wait_connected(15)
        assert device.wait_acked(device.roll_dice(1, 1), 10)  # the driver reads the line: 1 refusal
        with caplog.at_level(logging.WARNING, logger="tablesvc.service"):
            started = time.monotonic()
            # flow-controlled: as fast as the driver reads, none lost however loaded the machine is
            device.flood(b"".join(encode("TBL1", 1000 + i, "DICE", 3, 4) for i in range(9_999)))

            def counted() -> int:
                return sum((e.get("detail") or {}).get("suppressed", 1) for e in sub.of("errors"))

            assert sub.wait_for(lambda: counted() == 10_000, 120), counted()
            elapsed = time.monotonic() - started
        messages = sub.of("errors")
        assert len(messages) <= 6 * (elapsed + 3), (len(messages), elapsed)
        assert len([r for r in caplog.records if r.name == "tablesvc.service"]) <= 6 * (elapsed + 3)
    finally:
        sub.close()
        service.stop()
