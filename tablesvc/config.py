"""The service's configuration: one TOML file per table, checked before anything starts.

A bad file fails at start with a message naming the key and its line
(``table.toml line 7: [mqtt] url: the scheme must be mqtt:// or mqtts://``),
and unknown keys are refused rather than ignored, so a misspelt setting
cannot silently fall back to a default. ``docs/configuration.md`` lists every
key; ``tablesvc run --config FILE --check`` validates without starting.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drivers.binding import LinkBinding
from drivers.observations import DeviceKind
from tablesvc.engine.engine import Engine, Rejected
from tablesvc.engine.events import GameStart
from tablesvc.mqtt.topics import TopicTree
from tablesvc.mqtt.url import BrokerURL
from tablesvc.rules.ruleset import UnknownRuleSetError, get_ruleset
from tablesvc.text import REFEREE_NAME_PATTERN

__all__ = ["SEATS", "CameraConfig", "Config", "ConfigError", "MqttConfig", "SeatCameraConfig", "SerialConfig",
           "TableConfig", "WebConfig", "load_config", "load_web_config"]

#: a seat camera's ``seat``: the seat it is fixed to, by the wind its player holds in the game's first hand
SEATS = ("E", "S", "W", "N")


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the file, line and key."""


@dataclass(frozen=True)
class TableConfig:
    site: str
    id: str
    rules: str = "ema2012"
    data_dir: Path = Path("data")
    players: tuple[str, str, str, str] = ("East", "South", "West", "North")
    journal_sync: str = "full"


@dataclass(frozen=True)
class MqttConfig:
    url: BrokerURL
    prefix: str = "tablesvc"
    protocol: str = "auto"
    ca_file: str | None = None
    client_id: str | None = None


@dataclass(frozen=True)
class SerialConfig:
    """One serial link: its name, URL, and who may speak on it (``binding``: ids, kind, seats)."""

    name: str
    url: str
    binding: LinkBinding
    heartbeat_timeout: float = 3.0


@dataclass(frozen=True)
class CameraConfig:
    name: str
    source: str | int
    calibration: Path | None = None
    tiles: Path | None = None
    model: Path | None = None
    snapshot_interval: float = 5.0  # seconds between annotated snapshots on camera/<name>/snapshot


@dataclass(frozen=True)
class SeatCameraConfig:
    """A seat camera (``[[camera]] kind = "hand"``): a webcam fixed to one seat reading that player's standing
    hand. ``seat`` 0..3 (E, S, W, N: the seat first East is 0); ``calibration`` the row's strip
    (``tablesvc vision seat-calibrate``); ``model`` the set enrolled from this camera
    (``tablesvc vision seat-enroll``) or ``tiles`` a directory of the set's faces. What it reads is private:
    no snapshots are published."""

    name: str
    seat: int
    source: str | int
    calibration: Path
    tiles: Path | None = None
    model: Path | None = None


@dataclass(frozen=True)
class WebConfig:
    """The web server (overlay, dashboard, referee console): ``[web]``."""

    listen: str = "127.0.0.1:8080"
    site: str | None = None  # only this site's tables (default: every site on the broker)
    referee_password: str | None = field(default=None, repr=False)  # scrypt hash: tablesvc web --hash-password
    secret_key: str | None = field(default=None, repr=False)  # signs session cookies (default: random per start)
    referee_token: str | None = field(default=None, repr=False)  # sent with commands when tables want a token
    idle_alert: float = 600.0  # seconds without an event before the dashboard flags a game as idle
    records_db: str | None = None  # the records database (SQLite path or postgresql:// URL): /standings
    rules: str | None = None  # the rules /score values hands under (default: [table] rules, else ema2012)
    photo_model: str | None = None  # a club's enrolled tile set for /score's photos (default: the packaged sets)
    referees: dict[str, str] = field(default_factory=dict, repr=False)  # [web.referees] NAME = scrypt hash
    session_idle: float = 3600.0  # seconds without a request before a referee's session ends
    https: bool = False  # served over TLS (directly or by a proxy): session cookies are sent Secure
    trusted_proxies: tuple[str, ...] = ()  # proxies whose X-Forwarded-For/-Proto are believed
    broadcast_key: str | None = field(default=None, repr=False)  # the broadcast scenes' ?key= (none: no scenes)
    broadcast_broker: str | None = field(default=None, repr=False)  # the broadcast account's URL (the hands)

    @property
    def accounts(self) -> dict[str, str]:
        """Every referee account, name -> password hash: ``[web.referees]``, and ``referee_password`` as the
        account named ``referee``."""
        accounts = dict(self.referees)
        if self.referee_password:
            accounts.setdefault("referee", self.referee_password)
        return accounts


