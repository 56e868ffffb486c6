"""Phones posting photos to ``/score`` at once: every answer the photo's own tiles or a clean 503, the server alive.

The web server runs as its own process (``tablesvc web`` with the packaged photo reader: the real finder and
embedding networks), so a crash of OpenCV shows as a dead server rather than a dead test run. The photos are
real shared photos scaled up to 12 megapixels, as a phone sends them.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed (pip install -e '.[test]')")

from bench.score_load import PHOTOS, Server, alive, burst, phone_photos, post_photo
from hardware_sims.pytest_plugin import eventually
from tests.conftest import Mosquitto

pytestmark = pytest.mark.skipif(not PHOTOS.is_dir(), reason=f"needs the shared photos in {PHOTOS}")


def test_eight_photos_at_once_three_times_read_as_each_alone(tmp_path: Path):
    Mosquitto(tmp_path)  # skips where mosquitto is not installed
    photos = phone_photos(4)
    server = Server(tmp_path).start()
    try:
        alone = [post_photo(server.port, p) for p in photos]
        assert [a.status for a in alone] == [200] * 4, [a.error for a in alone]
        assert all(len(a.tiles) >= 10 for a in alone), [len(a.tiles) for a in alone]
        for attempt in range(3):
            answers = burst(server.port, photos, phones=8, within=0)
            wrong = [(i, a.status, a.error[:200]) for i, a in answers
                     if a.status != 200 or a.tiles != alone[i].tiles]
            assert not wrong, f"burst {attempt + 1}: {wrong}\n{server.log_tail()}"
            assert alive(server.port), f"the server died after burst {attempt + 1}:\n{server.log_tail()}"
    finally:
        server.stop()


class GatedFinder:
    """A finder that returns no tiles once the test opens its gate: photos stay "being read" until then."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def find(self, image):
        assert self.gate.wait(60), "the test never opened the gate"
        return []


def until(predicate, timeout: float, what: str) -> None:
    eventually(predicate, timeout, what=what)


def test_beyond_the_queue_a_photo_is_a_clean_503_with_retry_after_and_pages_answer(mosquitto):
    """Every worker reading and every waiting place taken: the next photo is refused at once, before its body
    is read, with 503, Retry-After and a sentence; the pages answer meanwhile; the queue empties after."""
    from tablesvc.mqtt.link import BrokerURL
    from tablesvc.web.server import WebServer
    from vision.photos.reader import PhotoReader, load_tiles

    finder = GatedFinder()
    tiles = load_tiles()
    server = WebServer(BrokerURL.parse(mosquitto.url), listen=("127.0.0.1", 0),
                       photo_reader=lambda: PhotoReader(finder, tiles))
    server.start()
    queue = server.app.state.photo_queue
    photo = phone_photos(1)[0]
    held: list = []
    posts = [threading.Thread(target=lambda: held.append(post_photo(server.port, photo)))
             for _ in range(queue.capacity)]
    try:
        for t in posts:
            t.start()
        until(lambda: queue.held == queue.capacity, 60, "every place of the photo queue taken")
        refused = post_photo(server.port, photo, timeout=10)
        assert refused.status == 503, refused
        assert refused.retry_after and int(refused.retry_after) >= 1, refused
        assert f"try again in {refused.retry_after} s" in refused.error
        assert refused.seconds < 2, f"the refusal took {refused.seconds:.1f} s"
        assert alive(server.port)
    finally:
        finder.gate.set()
        for t in posts:
            t.join(60)
        server.stop()
    assert [a.status for a in held] == [200] * queue.capacity, [(a.status, a.error) for a in held]
    assert queue.held == 0


def test_score_load_bench_quick(tmp_path: Path):
    """bench/score_load.py --quick prints its figures: every answer right or a clean 503, the server alive,
    the pages' p99, the peak memory and the photos per second."""
    import re
    import subprocess
    import sys

    Mosquitto(tmp_path)  # skips where mosquitto is not installed
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(root / "bench" / "score_load.py"), "--quick"], capture_output=True,
                          text=True, timeout=400, cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    counts = re.search(r"(\d+) phones within \d+ s: (\d+) read with the same tiles as alone, (\d+) busy .* (\d+) other",
                       proc.stdout)
    assert counts, proc.stdout
    phones, right, busy, other = map(int, counts.groups())
    assert other == 0 and right + busy == phones and right >= 2, proc.stdout
    assert "server alive after the burst: yes" in proc.stdout
    pages = re.search(r"during the burst: p50 ([\d.]+) ms, p99 ([\d.]+) ms \((\d+) loads, 0 failed\)", proc.stdout)
    assert pages and int(pages.group(3)) > 0 and float(pages.group(1)) <= float(pages.group(2)), proc.stdout
    memory = re.search(r"peak (\d+) MiB", proc.stdout)
    assert memory and int(memory.group(1)) > 0, proc.stdout
    assert re.search(r"[\d.]+ photos/s read under the burst", proc.stdout), proc.stdout


def _bombs() -> dict[str, tuple[str, bytes]]:
    """A few kilobytes each that claim hundreds or thousands of megapixels, in every format the page reads."""
    import struct

    pad = b"\0" * 4096
    png = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 50000, 50000, 8, 2, 0, 0, 0)
           + pad)
    jpg = (b"\xff\xd8\xff\xc0" + struct.pack(">HBHHB", 17, 8, 60000, 60000, 3) + b"\x01\x11\x00\x02\x11\x01\x03\x11\x01"
           + pad)
    webp = (b"RIFF" + struct.pack("<I", 30) + b"WEBP" + b"VP8X" + struct.pack("<I", 10) + b"\0\0\0\0"
            + (16383).to_bytes(3, "little") * 2 + pad)
    bmp = (b"BM" + struct.pack("<IHHI", 1000, 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, 30000, 30000, 1, 24, 0, 0,
                                                                        0, 0, 0, 0) + pad)
    return {"PNG": ("image/png", png), "JPEG": ("image/jpeg", jpg), "WebP": ("image/webp", webp),
            "BMP": ("image/bmp", bmp)}


def test_every_photo_bomb_is_refused_from_its_header_in_milliseconds(mosquitto):
    """A photo whose header claims more than 40 megapixels is refused before it is decoded: a 400 naming its
    size, each in well under the time a decode of its pixels would take (gigabytes), and the server's memory
    does not grow by them."""
    import http.client
    import json

    from bench.score_load import memory_kib
    from tablesvc.mqtt.link import BrokerURL
    from tablesvc.web.server import WebServer

    server = WebServer(BrokerURL.parse(mosquitto.url), listen=("127.0.0.1", 0))
    server.start()
    try:
        import os

        # a first photo loads OpenCV into the server (lazily, as a server without photos never needs it)
        assert post_photo(server.port, b"\xff\xd8 not a photo").status == 400
        before = memory_kib(os.getpid(), "VmRSS")
        for name, (kind, bomb) in _bombs().items():
            started = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            conn.request("POST", "/api/score/read", body=bomb, headers={"Content-Type": kind})
            response = conn.getresponse()
            data = json.loads(response.read())
            conn.close()
            ms = (time.perf_counter() - started) * 1000
            assert response.status == 400 and "megapixels are read" in data["error"], (name, data)
            assert ms < 500, f"{name}: {ms:.0f} ms"
        assert memory_kib(os.getpid(), "VmRSS") - before < 50_000  # KiB: no bitmap was allocated
        assert server.app.state.photo_queue.held == 0
    finally:
        server.stop()
