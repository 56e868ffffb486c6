"""The web server's settings: the referee password stored hashed, [web] checked like every section, the
listen address, and ``tablesvc run`` serving the pages from its config."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from hardware_sims.pytest_plugin import eventually
from tablesvc.cli import main
from tablesvc.config import ConfigError, load_web_config, parse_config
from tablesvc.web.auth import hash_password, verify_password
from tablesvc.web.server import parse_listen
from tablesvc.web.tiles import TILE_NAMES, face_svg

BASE = '[table]\nsite = "club"\nid = "t1"\n[mqtt]\nurl = "mqtt://127.0.0.1:1883"\n'


def test_the_password_is_stored_hashed_and_checked():
    stored = hash_password("s3cret pass")
    assert stored.startswith("scrypt$") and "s3cret" not in stored
    assert verify_password("s3cret pass", stored)
    assert not verify_password("s3cret pas", stored)
    assert hash_password("s3cret pass") != stored  # salted
    assert not verify_password("anything", "scrypt$bad")  # a malformed hash refuses, never raises
    with pytest.raises(ValueError, match="empty"):
        hash_password("")


def test_hash_password_command_reads_stdin(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("club referee\n"))
    assert main(["web", "--hash-password"]) == 0
    assert verify_password("club referee", capsys.readouterr().out.strip())


def test_web_section_is_checked_with_file_line_and_key():
    config = parse_config(BASE + f'[web]\nlisten = "0.0.0.0:8090"\nreferee_password = "{hash_password("x")}"\n'
                          'idle_alert = 300\n', "table.toml")
    assert config.web is not None and config.web.listen == "0.0.0.0:8090" and config.web.idle_alert == 300
    assert "referee_password" not in repr(config.web)  # secrets stay out of logs
    with pytest.raises(ConfigError, match=r"table.toml line 7: \[web\] referee_password: store the password hashed"):
        parse_config(BASE + '[web]\nreferee_password = "plain text"\n', "table.toml")
    with pytest.raises(ConfigError, match=r"line 7: \[web\] listen: 'nowhere': write HOST:PORT"):
        parse_config(BASE + '[web]\nlisten = "nowhere"\n', "table.toml")
    with pytest.raises(ConfigError, match=r"\[web\] colour: unknown key"):
        parse_config(BASE + '[web]\ncolour = "red"\n', "table.toml")
    assert parse_config(BASE).web is None


def test_the_score_pages_rules_and_tile_set_come_from_the_web_section():
    config = parse_config(BASE + '[web]\nrules = "ema2016; kiriage=yes"\nphoto_model = "club-tiles.npz"\n')
    assert config.web.rules == "ema2016; kiriage=yes" and config.web.photo_model == "club-tiles.npz"
    assert parse_config(BASE + "[web]\n").web.rules is None  # the table's rules, else ema2012

    from tablesvc.cli.web import make_server
    from tablesvc.mqtt.url import BrokerURL

    bare = parse_config(BASE + "[web]\n").web
    for web, kwargs, want in ((bare, {}, ("ema2012", None)),
                              (bare, {"rules": "tenhou", "photo_model": "cam.npz"}, ("tenhou", "cam.npz")),
                              (config.web, {"rules": "tenhou", "photo_model": "cam.npz"},
                               ("ema2016; kiriage=yes", "club-tiles.npz"))):
        server = make_server(BrokerURL.parse("mqtt://127.0.0.1:1"), web, listen=("127.0.0.1", 0), **kwargs)
        assert (server.settings.rules, server.settings.photo_model) == want
    with pytest.raises(ConfigError, match=r"line 7: \[web\] rules: .*nosuch"):
        parse_config(BASE + '[web]\nrules = "nosuch"\n', "table.toml")


def test_a_web_servers_own_file(tmp_path):
    path = tmp_path / "web.toml"
    path.write_text('[web]\nsite = "club"\nsecret_key = "0123456789abcdef0123"\n[mqtt]\nurl = "mqtt://b:1883"\n')
    web, url, prefix = load_web_config(path)
    assert (web.site, url, prefix) == ("club", "mqtt://b:1883", None)
    path.write_text('[web]\nsecret_key = "short"\n')
    with pytest.raises(ConfigError, match="at least 16"):
        load_web_config(path)


def test_listen_addresses():
    assert parse_listen("0.0.0.0:8080") == ("0.0.0.0", 8080)
    assert parse_listen(":9000") == ("127.0.0.1", 9000)
    assert parse_listen("8081") == ("127.0.0.1", 8081)
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_listen("localhost:http")


def test_every_tile_face_is_an_svg_of_its_own():
    faces = {name: face_svg(name) for name in TILE_NAMES}
    assert len(set(faces.values())) == 37  # 34 kinds and three red fives, all different
    assert all(f.startswith("<svg") and f.endswith("</svg>") for f in faces.values())
    assert "#cd2828" in faces["5pr"] and faces["5pr"].count("#cd2828") > faces["5p"].count("#cd2828")
    with pytest.raises(ValueError, match="unknown tile"):
        face_svg("0m")


def test_run_serves_the_pages_from_its_config(mosquitto, tmp_path):
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nsite = "club"\nid = "t1"\ndata_dir = "{tmp_path / "data"}"\n'
                      f'[mqtt]\nurl = "{mosquitto.url}"\n[web]\nlisten = "127.0.0.1:0"\n')
    proc = subprocess.Popen([sys.executable, "-m", "tablesvc", "run", "--config", str(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def pages_line() -> str:
            assert proc.poll() is None, proc.stderr.read()
            line = proc.stdout.readline()
            return line if "pages on " in line else ""

        url = eventually(pages_line, 20, interval=0, what="the 'pages on' line").split("pages on ", 1)[1]
        url = url.split("/ ", 1)[0]

        def online() -> list:
            with urllib.request.urlopen(f"{url}/api/tables", timeout=5) as r:
                tables = json.loads(r.read())["tables"]
            return tables if tables and tables[0]["online"] else []

        tables = eventually(online, 10, what="the table listed online")
        assert [(t["site"], t["table"], t["online"]) for t in tables] == [("club", "t1", True)]
        with urllib.request.urlopen(f"{url}/overlay/club/t1", timeout=5) as r:
            assert "overlay.js" in r.read().decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def test_ci_keeps_the_screenshots_as_artefacts(monkeypatch, tmp_path):
    """.ci/run points TABLESVC_SCREENSHOTS, before it runs the tests, at a folder inside the checkout that git
    ignores, and the web tests write their screenshots where that variable says."""
    import re
    import shutil
    from pathlib import Path

    from tests.web_support import screenshot_dir

    root = Path(__file__).resolve().parents[1]
    script = (root / ".ci" / "run").read_text()
    export = re.search(r'^export TABLESVC_SCREENSHOTS="\$PWD/([^"]+)"$', script, re.M)
    assert export, ".ci/run does not set TABLESVC_SCREENSHOTS inside the checkout"
    assert script.index(export.group(0)) < script.index("&& pytest")
    if shutil.which("git") and (root / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", "-q", f"{export.group(1)}/overlay-1080.png"], cwd=root)
        assert ignored.returncode == 0, f"{export.group(1)} is not ignored by git"
    monkeypatch.setenv("TABLESVC_SCREENSHOTS", str(tmp_path / "shots"))
    assert screenshot_dir() == tmp_path / "shots" and (tmp_path / "shots").is_dir()


def _web_process(*args: str) -> tuple[subprocess.Popen, str]:
    """``tablesvc web`` as its own process on a free port; its address, from the line it prints."""
    proc = subprocess.Popen([sys.executable, "-m", "tablesvc", "web", "--listen", "127.0.0.1:0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert "serving http://" in line, proc.stderr.read() if proc.poll() is not None else line
    return proc, line.split("serving ", 1)[1].split("/ ", 1)[0]


def _listed(url: str, expected: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The tables ``url`` lists, once they are ``expected`` (or what it lists after 10 s)."""
    seen: list[list[tuple[str, str]]] = [[]]

    def listed() -> bool:
        with urllib.request.urlopen(f"{url}/api/tables", timeout=5) as r:
            seen[0] = [(t["site"], t["table"]) for t in json.loads(r.read())["tables"]]
        return seen[0] == expected

    with contextlib.suppress(AssertionError):  # the caller's assertion shows what is listed instead
        eventually(listed, 10, interval=0.1)
    return seen[0]


