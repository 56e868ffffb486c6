"""What the tests of a table service on real serial links share: the two links' configuration and devices.

The automatic table (id ``T1``) talks on ``tmp_path/ttyTABLE`` and the seat
panels (id ``P1``) on ``tmp_path/ttyPANEL``: simulated devices behind real
pseudo-terminals, the service reading them with pyserial.
"""

from __future__ import annotations

from pathlib import Path

from hardware_sims.devices import PtyDevice
from tablesvc.config import Config, parse_config


def table_toml(mosquitto, tmp_path: Path) -> str:
    """The ``[table]`` and ``[mqtt]`` blocks of a table ``club/t1`` on the test's broker, data in ``tmp_path``."""
    return f"""
[table]
site = "club"
id = "t1"
data_dir = "{tmp_path / 'data'}"
[mqtt]
url = "{mosquitto.url}"
"""


def two_links_config(mosquitto, tmp_path: Path, *, table: str = "", panel: str = "") -> Config:
    """A table ``club/t1`` on the test's broker with both serial links; ``table`` and ``panel`` are
    extra TOML lines for each link's block (a heartbeat timeout, the panel's seats)."""
    return parse_config(table_toml(mosquitto, tmp_path) + f"""[[serial]]
name = "table"
url = "{tmp_path / 'ttyTABLE'}"
kind = "table"
ids = ["T1"]
{table}
[[serial]]
name = "panel"
url = "{tmp_path / 'ttyPANEL'}"
kind = "panel"
ids = ["P1"]
{panel}
""")


def pty_devices(tmp_path: Path) -> tuple[PtyDevice, PtyDevice]:
    """The automatic table and the seat panels on their pseudo-terminals (not started), fast heartbeats."""
    return (PtyDevice("T1", "table", tmp_path / "ttyTABLE", heartbeat_interval=0.2),
            PtyDevice("P1", "panel", tmp_path / "ttyPANEL", heartbeat_interval=0.2))
