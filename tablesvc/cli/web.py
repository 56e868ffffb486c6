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
    p.add_argument("--broadcast-key", metavar="KEY", help="serve the broadcast scenes for OBS (every hand, waits and "
                   "tiles left, cards, intro and statistics: /broadcast/SITE/TABLE/SCENE?key=KEY) behind this key "
                   "(at least 16 random letters and digits; see docs/web.md)")
    p.add_argument("--broadcast-broker", metavar="URL", help="the broker URL with the broadcast account, the only one "
                   "that may read the tables' broadcast/hands (default: --broker, on a connection of its own)")
    p.add_argument("--config", metavar="FILE", help="a TOML file with [web] (listen, site, [web.referees], "
                   "referee_password, secret_key, referee_token, session_idle, https, trusted_proxies, idle_alert, "
                   "records_db, rules, photo_model, broadcast_key, broadcast_broker) and optionally [mqtt] url")
    p.add_argument("--add-referee", metavar="NAME",
                   help="read NAME's password (twice) and write its hash into [web.referees] of --config FILE "
                   "(a new account, or a new password for an existing one), then exit")
    p.add_argument("--hash-password", action="store_true",
                   help="read a referee password (twice) and print its hash for [web] referee_password, then exit")
    p.set_defaults(run=run)


def _read_password(prompt: str) -> str | None:
    """A password typed twice at a terminal (None when the two differ), or one line of a pipe."""
    if sys.stdin.isatty():
        first, second = getpass.getpass(f"{prompt}: "), getpass.getpass("again: ")
        if first != second:
            print("tablesvc web: the two passwords differ", file=sys.stderr)
            return None
        return first
    return sys.stdin.readline().rstrip("\n")


def run(args: argparse.Namespace) -> int:
    from tablesvc.web.auth import hash_password

    if args.add_referee is not None:
        return _add_referee(args)
    if args.hash_password:
        first = _read_password("referee password")
        if first is None:
            return 2
        try:
            print(hash_password(first))
        except ValueError as exc:
            print(f"tablesvc web: {exc}", file=sys.stderr)
            return 2
        return 0

    from tablesvc.config import ConfigError, WebConfig, load_web_config
    from tablesvc.mqtt.url import BrokerURL

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
    if args.broadcast_key is not None and len(args.broadcast_key) < 16:
        print("tablesvc web: --broadcast-key: use at least 16 random letters and digits", file=sys.stderr)
        return 2
    try:
        if args.broadcast_broker:
            BrokerURL.parse(args.broadcast_broker)
    except ValueError as exc:
        print(f"tablesvc web: --broadcast-broker: {exc}", file=sys.stderr)
        return 2
    server = make_server(broker, web, listen=listen, site=args.site, prefix=args.prefix or prefix or "tablesvc",
                         records_db=args.records_db, tournament=args.tournament,
                         broadcast_key=args.broadcast_key, broadcast_broker=args.broadcast_broker)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        server.start()
    except (OSError, RuntimeError) as exc:
        print(f"tablesvc web: {exc}", file=sys.stderr)
        return 1
    print(f"tablesvc web: serving {server.url}/ from {broker}"
          f"{' (site ' + server.settings.site + ')' if server.settings.site else ''}", flush=True)
    if server.settings.broadcast_key:
        print(f"  broadcast scenes: {server.url}/broadcast/SITE/TABLE/hands?key=... (hands|seat|cards|intro|stats)",
              flush=True)
    if not web.accounts:
        print("  no referee accounts: the referee console is closed (tablesvc web --add-referee NAME --config FILE)",
              flush=True)
    else:
        print(f"  referees: {', '.join(sorted(web.accounts))}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    server.stop()
    return 0


def _add_referee(args: argparse.Namespace) -> int:
    from tablesvc.web.accounts import add_referee, check_name
    from tablesvc.web.auth import hash_password

    if not args.config:
        print("tablesvc web: --add-referee writes the account into a config file: give --config FILE",
              file=sys.stderr)
        return 2
    try:
        name = check_name(args.add_referee)
        password = _read_password(f"{name}'s password")
        if password is None:
            return 2
        replaced = add_referee(args.config, name, hash_password(password))
    except ValueError as exc:  # AccountError, an empty password, text that is not valid Unicode
        print(f"tablesvc web: {exc}", file=sys.stderr)
        return 2
    print(f"tablesvc web: {'new password for' if replaced else 'added'} referee {name} in {args.config} "
          "([web.referees]); restart the web server to use it")
    return 0


def missing_extra(exc: ImportError) -> str:
    """One line for a web server started without the web extra installed (instead of a traceback)."""
    name = exc.name or "a module"
    return f'tablesvc web: {name} is not installed: the pages need the web extra: pip install -e ".[web]"'


def make_server(broker, web, *, listen: tuple[str, int], site: str | None = None, prefix: str = "tablesvc",
                protocol: str = "auto", records_db: str | None = None, rules: str | None = None,
                photo_model: str | None = None, tournament: str | None = None, broadcast_key: str | None = None,
                broadcast_broker: str | None = None):
    """A :class:`WebServer` from a ``[web]`` config (shared by ``web``, ``run`` and ``demo``); ``rules`` and
    ``photo_model``: what ``/score`` uses where ``[web]`` names none (``run``: the table's rules and its
    camera's enrolled set); ``tournament``: the one the /tournament pages show; ``broadcast_key`` and
    ``broadcast_broker``: the broadcast scenes' key and the broadcast account's broker (over ``[web]``'s)."""
    from tablesvc.web.server import WebServer
    from tablesvc.web.settings import WebSettings

    settings = WebSettings(site=site or web.site, accounts=web.accounts, secret_key=web.secret_key,
                           referee_token=web.referee_token, records_db=records_db or web.records_db,
                           session_idle=web.session_idle, https=web.https, trusted_proxies=web.trusted_proxies,
                           rules=web.rules or rules or "ema2012", photo_model=web.photo_model or photo_model,
                           tournament=tournament, broadcast_key=broadcast_key or web.broadcast_key,
                           broadcast_broker=broadcast_broker or web.broadcast_broker)
    return WebServer(broker, listen=listen, prefix=prefix, settings=settings, protocol=protocol,
                     idle_alert=web.idle_alert)
