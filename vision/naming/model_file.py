"""A saved tile model (.npz): opened once, its format read, handed to the reader of the method that enrolled it.

Both recognisers save to the same kind of file, told apart by its ``format``
entry; this is the one place that opens such a file and turns what can go
wrong with it into a message naming the file, so that the LDA classifier and
the embedding read each other's files without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

__all__ = ["EMBED_FORMAT", "LDA_FORMAT", "OtherNetwork", "read_model"]

#: what :meth:`TileClassifier.save <vision.naming.classifier.TileClassifier.save>` writes:
#: 1 = HOG + colour, cosine kNN (no "format" entry); 2 = + top HOG, LDA metric
LDA_FORMAT = 2
#: what :meth:`EmbeddingClassifier.save <vision.naming.embedding.EmbeddingClassifier.save>` writes
EMBED_FORMAT = 3

T = TypeVar("T")


class OtherNetwork(ValueError):
    """A saved tile set whose embeddings were made by another network than the installed one."""


def read_model(path: str | Path, readers: Mapping[int, Callable[[Any], T]]) -> T:
    """What the reader of the file's format makes of it (the open ``NpzFile``).

    Raises ``ValueError`` naming the file when it is no model, one of a format no reader takes, or a set
    enrolled in the embedding of another network than the installed one."""
    try:
        with np.load(Path(path), allow_pickle=False) as z:
            version = int(z["format"]) if "format" in z.files else 1
            if version in readers:
                return readers[version](z)
    except OtherNetwork as exc:
        raise ValueError(f"{path}: {exc}") from exc
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not a tile model written by 'tablesvc vision enroll' ({exc})") from exc
    raise ValueError(f"{path}: model format {version}, this version reads {LDA_FORMAT} "
                     "(features changed): enroll the tile set again")  # fmt: skip
