"""The real photos' labels as corrected (vision/photos/data.py): every erratum matches the published file,
and the corrections change exactly what they say and nothing else."""

from __future__ import annotations

from collections import Counter

import pytest

from vision.photos.data import (
    CAMERASH,
    CAMERASH_ERRATA,
    ROBOFLOW,
    ROBOFLOW_ERRATA,
    camerash_photos,
    one_label_photos,
    roboflow_crops,
)


def test_one_label_photos_are_labelling_failures_not_flowers() -> None:
    labels = {"mixed": ["1m", "2m", "3p"] * 3, "failed": ["1p"] * 14, "flowers": [None] * 8, "few": ["E"] * 3}
    assert one_label_photos(labels) == {"failed"}


@pytest.mark.data
def test_roboflow_valid_corrections_change_exactly_the_errata_and_the_failed_photos() -> None:
    if not ROBOFLOW.is_dir():
        pytest.skip(f"{ROBOFLOW} not found (../shared/data)")
    published = roboflow_crops("valid", corrected=False)
    corrected = roboflow_crops("valid")
    failed = {c.photo for c in published} - {c.photo for c in corrected}
    assert len(failed) == 7  # every box of each labelled 1p
    assert all({c.tile for c in published if c.photo == p} == {"1p"} for p in failed)
    kept = [c for c in published if c.photo not in failed]
    assert len(kept) == len(corrected)
    changed = Counter((a.photo, a.tile, b.tile) for a, b in zip(kept, corrected, strict=True) if a.tile != b.tile)
    assert sum(changed.values()) == len(ROBOFLOW_ERRATA)
    assert changed == Counter((photo, was, seen) for photo, _line, was, seen in ROBOFLOW_ERRATA)
    # the training split has no errata and no failed photo: what the network learnt from is as published
    assert len(roboflow_crops("train")) == len(roboflow_crops("train", corrected=False))


@pytest.mark.data
def test_camerash_corrections() -> None:
    if not CAMERASH.is_dir():
        pytest.skip(f"{CAMERASH} not found (../shared/data)")
    published = {c.photo: c.tile for c in camerash_photos(corrected=False)}
    corrected = {c.photo: c.tile for c in camerash_photos()}
    assert {p for p in published if published[p] != corrected[p]} == set(CAMERASH_ERRATA)
    assert all(corrected[p] == t and published[p] != t for p, t in CAMERASH_ERRATA.items())
