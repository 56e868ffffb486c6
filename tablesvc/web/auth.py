"""The referee's password, stored hashed, and the CSRF tokens of the console.

The password is kept as ``scrypt$N$r$p$salt$hash`` (hex), made by
``tablesvc web --hash-password``: the standard library's scrypt is a memory-hard
password hash, so a leaked config file does not give the password away, and no
extra dependency is needed. Checks compare in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["csrf_token", "hash_password", "same_token", "verify_password"]

_N, _R, _P = 2**14, 8, 1


def hash_password(password: str, *, salt: bytes | None = None, cost: int = _N) -> str:
    """The stored form of ``password`` (``cost``: scrypt's N, a power of two; tests use a small one)."""
    if not password:
        raise ValueError("the referee password cannot be empty")
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=cost, r=_R, p=_P, dklen=32)
    return f"scrypt${cost}${_R}${_P}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """True when ``password`` matches the stored hash; False for a wrong password or a malformed hash."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        if int(n) > 2**20:  # a hash of absurd cost would hold the server: refused, never computed
            return False
        got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(bytes.fromhex(digest)), maxmem=2**27)
    except (ValueError, TypeError, UnicodeEncodeError):
        return False
    return hmac.compare_digest(got.hex(), digest)


def csrf_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(given: str | None, expected: str | None) -> bool:
    if not given or not expected:
        return False
    # compare_digest takes ASCII text only: bytes, so that a header of any characters is refused, not raised on
    return hmac.compare_digest(str(given).encode("utf-8", "backslashreplace"),
                               str(expected).encode("utf-8", "backslashreplace"))
