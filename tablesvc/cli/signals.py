"""Termination signals handled as Ctrl-C, for commands whose clean-up runs on KeyboardInterrupt.

``kill``, ``docker stop`` and ``timeout`` send SIGTERM, a closed terminal sends SIGHUP: Python's default for
either ends the process at once, past every ``finally``, so a demo would leave its temporary directory (its
journal, its pseudo-terminals' names) behind. With :func:`interrupt_on_termination` they raise
KeyboardInterrupt in the main thread, and the command ends as it does on Ctrl-C.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["interrupt_on_termination"]


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def interrupt_on_termination() -> None:
    """SIGTERM and SIGHUP raise KeyboardInterrupt from now on (in the main thread only: signal handlers can be
    set nowhere else, and a command run by a test on another thread keeps the defaults)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, _interrupt)
