"""The web server against an attacker, over real HTTP: guesses slowed and locked out (1,000 take more than an
hour), sessions that sign-out and idle time end, cookies HttpOnly/SameSite/Secure, request bodies refused
before they are read, event streams bounded, and console text that is not valid Unicode refused.

Time is the test's own clock, handed to the server (its sessions and guard), so an hour of lock-outs passes
in seconds; every request is real.
"""

from __future__ import annotations

import http.client
import http.cookiejar
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from selenium.webdriver.common.by import By

from hardware_sims.pytest_plugin import eventually
from tablesvc.web.auth import hash_password
from tablesvc.web.guard import LOCK_SECONDS, time_for
from tests import web_support
from tests.web_support import LiveTable, shot, start_web, viewport, wait_js

broker, browser = web_support.broker, web_support.browser

ANN, BEN = "amber lantern 31", "blue kettle 77"
# cheap hashes (scrypt N=16): a thousand checks in the test take milliseconds, the schedule is the same
ACCOUNTS = {"Ann": hash_password(ANN, cost=16), "Ben": hash_password(BEN, cost=16)}


class Clock:
    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now


class Client:
    """A browser's worth of cookies, speaking plain HTTP."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        self.base = base
        self.headers = headers or {}
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar),
                                                  _NoRedirect())
        self.token: str | None = None

    def request(self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None,
                ) -> tuple[int, dict[str, str], str]:
        request = urllib.request.Request(self.base + path, data=data, headers={**self.headers, **(headers or {})},
                                         method="POST" if data is not None else "GET")
        try:
            with self.opener.open(request, timeout=15) as r:
                status, head, body = r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as exc:
            status, head, body = exc.code, dict(exc.headers), exc.read().decode()
        head = {k.lower(): v for k, v in head.items()}
        found = re.search(r'name="csrf" value="([^"]+)"', body)
        if found:
            self.token = found.group(1)
        return status, head, body

    def sign_in(self, name: str, password: str, headers: dict[str, str] | None = None):
        if self.token is None:
            self.request("/login")
        form = urllib.parse.urlencode({"csrf": self.token, "name": name, "password": password, "next": "/"})
        return self.request("/login", form.encode(), {"Content-Type": "application/x-www-form-urlencoded",
                                                      **(headers or {})})

    def session(self) -> dict:
        return json.loads(self.request("/api/session")[2])

    def command(self, command: dict | bytes, csrf: str | None) -> tuple[int, dict]:
        body = command if isinstance(command, bytes) else json.dumps(command).encode()
        status, _, text = self.request("/api/cmd/club/t1", body, {"Content-Type": "application/json",
                                                                  "X-CSRF-Token": csrf or ""})
        return status, json.loads(text)

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # a sign-in's 303 is looked at, not followed
        return None


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def server(broker, clock):
    web = start_web(broker.url, clock=clock, accounts=ACCOUNTS, trusted_proxies=("127.0.0.1",))
    yield web
    web.stop()


def _retry_after(status: int, head: dict[str, str], body: str) -> int:
    assert status == 429 and "Too many wrong passwords" in body, (status, body[:300])
    return int(head["retry-after"])


def test_a_thousand_guesses_take_more_than_an_hour(server, clock, browser, caplog):
    attacker = Client(server.url)
    start, guesses, refused_unchecked = clock.now, 0, 0
    while guesses < 1000:
        status, head, body = attacker.sign_in("Ann", f"guess-{guesses}")
        if status == 429:  # the attacker waits exactly as long as told, then goes on
            wait = _retry_after(status, head, body)
            refused_unchecked += 1
            if refused_unchecked == 5:  # the right password during a wait is not even checked
                status, head, body = attacker.sign_in("Ann", ANN)
                assert status == 429 and attacker.cookie("tablesvc_session") is None
            clock.now += wait
            continue
        assert status == 401 and "Wrong name or password." in body
        guesses += 1
    hours = (clock.now - start) / 3600
    print(f"1000 wrong passwords through HTTP took {hours:.1f} h of waiting ({refused_unchecked} tries refused "
          f"unchecked); the schedule's least: {time_for(1000) / 3600:.1f} h")
    assert clock.now - start >= time_for(1000) >= 3600
    assert refused_unchecked >= 99 * 6  # every wait was enforced (6 waits and a lock per 10 guesses)

    # the lock-outs are logged and on the dashboard's alerts
    assert any("locked for 15 minutes" in r.getMessage() for r in caplog.records)
    browser.delete_all_cookies()
    viewport(browser, 1280, 600)
    browser.get(f"{server.url}/")
    text = wait_js(browser, "document.querySelector('#server-alerts')?.textContent", 10, "(the lock-out shown)")
    assert "Web server" in text and "account Ann: locked for 15 minutes after 10 wrong passwords ×100" in text
    shot(browser, "dashboard-lockout")

    # once the lock has run out, Ann's right password works again
    clock.now += LOCK_SECONDS
    status, head, _ = attacker.sign_in("Ann", ANN)
    assert status == 303 and attacker.cookie("tablesvc_session")


def test_the_account_is_locked_whatever_the_address_and_the_address_whatever_the_name(server, clock):
    def guess(client: Client, name: str, address: str) -> int:
        while True:
            status, head, body = client.sign_in(name, "wrong", {"X-Forwarded-For": address})
            if status != 429:
                return status
            clock.now += _retry_after(status, head, body)

    roaming = Client(server.url)
    for i in range(10):  # a new address for every guess at Ann's password
        assert guess(roaming, "Ann", f"198.51.100.{i}") == 401
    status, _, body = Client(server.url).sign_in("Ann", ANN, {"X-Forwarded-For": "203.0.113.5"})
    assert status == 429 and "Too many wrong passwords: try again in 15 minutes" in body
    assert Client(server.url).sign_in("Ben", BEN, {"X-Forwarded-For": "203.0.113.6"})[0] == 303

    for i in range(10):  # one address, a new name every time: names that are no account count for the address
        assert guess(roaming, f"admin{i}", "198.51.100.200") == 401
    assert Client(server.url).sign_in("Ben", BEN, {"X-Forwarded-For": "198.51.100.200"})[0] == 429
    assert Client(server.url).sign_in("Ben", BEN, {"X-Forwarded-For": "198.51.100.201"})[0] == 303
    assert len(server.app.state.guard._keys) <= 13  # made-up names keep nothing of their own


def test_a_forwarded_address_counts_only_from_a_trusted_proxy(broker, clock):
    web = start_web(broker.url, clock=clock, accounts=ACCOUNTS)  # no trusted proxies
    try:
        client = Client(web.url)
        statuses = [client.sign_in("Ann", "wrong", {"X-Forwarded-For": f"192.0.2.{i}"})[0] for i in range(5)]
        assert statuses == [401, 401, 401, 401, 429]  # all one address, 127.0.0.1: the header is not believed
    finally:
        web.stop()


def test_signing_out_ends_the_session_and_so_does_idle_time(broker, clock, tmp_path):
    web = start_web(broker.url, clock=clock, accounts=ACCOUNTS, session_idle=600)
    table = LiveTable(broker.url, tmp_path / "data", table="t1").start()
    try:
        table.play_to(40)
        ann = Client(web.url)
        assert ann.sign_in("Ann", ANN)[0] == 303
        session_cookie = next(c for c in _set_cookies(web, "Ann", ANN) if c.startswith("tablesvc_session="))
        assert "HttpOnly" in session_cookie and "SameSite=strict" in session_cookie
        assert "Secure" not in session_cookie and "Max-Age" not in session_cookie  # ends with the browser too
        csrf = ann.session()["csrf"]
        status, reply = ann.command({"command": "undo"}, csrf)
        assert status == 200 and reply["status"] == "ok" and reply["by"] == "Ann"
        stolen = ann.cookie("tablesvc_session")

        status, _, _ = ann.request("/logout", urllib.parse.urlencode({"csrf": csrf}).encode(),
                                   {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 303 and ann.cookie("tablesvc_session") is None
        copy = Client(web.url, {"Cookie": f"tablesvc_session={stolen}"})  # the cookie kept from before
        before = table.seq
        status, reply = copy.command({"command": "undo"}, csrf)
        assert status == 403 and "signed out, or the session ended" in reply["error"]
        assert copy.session()["referee"] is False and table.seq == before
        assert copy.request("/referee/club/t1")[0] == 303  # sent to sign in

        ben = Client(web.url)
        assert ben.sign_in("Ben", BEN)[0] == 303
        for _ in range(3):  # in use, a session lasts: each request starts its idle time again
            clock.now += 590
            assert ben.session()["name"] == "Ben"
        clock.now += 601
        assert ben.session()["referee"] is False  # idle for longer than [web] session_idle

        cat = Client(web.url)
        assert cat.sign_in("Ben", BEN)[0] == 303
        for _ in range(12 * 6):  # busy all evening: a request every 10 minutes (599 s)
            clock.now += 599
            assert cat.session()["referee"] is True
        clock.now += 100
        assert cat.session()["referee"] is False  # 12 hours after signing in, however busy
    finally:
        table.stop()
        web.stop()


def _set_cookies(web, name: str, password: str) -> list[str]:
    """The Set-Cookie lines of a sign-in, as sent."""
    url = urllib.parse.urlsplit(web.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("GET", "/login")
    r = conn.getresponse()
    page = r.read().decode()
    form_cookie = r.getheader("set-cookie").split(";")[0]
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    body = urllib.parse.urlencode({"csrf": token, "name": name, "password": password})
    conn.request("POST", "/login", body, {"Content-Type": "application/x-www-form-urlencoded",
                                          "Cookie": form_cookie})
    r = conn.getresponse()
    r.read()
    conn.close()
    return [v for k, v in r.getheaders() if k.lower() == "set-cookie"]


def test_cookies_are_secure_behind_tls(broker, clock):
    def login_cookie(web, headers: dict[str, str]) -> str:
        url = urllib.parse.urlsplit(web.url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        conn.request("GET", "/login", headers=headers)
        r = conn.getresponse()
        r.read()
        conn.close()
        assert r.getheader("cache-control") == "no-store"
        return r.getheader("set-cookie")

    https = start_web(broker.url, clock=clock, accounts=ACCOUNTS, https=True)
    proxied = start_web(broker.url, clock=clock, accounts=ACCOUNTS, trusted_proxies=("127.0.0.0/8",))
    plain = start_web(broker.url, clock=clock, accounts=ACCOUNTS)
    try:
        assert "Secure" in login_cookie(https, {})
        assert "Secure" in login_cookie(proxied, {"X-Forwarded-Proto": "https"})
        assert "Secure" not in login_cookie(proxied, {"X-Forwarded-Proto": "http"})
        assert "Secure" not in login_cookie(plain, {"X-Forwarded-Proto": "https"})  # not a trusted proxy
        for cookie in (login_cookie(https, {}), login_cookie(plain, {})):
            assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert "Secure" in next(c for c in _set_cookies(https, "Ann", ANN) if c.startswith("tablesvc_session"))
    finally:
        for web in (https, proxied, plain):
            web.stop()


def _raw(port: int, head: bytes, body_chunks=(), read: bool = True) -> bytes:
    """A request as a client writes it, and what came back (an interrupted send is what a refusal does)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock.sendall(head)
        for chunk in body_chunks:
            try:
                sock.sendall(chunk)
            except OSError:
                break
        answer = b""
        while read:
            try:
                data = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not data:
                break
            answer += data
            if b"\r\n\r\n" in answer and b"too large" in answer:
                break
        return answer
    finally:
        sock.close()


