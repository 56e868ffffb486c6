"""What every face of the web server shares: the static pages, the names a URL may give a site or table, and the
headers of a response no cache may keep."""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, Response

__all__ = ["NAME_SEGMENT", "STATIC", "page", "private"]

STATIC = resources.files("tablesvc.web") / "static"
NAME_SEGMENT = re.compile(r"[^/+#\s\x00-\x1f]{1,64}")  # a site or table name as a topic segment can hold it


def page(name: str) -> Callable[[Request], Any]:
    async def serve(_request: Request) -> Response:
        return FileResponse(str(STATIC / name), media_type="text/html")

    return serve


def private(headers: dict[str, str] | None = None) -> dict[str, str]:
    """Headers for a response that holds a referee's session data: no cache keeps it."""
    return {"Cache-Control": "no-store", **(headers or {})}
