"""What the web server needs besides the broker: ``[web]`` of a configuration file, or ``tablesvc web``'s
options."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["WebSettings"]


@dataclass(frozen=True)
class WebSettings:
    """What the web server needs besides the broker (``[web]`` in a config file)."""

    site: str | None = None
    referee_password: str | None = None  # scrypt hash (tablesvc web --hash-password): the account `referee`
    accounts: dict[str, str] = field(default_factory=dict, repr=False)  # referee name -> scrypt hash
    secret_key: str | None = None  # signs the sign-in form's token; None: a random one per start
    referee_token: str | None = None  # sent as `token` when the tables require one ([commands] tokens)
    reply_timeout: float = 10.0
    keepalive: float = 15.0
    records_db: str | None = None  # SQLite path or postgresql:// URL that `tablesvc records` writes: /standings
    rules: str = "ema2012"  # what /score values a hand under
    photo_model: str | None = None  # a club's enrolled tile set for /score (default: the packaged sets)
    tournament: str | None = None  # the tournament of records_db the /tournament pages show (default: the latest)
    session_idle: float = 3600.0  # a referee's session ends after this long without a request
    https: bool = False  # pages are served over TLS: cookies are Secure
    trusted_proxies: tuple[str, ...] = ()  # addresses/networks whose X-Forwarded-For and -Proto are believed
    broadcast_key: str | None = field(default=None, repr=False)  # the broadcast scenes' ?key= (None: no scenes)
    broadcast_broker: str | None = field(default=None, repr=False)  # the broadcast account's broker URL

    @property
    def all_accounts(self) -> dict[str, str]:
        """Every account: ``accounts`` and ``referee_password`` as the account ``referee``."""
        accounts = dict(self.accounts)
        if self.referee_password:
            accounts.setdefault("referee", self.referee_password)
        return accounts

    def follows(self, site: str) -> bool:
        """Whether this server shows ``site``'s tables (all sites when it names none)."""
        return self.site is None or site == self.site