def test_request_bodies_over_64_kib_are_refused_before_they_are_read(server):
    port = server.port
    # 300 MB announced: refused at once, none of it read
    started = time.monotonic()
    answer = _raw(port, b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                  b"Content-Length: 314572800\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413") and b"at most 64 KiB" in answer
    assert time.monotonic() - started < 5
    # chunked, no length given: counted as it comes, refused past the limit
    chunk = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"
    answer = _raw(port, b"POST /api/cmd/club/t1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                  b"Content-Type: application/json\r\n\r\n", [chunk] * 2)  # (bench/web_signin.py sends 300 MB)
    assert answer.startswith(b"HTTP/1.1 413")
    # a body within the limit passes as it came
    client = Client(server.url)
    assert client.sign_in("Ann", ANN)[0] == 303
    # the server keeps serving
    assert Client(server.url).request("/api/tables")[0] == 200


def test_event_streams_are_bounded_and_made_up_names_keep_nothing(server, monkeypatch):
    from tablesvc.web import streams as web_streams

    port = server.port
    assert Client(server.url).request("/sse/table/club/a%20b")[0] == 404  # no name a topic could hold
    assert Client(server.url).request(f"/sse/table/club/{'x' * 65}")[0] == 404
    assert Client(server.url).request("/sse/table/club/%23")[0] == 404
    for i in range(200):  # a stream opened and dropped for each of 200 made-up tables
        answer = _raw(port, f"GET /sse/table/club/made-up-{i} HTTP/1.1\r\nHost: x\r\n\r\n".encode(), read=False)
        assert answer == b""
    _wait_streams_closed(server)
    assert server.store._subs == {}  # nothing kept per name: no subscriber set, no table
    assert not any(table.startswith("made-up") for _, table in server.store.tables)

    monkeypatch.setattr(web_streams, "MAX_STREAMS", 5)
    held = []
    try:
        for i in range(5):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(f"GET /sse/table/club/t{i} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            assert b"200 OK" in sock.recv(4096)
            held.append(sock)
        status, head, body = Client(server.url).request("/sse/table/club/t9")
        assert status == 503 and "pages open already" in body and head["retry-after"] == "30"
    finally:
        for sock in held:
            sock.close()
    _wait_streams_closed(server)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"GET /sse/table/club/t9 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert b"200 OK" in sock.recv(4096)  # room again once pages have gone
    sock.close()


def _wait_streams_closed(server, timeout: float = 15.0) -> None:
    """Until every stream the server opened has ended (each ends as soon as its connection is seen closed), and
    none has opened for half a second (a request the server had not yet read when its client left)."""
    quiet_since: list[float | None] = [None]

    def quiet() -> bool:
        if server.app.state.streams.open or server.store._subs:
            quiet_since[0] = None
        elif quiet_since[0] is None:
            quiet_since[0] = time.monotonic()
        return quiet_since[0] is not None and time.monotonic() - quiet_since[0] > 0.5

    eventually(quiet, timeout, what=f"every stream closed ({server.app.state.streams.open} open)")


def test_console_text_that_is_not_unicode_is_refused(server, broker, tmp_path):
    table = LiveTable(broker.url, tmp_path / "data", table="t1").start()
    try:
        table.play_to(10)
        ann = Client(server.url)
        assert ann.sign_in("Ann", ANN)[0] == 303
        csrf = ann.session()["csrf"]
        before = table.seq
        raw = b'{"command": "chombo", "seat": 1, "reason": "bad \\ud800 call"}'  # JSON's escape of a lone surrogate
        status, reply = ann.command(raw, csrf)
        assert status == 400 and "reason is not valid Unicode text" in reply["error"]
        status, reply = ann.command({"command": "end_game", "reason": "late"}, csrf)
        assert status == 200 and reply["status"] == "ok"  # and the console goes on
        assert table.seq == before + 1 and table.service.journal.get(table.seq).source == "referee:Ann"

        stranger = Client(server.url)
        stranger.request("/login")
        body = f"csrf={stranger.token}&name=%ED%A0%80&password=x".encode()  # a surrogate's bytes: not UTF-8
        status, _, page = stranger.request("/login", body, {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 400 and "not valid Unicode text" in page
    finally:
        table.stop()


def test_the_login_form_asks_only_a_password_where_the_one_account_is_referee(broker, clock, browser):
    web = start_web(broker.url, clock=clock)
    try:
        browser.delete_all_cookies()
        browser.get(f"{web.url}/login")
        assert browser.find_element(By.NAME, "name").get_attribute("type") == "hidden"
    finally:
        web.stop()


def test_odd_requests_are_answered_never_with_a_server_error(server):
    """What a browser never sends but a script may: each is answered (403/400/404/413...), none with a 500, and
    the server goes on."""
    client = Client(server.url)
    client.request("/login")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    odd = [
        ("/login", f"csrf={client.token}&name=Ann&password=x&next=/%ED%A0%80".encode(), form),  # not UTF-8
        ("/login", b"csrf=wrong&next=/%ED%A0%80", form),
        ("/login", "&".join(f"f{i}=x" for i in range(50)).encode(), form),  # more fields than any form has
        ("/login", f"csrf={client.token}&name={'n' * 20000}&password=x&next={'/' + 'p' * 20000}".encode(), form),
        ("/login", b"\xff\xfe\x00garbage", form),
        ("/logout", b"csrf=%ED%A0%80", form),
        ("/api/cmd/club/t1", b"[" * 30000 + b"]" * 30000, {"Content-Type": "application/json"}),
        ("/api/cmd/club/t1", b'{"command": "undo"}',
         {"X-CSRF-Token": "\u00e9t\u00e9", "Cookie": "tablesvc_session=\u00e9"}),
        ("/api/cmd/%ED%A0%80/t1", b'{"command": "undo"}', {}),
        ("/api/score/hand", b"[" * 10000 + b"]" * 10000, {"Content-Type": "application/json"}),
    ]
    for path, body, headers in odd:
        status, _, text = client.request(path, body, headers)
        assert status < 500, (path, body[:60], status, text[:200])
    url = urllib.parse.urlsplit(server.url)
    for path in ("/sse/table/%ED%A0%80/t1", "/sse/site?site=%ED%A0%80", "/referee/club/%ED%A0%80",
                 "/login?next=%ED%A0%80", "/download/club/%ED%A0%80.mjai", "/tiles/%ED%A0%80.svg"):
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        conn.request("GET", path)
        status = conn.getresponse().status  # the status line only: a stream would go on
        conn.close()
        assert status < 500, (path, status)
    assert client.sign_in("Ann", ANN)[0] == 303


def test_the_tournament_stream_and_calls_are_bounded_like_the_rest(broker, clock, tmp_path, monkeypatch):
    """With a records database the server also serves the tournament: its stream counts against the bound and
    ends when its page goes, and a referee's call with text that is not Unicode, or JSON nested beyond reason,
    is refused (400), not a server error."""
    from tablesvc.web import streams as web_streams

    web = start_web(broker.url, clock=clock, accounts=ACCOUNTS, records_db=str(tmp_path / "records.sqlite3"))
    try:
        ann = Client(web.url)
        assert ann.sign_in("Ann", ANN)[0] == 303
        csrf = ann.session()["csrf"]
        headers = {"Content-Type": "application/json", "X-CSRF-Token": csrf}
        status, _, text = ann.request("/api/tournament/penalty", b'{"player": "Ann\\ud800", "points": -10}', headers)
        assert status == 400 and "player is not valid Unicode text" in text
        status, _, text = ann.request("/api/tournament/penalty", b"[" * 30000 + b"]" * 30000, headers)
        assert status == 400 and "not JSON" in text

        for _ in range(20):  # tournament streams opened and dropped: each gives its place back
            _raw(web.port, b"GET /sse/tournament HTTP/1.1\r\nHost: x\r\n\r\n", read=False)
        _wait_streams_closed(web)
        monkeypatch.setattr(web_streams, "MAX_STREAMS", 1)
        sock = socket.create_connection(("127.0.0.1", web.port), timeout=10)
        sock.sendall(b"GET /sse/tournament HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b"200 OK" in sock.recv(4096)
        status, _, body = Client(web.url).request("/sse/table/club/t1")
        assert status == 503 and "pages open already" in body
        sock.close()
        _wait_streams_closed(web)
    finally:
        web.stop()


def test_the_lock_after_ten_wrong_passwords_says_retry_after_900(server, clock):
    """The tenth wrong password locks the account for 15 minutes: the next sign-in is answered 429 with
    ``Retry-After: 900`` (not a shorter wait), and after 899 s it still is locked."""
    attacker = Client(server.url)
    wrong = 0
    while wrong < 10:
        status, head, body = attacker.sign_in("Ann", f"guess-{wrong}")
        if status == 429:
            clock.now += _retry_after(status, head, body)
            continue
        assert status == 401
        wrong += 1
    status, head, body = attacker.sign_in("Ann", ANN)
    assert _retry_after(status, head, body) == 900 == LOCK_SECONDS
    clock.now += 899
    status, head, body = attacker.sign_in("Ann", ANN)
    assert _retry_after(status, head, body) == 1
    clock.now += 1
    assert attacker.sign_in("Ann", ANN)[0] == 303
