"""tablesvc: follows a real riichi mahjong table and publishes a live, scored game."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tablesvc")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+source"
