"""Where a command's reply may go, and so who sent it: only under the table's own ``cmd/reply``.

MQTT 5 lets a sender name any response topic. Answering wherever it says
let one command overwrite the table's retained ``state`` or ``status`` (the
dashboard shows the table offline, the overlay loses it), and one naming a
topic the service may not write got the service disconnected by the broker's
ACL (its Last Will flapped the table offline). So a reply goes on plain
``cmd/reply`` or on ``cmd/reply/<name>`` (one level, the name a referee's
account reads), and a command with any other response topic is refused
before it is read: its refusal goes on plain ``cmd/reply``. The ``<name>`` is
also the only thing MQTT tells the service about who sent a command, so it is
the sender refusals are counted by.
"""

from __future__ import annotations

from dataclasses import dataclass

from tablesvc.text import is_valid_text

__all__ = ["MAX_SENDER", "PLAIN", "ReplyRoute", "reply_route"]

#: The longest ``<name>`` in ``cmd/reply/<name>``: an account name, not a document.
MAX_SENDER = 64
#: The sender of a command with no response topic (the web console, MQTT 3.1.1 tools).
PLAIN = "cmd/reply"


@dataclass(frozen=True)
class ReplyRoute:
    """Where to answer (always a topic the service may write), who asked, and why the command is refused
    unread (None: it may be carried out)."""

    topic: str
    sender: str
    refusal: str | None = None


def _shown(topic: str) -> str:
    text = topic if is_valid_text(topic) else topic.encode("utf-8", "replace").decode("utf-8")
    return repr(text if len(text) <= 80 else text[:77] + "...")


def reply_route(cmd_reply: str, response_topic: str | None) -> ReplyRoute:
    """The route of a command's reply, given the table's ``cmd/reply`` topic and the MQTT 5 response topic."""
    if response_topic is None:
        return ReplyRoute(cmd_reply, PLAIN)
    name = response_topic[len(cmd_reply) + 1:] if response_topic.startswith(cmd_reply + "/") else None
    if response_topic == cmd_reply:
        return ReplyRoute(cmd_reply, PLAIN)
    if (name and len(name) <= MAX_SENDER and is_valid_text(name) and name.isprintable()
            and not any(c in name for c in "/+#\0")):
        return ReplyRoute(response_topic, name)
    return ReplyRoute(cmd_reply, PLAIN, (
        f"refused: the response topic {_shown(response_topic)} is not this table's {cmd_reply} or "
        f"{cmd_reply}/<name> (a name of 1 to {MAX_SENDER} characters, no '/', '+' or '#'); replies go only "
        "there, so the command was not carried out. Send it again with such a response topic"))
