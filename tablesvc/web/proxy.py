"""Who is asking, and over what, behind a reverse proxy: only the proxies the configuration trusts
(``[web] trusted_proxies``) are believed about ``X-Forwarded-For`` and ``X-Forwarded-Proto``."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.requests import Request

__all__ = ["TrustedProxies"]


class TrustedProxies:
    """The addresses and networks whose forwarding headers are believed; ``https`` when every page is served
    over TLS whatever a proxy says."""

    def __init__(self, networks: Iterable[str], https: bool = False) -> None:
        self.networks = [ipaddress.ip_network(p, strict=False) for p in networks]
        self.https = https

    def trusted(self, host: str | None) -> bool:
        try:
            address = ipaddress.ip_address(host or "")
        except ValueError:
            return False
        return any(address in net for net in self.networks)

    def client_address(self, request: Request) -> str:
        """Who is asking: the peer, or behind a trusted proxy the last address it forwarded for."""
        peer = request.client.host if request.client else "?"
        if self.trusted(peer):
            forwarded = [a.strip() for a in request.headers.get("x-forwarded-for", "").split(",") if a.strip()]
            while forwarded and self.trusted(forwarded[-1]):
                forwarded.pop()
            if forwarded:
                return forwarded[-1][:64]
        return peer

    def secure(self, request: Request) -> bool:
        """Whether the browser reached the server over TLS (cookies are then Secure)."""
        if self.https:
            return True
        proto = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        return proto == "https" and self.trusted(request.client.host if request.client else None)
