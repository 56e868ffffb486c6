"""A bad configuration fails at start, naming the file, line and key."""

import pytest

from tablesvc.config import ConfigError, load_config, parse_config

GOOD = """
[table]
site = "club-a"
id = "table-3"
rules = "ema2016"
data_dir = "journal"
players = ["Ann", "Bo", "Cy", "Di"]

[mqtt]
url = "mqtts://svc:secret@broker.club:8883"
prefix = "club"

[[serial]]
name = "table"
url = "/dev/ttyUSB0"
kind = "table"
ids = ["T1"]

[[serial]]
name = "panel"
url = "socket://10.0.0.5:7000"
kind = "panel"
ids = ["P1"]
seats = [0, 2]
heartbeat_timeout = 5

[camera]
source = "rtsp://cam/stream"

[commands]
tokens = ["referee-token-1"]
"""


def test_good_file(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(GOOD)
    config = load_config(path)
    assert config.table.rules == "ema2016" and config.table.players == ("Ann", "Bo", "Cy", "Di")
    assert config.table.data_dir == tmp_path / "journal"  # relative to the file
    assert config.mqtt.url.tls and config.mqtt.url.port == 8883 and config.mqtt.url.password == "secret"
    assert [s.name for s in config.serial] == ["table", "panel"] and config.serial[1].heartbeat_timeout == 5
    assert config.serial[0].binding.ids == {"T1"} and config.serial[0].binding.kind.value == "table"
    assert config.serial[1].binding.seats == {0, 2}
    assert config.serial[0].binding.seats == {0, 1, 2, 3}
    assert config.camera.source == "rtsp://cam/stream"
    assert config.topics.status == "club/club-a/table-3/status"
    assert "secret" not in str(config.mqtt.url)  # the password never reaches logs


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('url = "mqtts://svc:secret@broker.club:8883"', 'url = "http://broker"'),
         r"line 10: \[mqtt\] url: .*mqtt:// or mqtts://"),
        (('rules = "ema2016"', 'rules = "wrc"'), r"line 5: \[table\] rules: unknown rule set 'wrc'"),
        (('rules = "ema2016"', 'rules = "ema2016; kiriage=maybe"'), r"\[table\] rules: house rule kiriage='maybe': "
         "expected yes or no"),
        (('prefix = "club"', 'prefx = "club"'), r"line 11: \[mqtt\] prefx: unknown key"),
        (('heartbeat_timeout = 5', 'heartbeat_timeout = -1'), r"\[serial\] heartbeat_timeout: must be positive"),
        (('heartbeat_timeout = 5', 'heartbeat_timeout = "5"'), r"\[serial\] heartbeat_timeout: expected int"),
        (('id = "table-3"', 'id = "table/3"'), r"\[table\] id: .*cannot be part of an MQTT topic"),
        (('players = ["Ann", "Bo", "Cy", "Di"]', 'players = ["Ann"]'), r"\[table\] players: four"),
        (('tokens = ["referee-token-1"]', 'tokens = ["short"]'), r"\[commands\] tokens"),
        (('name = "panel"', 'name = "table"'), r"two devices are named 'table'"),
        (('name = "panel"', 'name = "panel #1"'), r"\[serial\] name: 'panel #1' names a topic"),
        (('prefix = "club"', 'prefix = "club"\nca_file = "missing.pem"'), r"\[mqtt\] ca_file: no such file"),
        (('prefix = "club"', 'prefix = "a/b"'), r"\[mqtt\] prefix: 'a/b' cannot be part of an MQTT topic"),
        (('data_dir = "journal"', 'data_dir = "journal"\njournal_sync = "off"'), r"\[table\] journal_sync: 'full'"),
        (('kind = "panel"\n', ''), r"\[serial\]: panel: the key 'kind' is required \(table, panel, sticks\)"),
        (('ids = ["P1"]\n', ''), r"\[serial\]: panel: the key 'ids' is required"),
        (('kind = "panel"', 'kind = "dice"'), r"\[serial\] kind: one of table, panel, sticks, not 'dice'"),
        (('ids = ["P1"]', 'ids = ["T1"]'), r"\[serial\] ids: 'T1' is configured for both 'table' and 'panel'"),
        (('ids = ["P1"]', 'ids = ["P 1"]'), r"\[serial\] ids: one or more device ids"),
        (('ids = ["P1"]', 'ids = ["ALL"]'), r"\[serial\] ids: .*not ALL"),
        (('ids = ["P1"]', 'ids = []'), r"\[serial\] ids: one or more device ids"),
        (('seats = [0, 2]', 'seats = [0, 4]'), r"\[serial\] seats: one or more different seats 0..3"),
        (('ids = ["T1"]', 'ids = ["T1"]\nseats = [0]'), r"\[serial\] seats: only a panel serves seats"),
    ],
)
def test_bad_files_name_key_and_line(tmp_path, change, message):
    path = tmp_path / "table.toml"
    path.write_text(GOOD.replace(*change))
    with pytest.raises(ConfigError, match=message) as err:
        load_config(path)
    assert str(path) in str(err.value)


