"""Device drivers: serial devices (pyserial) and cameras (OpenCV), turning bytes and frames into typed
observations. They know nothing of the engine.

What a caller imports from here (each name is loaded on first use, so ``import drivers`` opens no
serial or camera library until a driver is asked for):

- the drivers: :class:`SerialDriver` (a table, seat panel or stick tray on a serial line) and
  :class:`CameraDriver` (the latest :class:`CameraFrame` of a camera);
- the serial protocol: :class:`HostProtocol`, :func:`encode`, :func:`decode_frame`, :class:`Frame`,
  :class:`FrameError`, and :class:`LinkBinding` (which device a line is);
- what the drivers tell the service: :class:`Observation` and its kinds, :class:`DeviceKind`,
  :class:`DeviceHealth`, :class:`CameraHealth`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drivers.binding import LinkBinding
    from drivers.camera import CameraDriver, CameraFrame
    from drivers.observations import (
        ButtonPressed,
        CameraHealth,
        DeviceHealth,
        DeviceHello,
        DeviceKind,
        DiceRolled,
        HandStarted,
        Observation,
        TraysRead,
        WallReady,
    )
    from drivers.protocol import Frame, FrameError, HostProtocol, decode_frame, encode
    from drivers.serial_driver import SerialDriver

__all__ = [
    "ButtonPressed",
    "CameraDriver",
    "CameraFrame",
    "CameraHealth",
    "DeviceHealth",
    "DeviceHello",
    "DeviceKind",
    "DiceRolled",
    "Frame",
    "FrameError",
    "HandStarted",
    "HostProtocol",
    "LinkBinding",
    "Observation",
    "SerialDriver",
    "TraysRead",
    "WallReady",
    "decode_frame",
    "encode",
]

#: the module each name lives in
_WHERE: dict[str, str] = {
    "SerialDriver": "serial_driver",
    "CameraDriver": "camera",
    "CameraFrame": "camera",
    "Frame": "protocol",
    "FrameError": "protocol",
    "HostProtocol": "protocol",
    "decode_frame": "protocol",
    "encode": "protocol",
    "LinkBinding": "binding",
    "ButtonPressed": "observations",
    "CameraHealth": "observations",
    "DeviceHealth": "observations",
    "DeviceHello": "observations",
    "DeviceKind": "observations",
    "DiceRolled": "observations",
    "HandStarted": "observations",
    "Observation": "observations",
    "TraysRead": "observations",
    "WallReady": "observations",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
