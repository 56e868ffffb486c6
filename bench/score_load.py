"""Phones posting photos to /score all at once: `python bench/score_load.py` (`--quick`: the test's short run).

The web server runs as its own process (`tablesvc web`, the packaged photo reader), Mosquitto on a free port.
Real photos of the shared roboflow set are scaled up to 12 megapixels (4000 x 3000 JPEG, as a phone sends);
each is first read alone, then ``--phones`` phones (50) each post one within ``--within`` seconds (10) while
the dashboard's data (/api/tables) and the /score page are loaded over and over. Prints:
  - how many answers were read with the same tiles as the photo alone, how many a clean 503 with Retry-After,
    how many anything else (a wrong reading, a 500, a dropped connection: there should be none);
  - whether the server still answers afterwards;
  - the pages' load times during the burst (p50, p99) against before it;
  - the server's peak memory (VmHWM) and its memory after;
  - photos read per second under the burst (on this machine's cores).
Exits 1 when any answer is neither right nor a clean 503, or the server died.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

from bench.web import free_port, start_mosquitto, wait_port  # noqa: E402

PHOTOS = ROOT.parent / "shared" / "data" / "tiles-photos-roboflow" / "images" / "valid"
#: photos of whole hands, different from each other
STEMS = ("hand_005", "hand_012", "hand_020", "hand_003", "hand_009", "hand_016", "hand_001", "hand_014")
SIZE = (4000, 3000)


def phone_photos(count: int) -> list[bytes]:
    """``count`` real photos scaled to 12 megapixels, JPEG as a phone writes them."""
    import cv2

    out = []
    for stem in STEMS[:count]:
        path = next(PHOTOS.glob(f"{stem}_*"))
        image = cv2.resize(cv2.imread(str(path)), SIZE, interpolation=cv2.INTER_CUBIC)
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        out.append(data.tobytes())
    return out


@dataclass
class Answer:
    status: int
    tiles: list | None = None
    retry_after: str | None = None
    error: str = ""
    seconds: float = 0.0


def post_photo(port: int, photo: bytes, timeout: float = 120.0) -> Answer:
    """POST one photo to /api/score/read; the status and the tiles read (name, box) or the refusal."""
    started = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("POST", "/api/score/read", body=photo, headers={"Content-Type": "image/jpeg"})
        response = conn.getresponse()
        raw = response.read()
        conn.close()
    except OSError as exc:
        return Answer(0, error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - started)
    answer = Answer(response.status, retry_after=response.getheader("Retry-After"),
                    seconds=time.perf_counter() - started)
    try:
        data = json.loads(raw)
    except ValueError:
        answer.error = raw[:200].decode(errors="replace")
        return answer
    if response.status == 200:
        answer.tiles = [(t["tile"], t["box"]) for t in data["tiles"]]
    else:
        answer.error = data.get("error", "")
    return answer


def page_times(port: int, stop: threading.Event, out: list[float], failures: list[str]) -> None:
    """Load /api/tables and /score in turn until ``stop``; each load's time in ms."""
    paths = ("/api/tables", "/score")
    k = 0
    while not stop.is_set():
        started = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", paths[k % 2])
            response = conn.getresponse()
            response.read()
            conn.close()
            if response.status != 200:
                failures.append(f"{paths[k % 2]}: HTTP {response.status}")
        except OSError as exc:
            failures.append(f"{paths[k % 2]}: {exc}")
        out.append((time.perf_counter() - started) * 1000)
        k += 1
        stop.wait(0.02)