@dataclass(frozen=True)
class Config:
    table: TableConfig
    mqtt: MqttConfig
    serial: tuple[SerialConfig, ...] = ()
    camera: CameraConfig | None = None
    """The table camera: ``[camera]``, or the ``[[camera]]`` entry of kind ``"table"``."""
    seat_cameras: tuple[SeatCameraConfig, ...] = ()
    """The seat cameras: ``[[camera]]`` entries of kind ``"hand"``, at most one per seat."""
    command_tokens: tuple[str, ...] = field(default=(), repr=False)
    web: WebConfig | None = None
    source: str = "<config>"
    start: dict[str, Any] = field(default_factory=dict)
    """``[start]``: the situation a ``start_game`` without one takes the game up in (GameStart's fields)."""
    broadcast_delay: float = 0.0
    """``[broadcast] delay_s``: how long ``broadcast/hands`` is held back (a tournament stream runs behind)."""

    @property
    def topics(self) -> TopicTree:
        return TopicTree(self.mqtt.prefix, self.table.site, self.table.id)


_SECTIONS = {
    "table": {"site", "id", "rules", "data_dir", "players", "journal_sync"},
    "mqtt": {"url", "prefix", "protocol", "ca_file", "client_id"},
    "serial": {"name", "url", "kind", "ids", "seats", "heartbeat_timeout"},
    "camera": {"kind", "name", "seat", "source", "calibration", "tiles", "model", "snapshot_interval"},
    "commands": {"tokens"},
    "start": {"round", "honba", "sticks", "scores", "dealer"},
    "broadcast": {"delay_s"},
    "web": {"listen", "site", "referee_password", "secret_key", "referee_token", "idle_alert",
            "records_db", "rules", "photo_model", "referees", "session_idle", "https", "trusted_proxies",
            "broadcast_key", "broadcast_broker"},
}


class _Checker:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, section: str, key: str | None, index: int | None = None) -> int | None:
        """The line of ``key`` (None: the section's header) in ``section``; ``index``: in the index-th
        ``[[section]]`` entry only (0 is the first)."""
        current = None
        seen = -1
        for number, line in enumerate(self.lines, 1):
            header = re.match(r"\s*\[\[?\s*([\w.-]+)\s*\]\]?", line)
            if header:
                current = header.group(1)
                if current == section:
                    seen += 1
                if key is None and current == section and (index is None or seen == index):
                    return number
                continue
            if (current == section and key is not None and (index is None or seen == index)
                    and re.match(rf"\s*{re.escape(key)}\s*=", line)):
                return number
        return None

    def fail(self, section: str, key: str | None, message: str, index: int | None = None) -> ConfigError:
        line = self.line_of(section, key, index)
        if line is None and key is not None and index is not None:  # a key the entry lacks: its header's line
            line = self.line_of(section, None, index)
        where = f"{self.path} line {line}" if line else self.path
        name = f"[{section}] {key}" if key else f"[{section}]"
        return ConfigError(f"{where}: {name}: {message}")

    def get(self, data: dict[str, Any], section: str, key: str, kind: type | tuple[type, ...], default: Any = ...,
            index: int | None = None) -> Any:
        if key not in data:
            if default is ...:
                raise self.fail(section, None, f"the key {key!r} is required", index)
            return default
        value = data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise self.fail(section, key, f"expected {names}, not {value!r}", index)
        return value

    def known(self, data: dict[str, Any], section: str, index: int | None = None) -> None:
        unknown = sorted(set(data) - _SECTIONS[section])
        if unknown:
            raise self.fail(section, unknown[0], f"unknown key (known: {', '.join(sorted(_SECTIONS[section]))})",
                            index)


