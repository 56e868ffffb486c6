"""tablesvc: follows a real riichi mahjong table and publishes a live, scored game."""

#: the one statement of the version: pyproject.toml reads it from here. Written out rather than asked of the
#: installed package's metadata, which takes every process that imports tablesvc a twentieth of a second.
__version__ = "0.1.0"
