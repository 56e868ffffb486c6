"""Why a broker cannot be reached, below MQTT: the TCP connection, the TLS handshake, and what answers at the
port when no broker does (a TLS listener, a web server). paho only says that a connection failed; this says
why, in words a club owner can act on. Also the TLS settings every broker connection uses."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

from tablesvc.mqtt.url import BrokerURL

__all__ = ["probe", "tls_context"]


def tls_context(ca_file: str | None) -> ssl.SSLContext:
    """The TLS settings of every broker connection: the server's certificate must chain to ``ca_file``
    (else the system's CAs) and name the host. A CA file that cannot be read is said plainly."""
    if ca_file is not None and not Path(ca_file).is_file():
        raise ValueError(f"the broker's CA file {ca_file} does not exist ([mqtt] ca_file)")
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (ssl.SSLError, OSError) as exc:
        raise ValueError(f"the broker's CA file {ca_file} is no PEM certificate ([mqtt] ca_file): {exc}") from None


def probe(url: BrokerURL, ca_file: str | None = None, timeout: float = 2.0) -> tuple[str, str] | None:
    """Why a connection to the broker fails below MQTT, as (kind, message) with kind ``network`` or
    ``tls``; None when the TCP connection (and the TLS handshake, for mqtts://) succeed. paho only
    says that a connection failed; this says why, in words a club owner can act on."""
    where = f"{url.host}:{url.port}"
    try:
        sock = socket.create_connection((url.host, url.port), timeout=timeout)
    except socket.gaierror as exc:
        return "network", f"the broker's host name {url.host!r} does not resolve ({exc.strerror})"
    except ConnectionRefusedError:
        return "network", f"connection refused at {where}: no broker listens there"
    except TimeoutError:
        return "network", f"no answer from {where} within {timeout:g} s (host down or port filtered)"
    except OSError as exc:
        return "network", f"cannot reach {where}: {exc.strerror or exc}"
    with sock:
        if not url.tls:
            return _plain_answer(url, sock, timeout)
        try:
            context = tls_context(ca_file)
        except ValueError as exc:
            return "tls", str(exc)
        try:
            with context.wrap_socket(sock, server_hostname=url.host):
                return None
        except ssl.SSLCertVerificationError as exc:
            hint = ("the broker's certificate is for another host" if exc.verify_code in (62, 64)  # name or IP mismatch
                    else "the broker's certificate is not signed by the CA in [mqtt] ca_file" if ca_file
                    else "the broker's certificate is not signed by a CA this system trusts: set [mqtt] ca_file")
            return "tls", f"TLS certificate rejected at {where}: {exc.verify_message} ({hint})"
        except ssl.SSLError as exc:
            return "tls", f"TLS handshake with {where} failed: {exc.reason or exc}"
        except OSError as exc:
            return "tls", f"TLS handshake with {where} failed: {exc}"


#: An MQTT 3.1.1 CONNECT (clean session, no client id, keep-alive 15 s): what a broker answers with a CONNACK.
_CONNECT = bytes([0x10, 12, 0, 4]) + b"MQTT" + bytes([4, 2, 0, 15, 0, 0])
_DISCONNECT = bytes([0xE0, 0])


def _plain_answer(url: BrokerURL, sock: socket.socket, timeout: float) -> tuple[str, str] | None:
    """What answers plain MQTT at ``url``: None for a broker (a CONNACK, or nothing we can name); a TLS port
    (it resets the connection, or answers with a TLS record) or a web server (HTTP) said in words, with what to
    change in [mqtt] url."""
    where = f"{url.host}:{url.port}"
    answer = b""
    try:
        sock.settimeout(min(timeout, 1.5))
        sock.sendall(_CONNECT)
        answer = sock.recv(16)
        if answer[:1] == b"\x20":
            sock.sendall(_DISCONNECT)
            return None
    except OSError:  # reset (a TLS listener refusing plain bytes), or silent
        pass
    if answer[:1] in (b"\x15", b"\x16") or _speaks_tls(url, timeout):
        return "tls", (f"{where} answered with TLS, not plain MQTT: the broker listens there with TLS; use "
                       f"mqtts://{url.host}:{url.port} in [mqtt] url (with [mqtt] ca_file if its CA is your own)")
    if answer.startswith((b"HTTP/", b"<")) or _speaks_http(url, timeout):
        return "network", (f"{where} answered with HTTP, not MQTT: a web server (or the broker's WebSocket "
                           "listener) listens there; set [mqtt] url to the broker's MQTT port (1883, or 8883 "
                           "with mqtts://)")
    return None


def _speaks_http(url: BrokerURL, timeout: float) -> bool:
    """Whether ``url``'s port answers an HTTP request as a web server does."""
    try:
        with socket.create_connection((url.host, url.port), timeout=min(timeout, 1.5)) as sock:
            sock.sendall(f"HEAD / HTTP/1.0\r\nHost: {url.host}\r\n\r\n".encode())
            return sock.recv(8).startswith(b"HTTP/")
    except OSError:
        return False


def _speaks_tls(url: BrokerURL, timeout: float) -> bool:
    """Whether ``url``'s port completes a TLS handshake (any certificate: this only asks what the port speaks)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((url.host, url.port), timeout=min(timeout, 1.5)) as raw, \
                context.wrap_socket(raw, server_hostname=url.host):
            return True
    except (OSError, ssl.SSLError, ValueError):
        return False