def _topic_safe(value: str) -> bool:
    return bool(value) and not any(ch in value for ch in "/+#\0 \t")


def _binding(c: _Checker, entry: dict[str, Any], name: str, owners: dict[str, str]) -> LinkBinding:
    """``kind``, ``ids`` and ``seats`` of one [[serial]]: who may speak on the link (a frame from any other id,
    or what its kind may not send, is refused), so both are required."""
    kinds = ", ".join(k.value for k in DeviceKind)
    kind = c.get(entry, "serial", "kind", str, None)
    if kind is None:
        raise c.fail("serial", None, f"{name}: the key 'kind' is required ({kinds}): what is wired to this link")
    if kind not in {k.value for k in DeviceKind}:
        raise c.fail("serial", "kind", f"one of {kinds}, not {kind!r}")
    if "ids" not in entry:
        raise c.fail("serial", None, f"{name}: the key 'ids' is required: the device ids that may speak on this "
                     'link, e.g. ids = ["T1"] (the id each device sends in its frames)')
    ids = c.get(entry, "serial", "ids", list)
    if not ids or not all(isinstance(x, str) and _DEVICE_ID.fullmatch(x) for x in ids) or "ALL" in ids:
        raise c.fail("serial", "ids", "one or more device ids, each 1 to 16 of A-Z a-z 0-9 _ - (not ALL)")
    for device in ids:
        if device in owners:
            raise c.fail("serial", "ids", f"{device!r} is configured for both {owners[device]!r} and {name!r}")
        owners[device] = name
    seats = c.get(entry, "serial", "seats", list, [0, 1, 2, 3])
    if kind != DeviceKind.PANEL.value and "seats" in entry:
        raise c.fail("serial", "seats", "only a panel serves seats")
    if not seats or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 3 for x in seats) or len(
            set(seats)) != len(seats):
        raise c.fail("serial", "seats", f"one or more different seats 0..3, not {seats!r}")
    return LinkBinding(DeviceKind(kind), frozenset(ids), frozenset(seats))


_DEVICE_ID = re.compile(r"[A-Za-z0-9_-]{1,16}")


