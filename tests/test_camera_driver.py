"""The camera driver decoding real video (MJPG in AVI written with OpenCV), from a file and over HTTP.

Waits are on events and conditions with generous timeouts; nothing asserts
how long something took.
"""

from __future__ import annotations

import functools
import http.server
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from drivers.camera import CameraDriver, CameraFrame, redact
from drivers.observations import CameraHealth
from hardware_sims.pytest_plugin import eventually

WAIT = 10.0
SIZE = (64, 48)  # width, height


def level(index: int) -> int:
    """The grey level of frame ``index`` in the test videos (distinct and far apart)."""
    return 20 + (index * 37) % 200


def write_video(path: Path, count: int, *, still: bool = False, fps: float = 30.0) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, SIZE)
    assert writer.isOpened(), "this OpenCV cannot write MJPG/AVI"
    for index in range(count):
        writer.write(np.full((SIZE[1], SIZE[0], 3), level(0 if still else index), np.uint8))
    writer.release()
    return path


class Recorder:
    """Frames and health reports from the driver's threads; the test waits on them."""

    def __init__(self, delay: float = 0.0) -> None:
        self._cond = threading.Condition()
        self.delay = delay
        self.frames: list[CameraFrame] = []
        self.health: list[CameraHealth] = []

    def on_frame(self, frame: CameraFrame) -> None:
        if self.delay:
            time.sleep(self.delay)  # a slow consumer (recognition on a small computer)
        with self._cond:
            self.frames.append(frame)
            self._cond.notify_all()

    def on_health(self, health: CameraHealth) -> None:
        with self._cond:
            self.health.append(health)
            self._cond.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)


def camera(source, recorder: Recorder, **options) -> CameraDriver:
    options.setdefault("backoff", (0.05, 0.2))
    options.setdefault("health_interval", 0.5)
    return CameraDriver("cam", source, on_frame=recorder.on_frame, on_health=recorder.on_health, **options)


def assert_real_frame(frame: CameraFrame, count: int) -> None:
    assert frame.image.shape == (SIZE[1], SIZE[0], 3)
    assert frame.image.dtype == np.uint8
    # MJPG is lossy, but a flat grey survives within a few levels; neighbours differ by 37.
    assert abs(float(frame.image.mean()) - level(frame.seq % count)) < 8


# -- files -----------------------------------------------------------------------------------------


def test_decodes_every_frame_of_a_file_then_reports_its_end(tmp_path):
    video = write_video(tmp_path / "clip.avi", 12)
    recorder = Recorder()
    with camera(video, recorder, pace_fps=0) as driver:
        assert recorder.wait_for(lambda: any(h.state == "end of file" for h in recorder.health))
        assert recorder.wait_for(lambda: recorder.frames and recorder.frames[-1].seq == 11)
        assert eventually(lambda: not driver.running)
        health = driver.health()
    assert health.frames == 12
    assert not health.connected
    assert health.errors == 0
    assert health.reconnects == 0
    seqs = [frame.seq for frame in recorder.frames]
    assert seqs == sorted(set(seqs))
    assert len(seqs) + health.dropped == 12
    for frame in recorder.frames:
        assert frame.camera == "cam"
        assert_real_frame(frame, 12)
    assert all(a.timestamp <= b.timestamp for a, b in itertools.pairwise(recorder.frames))


def test_a_file_is_read_at_its_own_frame_rate_by_default(tmp_path):
    video = write_video(tmp_path / "clip.avi", 6, fps=10.0)
    recorder = Recorder()
    with camera(video, recorder) as driver:
        assert recorder.wait_for(lambda: any(h.state == "end of file" for h in recorder.health))
        first, last = recorder.frames[0], recorder.frames[-1]
    assert driver.health().frames == 6
    assert last.seq - first.seq >= 3
    # Unpaced, six tiny frames decode in milliseconds. Paced at the file's 10 fps, frame b comes at
    # least (b - a - 2) intervals after frame a (the pacer may catch up one interval after a slow
    # frame). A lower bound only: a busy machine can only make it later.
    assert last.timestamp - first.timestamp >= (last.seq - first.seq - 2) * 0.1


def test_loop_keeps_frames_coming_past_the_end(tmp_path):
    video = write_video(tmp_path / "clip.avi", 5)
    recorder = Recorder()
    with camera(video, recorder, loop=True, pace_fps=200) as driver:
        assert recorder.wait_for(lambda: recorder.frames and recorder.frames[-1].seq >= 12)
        health = driver.health()
        assert driver.running
    assert health.connected
    assert health.reconnects == 0  # starting the file again is not a reconnect
    assert health.errors == 0
    for frame in recorder.frames:
        assert_real_frame(frame, 5)


def test_a_slow_consumer_gets_the_latest_frame_not_a_backlog(tmp_path):
    video = write_video(tmp_path / "clip.avi", 10)
    recorder = Recorder(delay=0.25)
    with camera(video, recorder, loop=True, pace_fps=100) as driver:
        assert recorder.wait_for(lambda: len(recorder.frames) >= 4)
        health = driver.health()
    seqs = [frame.seq for frame in recorder.frames]
    assert health.dropped > 0
    assert any(b - a > 1 for a, b in itertools.pairwise(seqs))  # frames skipped, not queued
    assert health.frames > len(seqs)


