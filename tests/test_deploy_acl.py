"""The shipped broker setup (deploy/mosquitto.conf and deploy/acl) gives each account exactly its job.
A real Mosquitto runs the shipped ACL file as it is; only the listener (a free
loopback port, no WebSocket listener), the persistence directory and the password file (made here with
mosquitto_passwd) are adapted. Every account publishes to every topic (MQTT 5 PUBACK reason code: 135
is 'not authorised') and subscribes to every topic (does it see what an allowed writer publishes?)."""

from __future__ import annotations

import getpass
import re
import shutil
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from hardware_sims.pytest_plugin import eventually, subscribe
from tablesvc.config import parse_config
from tablesvc.service import TableService
from tests.conftest import Mosquitto

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
PASSWORD = "secret"
SERVICES = ("club-a/table-1", "club-a/table-2", "club-b/table-1")
REFEREES = {"referee-a": "club-a", "referee-a2": "club-a", "referee-b": "club-b"}  # account -> its site
WEB = {"web": None, "web-club-a": "club-a"}  # the web server's accounts -> the site it serves (None: every site)
PLAYER = "player-ann"  # an account the ACL does not name: what a player (or anyone) given a password gets
PEOPLE = (*REFEREES, *WEB, "viewer", "broadcast", PLAYER)
FEED = ("events", "state", "results", "mjai", "status", "errors", "devices/table", "sticks")
BROADCAST = ("broadcast/hands",)  # every concealed hand: the broadcast account alone reads it
TABLES = SERVICES  # the tables: site/table, as the service accounts are named
# each referee's MQTT 5 response topic, and one named like the web account (its console sets none: it reads none)
REPLIES = (*(f"cmd/reply/{referee}" for referee in REFEREES), "cmd/reply/web")


def topics() -> list[str]:
    return [f"tablesvc/{t}/{leaf}" for t in TABLES for leaf in (*FEED, *BROADCAST, "cmd", "cmd/reply", *REPLIES)]


def may_write(account: str, topic: str) -> bool:
    _, site, table, leaf = topic.split("/", 3)
    if account == f"{site}/{table}":  # a table service: its own feed and replies, never its own cmd
        return leaf != "cmd"
    if account in REFEREES:  # a referee: the commands of its own site's tables
        return leaf == "cmd" and site == REFEREES[account]
    if account in WEB:  # the web server, for the referees signed in to its console: the cmd of its site(s)
        return leaf == "cmd" and WEB[account] in (None, site)
    return False


def may_read(account: str, topic: str) -> bool:
    _, site, table, leaf = topic.split("/", 3)
    if account == f"{site}/{table}":
        return leaf in ("cmd", "state")
    if account in REFEREES:  # its site's feed and its own replies, not another referee's
        return site == REFEREES[account] and (leaf in FEED or leaf == f"cmd/reply/{account}")
    if account in WEB:  # its site(s)' feed and the plain replies to its console's commands; never cmd
        return WEB[account] in (None, site) and (leaf in FEED or leaf == "cmd/reply")
    if account == "viewer":
        return leaf in FEED
    if account == "broadcast":  # the public feed and the hands, never cmd nor replies
        return leaf in FEED or leaf in BROADCAST
    return False


@pytest.fixture
def deployed_broker(tmp_path):
    """Mosquitto with the shipped mosquitto.conf and acl, on a free loopback port."""
    passwd_tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    if not Path(passwd_tool).exists():
        pytest.skip("mosquitto_passwd is not installed (it comes with mosquitto)")
    broker = Mosquitto(tmp_path)
    passwd = tmp_path / "tablesvc.passwd"
    for i, account in enumerate(SERVICES + PEOPLE):
        subprocess.run([passwd_tool, "-b", *(["-c"] if i == 0 else []), str(passwd), account, PASSWORD],
                       check=True, capture_output=True)
    shipped = (DEPLOY / "mosquitto.conf").read_text()
    conf = re.sub(r"(?m)^listener 1883\n", f"listener {broker.port} 127.0.0.1\n", shipped)
    conf = re.sub(r"(?m)^listener 9001\nprotocol websockets\n", "", conf)  # no WebSocket listener in the test
    conf = conf.replace("persistence_location /var/lib/mosquitto/", f"persistence_location {tmp_path}/")
    conf = conf.replace("password_file /etc/mosquitto/tablesvc.passwd", f"password_file {passwd}")
    conf = conf.replace("acl_file /etc/mosquitto/tablesvc.acl", f"acl_file {DEPLOY / 'acl'}")  # as shipped
    assert f"listener {broker.port} 127.0.0.1" in conf and f"acl_file {DEPLOY / 'acl'}" in conf
    assert "allow_anonymous false" in conf
    broker.conf.write_text(f"user {getpass.getuser()}\n{conf}")
    broker.start()
    yield broker
    broker.stop()


