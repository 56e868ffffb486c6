"""docs/mqtt.md lists exactly the topics of the catalogue, with the same retain and QoS."""

import re
from pathlib import Path

import pytest

from tablesvc.mqtt.topics import TOPICS, TopicTree

DOC = Path(__file__).resolve().parent.parent / "docs" / "mqtt.md"


def test_docs_table_matches_the_catalogue():
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([\w/<>]+)` \| (\w+) \| (yes|no) \| (\d) \|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3) == "yes", int(m.group(4)))
    assert rows == {t.name: (t.writer, t.retained, t.qos) for t in TOPICS}


def test_topic_tree_refuses_wildcards_and_builds_names():
    tree = TopicTree("tablesvc", "club", "t1")
    assert tree.events == "tablesvc/club/t1/events" and tree.cmd_reply == "tablesvc/club/t1/cmd/reply"
    assert tree.device("panel") == "tablesvc/club/t1/devices/panel"
    for bad in ("a/b", "+", "#", " x"):
        with pytest.raises(ValueError, match="cannot be part of an MQTT topic"):
            TopicTree("tablesvc", bad, "t1")
