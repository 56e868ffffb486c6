"""A broker's address as the configuration, the command line and the web server give it: parsed without loading
the MQTT client, so reading a configuration file loads no paho."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

__all__ = ["BrokerURL"]


@dataclass(frozen=True)
class BrokerURL:
    """``mqtt://user:pass@host:1883`` or ``mqtts://host:8883`` (TLS)."""

    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> BrokerURL:
        parts = urlsplit(url if "://" in url else f"mqtt://{url}")
        if parts.scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
            raise ValueError(f"broker URL {url!r}: the scheme must be mqtt:// or mqtts://")
        if not parts.hostname:
            raise ValueError(f"broker URL {url!r} names no host")
        tls = parts.scheme in ("mqtts", "ssl")
        try:
            port = parts.port or (8883 if tls else 1883)
        except ValueError:
            raise ValueError(f"broker URL {url!r}: the port must be a number") from None
        return cls(parts.hostname, port, tls, unquote(parts.username) if parts.username else None,
                   unquote(parts.password) if parts.password else None)

    def __str__(self) -> str:
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"