class Account:
    """One account's MQTT 5 connection: what it received, and the reason code of each publish."""

    def __init__(self, port: int, name: str | None, password: str | None = PASSWORD, *,
                 reconnect: bool = True) -> None:
        self.name = name
        self.received: set[str] = set()
        self.payloads: Counter[tuple[str, bytes]] = Counter()  # how many times each (topic, payload) arrived
        self.acks: dict[int, int] = {}
        self.lock = threading.Lock()
        self.acked = threading.Condition(self.lock)  # a PUBACK wakes the publish waiting for it
        self.connected = threading.Event()
        self.connect_reason: int | None = None
        self.client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                                  client_id=f"acl-test-{name}-{time.monotonic_ns()}",
                                  reconnect_on_failure=reconnect)
        if name is not None:
            self.client.username_pw_set(name, password)
        self.client.on_connect = self._connected
        self.client.on_message = self._message
        self.client.on_publish = self._published
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        assert self.connected.wait(10)

    def _connected(self, _c, _u, _f, reason, _p) -> None:
        self.connect_reason = reason.value
        self.connected.set()

    def _message(self, _c, _u, msg) -> None:
        with self.lock:
            self.received.add(msg.topic)
            self.payloads[msg.topic, msg.payload] += 1

    def _published(self, _c, _u, mid, reason, _p) -> None:
        with self.acked:
            self.acks[mid] = reason.value
            self.acked.notify_all()

    def subscribe(self, topic: str) -> None:
        """Subscribe, returning once the broker has acknowledged it."""
        subscribe(self.client, topic)

    def wait_for(self, predicate, timeout: float = 15.0, what: str = "") -> None:
        eventually(predicate, timeout, what=f"{self.name}: {what} (received {sorted(self.received)})")

    def publish(self, topic: str, payload: str | None = None) -> int:
        """The broker's PUBACK reason code for one QoS 1 message (0 or 16: accepted, 135: not authorised)."""
        info = self.client.publish(topic, payload if payload is not None else f"from {self.name}", qos=1)
        with self.acked:
            assert self.acked.wait_for(lambda: info.mid in self.acks, 5), f"no PUBACK for {topic} from {self.name}"
            return self.acks[info.mid]

    def close(self) -> None:
        self.client.disconnect()  # first: it wakes the network loop, which loop_stop then joins at once
        self.client.loop_stop()


def publish_once(port: int, name: str, topic: str, payload: str | None = None) -> int:
    """One message from a fresh connection (Mosquitto 2.0 closes a connection after a refused publish)."""
    account = Account(port, name, reconnect=False)  # the loop ends with the connection: close() is quick
    try:
        return account.publish(topic, payload)
    finally:
        account.close()


def test_every_account_writes_and_reads_exactly_its_job(deployed_broker):
    port = deployed_broker.port
    readers = {name: Account(port, name) for name in SERVICES + PEOPLE}  # they only subscribe
    try:
        assert all(a.connect_reason == 0 for a in readers.values())
        for a in readers.values():
            for topic in topics():
                a.subscribe(topic)
        wrong: list[str] = []
        for name in readers:
            for topic in topics():
                code = publish_once(port, name, topic)
                if (code in (0, 16)) != may_write(name, topic) or code not in (0, 16, 135):
                    wrong.append(f"{name} publish {topic}: reason code {code}, expected "
                                 f"{'allowed' if may_write(name, topic) else 'refused (135)'}")
        # every accepted message has reached the subscribers that may read it: the broker delivers to each
        # subscriber in the order it accepted the messages, so a last message each reader may read, accepted
        # after all of them, arrives after them
        last = {name: t for name in readers
                for t in [next((t for t in topics() if may_read(name, t) and any(may_write(w, t) for w in readers)),
                               None)] if t is not None}
        for topic in set(last.values()):
            writer = next(w for w in readers if may_write(w, topic))
            assert publish_once(port, writer, topic, "last") in (0, 16)
        for name, topic in last.items():
            readers[name].wait_for(lambda r=readers[name], t=topic: r.payloads[t, b"last"],
                                   what=f"the last message on {topic}")
        # an account that may read nothing gets no last message: once the others have theirs, one more
        # subscription's acknowledgement comes to it on the same connection after anything sent to it before
        for name, reader in readers.items():
            if name not in last:
                reader.subscribe("tablesvc/nothing/after/the-matrix")
        for name, reader in readers.items():
            for topic in topics():
                if not any(may_write(w, topic) for w in readers):
                    continue  # nobody may write it: reading cannot be observed
                seen = topic in reader.received
                if seen != may_read(name, topic):
                    wrong.append(f"{name} read {topic}: {'saw it' if seen else 'did not see it'}")
        assert not wrong, "\n".join(wrong)
        # the matrix is not vacuous: each account was allowed something and refused something
        for name in readers:
            if name == PLAYER:
                continue  # granted nothing at all
            assert any(may_write(name, t) or may_read(name, t) for t in topics()), name
            assert any(not may_write(name, t) for t in topics()), name
    finally:
        for a in readers.values():
            a.close()


