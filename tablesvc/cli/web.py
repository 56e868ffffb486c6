"""``tablesvc web``: the overlay, dashboard and referee console of every table on a broker."""

from __future__ import annotations

import argparse
import getpass
import signal
import sys
import threading

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("web", help="serve the stream overlay, club dashboard and referee console",
                       description="A web server of its own that follows every table on the broker over MQTT "
                       "(every site, or only one with --site) and serves the stream overlay "
                       "(/overlay/SITE/TABLE), the dashboard (/) and the referee console (/referee/SITE/TABLE), "
                       "live with Server-Sent Events. Needs the web extra: pip install -e \".[web]\".")
    p.add_argument("--broker", metavar="URL", help="the broker (mqtt://host:1883); default: [mqtt] url of --config, "
                   "else mqtt://127.0.0.1:1883")
    p.add_argument("--site", help="only this site's tables (default: every site on the broker)")
    p.add_argument("--listen", metavar="HOST:PORT", help="where to serve pages (default: 127.0.0.1:8080)")
    p.add_argument("--prefix", help="topic prefix (default: tablesvc)")
    p.add_argument("--records-db", metavar="URL", help="the records database that `tablesvc records` writes (a SQLite "
                   "file or a postgresql:// URL): serves the club's standings at /standings")
    p.add_argument("--tournament", metavar="NAME", help="the tournament of --records-db the /tournament pages show "
                   "(default: the one made last; see docs/tournament.md)")
    p.add_argument("--config", metavar="FILE", help="a TOML file with [web] (referee_password, secret_key, "
                   "referee_token, listen, site, idle_alert, records_db) and optionally [mqtt] url")
    p.add_argument("--hash-password", action="store_true",
                   help="read a referee password (twice) and print its hash for [web] referee_password, then exit")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tablesvc.web.auth import hash_password

    if args.hash_password:
        if sys.stdin.isatty():
            first, second = getpass.getpass("referee password: "), getpass.getpass("again: ")
            if first != second:
                print("tablesvc web: the two passwords differ", file=sys.stderr)
                return 2
        else:
            first = sys.stdin.readline().rstrip("\n")
        try:
            print(hash_password(first))
        except ValueError as exc:
            print(f"tablesvc web: {exc}", file=sys.stderr)
            return 2
        return 0

    from tablesvc.config import ConfigError, WebConfig, load_web_config
    from tablesvc.mqtt.link import BrokerURL

    try:
        from tablesvc.web.server import parse_listen  # uvicorn, and Starlette through the app
    except ImportError as exc:
        print(missing_extra(exc), file=sys.stderr)
        return 2

    web, url, prefix = WebConfig(), None, None
    if args.config:
        try:
            web, url, prefix = load_web_config(args.config)
        except ConfigError as exc:
            print(f"tablesvc web: {exc}", file=sys.stderr)
            return 2
    try:
        broker = BrokerURL.parse(args.broker or url or "mqtt://127.0.0.1:1883")
        listen = parse_listen(args.listen or web.listen)
    except ValueError as exc:
        print(f"tablesvc web: {exc}", file=sys.stderr)
        return 2
    server = make_server(broker, web, listen=listen, site=args.site, prefix=args.prefix or prefix or "tablesvc",
                         records_db=args.records_db, tournament=args.tournament)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        server.start()
    except (OSError, RuntimeError) as exc:
        print(f"tablesvc web: {exc}", file=sys.stderr)
        return 1
    print(f"tablesvc web: serving {server.url}/ from {broker}"
          f"{' (site ' + server.settings.site + ')' if server.settings.site else ''}", flush=True)
    if not web.referee_password:
        print("  no referee password set: the referee console is closed ([web] referee_password)", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    server.stop()
    return 0


def missing_extra(exc: ImportError) -> str:
    """One line for a web server started without the web extra installed (instead of a traceback)."""
    name = exc.name or "a module"
    return f'tablesvc web: {name} is not installed: the pages need the web extra: pip install -e ".[web]"'


def make_server(broker, web, *, listen: tuple[str, int], site: str | None = None, prefix: str = "tablesvc",
                protocol: str = "auto", records_db: str | None = None, tournament: str | None = None):
    """A :class:`WebServer` from a ``[web]`` config (shared by ``web``, ``run`` and ``demo``)."""
    from tablesvc.web.app import WebSettings
    from tablesvc.web.server import WebServer

    settings = WebSettings(site=site or web.site, referee_password=web.referee_password, secret_key=web.secret_key,
                           referee_token=web.referee_token, records_db=records_db or web.records_db,
                           tournament=tournament)
    return WebServer(broker, listen=listen, prefix=prefix, settings=settings, protocol=protocol,
                     idle_alert=web.idle_alert)
