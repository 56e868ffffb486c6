"""``tablesvc watch``: a terminal view of tables from their MQTT feed."""

from __future__ import annotations

import argparse
import sys
import threading
import time


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("watch", help="a terminal view of tables from their MQTT feed",
                       description="Show one or all tables live from the MQTT feed: round, scores, ponds, "
                       "melds, the all-last conditions, last results with names, the final ranking, events, "
                       "device health and the score sticks compared with the game, with a legend of the marks under "
                       "the screen.")
    p.add_argument("--broker", default="mqtt://127.0.0.1:1883", metavar="URL", help="default: %(default)s")
    p.add_argument("--prefix", default="tablesvc", help="topic prefix (default: %(default)s)")
    p.add_argument("--table", help="only this table (TABLE or SITE/TABLE)")
    p.add_argument("--once", type=float, metavar="SECONDS",
                   help="collect for SECONDS, print the view once and exit (for scripts)")
    p.set_defaults(run=run_watch)


def run_watch(args: argparse.Namespace) -> int:
    from tablesvc.mqtt.link import IncomingMessage, MqttLink
    from tablesvc.mqtt.url import BrokerURL
    from tablesvc.watch import Watcher

    try:
        url = BrokerURL.parse(args.broker)
    except ValueError as exc:
        print(f"tablesvc watch: {exc}", file=sys.stderr)
        return 2
    watcher = Watcher(prefix=args.prefix, table=args.table)
    lock = threading.Lock()
    tty = sys.stdout.isatty() and args.once is None

    def on_message(msg: IncomingMessage) -> None:
        with lock:
            line = watcher.feed(msg.topic, msg.payload)
        if line and not tty and args.once is None:
            print(line, flush=True)

    link = MqttLink(url, client_id=f"tablesvc-watch-{int(time.time() * 1000) % 10**9}", on_connected=lambda: None,
                    on_message=on_message, subscriptions=(f"{args.prefix}/#",))
    started = time.monotonic()
    link.start()
    wait = args.once if args.once is not None else 10.0  # --once keeps its deadline, connecting included
    if not link.wait_connected_or_failed(wait):
        print(f"tablesvc watch: cannot reach the broker {url}: {link.failure or f'no answer in {wait:g} s'}",
              file=sys.stderr)
        link.stop()
        return 1
    try:
        if args.once is not None:
            time.sleep(max(0.0, args.once - (time.monotonic() - started)))
            with lock:
                print(watcher.render())
        else:
            while True:
                if tty:
                    with lock:
                        screen = watcher.render()
                    sys.stdout.write("\x1b[H\x1b[2J" + screen + "\n")
                    sys.stdout.flush()
                time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    link.stop()
    return 0