def test_the_shipped_broker_sends_replies_at_once():
    """Without set_tcp_nodelay the broker holds a command's reply, written right after its PUBACK to the
    referee, until the referee's delayed ACK (40 ms); the bench measured 48 ms a command instead of 3 to 8."""
    settings = [line.split() for line in (DEPLOY / "mosquitto.conf").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert ["set_tcp_nodelay", "true"] in settings
    assert not any(words[0] == "set_tcp_nodelay" and words[1:] != ["true"] for words in settings)


def test_no_anonymous_and_no_wrong_password(deployed_broker):
    anonymous = Account(deployed_broker.port, None)
    wrong = Account(deployed_broker.port, "viewer", "not the password")
    try:
        assert anonymous.connect_reason == 135 and wrong.connect_reason in (134, 135)
    finally:
        anonymous.close()
        wrong.close()


def test_a_table_service_runs_under_its_account(deployed_broker, tmp_path):
    """The service itself works through the shipped ACL: publishes its feed, takes commands and answers each
    where its sender, and only its sender, reads it: two referees of the same site on their own response
    topics, the web server (for a referee signed in to its console, with no response topic) on cmd/reply."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    port = deployed_broker.port
    base = "tablesvc/club-a/table-1"
    config = parse_config(f'[table]\nsite = "club-a"\nid = "table-1"\ndata_dir = "{tmp_path / "data"}"\n'
                          f'[mqtt]\nurl = "mqtt://club-a%2Ftable-1:{PASSWORD}@127.0.0.1:{port}"\n')
    viewer = Account(port, "viewer")
    viewer.subscribe("tablesvc/+/+/#")
    senders = {name: Account(port, name) for name in ("referee-a", "referee-a2", "web-club-a")}
    for sender in senders.values():  # each tries to read every reply of the table
        sender.subscribe(f"{base}/cmd/reply/#")
        sender.subscribe(f"{base}/cmd/reply")
    service = TableService(config)
    service.start()
    try:
        assert service.link.wait_connected(15), service.link.failure
        viewer.wait_for(lambda: f"{base}/status" in viewer.received, what="the status (online: its cmd "
                        "subscription is in place)")
        commands = {"referee-a": '{"command": "start_game", "transaction": "a-1"}',
                    "referee-a2": '{"command": "set_scores", "scores": [26000, 24000, 25000, 25000], '
                                  '"transaction": "a2-1"}',
                    "web-club-a": '{"command": "undo", "transaction": "web-1"}'}
        def ask(name: str, payload: str, replies: int) -> None:
            props = None
            if name.startswith("referee-"):
                props = Properties(PacketTypes.PUBLISH)
                props.ResponseTopic = f"{base}/cmd/reply/{name}"
            senders[name].client.publish(f"{base}/cmd", payload, qos=1, properties=props)
            expected = f"{base}/cmd/reply/{name}" if props else f"{base}/cmd/reply"
            senders[name].wait_for(lambda: sum(n for (t, _), n in senders[name].payloads.items() if t == expected)
                                   >= replies, what=f"reply {replies} on {expected}")

        for name, payload in commands.items():
            ask(name, payload, 1)
        assert service.journal.last_seq == 3
        # the viewer has every event (the last published after the broker took the last command, which it
        # would have passed on to the viewer by then)
        viewer.wait_for(lambda: sum(n for (t, _), n in viewer.payloads.items() if t == f"{base}/events") >= 3,
                        what="the three events")
        # anything misdelivered has arrived too: each sender asks again (the same transaction, answered again
        # and not carried out twice), and the service publishes that reply after every earlier one
        for name, payload in commands.items():
            ask(name, payload, 2)
        assert service.journal.last_seq == 3
        assert senders["referee-a"].received == {f"{base}/cmd/reply/referee-a"}  # not its colleague's reply
        assert senders["referee-a2"].received == {f"{base}/cmd/reply/referee-a2"}
        assert senders["web-club-a"].received == {f"{base}/cmd/reply"}
        assert not any(t.startswith(f"{base}/cmd") for t in viewer.received)  # nor commands, nor replies
    finally:
        service.stop()
        viewer.close()
        for sender in senders.values():
            sender.close()