def test_missing_section_and_bad_toml():
    with pytest.raises(ConfigError, match=r"the section \[mqtt\] is required"):
        parse_config('[table]\nsite = "a"\nid = "b"\n')
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse_config("[table\n")
    with pytest.raises(ConfigError, match=r"\[tabel\]: unknown section"):
        parse_config('[tabel]\nsite = "a"\n')


def test_cli_check_and_error_exit(tmp_path, capsys):
    from tablesvc.cli import main

    path = tmp_path / "table.toml"
    path.write_text(GOOD)
    assert main(["run", "--config", str(path), "--check"]) == 0
    assert "configuration is valid" in capsys.readouterr().out
    path.write_text(GOOD.replace('site = "club-a"\n', ""))
    assert main(["run", "--config", str(path)]) == 2
    assert "the key 'site' is required" in capsys.readouterr().err


def _camera_config(tmp_path, calibration, model):
    """A table file with an overhead camera reading ``calibration`` and ``model`` (no broker is reached)."""
    path = tmp_path / "table.toml"
    path.write_text(f"""
[table]
site = "club"
id = "t1"
data_dir = "{tmp_path / 'data'}"
[mqtt]
url = "mqtt://127.0.0.1:1"
[camera]
name = "overhead"
source = "0"
calibration = "{calibration}"
model = "{model}"
""")
    return path


def test_run_refuses_a_camera_model_that_is_no_tile_model(tmp_path, capsys):
    """The file exists (the configuration is valid) but is no model: a message naming it, exit 1, and the
    service stops before it connects or starts a driver."""
    from tablesvc.cli import main

    model, calibration = tmp_path / "club.npz", tmp_path / "camera.json"
    model.write_bytes(b"not a model")
    calibration.write_text("{}")
    path = _camera_config(tmp_path, calibration, model)
    assert main(["run", "--config", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{model}: not a tile model written by 'tablesvc vision enroll'" in err


def test_house_rules_after_the_preset(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(GOOD.replace('rules = "ema2016"', 'rules = "ema2016; kiriage=yes; uma=15000,5000,-5000,-15000"'))
    assert load_config(path).table.rules == "ema2016; kiriage=yes; uma=15000,5000,-5000,-15000"


def test_check_reads_the_camera_files_as_the_service_will(tmp_path, capsys):
    """``run --check`` finds a calibration or model that exists but is none, and says what the good ones hold."""
    import numpy as np

    from hardware_sims.camera_render import TableView, render
    from tablesvc.cli import main
    from tests.conftest import DATA
    from vision.naming.classifier import TileClassifier
    from vision.table.calibration import calibrate

    calibration, model = tmp_path / "camera.json", tmp_path / "club.npz"
    calibrate(render(TableView(), rng=np.random.default_rng(0))[0]).save(calibration)
    clf = TileClassifier(augment_per_image=4)
    clf.enroll_directory(DATA / "tiles-fluffystuff")
    clf.save(model)
    path = _camera_config(tmp_path, calibration, model)
    assert main(["run", "--config", str(path), "--check"]) == 0
    out = capsys.readouterr().out
    assert "camera overhead: calibrated to" in out and "37 tile kinds enrolled" in out
    calibration.write_text('{"version": 1}')
    assert main(["run", "--config", str(path), "--check"]) == 2
    assert "camera.json: not a calibration written by 'tablesvc vision calibrate'" in capsys.readouterr().err


START = '\n[start]\nround = "S2"\nhonba = 2\nsticks = 1\nscores = [31000, 28000, 35000, 25000]\n'


def test_start_section_gives_the_situation_a_game_is_taken_up_in():
    config = parse_config(GOOD + START)
    assert config.start == {"round": "S2", "honba": 2, "sticks": 1, "scores": (31000, 28000, 35000, 25000)}
    assert parse_config(GOOD).start == {}  # East 1, the preset's points


@pytest.mark.parametrize(("change", "message"), [
    (('round = "S2"', 'round = "S9"'), r"line \d+: \[start\] round: a round is a wind and a number"),
    (('round = "S2"', 'round = "W1"'), r"\[start\] round: the game cannot start in W1: under ema2016"),
    (('honba = 2', 'honba = -1'), r"\[start\] honba: cannot be negative"),
    (('sticks = 1', 'sticks = 1\ndealer = 7'), r"\[start\] dealer: the dealer is a seat 0..3, not 7"),
    (('scores = [31000, 28000, 35000, 25000]', 'scores = [1, 2]'), r"\[start\] scores: four whole numbers"),
    (('sticks = 1', 'stick = 1'), r"\[start\] stick: unknown key"),
])
def test_bad_start_names_the_key(change, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(GOOD + START.replace(*change), "table.toml")