def test_a_missing_file_is_disconnected_and_retried_until_it_appears(tmp_path):
    video = tmp_path / "later.avi"
    recorder = Recorder()
    with camera(video, recorder, pace_fps=0) as driver:
        assert eventually(lambda: driver.health().errors >= 3)  # several attempts, backing off
        health = driver.health()
        assert not health.connected
        assert health.state.startswith("open failed")
        assert driver.running
        assert not recorder.frames
        write_video(tmp_path / "partial.avi", 4).rename(video)  # appears at once, complete
        assert recorder.wait_for(lambda: any(h.state == "end of file" for h in recorder.health))
    assert driver.health().frames == 4


def test_a_frozen_source_is_detected_and_reopened(tmp_path):
    video = write_video(tmp_path / "still.avi", 80, still=True)
    recorder = Recorder()
    with camera(video, recorder, loop=True, pace_fps=100, frozen_after=0.2) as driver:
        assert recorder.wait_for(lambda: any("frozen" in h.state for h in recorder.health))
        assert recorder.wait_for(lambda: any(h.connected for h in recorder.health if h.reconnects >= 1))
        assert driver.health().errors >= 1


def test_read_failures_close_and_reopen_the_source(tmp_path, mocker):
    video = write_video(tmp_path / "clip.avi", 5)
    # Fault injection at the OpenCV boundary: the first capture opens but every read fails or raises.
    broken = mocker.Mock()
    broken.isOpened.return_value = True
    broken.read.side_effect = [(False, None), cv2.error("injected"), (False, None)]
    captures = iter([broken])

    def factory(source):
        return next(captures, None) or cv2.VideoCapture(source)

    recorder = Recorder()
    with camera(video, recorder, pace_fps=0, max_read_failures=3, capture_factory=factory) as driver:
        assert recorder.wait_for(lambda: any(h.state == "read failed 3 times" for h in recorder.health))
        assert recorder.wait_for(lambda: any(h.state == "end of file" for h in recorder.health))
        health = driver.health()
    broken.release.assert_called()
    assert health.errors == 3
    assert health.frames == 5


def test_a_callback_that_raises_does_not_stop_the_frames(tmp_path, caplog):
    video = write_video(tmp_path / "clip.avi", 30)
    done = threading.Event()
    seen: list[int] = []

    def fragile(frame: CameraFrame) -> None:
        # the first frame *delivered* raises (latest-frame semantics may drop frame 0 on a busy machine)
        seen.append(frame.seq)
        if len(seen) == 1:
            raise RuntimeError("consumer bug")
        if len(seen) == 3:
            done.set()

    with CameraDriver("cam", video, on_frame=fragile, pace_fps=50):
        assert done.wait(WAIT)
    assert "consumer bug" in caplog.text


# -- streams -----------------------------------------------------------------------------------------


@pytest.fixture
def http_server(tmp_path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_http_stream_is_decoded_and_reconnected_when_it_ends(tmp_path, http_server):
    write_video(tmp_path / "stream.avi", 8)
    recorder = Recorder()
    with camera(f"{http_server}/stream.avi", recorder, max_read_failures=2) as driver:
        # A live source does not "end": the failed reads make the driver reconnect, and frames flow again.
        assert recorder.wait_for(lambda: any(h.connected and h.reconnects >= 1 for h in recorder.health))
        assert recorder.wait_for(lambda: recorder.frames and recorder.frames[-1].seq >= 9)
        assert driver.running
    for frame in recorder.frames:
        assert_real_frame(frame, 8)


@pytest.mark.parametrize("url", ["http://127.0.0.1:1/stream.mjpg", "rtsp://127.0.0.1:1/table"])
def test_an_unreachable_stream_is_retried_with_backoff_without_crashing(url):
    recorder = Recorder()
    with camera(url, recorder, open_timeout=1.0) as driver:
        assert eventually(lambda: driver.health().errors >= 2)
        health = driver.health()
        assert not health.connected
        assert health.state.startswith("open failed")
        assert driver.running
    assert recorder.health[-1].state == "stopped"
    assert not recorder.frames


def test_health_hides_a_stream_password():
    assert redact("rtsp://admin:s3cret@10.0.0.9:554/h264") == "rtsp://admin:***@10.0.0.9:554/h264"
    assert redact("/dev/video0") == "/dev/video0"
    recorder = Recorder()
    driver = camera("rtsp://admin:s3cret@127.0.0.1:1/h264", recorder, open_timeout=1.0)
    assert "s3cret" not in driver.health().source


def test_a_device_index_given_as_text_is_a_device():
    driver = CameraDriver("cam", "0", on_frame=lambda frame: None)
    assert driver.source == 0
    assert not driver.is_file
    assert driver.frozen_after == 10.0
