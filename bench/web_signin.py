"""Sign-ins and large bodies against the web server: `python bench/web_signin.py` (`--quick`: one round, the test's).

Prints:
  - 40 referees signing in at once (each its own account, real scrypt hashes) while a page is loaded over and
    over: how long the page takes (p50, max) before and during the sign-ins, and how long the 40 took. The
    password hash runs on two worker threads, so pages do not wait for it;
  - a 300 MB POST to /login, unauthenticated, sent both with its Content-Length and chunked: the status it
    gets, how much of it was sent before the server refused, and the server's memory (VmRSS) before and after.

The web server runs as its own process (`tablesvc web --config`), Mosquitto on a free port.
"""

from __future__ import annotations

import argparse
import http.client
import http.cookiejar
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.web import free_port, rss_kib, start_mosquitto, wait_port
from tablesvc.web.auth import hash_password

REFEREES = 40
BIG = 300 * 1024 * 1024


def page_times(port: int, stop: threading.Event, out: list[float]) -> None:
    """Load the dashboard's data (/api/tables) again and again; each load's time in ms."""
    while not stop.is_set():
        started = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/tables")
        conn.getresponse().read()
        conn.close()
        out.append((time.perf_counter() - started) * 1000)
        time.sleep(0.005)


def sign_in(port: int, name: str, password: str) -> int:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with opener.open(f"http://127.0.0.1:{port}/login", timeout=60) as r:
        token = re.search(r'name="csrf" value="([^"]+)"', r.read().decode()).group(1)
    body = urllib.parse.urlencode({"csrf": token, "name": name, "password": password, "next": "/"}).encode()
    try:
        with opener.open(urllib.request.Request(f"http://127.0.0.1:{port}/login", data=body), timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def big_post(port: int, chunked: bool) -> tuple[str, int]:
    """POST 300 MB to /login; the status line and the bytes sent before the server stopped taking them. The
    answer is read while sending (as a browser does), so it is seen before the server resets the connection."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    answer: list[bytes] = []

    def read() -> None:
        try:
            while data := sock.recv(4096):
                answer.append(data)
        except OSError:
            pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    head = "POST /login HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {BIG}\r\n\r\n"
    sock.sendall(head.encode())
    block = b"a" * (1024 * 1024)
    piece = (f"{len(block):x}\r\n".encode() + block + b"\r\n") if chunked else block
    sent = 0
    try:
        while sent < BIG and not answer:
            sock.sendall(piece)
            sent += len(block)
    except OSError:
        pass  # the server answered and closed: the rest is never read
    reader.join(10)
    sock.close()
    return b"".join(answer).split(b"\r\n")[0].decode() or "(no answer)", sent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one round (the test's)")
    args = parser.parse_args()
    rounds = 1 if args.quick else 3
    work = Path(tempfile.mkdtemp(prefix="bench-signin-"))
    broker, mqtt_port = start_mosquitto(work)
    passwords = {f"ref{i:02d}": f"password of referee {i}" for i in range(REFEREES)}
    accounts = "\n".join(f'{name} = "{hash_password(pw)}"' for name, pw in passwords.items())
    port = free_port()
    config = work / "web.toml"
    config.write_text(f'[web]\nlisten = "127.0.0.1:{port}"\n\n[web.referees]\n{accounts}\n\n'
                      f'[mqtt]\nurl = "mqtt://127.0.0.1:{mqtt_port}"\n', encoding="utf-8")
    server = subprocess.Popen([sys.executable, "-m", "tablesvc", "web", "--config", str(config)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        for n in range(rounds):
            quiet: list[float] = []
            stop = threading.Event()
            loader = threading.Thread(target=page_times, args=(port, stop, quiet))
            loader.start()
            time.sleep(1.0)
            stop.set()
            loader.join()
            during: list[float] = []
            stop = threading.Event()
            loader = threading.Thread(target=page_times, args=(port, stop, during))
            loader.start()
            statuses: list[int] = []
            started = time.perf_counter()
            threads = [threading.Thread(target=lambda n=name, p=pw, out=statuses: out.append(sign_in(port, n, p)))
                       for name, pw in passwords.items()]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            took = time.perf_counter() - started
            stop.set()
            loader.join()
            ok = sum(1 for s in statuses if s == 200)  # the sign-in's redirect, followed to the dashboard
            print(f"round {n + 1}: {ok}/{REFEREES} sign-ins in {took:.2f} s; page loads before: p50 "
                  f"{statistics.median(quiet):.1f} ms, max {max(quiet):.1f} ms; during ({len(during)} loads): p50 "
                  f"{statistics.median(during):.1f} ms, max {max(during):.1f} ms", flush=True)
        before = rss_kib(server.pid)
        for chunked in (False, True):
            status, sent = big_post(port, chunked)
            print(f"300 MB POST to /login ({'chunked' if chunked else 'with Content-Length'}): {status}, "
                  f"{sent / 2**20:.0f} MiB sent before the answer came", flush=True)
        time.sleep(0.5)
        after = rss_kib(server.pid)
        print(f"server memory: {before / 1024:.1f} MiB before the 300 MB POSTs, {after / 1024:.1f} MiB after",
              flush=True)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/tables")
        alive = conn.getresponse().status
        conn.close()
        print(f"then /api/tables: {alive}")
    finally:
        server.terminate()
        server.wait(10)
        broker.terminate()
        broker.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