def memory_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def alive(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/tables")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


@dataclass
class Server:
    """``tablesvc web`` on a free port with a Mosquitto of its own."""

    work: Path
    procs: list[subprocess.Popen] = field(default_factory=list)
    port: int = 0

    def start(self, env: dict[str, str] | None = None) -> Server:
        broker, mqtt_port = start_mosquitto(self.work)
        self.procs.append(broker)
        self.port = free_port()
        self.log = (self.work / "web.log").open("wb")
        web = subprocess.Popen([sys.executable, "-m", "tablesvc", "web", "--broker", f"mqtt://127.0.0.1:{mqtt_port}",
                                "--listen", f"127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT,
                               env={**os.environ, **(env or {})})
        self.procs.append(web)
        wait_port(self.port, 60)
        return self

    @property
    def pid(self) -> int:
        return self.procs[-1].pid

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.log.close()

    def log_tail(self) -> str:
        return (self.work / "web.log").read_text(errors="replace")[-3000:]


def burst(port: int, photos: list[bytes], phones: int, within: float, seed: int = 29) -> list[tuple[int, Answer]]:
    """``phones`` posts, phone k sending photo k mod len(photos), each starting at a random moment within
    ``within`` seconds (all at once for 0); (photo index, answer) per phone."""
    rng = random.Random(seed)
    starts = sorted(rng.uniform(0, within) for _ in range(phones)) if within > 0 else [0.0] * phones
    answers: list[tuple[int, Answer] | None] = [None] * phones
    go = threading.Barrier(phones + 1)

    def phone(k: int) -> None:
        go.wait()
        time.sleep(starts[k])  # the phone's moment in the burst, not a wait for something
        answers[k] = (k % len(photos), post_photo(port, photos[k % len(photos)]))

    threads = [threading.Thread(target=phone, args=(k,)) for k in range(phones)]
    for t in threads:
        t.start()
    go.wait()
    for t in threads:
        t.join()
    return [a for a in answers if a is not None]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (the test's): 10 phones within 3 s")
    parser.add_argument("--phones", type=int, default=50)
    parser.add_argument("--within", type=float, default=10.0, help="seconds over which the phones post")
    args = parser.parse_args()
    phones, within = (10, 3.0) if args.quick else (args.phones, args.within)
    photos = phone_photos(3 if args.quick else len(STEMS))
    print(f"{len(photos)} photos at {SIZE[0]}x{SIZE[1]} ({statistics.mean(map(len, photos)) / 2**20:.1f} MB JPEG "
          f"on average), {os.cpu_count()} cores")
    server = Server(Path(tempfile.mkdtemp(prefix="bench-score-load-"))).start()
    try:
        alone = []
        for photo in photos:
            answer = post_photo(server.port, photo)
            if answer.status != 200:
                print(f"a photo read alone: HTTP {answer.status} {answer.error}\n{server.log_tail()}")
                return 1
            alone.append(answer)
        print(f"alone: {', '.join(str(len(a.tiles or [])) for a in alone)} tiles, "
              f"{statistics.mean(a.seconds for a in alone[1:] or alone):.2f} s a photo")
        before: list[float] = []
        stop, failures = threading.Event(), []
        loader = threading.Thread(target=page_times, args=(server.port, stop, before, failures))
        loader.start()
        stop.wait(2.0)
        stop.set()
        loader.join()
        during: list[float] = []
        stop = threading.Event()
        loader = threading.Thread(target=page_times, args=(server.port, stop, during, failures))
        loader.start()
        started = time.perf_counter()
        answers = burst(server.port, photos, phones, within)
        took = time.perf_counter() - started
        stop.set()
        loader.join()
        right = sum(1 for i, a in answers if a.status == 200 and a.tiles == alone[i].tiles)
        busy = [a for _, a in answers if a.status == 503 and a.retry_after and a.retry_after.isdigit()]
        other = [(i, a) for i, a in answers
                 if not (a.status == 200 and a.tiles == alone[i].tiles) and a not in busy]
        print(f"{phones} phones within {within:.0f} s: {right} read with the same tiles as alone, {len(busy)} "
              f"busy (503, Retry-After {min((int(a.retry_after) for a in busy), default=0)}-"
              f"{max((int(a.retry_after) for a in busy), default=0)} s), {len(other)} other")
        for i, a in other[:5]:
            print(f"  photo {i}: HTTP {a.status} {a.error[:200]}")
        ok = alive(server.port)
        print(f"server alive after the burst: {'yes' if ok else 'NO'}")

        def pct(xs: list[float], q: float) -> float:
            return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")

        print(f"pages before: p50 {pct(before, 0.5):.1f} ms, p99 {pct(before, 0.99):.1f} ms ({len(before)} loads); "
              f"during the burst: p50 {pct(during, 0.5):.1f} ms, p99 {pct(during, 0.99):.1f} ms "
              f"({len(during)} loads, {len(failures)} failed)")
        if ok:
            print(f"server memory: peak {memory_kib(server.pid, 'VmHWM') / 1024:.0f} MiB, after "
                  f"{memory_kib(server.pid, 'VmRSS') / 1024:.0f} MiB")
        print(f"{right / took:.2f} photos/s read under the burst ({took:.1f} s from the first post to the last "
              f"answer, {os.cpu_count()} cores)")
        if other or not ok or failures:
            print(server.log_tail())
            return 1
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