def load_config(path: str | Path) -> Config:
    """Read and check a table's TOML configuration."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration {p}: {exc.strerror}") from None
    return parse_config(text, str(p), base=p.parent)


def parse_config(text: str, path: str = "<config>", *, base: Path | None = None) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    c = _Checker(path, text)
    unknown = sorted(set(data) - set(_SECTIONS))
    if unknown:
        raise c.fail(unknown[0], None, f"unknown section (known: {', '.join(sorted(_SECTIONS))})")
    for section in ("table", "mqtt"):
        if not isinstance(data.get(section), dict):
            raise ConfigError(f"{path}: the section [{section}] is required")

    t = data["table"]
    c.known(t, "table")
    rules = c.get(t, "table", "rules", str, "ema2012")
    try:
        get_ruleset(rules)  # a preset, optionally with house rules after it
    except UnknownRuleSetError as exc:
        raise c.fail("table", "rules", str(exc)) from None
    players = c.get(t, "table", "players", list, ["East", "South", "West", "North"])
    if len(players) != 4 or not all(isinstance(x, str) and x.strip() for x in players):
        raise c.fail("table", "players", "four non-empty names, seat 0 (first East) to seat 3")
    data_dir = Path(c.get(t, "table", "data_dir", str, "data"))
    if base is not None and not data_dir.is_absolute():
        data_dir = base / data_dir
    sync = c.get(t, "table", "journal_sync", str, "full")
    if sync not in ("full", "normal"):
        raise c.fail("table", "journal_sync", f"'full' (survives a power cut) or 'normal', not {sync!r}")
    table = TableConfig(site=c.get(t, "table", "site", str), id=c.get(t, "table", "id", str), rules=rules,
                        data_dir=data_dir, players=(players[0], players[1], players[2], players[3]),
                        journal_sync=sync)

    m = data["mqtt"]
    c.known(m, "mqtt")
    try:
        url = BrokerURL.parse(c.get(m, "mqtt", "url", str))
    except ValueError as exc:
        raise c.fail("mqtt", "url", str(exc)) from None
    protocol = c.get(m, "mqtt", "protocol", str, "auto")
    if protocol not in ("auto", "5", "3.1.1"):
        raise c.fail("mqtt", "protocol", f"one of auto, 5, 3.1.1, not {protocol!r}")
    ca_file = c.get(m, "mqtt", "ca_file", str, None)
    if ca_file is not None:
        if not url.tls:
            raise c.fail("mqtt", "ca_file", "a CA file is for mqtts:// brokers; the url is not TLS")
        ca_path = Path(ca_file)
        if base is not None and not ca_path.is_absolute():
            ca_path = base / ca_path
        if not ca_path.is_file():
            raise c.fail("mqtt", "ca_file", f"no such file: {ca_path}")
        ca_file = str(ca_path)
    mqtt = MqttConfig(url=url, prefix=c.get(m, "mqtt", "prefix", str, "tablesvc"), protocol=protocol,
                      ca_file=ca_file, client_id=c.get(m, "mqtt", "client_id", str, None))
    for section, key, value in (("mqtt", "prefix", mqtt.prefix), ("table", "site", table.site),
                                ("table", "id", table.id)):
        if not _topic_safe(value):
            raise c.fail(section, key, f"{value!r} cannot be part of an MQTT topic (no '/', '+', '#' or spaces)")

    serial = []
    entries = data.get("serial", [])
    if not isinstance(entries, list):
        raise c.fail("serial", None, "write each device as [[serial]] with name and url")
    names = set()
    owners: dict[str, str] = {}  # device id -> the link it is configured for
    for entry in entries:
        c.known(entry, "serial")
        name = c.get(entry, "serial", "name", str)
        if not _topic_safe(name):
            raise c.fail("serial", "name", f"{name!r} names a topic (devices/<name>): no '/', '+', '#' or spaces")
        if name in names:
            raise c.fail("serial", "name", f"two devices are named {name!r}")
        names.add(name)
        timeout = c.get(entry, "serial", "heartbeat_timeout", (int, float), 3.0)
        if timeout <= 0:
            raise c.fail("serial", "heartbeat_timeout", "must be positive (seconds)")
        binding = _binding(c, entry, name, owners)
        serial.append(SerialConfig(name=name, url=c.get(entry, "serial", "url", str), binding=binding,
                                   heartbeat_timeout=timeout))

    camera, seat_cameras = _cameras(c, data.get("camera"), base, {s.name for s in serial})

    tokens: tuple[str, ...] = ()
    if "commands" in data:
        cmd = data["commands"]
        c.known(cmd, "commands")
        raw = c.get(cmd, "commands", "tokens", list, [])
        if not all(isinstance(x, str) and len(x) >= 8 for x in raw):
            raise c.fail("commands", "tokens", "each token is a string of at least 8 characters")
        tokens = tuple(raw)
    readers = [s.name for s in serial if s.binding.kind is DeviceKind.STICKS]
    if len(readers) > 1:
        raise c.fail("serial", "kind", f"one stick tray reader per table, not {len(readers)} ({', '.join(readers)}): "
                     "a reader reads all four trays")
    start = _start(c, data.get("start"), table.rules)
    if start.get("scores") == "sticks" and not any(s.binding.kind is DeviceKind.STICKS for s in serial):
        raise c.fail("start", "scores", '"sticks" takes the scores from the stick tray reader: configure it as a '
                     '[[serial]] link with kind = "sticks"')
    web = _web(c, data["web"]) if "web" in data else None
    delay = 0.0
    if "broadcast" in data:
        c.known(data["broadcast"], "broadcast")
        delay = c.get(data["broadcast"], "broadcast", "delay_s", (int, float), 0)
        if isinstance(delay, bool) or not 0 <= delay <= 3600:
            raise c.fail("broadcast", "delay_s", f"seconds from 0 to 3600, not {delay!r}")
    return Config(table=table, mqtt=mqtt, serial=tuple(serial), camera=camera, seat_cameras=seat_cameras,
                  command_tokens=tokens, web=web,
                  source=path, start=start, broadcast_delay=float(delay))


def _cameras(c: _Checker, data: Any, base: Path | None, serial_names: set[str],
             ) -> tuple[CameraConfig | None, tuple[SeatCameraConfig, ...]]:
    """The table camera and the seat cameras: ``[[camera]]`` entries, each with ``kind = "table"`` (the
    default: the camera over the table) or ``kind = "hand"`` (a seat camera, with ``seat``). A file with one
    ``[camera]`` table is read as one table camera."""
    if data is None:
        return None, ()
    single = isinstance(data, dict)
    entries = [data] if single else data
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise c.fail("camera", None, 'write each camera as [[camera]] with source (and kind = "hand" for a seat '
                     "camera)")
    table: CameraConfig | None = None
    seats: dict[int, SeatCameraConfig] = {}
    names: dict[str, int] = {}
    for i, entry in enumerate(entries):
        at = None if single else i
        c.known(entry, "camera", at)
        kind = c.get(entry, "camera", "kind", str, "table", at)
        if kind not in ("table", "hand"):
            raise c.fail("camera", "kind", f'"table" (the camera over the table) or "hand" (a seat camera), not '
                         f"{kind!r}", at)
        paths: dict[str, Path | None] = {}
        for key in ("calibration", "tiles", "model"):
            value = c.get(entry, "camera", key, str, None, at)
            if value is None:
                paths[key] = None
                continue
            path = Path(value)
            if base is not None and not path.is_absolute():
                path = base / path
            if not path.exists():
                hint = ""
                if key == "calibration" and kind == "hand":
                    hint = " (write it with 'tablesvc vision seat-calibrate')"
                elif key == "calibration":
                    hint = " (write it with 'tablesvc vision calibrate')"
                raise c.fail("camera", key, f"no such {'directory' if key == 'tiles' else 'file'}: {path}{hint}", at)
            paths[key] = path
        if paths["tiles"] is not None and paths["model"] is not None:
            raise c.fail("camera", "model", "give either tiles (a directory to enroll) or model, not both", at)
        source = c.get(entry, "camera", "source", (str, int), ..., at)
        if kind == "table":
            if "seat" in entry:
                raise c.fail("camera", "seat", 'only a seat camera (kind = "hand") has a seat', at)
            if table is not None:
                raise c.fail("camera", "kind", f"two table cameras ({table.name!r} and this one): a table has one "
                             'camera over it; a camera at a seat is kind = "hand"', at)
            interval = c.get(entry, "camera", "snapshot_interval", (int, float), 5.0, at)
            if interval < 0:
                raise c.fail("camera", "snapshot_interval", "seconds between snapshots: positive, or 0 for none", at)
            name = c.get(entry, "camera", "name", str, "camera", at)
            camera: CameraConfig | SeatCameraConfig = CameraConfig(
                name=name, source=source, snapshot_interval=float(interval), **paths)
            table = camera
        else:
            seat_name = c.get(entry, "camera", "seat", str, None, at)
            if seat_name is None:
                raise c.fail("camera", None, 'a seat camera needs seat = "E", "S", "W" or "N": the seat it is fixed '
                             "to (E: the player first East)", at)
            if seat_name not in SEATS:
                raise c.fail("camera", "seat", f'one of "E", "S", "W", "N" (E: the player first East), not '
                             f"{seat_name!r}", at)
            seat = SEATS.index(seat_name)
            if seat in seats:
                raise c.fail("camera", "seat", f"two seat cameras for seat {seat_name} ({seats[seat].name!r} and this "
                             "one): one camera per seat", at)
            if "snapshot_interval" in entry:
                raise c.fail("camera", "snapshot_interval", "a seat camera publishes no snapshots: what it sees is "
                             "a player's hand", at)
            if paths["calibration"] is None:
                raise c.fail("camera", None, "a seat camera needs calibration = the row's strip (write it with "
                             "'tablesvc vision seat-calibrate')", at)
            if paths["tiles"] is None and paths["model"] is None:
                raise c.fail("camera", None, "a seat camera needs model = the set enrolled from it ('tablesvc vision "
                             "seat-enroll') or tiles = a directory of the set's faces", at)
            name = c.get(entry, "camera", "name", str, f"seat-{seat_name}", at)
            camera = SeatCameraConfig(name=name, seat=seat, source=source, calibration=paths["calibration"],
                                      tiles=paths["tiles"], model=paths["model"])
            seats[seat] = camera
        if not _topic_safe(camera.name):
            raise c.fail("camera", "name", f"{camera.name!r} names a topic: no '/', '+', '#' or spaces", at)
        if camera.name in names or camera.name in serial_names:
            other = "a serial device" if camera.name in serial_names else "another camera"
            raise c.fail("camera", "name", f"{camera.name!r} is the name of {other} already: each device has its "
                         "own (devices/<name>)", at)
        names[camera.name] = i
    return table, tuple(seats[s] for s in sorted(seats))


def _start(c: _Checker, data: Any, rules: str) -> dict[str, Any]:
    """``[start]``, checked by the engine itself against the table's rules."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise c.fail("start", None, "a section with round, honba, sticks, scores and dealer")
    c.known(data, "start")
    start: dict[str, Any] = {}
    for key, kind in (("round", str), ("honba", int), ("sticks", int), ("dealer", int)):
        if key in data:
            start[key] = c.get(data, "start", key, kind)
    if data.get("scores") == "sticks":  # each seat's tray total, read when the game starts
        start["scores"] = "sticks"
    elif "scores" in data:
        scores = c.get(data, "start", "scores", list)
        if len(scores) != 4 or not all(isinstance(x, int) and not isinstance(x, bool) for x in scores):
            raise c.fail("start", "scores", f"four whole numbers, seat 0 to seat 3, not {scores!r}")
        start["scores"] = tuple(scores)
    for key in ("honba", "sticks"):
        if start.get(key, 0) < 0:
            raise c.fail("start", key, f"cannot be negative, not {start[key]}")
    try:
        Engine().apply(GameStart(rules=rules, **{k: v for k, v in start.items() if v != "sticks"}))
    except Rejected as exc:
        message = str(exc)
        key = ("round" if "a round is" in message or "start in" in message
               else "dealer" if "dealer" in message else "scores" if "scores" in message else None)
        raise c.fail("start", key, message) from None
    return start


