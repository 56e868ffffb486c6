"""What the tests of a table service on real serial links share: the two links' devices and configuration.

The automatic table (id ``T1``) and the seat panels (id ``P1``) come from the pytest plugin's
``pty_device`` fixture: simulated devices behind real pseudo-terminals, started for the test and
stopped after it, the service reading them with pyserial.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def two_devices(pty_device: Callable[..., Any], *, panel_resends: int = 3) -> tuple[PtyDevice, PtyDevice]:
    """The automatic table and the seat panels, started on their pseudo-terminals, with fast heartbeats; the
    panel repeats an unacknowledged event ``panel_resends`` times, half a second apart."""
    return (pty_device("table", "T1", heartbeat_interval=0.2),
            pty_device("panel", "P1", heartbeat_interval=0.2, max_resends=panel_resends))


def two_links_config(mosquitto, tmp_path: Path, devices: tuple[PtyDevice, PtyDevice], *, table: str = "",
                     panel: str = "") -> Config:
    """A table ``club/t1`` on the test's broker with a serial link to each of ``devices`` (table, panel);
    ``table`` and ``panel`` are extra TOML lines for each link's block (a heartbeat timeout, the panel's seats)."""
    table_dev, panel_dev = devices
    return parse_config(table_toml(mosquitto, tmp_path) + f"""[[serial]]
name = "table"
url = "{table_dev.link_path}"
kind = "table"
ids = ["{table_dev.device_id}"]
{table}
[[serial]]
name = "panel"
url = "{panel_dev.link_path}"
kind = "panel"
ids = ["{panel_dev.device_id}"]
{panel}
""")