def test_web_follows_every_site_unless_given_one(mosquitto, capsys):
    """`tablesvc web` says it follows every table on the broker, every site unless --site names one, and does."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from tablesvc.mqtt.payloads import iso_time, status_payload

    with pytest.raises(SystemExit):
        main(["web", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "follows every table on the broker" in text and "every site, or only one with --site" in text
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()

    def online(site: str, table: str) -> None:
        status = status_payload(True, version="1", started=iso_time(time.time()), site=site, table=table)
        client.publish(f"tablesvc/{site}/{table}/status", json.dumps(status), qos=1, retain=True).wait_for_publish(5)

    for site, table in (("club", "t1"), ("other", "t9")):
        online(site, table)
    every, every_url = _web_process("--broker", mosquitto.url)
    one, one_url = _web_process("--broker", mosquitto.url, "--site", "club")
    try:
        assert _listed(every_url, [("club", "t1"), ("other", "t9")]) == [("club", "t1"), ("other", "t9")]
        assert _listed(one_url, [("club", "t1")]) == [("club", "t1")]
        # another site's table comes online, then one of the club's: had the first been taken, it would have
        # arrived before the second
        online("other", "t8")
        online("club", "t2")
        assert _listed(one_url, [("club", "t1"), ("club", "t2")]) == [("club", "t1"), ("club", "t2")]
        for path in ("/sse/table/other/t9", "/download/other/t9.mjai"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"{one_url}{path}", timeout=5)
            assert refused.value.code == 404
    finally:
        for proc in (every, one):
            proc.send_signal(signal.SIGTERM)
            proc.wait(15)
        client.loop_stop()
        client.disconnect()


def test_run_help_names_the_web_section(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "[web] section" in text and "referee console" in text


@pytest.mark.parametrize("command", ["web", "run"])
def test_web_without_the_web_extra_says_how_to_install_it(mocker, capsys, tmp_path, command):
    """Where uvicorn (the web extra) is not installed, `tablesvc web` and `tablesvc run` with a [web] section print
    one line naming the extra to install, not an ImportError's traceback, and `run` says it before the table's
    service starts (no journal, no lock is made). The fault is injected where Python imports: uvicorn cannot be
    found."""
    import builtins
    import sys as system

    real_import = builtins.__import__

    def no_uvicorn(name, *args, **kwargs):
        if name == "uvicorn" or name.startswith("uvicorn."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    mocker.patch.dict(system.modules)  # restored after the test
    for module in ("tablesvc.web.server", "tablesvc.web.app"):  # imported afresh, as in a new process
        system.modules.pop(module, None)
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nsite = "club"\nid = "t1"\ndata_dir = "{tmp_path / "data"}"\n'
                      '[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[web]\nlisten = "127.0.0.1:0"\n')
    mocker.patch("builtins.__import__", side_effect=no_uvicorn)
    if command == "web":
        assert main(["web", "--broker", "mqtt://127.0.0.1:1", "--listen", "127.0.0.1:0"]) == 2
    else:
        assert main(["run", "--config", str(config)]) == 2
        assert not (tmp_path / "data").exists()
    err = capsys.readouterr().err
    assert err.splitlines() == [f'tablesvc {command}: {"[web]: " if command == "run" else ""}uvicorn is not '
                                'installed: the pages need the web extra: pip install -e ".[web]"']


def test_the_bench_reads_memory_only_once_every_table_is_listed(mosquitto):
    """bench/web.py reads the server's memory with its 50 tables only once /api/tables lists each of them with
    its state (the last message published for a table), not after a fixed sleep."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from bench.web import wait_tables
    from tests.web_support import start_web

    web = start_web(mosquitto.url)
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    try:
        for i in range(3):
            client.publish(f"tablesvc/bench/m{i}/status", b'{"schema": 1, "status": "online"}', qos=1, retain=True)
        client.publish("tablesvc/bench/m0/state", b'{"seq": 1, "phase": "playing", "seats": []}', qos=1,
                       retain=True).wait_for_publish(5)
        with pytest.raises(RuntimeError, match="lists 1 of the 3 tables"):  # m1 and m2 have no state yet
            wait_tables(web.port, {"m0", "m1", "m2"}, timeout=1.0)
        for i in (1, 2):
            client.publish(f"tablesvc/bench/m{i}/state", b'{"seq": 1, "phase": "playing", "seats": []}', qos=1,
                           retain=True).wait_for_publish(5)
        assert wait_tables(web.port, {"m0", "m1", "m2"}, timeout=10) == 3
    finally:
        client.loop_stop()
        client.disconnect()
        web.stop()