def _web(c: _Checker, w: Any) -> WebConfig:
    if not isinstance(w, dict):
        raise c.fail("web", None, "write the web server's settings as a [web] section")
    c.known(w, "web")
    listen = c.get(w, "web", "listen", str, "127.0.0.1:8080")
    _, _, port = listen.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise c.fail("web", "listen", f"{listen!r}: write HOST:PORT, e.g. 0.0.0.0:8080")
    site = c.get(w, "web", "site", str, None)
    if site is not None and not _topic_safe(site):
        raise c.fail("web", "site", f"{site!r} cannot be part of a topic")
    password = c.get(w, "web", "referee_password", str, None)
    if password is not None and not password.startswith("scrypt$"):
        raise c.fail("web", "referee_password", "store the password hashed: paste what "
                     "'tablesvc web --hash-password' prints (scrypt$...)")
    secret = c.get(w, "web", "secret_key", str, None)
    if secret is not None and len(secret) < 16:
        raise c.fail("web", "secret_key", "use at least 16 random characters")
    idle = c.get(w, "web", "idle_alert", (int, float), 600)
    if idle <= 0:
        raise c.fail("web", "idle_alert", "seconds, more than 0")
    rules = c.get(w, "web", "rules", str, None)
    if rules is not None:
        try:
            get_ruleset(rules)
        except (UnknownRuleSetError, ValueError) as exc:
            raise c.fail("web", "rules", str(exc)) from None
    session_idle = c.get(w, "web", "session_idle", (int, float), 3600)
    if not 60 <= session_idle <= 12 * 3600:
        raise c.fail("web", "session_idle", "seconds from 60 to 43200 (12 hours)")
    proxies = c.get(w, "web", "trusted_proxies", list, [])
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except (TypeError, ValueError):
            raise c.fail("web", "trusted_proxies", f"{proxy!r} is not an IP address or network "
                         "(e.g. \"127.0.0.1\" or \"10.0.0.0/8\")") from None
    key = c.get(w, "web", "broadcast_key", str, None)
    if key is not None and (len(key) < 16 or not key.isascii() or not key.isprintable() or " " in key):
        raise c.fail("web", "broadcast_key", "use at least 16 random letters and digits (it is part of the scenes' "
                     "addresses, which OBS keeps)")
    broadcast_broker = c.get(w, "web", "broadcast_broker", str, None)
    if broadcast_broker is not None:
        try:
            BrokerURL.parse(broadcast_broker)
        except ValueError as exc:
            raise c.fail("web", "broadcast_broker", str(exc)) from None
    return WebConfig(listen=listen, site=site, referee_password=password, secret_key=secret,
                     referee_token=c.get(w, "web", "referee_token", str, None), idle_alert=float(idle),
                     records_db=c.get(w, "web", "records_db", str, None) or None,
                     referees=_referees(c, w.get("referees", {}), password is not None),
                     session_idle=float(session_idle), https=c.get(w, "web", "https", bool, False),
                     trusted_proxies=tuple(proxies), rules=rules,
                     photo_model=c.get(w, "web", "photo_model", str, None) or None,
                     broadcast_key=key, broadcast_broker=broadcast_broker)


