"""The table camera and the seat cameras in a table's TOML: ``[[camera]]`` entries by kind, refused with the
file, line and key when a club owner would otherwise wonder why a seat shows nothing."""

from __future__ import annotations

import pytest

from tablesvc.config import ConfigError, load_config

HEAD = """
[table]
site = "club-a"
id = "table-3"

[mqtt]
url = "mqtt://broker.club"
"""


def _write(tmp_path, cameras: str):
    (tmp_path / "seat-e.json").write_text("{}")
    (tmp_path / "seat-s.json").write_text("{}")
    (tmp_path / "east.npz").write_bytes(b"")
    (tmp_path / "faces").mkdir(exist_ok=True)
    path = tmp_path / "table.toml"
    path.write_text(HEAD + cameras)
    return path


TWO_SEATS = """
[[camera]]
source = "rtsp://cam/over"

[[camera]]
kind = "hand"
seat = "E"
source = 2
calibration = "seat-e.json"
model = "east.npz"

[[camera]]
kind = "hand"
seat = "S"
name = "south-cam"
source = "/dev/video3"
calibration = "seat-s.json"
tiles = "faces"
"""


def test_a_table_camera_and_seat_cameras_side_by_side(tmp_path):
    config = load_config(_write(tmp_path, TWO_SEATS))
    assert config.camera is not None and config.camera.source == "rtsp://cam/over" and config.camera.name == "camera"
    east, south = config.seat_cameras
    assert (east.seat, east.name, east.source) == (0, "seat-E", 2)
    assert east.calibration == tmp_path / "seat-e.json" and east.model == tmp_path / "east.npz" and east.tiles is None
    assert (south.seat, south.name, south.source) == (1, "south-cam", "/dev/video3")
    assert south.tiles == tmp_path / "faces" and south.model is None


def test_the_single_camera_table_is_still_the_table_camera_and_seat_cameras_alone_need_none(tmp_path):
    config = load_config(_write(tmp_path, '\n[camera]\nsource = 0\nsnapshot_interval = 2\n'))
    assert config.camera.source == 0 and config.camera.snapshot_interval == 2 and config.seat_cameras == ()
    west = 'kind = "hand"\nseat = "W"\nsource = 1\ncalibration = "seat-e.json"\nmodel = "east.npz"'
    config = load_config(_write(tmp_path, TWO_SEATS.replace('source = "rtsp://cam/over"', west)))
    assert config.camera is None and [c.seat for c in config.seat_cameras] == [0, 1, 2]


SEAT_W = '\n[[camera]]\nkind = "hand"\nseat = "W"\nsource = 4\ncalibration = "seat-e.json"\nmodel = "east.npz"\n'


@pytest.mark.parametrize(
    ("extra", "line", "message"),
    [
        (SEAT_W.replace('"W"', '"E"'), 29, r"\[camera\] seat: two seat cameras for seat E \('seat-E' and this one\)"),
        (SEAT_W.replace('"W"', '"X"'), 29, r'\[camera\] seat: one of "E", "S", "W", "N" .*not \'X\''),
        (SEAT_W.replace('"W"', "2"), 29, r"\[camera\] seat: expected str, not 2"),
        (SEAT_W.replace('seat = "W"\n', ""), 27, r"\[camera\]: a seat camera needs seat = "),
        (SEAT_W.replace('"seat-e.json"', '"seat-w.json"'), 31,
         r"\[camera\] calibration: no such file: .*seat-w.json \(write it with 'tablesvc vision seat-calibrate'\)"),
        (SEAT_W.replace('calibration = "seat-e.json"\n', ""), 27, r"a seat camera needs calibration = the row's strip"),
        (SEAT_W.replace('model = "east.npz"\n', ""), 27, r"a seat camera needs model = the set enrolled from it"),
        (SEAT_W.replace('model = "east.npz"', 'model = "east.npz"\ntiles = "faces"'), 32,
         r"\[camera\] model: give either tiles"),
        (SEAT_W.replace('kind = "hand"', 'kind = "seat"'), 28, r'\[camera\] kind: "table" .* or "hand" .*not \'seat\''),
        (SEAT_W + "snapshot_interval = 1\n", 33, r"snapshot_interval: a seat camera publishes no snapshots"),
        ('\n[[camera]]\nsource = 1\n', 27, r"\[camera\] kind: two table cameras \('camera' and this one\)"),
        ('\n[[camera]]\nsource = 1\nseat = "N"\n', 29, r"\[camera\] seat: only a seat camera"),
        (SEAT_W.replace('seat = "W"', 'seat = "W"\nname = "south-cam"'), 30,
         r"\[camera\] name: 'south-cam' is the name of another camera already"),
        (SEAT_W + 'focus = 3\n', 33, r"\[camera\] focus: unknown key"),
    ],
)
def test_refusals_name_the_entry_line_and_what_to_do(tmp_path, extra, line, message):
    with pytest.raises(ConfigError, match=message) as info:
        load_config(_write(tmp_path, TWO_SEATS + extra))
    assert f"table.toml line {line}:" in str(info.value)


def test_a_camera_named_like_a_serial_device_is_refused(tmp_path):
    serial = '\n[[serial]]\nname = "seat-E"\nurl = "/dev/ttyUSB0"\nkind = "table"\nids = ["T1"]\n'
    with pytest.raises(ConfigError, match=r"'seat-E' is the name of a serial device already"):
        load_config(_write(tmp_path, serial + TWO_SEATS))