def _referees(c: _Checker, data: Any, has_password: bool) -> dict[str, str]:
    """``[web.referees]``: one account per referee, NAME = the hash ``tablesvc web --add-referee`` writes."""
    if not isinstance(data, dict):
        raise c.fail("web", "referees", "write the accounts as a [web.referees] section: NAME = \"scrypt$...\"")
    for name, stored in data.items():
        if not re.fullmatch(REFEREE_NAME_PATTERN, name):
            raise c.fail("web.referees", name, "a referee's name is 1 to 40 letters, digits, spaces, dots, "
                         "underscores or hyphens, beginning with a letter or digit")
        if not isinstance(stored, str) or not stored.startswith("scrypt$"):
            raise c.fail("web.referees", name, "store the password hashed: add the account with "
                         f"'tablesvc web --add-referee {name} --config FILE'")
    if has_password and "referee" in data:
        raise c.fail("web.referees", "referee", "the account 'referee' is [web] referee_password already: "
                     "keep one of the two")
    return dict(data)


def load_web_config(path: str | Path) -> tuple[WebConfig, str | None, str | None]:
    """A web server's own file: ``[web]`` and optionally ``[mqtt] url``/``prefix``. Returns (web, url, prefix)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration {p}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    c = _Checker(str(p), text)
    for section in data:
        if section not in ("web", "mqtt", "table", "serial", "camera", "commands", "start", "broadcast"):
            raise c.fail(section, None, "unknown section (the web server reads [web] and [mqtt])")
    web = _web(c, data.get("web", {}))
    m = data.get("mqtt", {})
    url = m.get("url") if isinstance(m, dict) else None
    prefix = m.get("prefix") if isinstance(m, dict) else None
    return web, url if isinstance(url, str) else None, prefix if isinstance(prefix, str) else None
